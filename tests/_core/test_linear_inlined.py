"""The inlined own-loop pass of ``linear_pass`` and ``Stepper.batch`` (``sosl_small_pass`` in
``_simd.h``: every loop of a round inlined for the constant p) against the round-by-round
loop of ``play_round`` it stands for, to the bit, over the p it takes (the multiples of four
below 32) and the settings that change a round: both losses, both step schedules,
forgetting (down to the rescale of a scatter), pending-term budgets from none to a flush at
the limit, an explicit order, the Platt step, and a row holding a NaN. The NumPy reference
agreements of the other kernel tests run through it too."""

import numpy as np
import pytest
from helpers import label_runs

from sosl._core import _linear
from sosl._core._codes import Loss, Schedule

OWN_LOOPS = 10**9


def _stream(n, p, seed):
    return label_runs(n, p, seed, q=0.35, shift=0.1)


def _run(inlined, X, s, order, kmax, loss, schedule, beta, t0=0, stats=True, state=None,
         pre=None):
    p = X.shape[1]
    st = state or dict(w=np.zeros(p), xbar=np.zeros((2, p)), C=np.zeros((2, p, p)),
                       scale=np.ones(2), W=np.zeros(2), N=np.zeros(2, dtype=np.int64))
    st = {k: v.copy() for k, v in st.items()}
    info = np.array([0.0, -1.0]) if stats else None
    calib = None if pre is None else np.array([1.0, 1.0])
    old = _linear.set_inlined_pass(inlined)
    try:
        t = _linear.linear_pass(X, s, order, st["w"], st["xbar"], st["C"], st["scale"],
                                st["W"], st["N"], t0, 0.05, 0.3, int(schedule), int(loss),
                                beta, OWN_LOOPS, np.empty(3 * p + 2 * p * kmax), info, None,
                                pre, calib)
    finally:
        _linear.set_inlined_pass(old)
    out = {k: v.tobytes() for k, v in st.items()}
    out["calib"] = None if calib is None else calib.tobytes()
    out["t"] = t
    out["stats"] = None if info is None else info.tobytes()
    return out, st


CASES = [(Loss.LOSS_M, Schedule.STEP_INV_LAM_T, 1.0), (Loss.LOSS_S, Schedule.STEP_CONSTANT, 1.0),
         (Loss.LOSS_M, Schedule.STEP_CONSTANT, 0.97), (Loss.LOSS_S, Schedule.STEP_INV_LAM_T, 0.9)]


@pytest.mark.parametrize("p", [3, 4, 8, 12, 16, 18, 20, 24, 28])   # 3, 18: the loop
def test_inlined_pass_equals_the_round_loop_to_the_bit(p):
    X, s = _stream(300, p, seed=p)
    for (loss, schedule, beta), kmax in zip(CASES, (16, 0, 1, 5)):
        a, st = _run(True, X, s, None, kmax, loss, schedule, beta)
        b, _ = _run(False, X, s, None, kmax, loss, schedule, beta)
        assert a == b, (p, loss, schedule, beta, kmax)
        # a second pass from the state the first left, rows in a shuffled order
        order = np.random.default_rng(p).permutation(300).astype(np.intp)
        a2, _ = _run(True, X, s, order, kmax, loss, schedule, beta, t0=300, state=st)
        b2, _ = _run(False, X, s, order, kmax, loss, schedule, beta, t0=300, state=st)
        assert a2 == b2, (p, loss, schedule, beta, kmax, "second pass")


def test_inlined_pass_rescale_and_nan_row_as_the_round_loop():
    """Strong forgetting drives a scale below 1e-150 (the rescale of its scatter), and a NaN
    row stops a tracked pass at its position; an untracked pass goes on. A mutant (another
    forgetting factor on one side) must differ."""
    X, s = _stream(2500, 20, seed=3)
    for beta in (0.8, 0.75):
        a, st = _run(True, X, s, None, 16, Loss.LOSS_M, Schedule.STEP_INV_LAM_T, beta)
        b, _ = _run(False, X, s, None, 16, Loss.LOSS_M, Schedule.STEP_INV_LAM_T, beta)
        assert a == b
    # the rescale ran: without it a class's scale would be beta^(N - 1) (the first row of a
    # class does not decay it); after one it restarts from 1
    assert (st["scale"] > 1e3 * 0.75 ** (st["N"] - 1)).any()
    mutant, _ = _run(True, X, s, None, 16, Loss.LOSS_M, Schedule.STEP_INV_LAM_T, 0.75 + 1e-12)
    assert mutant != a
    Xb = X.copy()
    Xb[777, 5] = np.nan
    for stats in (True, False):
        a, _ = _run(True, Xb, s, None, 16, Loss.LOSS_M, Schedule.STEP_INV_LAM_T, 1.0,
                    stats=stats)
        b, _ = _run(False, Xb, s, None, 16, Loss.LOSS_M, Schedule.STEP_INV_LAM_T, 1.0,
                    stats=stats)
        assert a == b
        if stats:
            assert np.frombuffer(a["stats"])[1] == 777.0 and a["t"] == 778


def test_inlined_pass_with_the_platt_step_equals_the_round_loop():
    """With scores before the pass (``pre``), each round's Platt step: the same bits, in
    the given order or another one, a non-finite score skipped."""
    X, s = _stream(400, 20, seed=8)
    pre = np.random.default_rng(8).normal(size=400) * 3.0
    pre[[5, 77]] = [np.inf, np.nan]
    order = np.random.default_rng(9).permutation(400).astype(np.intp)
    for o in (None, order):
        a, _ = _run(True, X, s, o, 16, Loss.LOSS_M, Schedule.STEP_INV_LAM_T, 1.0, pre=pre)
        b, _ = _run(False, X, s, o, 16, Loss.LOSS_M, Schedule.STEP_INV_LAM_T, 1.0, pre=pre)
        assert a == b and a["calib"] != np.array([1.0, 1.0]).tobytes()


@pytest.mark.parametrize("p", [8, 20, 13])           # 13: the round loop on both sides
def test_partial_fit_chunks_through_the_inlined_batch_equal_the_round_loop(p):
    """``partial_fit`` in chunks (the stepper's batch path, scores from the old w, in the
    inlined pass and in the round loop) gives the same model,
    calibration included, to the bit with and without the inlined pass, for 0/1 labels and
    others; a chunk with a NaN row is refused and leaves the model as it was on both."""
    from sosl import OAUCM, OAUCS
    X, s = _stream(1200, p, seed=p)
    for cls, labels in ((OAUCM, (0, 1)), (OAUCS, (-1, 1))):
        y = np.where(s > 0, labels[1], labels[0])
        models = {}
        for inlined in (True, False):
            old = _linear.set_inlined_pass(inlined)
            try:
                m = cls(lam=0.05).fit(X[:200], y[:200])
                # chunks of 3, 8, 250, 250, 250 and 239 rows
                cuts = [200, 203, 211, 461, 711, 961, 1200]
                for a, b in zip(cuts[:-1], cuts[1:]):
                    m.partial_fit(X[a:b], y[a:b])
                Xb = X[:50].copy()
                Xb[20, 1] = np.nan
                before = m.coef_.tobytes(), m.calibration_.tobytes()
                with pytest.raises(ValueError):
                    m.partial_fit(Xb, y[:50])
                assert (m.coef_.tobytes(), m.calibration_.tobytes()) == before
                assert m.__dict__.get("_stepper_") is not None     # the batch path ran
            finally:
                _linear.set_inlined_pass(old)
            models[inlined] = {k: v.tobytes() for k, v in vars(m).items()
                               if isinstance(v, np.ndarray)}
        assert models[True] == models[False]

"""Value domains of a state (issue 35, D4): ``from_state`` and ``merge`` refuse, naming the
field, every value a learner's ``capabilities.domains`` rules out, and the table is what
they read (a learner whose table lacks a rule accepts the tampered state: the mutant)."""

import dataclasses

import numpy as np
import pytest

import sosl
from sosl import state as S
from sosl._capabilities import RULES, Domain

LEARNERS = [n for n in sosl.__all__ if n != "__version__" and n != "POLK"]


def _fitted(name):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 4))
    y = (X[:, 0] + 0.3 * rng.normal(size=150) > 0).astype(int)
    cls = getattr(sosl, name)
    kw = {"max_columns": None} if name == "SketchedOAUCM" else {}
    return cls(**kw).fit(X, y)


def _bad_values(rule, value):
    """Values of the field that break ``rule`` (same dtype and shape where possible)."""
    a = np.array(value, copy=True)
    out = []
    if rule in ("nonneg", "count", "positive"):
        neg = a.copy()
        neg.flat[0] = -1
        out.append(neg if isinstance(value, np.ndarray) else type(value)(-1))
        out.append("x")
    if rule == "positive":
        zero = a.copy()
        zero.flat[0] = 0
        out.append(zero if isinstance(value, np.ndarray) else type(value)(0))
    if rule == "count" and a.dtype.kind == "f":
        half = a.copy()
        half.flat[0] = 0.5
        out.append(half)
    if rule == "index":
        low = a.copy()
        low.flat[0] = -2
        out.append(low)
    if rule in ("psd", "psd_upper"):
        S_ = a.copy()
        p = S_.shape[-1]
        S_[0] = -np.eye(p) * max(1.0, float(np.abs(a).max()))     # negative definite
        out.append(S_)
    if rule == "psd":
        asym = a.copy()
        asym[0, 0, -1] += 1.0 + float(np.abs(a).max())
        out.append(asym)
    return out


def _cases():
    # the fields each learner's state holds (a table shared by several baselines names
    # fields that only some of them have)
    for name in LEARNERS:
        fields = set(_fitted(name).get_state().arrays)
        for d in getattr(sosl, name).capabilities.domains:
            if d.field in fields:
                yield name, d


CASES = [(n, d) for n, d in _cases()]


def _replace(st, field, value):
    return dataclasses.replace(st, arrays={**st.arrays, field: value})


@pytest.mark.parametrize("name, domain", CASES, ids=[f"{n}-{d.field}" for n, d in CASES])
def test_from_state_and_merge_refuse_a_value_outside_the_domain(name, domain, monkeypatch):
    st = _fitted(name).get_state()
    caps = getattr(sosl, name).capabilities
    for bad in _bad_values(domain.rule, st.arrays[domain.field]):
        tampered = _replace(st, domain.field, bad)
        with pytest.raises(ValueError, match=repr(domain.field)):
            S.from_state(tampered)
        if caps.merge is not None:
            with pytest.raises(ValueError, match=repr(domain.field)):
                S.merge([st, tampered])
    S.from_state(st)                                # the untouched state is accepted
    # mutant: the same learner with the rule dropped from its table accepts some tampered
    # value (the PSD rule aside, a shape or dtype check may still catch a string)
    cls = getattr(sosl, name)
    thin = dataclasses.replace(caps, domains=tuple(d for d in caps.domains if d != domain))
    monkeypatch.setattr(cls, "capabilities", thin)
    accepted = 0
    for bad in _bad_values(domain.rule, st.arrays[domain.field]):
        try:
            S.from_state(_replace(st, domain.field, bad))
            accepted += 1
        except ValueError:
            pass
    assert accepted > 0


def test_every_rule_is_used_and_named():
    used = {d.rule for n in LEARNERS for d in getattr(sosl, n).capabilities.domains}
    assert used == set(RULES)
    with pytest.raises(ValueError, match="unknown domain rule"):
        Domain("w_", "sorted")


@pytest.mark.parametrize("A", [0.0, -0.5])
def test_platt_slope_must_be_positive(A):
    st = _fitted("OAUCM").get_state()
    bad = dataclasses.replace(st, calibration=np.array([A, 2.0]))
    with pytest.raises(ValueError, match="A > 0"):
        S.from_state(bad)
    with pytest.raises(ValueError, match="A > 0"):
        S.merge([st, bad])


def test_d4_reproducers_are_refused():
    """The tampered OAUCM states the issue found accepted, one by one."""
    st = _fitted("OAUCM").get_state()
    a = st.arrays
    tampered = {
        "counts_": a["counts_"] * -1,
        "weights_": -a["weights_"],
        "scales_": np.zeros(2),
        "scatter_": a["scatter_"] - 10 * np.eye(4) * np.abs(a["scatter_"]).max(),
        "max_abs_": -1.0,
    }
    for field, value in tampered.items():
        with pytest.raises(ValueError, match=repr(field)):
            S.from_state(_replace(st, field, value))
    with pytest.raises(ValueError, match="'max_abs_'"):
        S.from_state(_replace(st, "max_abs_", "x"))
    with pytest.raises(ValueError, match="'counts_'"):       # merge takes them no more
        S.merge([st, _replace(st, "counts_", a["counts_"] * -1)])


# -- the two surviving mutants of issue 35 item 7 --------------------------------------------
@pytest.mark.parametrize("version", [S.STATE_VERSION - 1, 0, S.STATE_VERSION + 1])
def test_only_the_current_state_version_is_read(version):
    """Kills the version check relaxed to ``>`` (an older layout read as the current)."""
    st = _fitted("OAUCM").get_state()
    old = dataclasses.replace(st, version=version)
    with pytest.raises(ValueError, match=f"version {version}"):
        S.from_state(old)
    with pytest.raises(ValueError, match=f"version {version}"):
        S.merge([st, old])


def test_platt_merge_is_the_laplace_combination():
    """Kills a changed Platt A merge: the shards' Laplace approximations around the prior
    A = 1, H = 1 counted once: H = sum H_k - (K - 1), A = (sum H_k A_k - (K - 1)) / H."""
    cal = [np.array([2.0, 3.0]), np.array([0.5, 4.0]), np.array([1.5, 2.5])]
    H = 3.0 + 4.0 + 2.5 - 2
    A = (2.0 * 3.0 + 0.5 * 4.0 + 1.5 * 2.5 - 2) / H
    got = S.merge_calibration(cal)
    assert got[1] == pytest.approx(H, rel=1e-15) and got[0] == pytest.approx(A, rel=1e-15)
    # merging with a shard that learned nothing (the prior itself) changes nothing
    for c in cal:
        assert np.allclose(S.merge_calibration([c, np.array([1.0, 1.0])]), c, rtol=1e-15)
    # and through merge: the merged state's calibration is that combination
    st = _fitted("OAUCM").get_state()
    states = [dataclasses.replace(st, calibration=c) for c in cal]
    assert np.allclose(S.merge(states).calibration, [A, H], rtol=1e-15)

"""Sparse input whose index arrays do not describe its shape is refused, not read.

scipy builds ``csr_matrix((data, indices, indptr), shape)`` without checking that the
column indices lie inside the shape or that ``indptr`` never decreases. Such a matrix used
to reach the typed passes (a column index of 10**6 in a 10-column row crashed the process).
Every entry point of every learner must now raise a ValueError naming the problem and leave
the model exactly as it was.
"""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import ESTIMATORS, fitted_state, make, same_state

from sosl._input import _canonical_csr, _canonical_row

P = 10


def _bad_rows():
    """(name, matrix) pairs: one-row and two-row CSR/CSC matrices with broken indices."""
    return [
        ("column-too-large", sp.csr_matrix(([1.0, 2.0], [3, 10**6], [0, 2]), shape=(1, P))),
        ("column-negative", sp.csr_matrix(([1.0, 2.0], [-1, 3], [0, 2]), shape=(1, P))),
        ("column-equal-to-width", sp.csr_matrix(([1.0], [P], [0, 1]), shape=(1, P))),
        ("indptr-decreasing", sp.csr_matrix(([1.0, 2.0], [3, 4], [0, 2, 1]), shape=(2, P))),
        ("csc-row-too-large", sp.csc_matrix(([1.0], [5], [0] + [1] * P), shape=(1, P))),
    ]


def _train():
    rng = np.random.default_rng(0)
    X = sp.random(60, P, density=0.4, format="csr", random_state=1) * 1.0
    y = (rng.random(60) < 0.4).astype(int)
    y[:2] = [0, 1]
    return X, y


@pytest.mark.parametrize("name,bad", _bad_rows(), ids=[n for n, _ in _bad_rows()])
def test_canonical_csr_refuses_broken_index_arrays(name, bad):
    with pytest.raises(ValueError, match="index"):
        _canonical_csr(bad)


def test_canonical_row_rejects_an_out_of_range_column():
    good = sp.csr_matrix(([1.0, 2.0], [3, P - 1], [0, 2]), shape=(1, P))
    good.indices = good.indices.astype(np.int32)
    good.indptr = good.indptr.astype(np.int32)
    assert _canonical_row(good, P)
    bad = sp.csr_matrix(([1.0, 2.0], np.array([3, 10**6], dtype=np.int32),
                         np.array([0, 2], dtype=np.int32)), shape=(1, P))
    assert bad.has_canonical_format           # scipy sees nothing wrong with it
    assert not _canonical_row(bad, P)


def test_a_valid_matrix_passes_unchanged():
    X, _ = _train()
    out = _canonical_csr(X)
    assert (out != X).nnz == 0 and out.shape == X.shape


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda e: e.__name__)
def test_every_entry_point_refuses_and_keeps_state(Est):
    X, y = _train()
    model = make(Est)
    try:
        model.fit(X, y)
    except (TypeError, ValueError) as exc:       # a learner without sparse input
        pytest.skip(f"{Est.__name__} takes no sparse input: {exc}")
    for name, bad in _bad_rows():
        rows = bad if bad.shape[0] == 1 else bad[:1]
        calls = [("partial_fit", lambda: model.partial_fit(bad, np.ones(bad.shape[0], int))),
                 ("decision_function", lambda: model.decision_function(bad))]
        if bad.shape[0] == 1 and hasattr(model, "learn_one"):
            calls += [("learn_one", lambda: model.learn_one(rows, 1)),
                      ("score_one", lambda: model.score_one(rows))]
        for call, fn in calls:
            before = copy.deepcopy(fitted_state(model))
            with pytest.raises(ValueError):
                fn()
            assert same_state(before, fitted_state(model)), (name, call)

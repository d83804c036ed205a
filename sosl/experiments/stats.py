"""Comparing learners over many datasets: the tests Demsar (2006) recommends, and a bootstrap.

Every function takes a score matrix ``scores`` of shape (N datasets, k learners), higher
is better (AUC), one row per dataset: the mean over that dataset's runs. The datasets are
the independent units; the runs within a dataset are not.

* :func:`average_ranks` -- rank 1 is the best learner on a dataset, ties get the mean rank;
* :func:`friedman` -- Friedman's chi-square on the average ranks and Iman and Davenport's
  F statistic, which is less conservative (Demsar 2006, Section 3.2.2);
* :func:`nemenyi` -- the critical difference of average ranks for all pairs (the
  studentized range quantile over sqrt(2), from :data:`scipy.stats.studentized_range`);
* :func:`holm` -- Holm's step-down adjustment of a family of p-values;
  :func:`rank_tests` gives the z statistics of rank differences and their p-values for all
  pairs or against a control, Holm-adjusted;
* :func:`wilcoxon` -- the signed-rank test of one pair (:func:`scipy.stats.wilcoxon`) with
  the rank sums R+ and R- (zero differences split evenly, as Demsar does) and two effect
  sizes: the matched-pairs rank-biserial correlation (R+ - R-) / (R+ + R-) and r = z / sqrt(N);
* :func:`bootstrap_mean_diff` -- a percentile bootstrap interval of the mean difference of
  one pair over datasets (datasets resampled with replacement).

SciPy has the chi-square, F, normal and studentized-range distributions, the Friedman test
with a tie correction and the Wilcoxon test; what it lacks (the uncorrected statistic on
average ranks Demsar uses, Iman-Davenport, the Nemenyi CD, Holm, the rank-difference z
tests and the effect sizes) is written here.

References
----------
J. Demsar, Statistical comparisons of classifiers over multiple data sets, JMLR 7 (2006) 1-30.
R. L. Iman and J. M. Davenport, Approximations of the critical region of the Friedman
statistic, Comm. Statist. A 9 (1980) 571-595.
S. Holm, A simple sequentially rejective multiple test procedure, Scand. J. Statist. 6
(1979) 65-70.
"""

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["FriedmanResult", "WilcoxonResult", "average_ranks", "bootstrap_mean_diff",
           "friedman", "holm", "nemenyi", "nemenyi_groups", "nemenyi_q", "rank_tests",
           "wilcoxon"]

#: differences are rounded to this many decimals before ranking, so that values equal on
#: paper (0.768 - 0.763 and 0.971 - 0.966) are ties and not two ranks apart by rounding
DECIMALS = 12


def _matrix(scores):
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] < 2 or s.shape[1] < 2:
        raise ValueError(f"scores must be a (datasets, learners) matrix with at least 2 of "
                         f"each, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    return s


def average_ranks(scores):
    """Mean rank of each learner over the datasets (1 = best, higher score = better)."""
    s = _matrix(scores)
    return stats.rankdata(-np.round(s, DECIMALS), axis=1).mean(axis=0)


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman's test on average ranks with the Iman-Davenport F.

    Attributes
    ----------
    ranks : ndarray of shape (k,)
    n_datasets, n_learners : int
    chi2, chi2_p : float
        ``12 N / (k (k+1)) [sum R_j^2 - k (k+1)^2 / 4]``, chi-square with k - 1 dof.
    f, f_p : float
        ``(N - 1) chi2 / (N (k - 1) - chi2)``, F with k - 1 and (k - 1)(N - 1) dof.
    """

    ranks: np.ndarray
    n_datasets: int
    n_learners: int
    chi2: float
    chi2_p: float
    f: float
    f_p: float


def friedman(scores):
    """Friedman's chi-square and Iman and Davenport's F on the average ranks (Demsar 2006)."""
    s = _matrix(scores)
    n, k = s.shape
    r = average_ranks(s)
    chi2 = 12.0 * n / (k * (k + 1)) * (np.sum(r ** 2) - k * (k + 1) ** 2 / 4.0)
    chi2 = max(float(chi2), 0.0)
    denom = n * (k - 1) - chi2
    f = np.inf if denom <= 0 else (n - 1) * chi2 / denom
    f_p = 0.0 if not np.isfinite(f) else float(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))
    return FriedmanResult(r, n, k, chi2, float(stats.chi2.sf(chi2, k - 1)), float(f), f_p)


def nemenyi_q(k, alpha=0.05):
    """The Nemenyi critical value q_alpha for k learners: studentized range / sqrt(2)."""
    if k < 2:
        raise ValueError(f"k must be >= 2, got {k}")
    return float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))


def nemenyi(n_datasets, k, alpha=0.05):
    """Critical difference of average ranks: ``q_alpha sqrt(k (k+1) / (6 N))``."""
    return nemenyi_q(k, alpha) * np.sqrt(k * (k + 1) / (6.0 * n_datasets))


def holm(pvalues):
    """Holm's step-down adjusted p-values (same order as given).

    The i-th smallest p (i from 0) is multiplied by m - i, then a running maximum keeps
    the adjusted values monotone; reject where the adjusted p <= alpha.
    """
    p = np.asarray(pvalues, dtype=float)
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        adj[j] = running
    return adj


def rank_tests(scores, control=None):
    """z tests of average-rank differences with Holm-adjusted p-values.

    ``z = (R_i - R_j) / sqrt(k (k+1) / (6 N))``, two-sided normal p. With ``control`` (a
    column index) the family is the k - 1 comparisons with it; otherwise all pairs.

    Returns
    -------
    list of dict
        ``i, j, z, p, p_holm`` per comparison, in column order.
    """
    s = _matrix(scores)
    n, k = s.shape
    r = average_ranks(s)
    se = np.sqrt(k * (k + 1) / (6.0 * n))
    pairs = ([(control, j) for j in range(k) if j != control] if control is not None
             else list(combinations(range(k), 2)))
    z = np.array([(r[i] - r[j]) / se for i, j in pairs])
    p = 2.0 * stats.norm.sf(np.abs(z))
    adj = holm(p)
    return [{"i": i, "j": j, "z": float(zz), "p": float(pp), "p_holm": float(aa)}
            for (i, j), zz, pp, aa in zip(pairs, z, p, adj)]


@dataclass(frozen=True)
class WilcoxonResult:
    """Wilcoxon signed-rank test of ``a - b`` over datasets.

    Attributes
    ----------
    r_plus, r_minus : float
        Rank sums of the positive and negative differences, zero differences split
        evenly between them (Demsar's convention).
    statistic, p : float
        scipy's statistic and two-sided p-value (zeros split as above).
    rank_biserial : float
        ``(R+ - R-) / (R+ + R-)`` in [-1, 1]; positive when ``a`` tends to win.
    r : float
        ``z / sqrt(N)`` from the normal approximation, signed like ``rank_biserial``.
    n : int
    """

    r_plus: float
    r_minus: float
    statistic: float
    p: float
    rank_biserial: float
    r: float
    n: int


def wilcoxon(a, b):
    """Signed-rank test of paired scores ``a`` and ``b`` with its effect sizes."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.shape[0] < 2:
        raise ValueError(f"a and b must be 1-d of the same length >= 2, got {a.shape} and "
                         f"{b.shape}")
    d = np.round(a - b, DECIMALS)
    n = d.shape[0]
    ranks = stats.rankdata(np.abs(d))
    zero = ranks[d == 0].sum() / 2.0
    r_plus = float(ranks[d > 0].sum() + zero)
    r_minus = float(ranks[d < 0].sum() + zero)
    total = r_plus + r_minus
    if np.all(d == 0):
        return WilcoxonResult(r_plus, r_minus, r_minus, 1.0, 0.0, 0.0, n)
    res = stats.wilcoxon(d, zero_method="zsplit", method="approx")
    mean = n * (n + 1) / 4.0
    sd = np.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    z = (r_plus - mean) / sd
    return WilcoxonResult(r_plus, r_minus, float(res.statistic), float(res.pvalue),
                          (r_plus - r_minus) / total, float(z / np.sqrt(n)), n)


def bootstrap_mean_diff(a, b, n_boot=10_000, level=0.95, seed=0):
    """Percentile bootstrap interval of ``mean(a - b)`` over datasets.

    Returns
    -------
    (mean, low, high) : tuple of float
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.ndim != 1 or d.shape[0] < 2:
        raise ValueError(f"a and b must be 1-d of the same length >= 2, got {d.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.shape[0], size=(int(n_boot), d.shape[0]))
    means = d[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(d.mean()), float(lo), float(hi)


def nemenyi_groups(ranks, cd):
    """The maximal groups of learners whose average ranks span less than ``cd``.

    Returns
    -------
    list of tuple of int
        Column indices of each group (two or more learners, best rank first), groups in
        order of their best member; a group inside another is left out. The bars of a
        critical-difference diagram.
    """
    r = np.asarray(ranks, dtype=float)
    order = np.argsort(r, kind="stable")
    spans: list[Any] = []
    for a in range(order.shape[0]):
        b = a
        while b + 1 < order.shape[0] and r[order[b + 1]] - r[order[a]] < cd:
            b += 1
        if b > a and not (spans and spans[-1][1] >= b):
            spans.append((a, b))
    return [tuple(int(i) for i in order[a:b + 1]) for a, b in spans]

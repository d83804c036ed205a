"""sosl.experiments.stats against Demsar (JMLR 2006)'s worked example and hand computations.

The example: AUC of four C4.5 variants on 14 UCI datasets (Demsar's Table 6). The paper
prints the average ranks 3.143, 2.000, 2.893, 1.964, chi2_F = 9.28, F_F = 3.69 (F(3, 39)
critical value 2.85 at 0.05), the Nemenyi CD 1.25 (1.12 at alpha 0.10), the Holm z values
2.416, 2.342, 0.512 against C4.5 with p 0.016, 0.019, 0.607 (two rejected at 0.05), and
for C4.5 against C4.5+m (its Table 2, the same two columns) the rank sums R+ = 93, R- = 12.
"""

import numpy as np
import pytest
from scipy import stats as sps

from sosl.experiments import stats

NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
AUC = np.array([
    [0.763, 0.768, 0.771, 0.798],   # adult (sample)
    [0.599, 0.591, 0.590, 0.569],   # breast cancer
    [0.954, 0.971, 0.968, 0.967],   # breast cancer wisconsin
    [0.628, 0.661, 0.654, 0.657],   # cmc
    [0.882, 0.888, 0.886, 0.898],   # ionosphere
    [0.936, 0.931, 0.916, 0.931],   # iris
    [0.661, 0.668, 0.609, 0.685],   # liver disorders
    [0.583, 0.583, 0.563, 0.625],   # lung cancer
    [0.775, 0.838, 0.866, 0.875],   # lymphography
    [1.000, 1.000, 1.000, 1.000],   # mushroom
    [0.940, 0.962, 0.965, 0.962],   # primary tumor
    [0.619, 0.666, 0.614, 0.669],   # rheum
    [0.972, 0.981, 0.975, 0.975],   # voting
    [0.957, 0.978, 0.946, 0.970],   # wine
])


def test_average_ranks_and_friedman_match_demsar():
    # Demsar's Table 6 ranks the tie on voting (0.975, 0.975) as 2 and 3 rather than 2.5
    # each; his printed averages and statistics follow from those ranks, so the tie is
    # broken the same way here (the exact averages with the tie are checked below)
    printed = AUC.copy()
    printed[12, 2] += 1e-4
    res = stats.friedman(printed)
    np.testing.assert_allclose(res.ranks, [3.143, 2.000, 2.893, 1.964], atol=5e-4)
    assert res.chi2 == pytest.approx(9.28, abs=0.01)
    assert res.f == pytest.approx(3.69, abs=0.01)
    assert sps.f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=0.01)
    assert res.f_p < 0.05 < res.chi2_p * 2           # rejected by F_F, as in the paper
    assert (res.n_datasets, res.n_learners) == (14, 4)


def test_average_ranks_with_the_tie_are_exact():
    np.testing.assert_array_equal(stats.average_ranks(AUC) * 14, [44.0, 28.0, 41.0, 27.0])


def test_friedman_equals_scipy_without_ties():
    rng = np.random.default_rng(0)
    s = rng.random((30, 6))
    res = stats.friedman(s)
    ref = sps.friedmanchisquare(*s.T)
    assert res.chi2 == pytest.approx(ref.statistic, rel=1e-12)
    assert res.chi2_p == pytest.approx(ref.pvalue, rel=1e-9)
    assert res.ranks.sum() == pytest.approx(6 * 7 / 2)


@pytest.mark.parametrize("alpha, row", [
    (0.05, [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]),
    (0.10, [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]),
])
def test_nemenyi_q_matches_demsar_table_5a(alpha, row):
    got = [stats.nemenyi_q(k, alpha) for k in range(2, 11)]
    np.testing.assert_allclose(got, row, atol=2e-3)


def test_nemenyi_cd_matches_demsar():
    assert stats.nemenyi(14, 4) == pytest.approx(1.25, abs=0.005)
    assert stats.nemenyi(14, 4, alpha=0.10) == pytest.approx(1.12, abs=0.005)


def test_holm_against_the_control_matches_demsar():
    printed = AUC.copy()
    printed[12, 2] += 1e-4                      # Demsar's ranks (see above)
    out = stats.rank_tests(printed, control=0)
    by_j = {o["j"]: o for o in out}
    assert [round(by_j[j]["z"], 2) for j in (3, 1, 2)] == [2.42, 2.34, 0.51]
    np.testing.assert_allclose([by_j[j]["p"] for j in (3, 1, 2)], [0.016, 0.019, 0.607],
                               atol=1.5e-3)
    assert [by_j[j]["p_holm"] <= 0.05 for j in (3, 1, 2)] == [True, True, False]
    assert len(stats.rank_tests(AUC)) == 6                    # all pairs


def test_holm_by_hand():
    np.testing.assert_allclose(stats.holm([0.01, 0.04, 0.03, 0.005]),
                               [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(stats.holm([0.2, 0.9]), [0.4, 0.9])
    np.testing.assert_allclose(stats.holm([0.6, 0.7]), [1.0, 1.0])   # capped, monotone


def test_wilcoxon_rank_sums_match_demsar():
    res = stats.wilcoxon(AUC[:, 1], AUC[:, 0])   # C4.5+m against C4.5
    assert (res.r_plus, res.r_minus) == (93.0, 12.0)
    assert res.rank_biserial == pytest.approx(81 / 105)
    assert res.p < 0.05
    z = (93 - 14 * 15 / 4) / np.sqrt(14 * 15 * 29 / 24)
    assert res.r == pytest.approx(z / np.sqrt(14))
    flipped = stats.wilcoxon(AUC[:, 0], AUC[:, 1])
    assert (flipped.r_plus, flipped.rank_biserial) == (12.0, pytest.approx(-81 / 105))


def test_bootstrap_interval_is_seeded_and_near_the_normal_one():
    rng = np.random.default_rng(1)
    a = rng.normal(0.80, 0.05, 400)
    b = a - rng.normal(0.01, 0.02, 400)
    m, lo, hi = stats.bootstrap_mean_diff(a, b, seed=3)
    assert stats.bootstrap_mean_diff(a, b, seed=3) == (m, lo, hi)
    half = 1.96 * np.std(a - b, ddof=1) / np.sqrt(400)
    assert lo < m < hi
    assert (hi - lo) / 2 == pytest.approx(half, rel=0.1)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="matrix"):
        stats.friedman(np.ones(5))
    with pytest.raises(ValueError, match="finite"):
        stats.friedman([[1.0, np.nan], [0.5, 0.4]])
    with pytest.raises(ValueError, match="same length"):
        stats.wilcoxon([1.0, 2.0], [1.0])


def test_mutant_ranking_lower_is_better_is_caught(monkeypatch):
    """Ranking the lowest score first (an error-rate convention on AUCs) must fail the test."""
    monkeypatch.setattr(stats, "average_ranks", lambda s: sps.rankdata(
        np.asarray(s), axis=1).mean(axis=0))
    with pytest.raises(AssertionError):
        test_average_ranks_and_friedman_match_demsar()


def test_mutant_iman_davenport_degrees_of_freedom_is_caught(monkeypatch):
    """F_F with N instead of N - 1 in the numerator (a common slip) must fail the test."""
    real = stats.friedman

    def mutant(scores):
        r = real(scores)
        n, k = r.n_datasets, r.n_learners
        f = n * r.chi2 / (n * (k - 1) - r.chi2)
        return stats.FriedmanResult(r.ranks, n, k, r.chi2, r.chi2_p, f, r.f_p)

    monkeypatch.setattr(stats, "friedman", mutant)
    with pytest.raises(AssertionError):
        test_average_ranks_and_friedman_match_demsar()

"""Spectral-type rules, bootstrap helpers and the column table."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.vq import kmeans2

from qkforms.errors import QKFormsError
from qkforms.stats.bootstrap import (
    cliffs_delta,
    median_ci,
    ratio_of_medians_ci,
    resample_index,
    rng_for,
    share_ci,
)
from qkforms.stats.table import Table, as_table, concat
from qkforms.stats.types import (
    best_k_silhouette,
    kmeans,
    kmeans_types,
    normalized_spectra,
    silhouette,
)


def _three_families(seed: int = 0, per: int = 15, n: int = 6) -> list[np.ndarray]:
    """Spectra with a dominant positive lobe, balanced lobes, a dominant negative lobe."""
    rng = np.random.default_rng(seed)
    out = []
    for scale_pos, scale_neg in ((3.0, 1.0), (1.0, 1.0), (1.0, 3.0)):
        for _ in range(per):
            a = np.sort(rng.gamma(20.0, 1.0, n))[::-1] * scale_pos
            b = np.sort(rng.gamma(20.0, 1.0, n))[::-1] * scale_neg
            out.append(np.concatenate([a, -b[::-1]]))
    return out


def test_kmeans_rule_recovers_planted_types() -> None:
    spectra = _three_families()
    labels = kmeans_types(spectra, seed=0)
    assert labels[:15].tolist() == ["I+"] * 15
    assert labels[15:30].tolist() == ["II"] * 15
    assert labels[30:].tolist() == ["I-"] * 15
    assert best_k_silhouette(spectra) == 3


def test_kmeans_partition_agrees_with_scipy_kmeans2() -> None:
    rows = normalized_spectra(_three_families(1))
    ours, _ = kmeans(rows, 3, seed=0)
    _, theirs = kmeans2(rows, 3, minit="++", seed=np.random.default_rng(0))
    # same partition up to relabelling
    pairs = {(int(a), int(b)) for a, b in zip(ours, theirs, strict=True)}
    assert len(pairs) == 3


def test_silhouette_matches_brute_force() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((12, 3))
    lab = np.repeat([0, 1, 2], 4)
    d = np.linalg.norm(x[:, None] - x[None], axis=-1)
    s = []
    for i in range(12):
        own = (lab == lab[i]) & (np.arange(12) != i)
        a = d[i, own].mean()
        b = min(d[i, lab == k].mean() for k in set(lab.tolist()) - {lab[i]})
        s.append((b - a) / max(a, b))
    assert silhouette(x, lab) == pytest.approx(np.mean(s))


def test_stratified_resampling_keeps_strata() -> None:
    groups = np.asarray(["a"] * 3 + ["b"] * 5)
    idx = resample_index(groups, 8, 200, rng_for(0, "t"))
    assert np.all(idx[:, :3] < 3) and np.all(idx[:, 3:] >= 3)


def test_intervals_and_effect_sizes() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(1.0, 1.0, 400)
    est, lo, hi = median_ci(x, rng=rng_for(0, "m"), n_boot=500)
    assert est == np.median(x) and lo < est < hi and hi - lo < 0.4
    est, lo, hi = share_ci(x > 1.0, rng=rng_for(0, "s"), n_boot=500)
    assert est == np.mean(x > 1.0) and lo < est < hi
    y = rng.normal(0.0, 1.0, 300)
    est, lo, hi = ratio_of_medians_ci(x + 5, y + 5, rng=rng_for(0, "r"), n_boot=300)
    assert est == pytest.approx(np.median(x + 5) / np.median(y + 5)) and lo < est < hi
    brute = np.mean(np.sign(x[:, None] - y[None, :]))
    assert cliffs_delta(x, y) == pytest.approx(brute)
    ties = np.asarray([1.0, 1.0, 2.0])
    assert cliffs_delta(ties, ties) == 0.0


def test_table_round_trips() -> None:
    t = Table({"model": ["m", "n"], "x": [1.5, None], "k": [1, 2], "flag": [True, None],
               "spec": [[1.0, 2.0], [3.0]]})
    assert t["x"].dtype == np.float64 and np.isnan(t["x"][1])
    assert t.row(0)["spec"] == [1.0, 2.0] and t.row(1)["flag"] is None
    assert concat([t, t.take([1])])["model"].tolist() == ["m", "n", "n"]
    assert as_table(t.to_dict()) == t
    pa = pytest.importorskip("pyarrow")
    assert as_table(pa.table(t.to_dict())) == t
    text = t.to_csv_string().splitlines()
    assert text[0] == "model,x,k,flag,spec" and text[1] == "m,1.5,1,True,1.0 2.0"


def test_resampling_draws_with_replacement_in_every_stratum() -> None:
    """Each replicate is a draw *with replacement*: about 1 - 1/e of a stratum is distinct.

    (A permutation — resampling without replacement — keeps every statistic fixed and
    collapses every interval to a point.)
    """
    groups = np.repeat(["a", "b", "c"], [40, 60, 1])
    for g in (groups, None):
        idx = resample_index(g, groups.size, 400, rng_for(1, "with-replacement"))
        strata = [np.arange(40), np.arange(40, 100)] if g is not None else [np.arange(101)]
        for members in strata:
            block = idx[:, members]
            distinct = np.array([np.unique(row).size for row in block]) / members.size
            assert 0.58 < distinct.mean() < 0.69  # 1 - (1 - 1/m)^m ~ 0.632
            # every member is drawn about equally often (uniform within the stratum)
            counts = np.bincount(block.ravel() - members[0], minlength=members.size)
            assert counts.min() > 0.6 * counts.mean()
        if g is not None:
            assert np.all(idx[:, 100] == 100)  # a one-head stratum is always itself


def test_pooled_intervals_have_width_and_cover() -> None:
    """Stratified (pooled) intervals: positive width, and ~95 % coverage of the median."""
    groups = np.repeat(["m1", "m2"], [50, 70])
    est, lo, hi = median_ci(np.random.default_rng(5).normal(size=120), groups=groups,
                            rng=rng_for(0, "pooled"), n_boot=300)
    assert lo < est < hi and hi - lo > 0.1
    est, lo, hi = share_ci(np.random.default_rng(6).random(120) < 0.3, groups=groups,
                           rng=rng_for(0, "pooled-share"), n_boot=300)
    assert lo < est < hi and hi - lo > 0.05
    # coverage: both strata drawn from N(0, 1), so the pooled median's target is 0
    rng = np.random.default_rng(7)
    hits = 0
    trials = 200
    for t in range(trials):
        x = rng.normal(size=120)
        _, lo, hi = median_ci(x, groups=groups, rng=rng_for(t, "coverage"), n_boot=200)
        hits += lo <= 0.0 <= hi
    assert 0.85 <= hits / trials <= 1.0


def test_intervals_are_the_central_95_percent_of_the_replicates() -> None:
    """Each interval, recomputed from the same replicates: the 2.5 % and 97.5 % quantiles
    (a 90 % interval, or the wrong replicate count, would differ), and the edge cases."""
    from qkforms.stats.bootstrap import CI_LEVEL, cliffs_delta_ci, stat_ci

    assert CI_LEVEL == 0.95
    rng = np.random.default_rng(8)
    x, y = rng.gamma(2.0, size=40), rng.gamma(3.0, size=30)
    g = np.repeat(["p", "q"], 20)
    q = [0.025, 0.975]

    def replay(seed: str) -> np.random.Generator:
        return rng_for(3, seed)

    est, lo, hi = median_ci(x, groups=g, rng=replay("m"), n_boot=400)
    idx = resample_index(g, x.size, 400, replay("m"))
    assert (lo, hi) == pytest.approx(np.quantile(np.median(x[idx], axis=1), q), rel=1e-12)
    est, lo, hi = ratio_of_medians_ci(x, y, rng=replay("r"), n_boot=300)
    r = replay("r")
    ia, ib = resample_index(None, x.size, 300, r), resample_index(None, y.size, 300, r)
    reps = np.median(x[ia], axis=1) / np.median(y[ib], axis=1)
    assert (lo, hi) == pytest.approx(np.quantile(reps, q), rel=1e-12)
    est, lo, hi = cliffs_delta_ci(x, y, rng=replay("c"), n_boot=200)
    r = replay("c")
    ia, ib = resample_index(None, x.size, 200, r), resample_index(None, y.size, 200, r)
    reps = np.array([cliffs_delta(x[ia[i]], y[ib[i]]) for i in range(200)])
    assert est == cliffs_delta(x, y)
    assert (lo, hi) == pytest.approx(np.quantile(reps, q), rel=1e-12)
    # one replicate is an interval (n_boot = 1 is not "no bootstrap"); 0 is none
    for f in (lambda n: median_ci(x, rng=replay("1"), n_boot=n),
              lambda n: ratio_of_medians_ci(x, y, rng=replay("1"), n_boot=n),
              lambda n: cliffs_delta_ci(x, y, rng=replay("1"), n_boot=n)):
        assert np.isfinite(f(1)[1]) and np.isnan(f(0)[1])
    # an empty sample on either side gives no estimate at all
    empty = np.array([np.nan])
    for e in (ratio_of_medians_ci(empty, y, rng=replay("e")),
              ratio_of_medians_ci(x, empty, rng=replay("e")),
              cliffs_delta_ci(empty, y, rng=replay("e")),
              cliffs_delta_ci(x, empty, rng=replay("e")),
              stat_ci(empty, lambda v: v.mean(axis=1), rng=replay("e"))):
        assert all(np.isnan(v) for v in e)


def test_sorted_median_and_pair_count_cliffs_equal_the_plain_computations() -> None:
    """The fast replicate statistics are the plain ones, bit for bit: the median by sorting
    (odd and even rows, ties, infinities; NaN rows by numpy's rule) and Cliff's delta of
    every replicate from the pair-count product (ties, equal infinities)."""
    from qkforms.stats.bootstrap import _cliffs_replicates, _median

    rng = np.random.default_rng(11)
    for m in (1, 2, 3, 8, 9, 270):
        v = rng.normal(size=(40, m))
        v[::3] = v[::3].round(1)
        v[5, 0] = np.inf
        v[6, -1] = -np.inf
        assert np.array_equal(_median(v), np.median(v, axis=1))
    v = rng.normal(size=(4, 6))
    v[2, 3] = np.nan
    assert np.array_equal(_median(v), np.median(v, axis=1), equal_nan=True)
    a, b = rng.normal(size=23).round(1), rng.normal(size=17).round(1)
    a[0] = b[0] = np.inf
    ia, ib = rng.integers(0, 23, (300, 23)), rng.integers(0, 17, (300, 17))
    loop = np.array([cliffs_delta(a[ia[i]], b[ib[i]]) for i in range(300)])
    assert np.array_equal(_cliffs_replicates(a, b, ia, ib), loop)


def test_statistics_of_one_sample_share_replicates_named_by_row_and_strata() -> None:
    """The seeding rule of the tables (docs/statistics.md): one replicate matrix per
    (row key, sample, strata sizes), whichever statistics use it and in which order; a
    different sample, key or strata gets a different one."""
    from qkforms.stats.bootstrap import Draws, stat_ci

    rng = np.random.default_rng(2)
    x, y = rng.gamma(2.0, size=30), rng.normal(size=30)
    g = np.repeat(["p", "q"], 15)
    d1 = Draws(4, "accumulation", "ALL", "heads")
    first = median_ci(x, groups=g, draws=d1, n_boot=250)
    share = share_ci(y > 0, groups=g, draws=d1, n_boot=250)
    d2 = Draws(4, "accumulation", "ALL", "heads")  # the other order
    assert share_ci(y > 0, groups=g, draws=d2, n_boot=250) == share
    assert median_ci(x, groups=g, draws=d2, n_boot=250) == first
    strata = (("p", 15), ("q", 15))
    idx = resample_index(g, 30, 250, rng_for(4, "bootstrap", "accumulation", "ALL", "heads",
                                             30, strata))
    assert np.array_equal(d1.index(g, 30, 250), idx)
    q = [0.025, 0.975]
    assert first[1:] == pytest.approx(np.quantile(np.median(x[idx], axis=1), q), rel=1e-12)
    other = {Draws(4, "accumulation", "ALL", "baseline").index(g, 30, 250).tobytes(),
             Draws(4, "pairing", "ALL", "heads").index(g, 30, 250).tobytes(),
             d1.index(np.repeat(["p", "q"], [14, 16]), 30, 250).tobytes()}
    assert idx.tobytes() not in other and len(other) == 3
    # NaNs dropped: the statistic is resampled among its defined heads (strata 14 + 15)
    z = x.copy()
    z[0] = np.nan
    _, lo, hi = stat_ci(z, lambda v: np.median(v, axis=1), groups=g, draws=d1, n_boot=250)
    sub = d1.index(g[1:], 29, 250)
    assert (lo, hi) == pytest.approx(np.quantile(np.median(z[1:][sub], axis=1), q), rel=1e-12)
    with pytest.raises(TypeError, match="rng or draws"):
        median_ci(x)


def test_kmeans_rule_on_few_rows_and_two_families() -> None:
    spectra = _three_families(per=1)[:2]  # two heads: too few to cluster into three types
    assert kmeans_types(spectra, seed=0).tolist() == ["II", "II"]
    two = [s for i, s in enumerate(_three_families(seed=3)) if i < 15 or i >= 30]
    assert best_k_silhouette(two) == 2  # k = 2 is among the candidates (2..6)


def test_table_equality_needs_same_columns_and_length() -> None:
    a = Table({"x": [1.0, 2.0]})
    assert a != "x" and a != Table({"y": [1.0, 2.0]}) and a != Table({"x": [1.0]})
    assert Table({"s": ["p", "q"]}) == Table({"s": ["p", "q"]})
    assert Table({"s": ["p", "q"]}) != Table({"s": ["p", "r"]})


# --- second mutation campaign: each test states the property it checks -------------------


def _jittered(base: list[list[float]], per: int = 8, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.asarray(b) * (1 + 0.01 * rng.standard_normal(len(b))) for b in base
            for _ in range(per)]


def test_kmeans_types_are_ordered_by_energy_asymmetry() -> None:
    """The clusters are named I+, II, I- by decreasing ``sum lambda_+^2 - sum lambda_-^2``
    of the normalized spectra: many moderate positive eigenvalues (asymmetry 0.5) outrank
    one larger positive eigenvalue (0.28), which outranks a negative-heavy head (-0.28)."""
    base = [[0.5, 0.5, 0.5, -0.5], [0.8, -0.6], [0.6, -0.8]]
    labels = kmeans_types(_jittered(base), seed=0).tolist()
    assert labels == ["I+"] * 8 + ["II"] * 8 + ["I-"] * 8


def test_kmeans_types_of_exactly_three_heads() -> None:
    """Three heads are enough to cluster: one per type (fewer are all Type II)."""
    assert kmeans_types([[3.0, -1.0], [2.0, -2.0], [1.0, -3.0]], seed=0).tolist() == [
        "I+", "II", "I-"]


def test_best_k_candidates_and_too_few_heads() -> None:
    """``best_k_silhouette`` tries k = 2..6 by default (five and six well separated
    families are found) and returns 0 when there are too few heads for every k."""
    for k in (5, 6):  # k families spread over the arc from positive to negative spectra
        t = np.linspace(0.05, 1.5, k)
        assert best_k_silhouette(_jittered(np.stack([np.cos(t), -np.sin(t)], 1).tolist(),
                                           per=6)) == k
    assert best_k_silhouette([[1.0, -1.0], [2.0, -1.0]]) == 0


def test_as_table_refuses_a_pandas_series_with_the_package_error() -> None:
    """A pandas Series is not a table: a clear QKFormsError, not an AttributeError."""
    pd = pytest.importorskip("pandas")
    with pytest.raises(QKFormsError, match="cannot read a table from Series"):
        as_table(pd.Series([1.0, 2.0]))


def test_concat_of_one_table_and_column_order() -> None:
    """``concat`` of one table is that table; several tables take the first one's column
    order (columns missing from a later table are null there)."""
    a = Table({"x": [1.0], "y": ["p"]})
    assert concat([a]) == a
    b = Table({"y": ["q", "r"], "x": [2.0, 3.0]})
    c = concat([a, b])
    assert c.columns == ["x", "y"] and c["x"].tolist() == [1.0, 2.0, 3.0]
    assert concat([b, a]).columns == ["y", "x"]
    assert concat([a, Table({"x": [4.0]})])["y"].tolist() == ["p", None]


def test_float_and_text_columns_compare_unequal_without_error() -> None:
    """Table equality never raises: a float column and a text column with the same
    spelling are different tables; ints and floats of equal value are equal."""
    assert Table({"x": [1.0, 2.0]}) != Table({"x": ["1.0", "2.0"]})
    assert Table({"x": ["1.0", "2.0"]}) != Table({"x": [1.0, 2.0]})
    assert Table({"x": [1, 2]}) == Table({"x": [1.0, 2.0]})

"""Per-head samples, synthetic survey rows, layer tasks and table columns at their edges.

Each test here kills a mutant of ``qkforms.stats`` that the rest of the suite let through
(``scripts/mutation.py``): order and thresholds of the samples, defaults of the synthetic
rows, the one-(model, layer) rule of a layer task, and ragged table columns.
"""

from __future__ import annotations

import numpy as np
import pytest

from qkforms import Head
from qkforms.errors import QKFormsError
from qkforms.stats.layer import layer_task
from qkforms.stats.spectral import SAMPLES, head_samples
from qkforms.stats.synthetic_rows import survey_rows
from qkforms.stats.table import Table
from qkforms.tolerances import REDUCED_TOL


def test_head_samples_are_decreasing_and_relative_to_the_largest_value() -> None:
    big = 1e3
    eig = np.array([big, 3.0, 5e-3 * REDUCED_TOL * big, 0.0, -2.0 * REDUCED_TOL * big, -7.0])
    s = head_samples(eig, [4.0, 1e-9 * REDUCED_TOL, 2.0], [0.5, 3.0, 0.0])
    assert s["lambda_pos"].tolist() == [big, 3.0]  # 5e-3 * tol * max is "zero"
    assert s["lambda_neg"].tolist() == [7.0, 2.0 * REDUCED_TOL * big]
    assert s["sigma_T"].tolist() == [4.0, 2.0]
    assert s["abs_eig_L"].tolist() == [3.0, 0.5]
    for name in SAMPLES:
        assert np.all(np.diff(s[name]) <= 0), name
    empty = head_samples([2.0, 1.0], None, None)  # no negative eigenvalue, nothing else
    assert empty["lambda_neg"].size == 0 and empty["sigma_T"].size == 0
    assert head_samples(np.zeros(4), [0.0], [0.0])["lambda_pos"].size == 0


def test_survey_rows_defaults_one_layer_and_no_certified_columns() -> None:
    rng = np.random.default_rng(0)
    heads = [Head(*rng.standard_normal((2, 2, 8))) for _ in range(3)]
    h, s = survey_rows("m", heads)
    assert h["layer"] == [0, 0, 0] and h["head"] == [0, 1, 2] and s["layer"] == [0, 0, 0]
    assert h["a_lo"] == [None, None, None] and h["theta_dist_hi"] == [None] * 3


def test_layer_task_takes_one_model_and_layer() -> None:
    rng = np.random.default_rng(1)
    h, s = survey_rows("m", [Head(*rng.standard_normal((2, 2, 8))) for _ in range(4)],
                       heads_per_layer=2)
    with pytest.raises(QKFormsError, match="several"):
        layer_task(h, s, fits=False, baseline=False)
    other = dict(h, model=["m", "n", "m", "n"], layer=[0, 0, 0, 0])
    with pytest.raises(QKFormsError, match="several"):
        layer_task(other, s, fits=False, baseline=False)
    one = {k: v[:2] for k, v in h.items()}
    sp = {k: v[:2] for k, v in s.items() if k != "abs_eig_L"}  # a missing column is null
    out = layer_task(one, sp, fits=False, baseline=False)
    assert out["head_stats"]["head"] == [0, 1] and out["head_stats"]["layer"] == [0, 0]
    assert out["baseline"]["head"] == []  # baseline=False


def test_table_columns_ragged_and_two_dimensional() -> None:
    t = Table({"x": np.ones((2, 3)), "y": [None, [1.0, 2.0]], "z": np.arange(2)})
    assert t["x"].dtype == object and len(t["x"]) == 2 and t["x"][0].tolist() == [1.0] * 3
    assert t["y"][0] is None and t["y"][1].tolist() == [1.0, 2.0]
    assert t["z"].tolist() == [0, 1]


def test_baseline_counts_and_cap() -> None:
    from qkforms.stats.baseline import BASELINE_COLUMNS, baseline_heads

    for count in (0, 3, 8, 11):  # not multiples of the internal chunk too
        b = baseline_heads(count, N=12, n=3, seed=0, key=("m", 0))
        assert all(len(b[c]) == count for c in BASELINE_COLUMNS), count
    rng = np.random.default_rng(2)
    h, s = survey_rows("m", [Head(*rng.standard_normal((2, 2, 8))) for _ in range(3)])
    out = layer_task(h, s, fits=False, baseline=True, baseline_max_heads=1)
    assert len(out["baseline"]["head"]) == 1
    out = layer_task(h, s, fits=False, baseline=True)
    assert len(out["baseline"]["head"]) == 3


def test_rows_from_spectrum_are_those_of_diag_lambda() -> None:
    from qkforms import profile
    from qkforms.stats.synthetic_rows import rows_from_spectrum

    lam = [3.0, -2.0, 1.0, -0.5, 0.25, -4.0]  # unsorted on purpose
    h, s = rows_from_spectrum("sym", [lam, lam], N=10)
    assert h["layer"] == [0, 0] and h["head"] == [0, 1] and h["N"] == [10, 10]
    assert h["n"] == [3, 3]
    assert s["eig_S"][0] == sorted(lam, reverse=True)
    assert s["abs_eig_L"][0] == [4.0, 3.0, 2.0] and s["sv_T"][0] == [0.0, 0.0, 0.0]
    # the statistics equal those of an actual head whose form has this symmetric part
    ref = profile(np.diag(lam))
    assert (h["a"][0], h["b"][0], h["c"][0], h["d"][0]) == pytest.approx(tuple(ref))
    sv2 = np.sort(np.square(lam))[::-1]
    assert h["participation_ratio"][0] == pytest.approx(sv2.sum() ** 2 / np.sum(sv2**2))
    assert h["trace_ratio"][0] == pytest.approx(abs(sum(lam)) / np.sqrt(sum(x * x for x in lam)))


def test_cliffs_and_ratio_intervals_of_one_element_samples() -> None:
    from qkforms.stats.bootstrap import cliffs_delta_ci, ratio_of_medians_ci, rng_for

    est, _, _ = ratio_of_medians_ci([2.0], [1.0, 1.0], rng=rng_for(0, "one"), n_boot=10)
    assert est == 2.0
    est, _, _ = cliffs_delta_ci([2.0], [1.0, 3.0], rng=rng_for(0, "one"), n_boot=10)
    assert est == 0.0


def test_table_formatting_equality_and_concat() -> None:
    from qkforms.stats.table import _fmt, concat

    assert _fmt(1.5e-7, 4) == "1.500e-07" and _fmt(2.5e6, 3) == "2.50e+06"
    assert _fmt(0.0, 3) == "0.000" and _fmt(0.12345, 3) == "0.123"
    a = Table({"x": [1.0, np.nan], "k": [1, 2]})
    assert a == Table({"x": [1.0, np.nan], "k": [1, 2]})
    assert a != Table({"x": [1.0, 2.0], "k": [1, 2]})
    assert a != Table({"x": [1.0, np.nan], "k": [1, 3]})
    both = concat([a, Table({"x": [3.0], "k": [5]})])
    assert both.columns == ["x", "k"] and both["k"].tolist() == [1, 2, 5]


def test_geometric_error_pads_shorter_lists_with_zeros() -> None:
    """``geo_rel_err`` pairs decreasing lists index-wise after zero-padding the shorter
    ones; a norm of exactly 1 is an ordinary norm (only ``sigma = 0`` is NaN)."""
    from qkforms.stats.spectral import geo_rel_err

    assert geo_rel_err([4.0, 1.0], [1.0], [2.0]) == 0.0  # 1 has no negative partner
    assert geo_rel_err([4.0], [1.0], [2.0, 1.0]) == pytest.approx(1 / np.sqrt(5.0))
    assert geo_rel_err([1.0], [1.0], [1.0]) == 0.0
    assert geo_rel_err([1.0], [4.0], [1.0]) == pytest.approx(1.0)
    assert np.isnan(geo_rel_err([1.0], [1.0], [0.0]))


def test_rows_from_spectrum_default_dimension_and_leading_value() -> None:
    """``rows_from_spectrum``: ``N`` defaults to ``2n`` (the spectrum's length); the
    stable rank and the leading share use the largest squared singular value."""
    from qkforms.stats.synthetic_rows import rows_from_spectrum

    lam = np.array([3.0, 1.0, -2.0, -0.5])
    h, _ = rows_from_spectrum("m", [lam])
    assert h["N"] == [4] and h["n"] == [2] and h["n_zero"] == [0]
    sq = lam**2
    assert h["stable_rank"][0] == pytest.approx(sq.sum() / sq.max())
    assert h["leading_share"][0] == pytest.approx(sq.max() / sq.sum())
    h, _ = rows_from_spectrum("m", [lam], N=10)
    assert h["N"] == [10] and h["n_zero"] == [6]


def test_small_heads_have_their_exact_skew_share() -> None:
    """``a = |T|^2/|L|^2`` does not depend on the scale of the head: a head scaled down
    to ``|T|^2 << 1`` has the same ``a`` as the original (no floor on ``|T|^2``), in the
    synthetic rows and in the Gaussian baseline of a tiny shape."""
    from qkforms.stats.baseline import baseline_heads
    from qkforms.stats.bootstrap import rng_for

    rng = np.random.default_rng(5)
    Q, K = rng.standard_normal((2, 2, 6))
    L = K.T @ Q
    a = np.sum(((L - L.T) / 2) ** 2) / np.sum(L**2)
    for scale in (1.0, 1e-2):
        h, _ = survey_rows("m", [Head(Q * scale, K * scale)])
        assert h["a"][0] == pytest.approx(a, rel=1e-9)
    rows = baseline_heads(8, N=2, n=1, seed=0, key=("m", 0, 2, 1))
    r = rng_for(0, "gaussian-baseline", "m", 0, 2, 1)
    W_Q, W_K = r.standard_normal((8, 1, 2)), r.standard_normal((8, 1, 2))
    L = np.swapaxes(W_K, -1, -2) @ W_Q
    skew = np.sum(((L - np.swapaxes(L, -1, -2)) / 2) ** 2, axis=(1, 2))
    assert np.min(skew) < 1.0  # the case this test is about
    assert np.asarray(rows["a"]) == pytest.approx(skew / np.sum(L**2, axis=(1, 2)), rel=1e-9)


def test_layer_task_defaults_are_seed_zero_with_fits() -> None:
    """``layer_task`` without options is ``seed=0, fits=True`` (the documented defaults)."""
    h, s = survey_rows("m", [Head(*np.random.default_rng(2).standard_normal((2, 3, 12)))
                             for _ in range(3)])
    default = layer_task(Table(h), Table(s))
    explicit = layer_task(Table(h), Table(s), seed=0, fits=True)
    assert "lambda_pos_best" in default["head_stats"]
    assert default["head_stats"]["lambda_pos_best"] == explicit["head_stats"]["lambda_pos_best"]
    assert default["baseline"]["a"] == explicit["baseline"]["a"]
    other = layer_task(Table(h), Table(s), seed=1, fits=True)
    assert other["baseline"]["a"] != default["baseline"]["a"]


def test_ratio_of_medians_with_a_one_element_denominator_and_no_warning_when_empty() -> None:
    """A one-element sample on either side is a sample (its median is the value); an empty
    side gives NaN silently (no RuntimeWarning about empty slices)."""
    import warnings

    from qkforms.stats.bootstrap import ratio_of_medians_ci, rng_for

    est, lo, hi = ratio_of_medians_ci([2.0, 6.0], [2.0], rng=rng_for(0, "one"), n_boot=10)
    assert est == 2.0 and 1.0 <= lo <= hi <= 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x, y in (([1.0, 2.0], []), ([], [1.0, 2.0])):
            assert all(np.isnan(v) for v in ratio_of_medians_ci(x, y, rng=rng_for(0, "e"),
                                                                   n_boot=10))


def test_default_bootstrap_size_is_the_documented_1000() -> None:
    """Intervals use 1000 replicates unless told otherwise (docs/statistics.md, ``--bootstrap``)."""
    from qkforms.stats.bootstrap import median_ci, rng_for

    x = np.random.default_rng(1).gamma(2.0, size=50)
    assert median_ci(x, rng=rng_for(0, "d")) == median_ci(x, rng=rng_for(0, "d"), n_boot=1000)
    assert median_ci(x, rng=rng_for(0, "d")) != median_ci(x, rng=rng_for(0, "d"), n_boot=1001)

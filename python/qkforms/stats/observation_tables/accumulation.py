"""``accumulation`` and ``accumulation_test``: accumulation of the profiles near Theta,
with effective-rank checks, and its test against a Gaussian and a uniform-simplex null
(docs/statistics.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms import theta_distance
from qkforms.stats.bootstrap import cliffs_delta_ci, rng_for
from qkforms.stats.cells import (
    POOLED,
    Context,
    floats,
    ordered_unique,
    put_median,
    put_ratio,
    put_share,
    rows_to_table,
    scopes,
)
from qkforms.stats.observation_tables.decisions import (
    decisions,
    is_certified,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table
from qkforms.tolerances import NEAR_THETA

__all__ = ["build"]


def _uniform_simplex_null(count: int, seed: int, label: str) -> NDArray[np.float64]:
    if count == 0:
        return np.zeros(0)
    rng = rng_for(seed, "uniform-simplex", label)
    pts = rng.dirichlet(np.ones(4), size=count)
    return np.asarray(theta_distance(pts), dtype=np.float64).reshape(count)


def _put_t_fit(row: dict[str, Any], finite: NDArray) -> None:
    """Student-t fit and 25 % trimmed mean of the finite ``b - a`` of a row's heads."""
    # scipy loads when the table is built, not with ``import qkforms.stats``
    from scipy import stats

    if finite.size >= 3 and np.std(finite) > 0:
        df, loc, scale = stats.t.fit(finite)
        row["b_minus_a_t_df"], row["b_minus_a_t_loc"], row["b_minus_a_t_scale"] = (
            float(df), float(loc), float(scale))
        row["b_minus_a_trimmed_mean25"] = float(stats.trim_mean(finite, 0.25))
    else:
        row["b_minus_a_t_df"] = row["b_minus_a_t_loc"] = row["b_minus_a_t_scale"] = np.nan
        row["b_minus_a_trimmed_mean25"] = float(np.mean(finite)) if finite.size else np.nan


def _test_row(ctx: Context, scope: tuple[str, str], x: NDArray, gx: Any, y: NDArray,
              gy: Any) -> dict[str, Any]:
    """The ``accumulation_test`` row of ``scope = (model label, null name)``: the distances
    to Theta ``x`` of the trained heads against those ``y`` of the null sample."""
    # scipy loads when the table is built, not with ``import qkforms.stats``
    from scipy import stats

    label, null_name = scope
    t: dict[str, Any] = {"model": label, "null": null_name, "n_trained": int(x.size),
                         "n_null": int(y.size)}
    put_median(t, ctx, ("acc-test", label, null_name), "trained", x, gx, None)
    test_key = ("acc-test", label, null_name)
    put_median(t, ctx, test_key, "null", y, gy, None, "null")
    put_ratio(t, ctx, test_key, "median_ratio", x, y, gx, gy, "null")
    est, lo, hi = cliffs_delta_ci(x, y, groups_x=gx, groups_y=gy, n_boot=ctx.n_boot,
                                  draws_x=ctx.draws(test_key),
                                  draws_y=ctx.draws(test_key, "null"))
    t["cliffs_delta"], t["cliffs_delta_ci_low"], t["cliffs_delta_ci_high"] = est, lo, hi
    if x.size and y.size:
        res = stats.mannwhitneyu(x, y, alternative="two-sided")
        t["mannwhitney_u"] = float(res.statistic)
        t["p_value"] = float(res.pvalue)
        less = stats.mannwhitneyu(x, y, alternative="less")
        t["p_value_closer"] = float(less.pvalue)
    else:
        t["mannwhitney_u"] = t["p_value"] = t["p_value_closer"] = np.nan
    put_share(t, ctx, ("acc-test", label, null_name), "below_null_median_share",
              x < t["null_median"], gx)
    return t


def _accumulation_tables(ok: Table, base: Table, ctx: Context) -> tuple[Table, Table]:
    rows, tests = [], []
    null_cache: dict[str, NDArray] = {}
    for label, mask, groups in scopes(ok["model"]):
        sub = ok.take(mask)
        g = None if groups is None else sub["model"]
        key = ("accumulation", label)
        row: dict[str, Any] = {"model": label, "heads": len(sub)}
        dist = floats(sub["theta_dist"])
        put_median(row, ctx, key, "theta_dist", dist, g)
        if is_certified(ok):
            verdict = decisions(sub, ("theta_dist",), lambda v: v <= NEAR_THETA)
            near = np.asarray([v is True for v in verdict], dtype=bool)
            row["near_theta_undecided"] = int(sum(v is None for v in verdict))
        else:
            near = dist <= NEAR_THETA
        row["near_theta"] = int(near.sum())
        put_share(row, ctx, key, "near_theta_share", near, g)
        put_median(row, ctx, key, "theta_L_dist", floats(sub["theta_L_dist"]), g, None)
        bma = floats(sub["b_minus_a"])
        put_median(row, ctx, key, "b_minus_a", bma, g)
        _put_t_fit(row, bma[np.isfinite(bma)])
        put_median(row, ctx, key, "a_over_b", floats(sub["a_over_b"]), g, None)
        cd = floats(sub["c"]) * floats(sub["d"])
        put_median(row, ctx, key, "cd", cd, g)
        pr = floats(sub["participation_ratio"])
        put_median(row, ctx, key, "participation_ratio", pr, g)
        put_median(row, ctx, key, "stable_rank", floats(sub["stable_rank"]), g, None)
        put_median(row, ctx, key, "leading_share", floats(sub["leading_share"]), g, None)
        row["pr_lt2"] = int(np.sum(pr < 2))
        put_share(row, ctx, key, "pr_lt2_share", pr < 2, g)
        row["pr_lt5"] = int(np.sum(pr < 5))
        put_share(row, ctx, key, "pr_lt5_share", pr < 5, g)
        bmask = base["model"] == label if label != POOLED else np.ones(len(base), dtype=bool)
        bsub = base.take(bmask) if len(base) else base
        nulls: list[tuple[str, NDArray, Any]] = []
        if len(bsub):
            bg = None if groups is None else bsub["model"]
            bdist = floats(bsub["theta_dist"])
            put_median(row, ctx, key, "baseline_theta_dist", bdist, bg, None, "baseline")
            put_median(row, ctx, key, "baseline_participation_ratio",
                        floats(bsub["participation_ratio"]), bg, None, "baseline")
            nulls.append(("gaussian", bdist, bg))
        if label == POOLED:
            names = ordered_unique(sub["model"].tolist())
            udist = np.concatenate([null_cache[m] for m in names])
            ug = np.concatenate([[m] * len(null_cache[m]) for m in names])
        else:
            udist = _uniform_simplex_null(int(np.isfinite(dist).sum()), ctx.seed, label)
            null_cache[label] = udist
            ug = None
        nulls.append(("uniform_simplex", udist, ug))
        rows.append(row)
        for null_name, y, gy in nulls:
            x = dist[np.isfinite(dist)]
            gx = None if g is None else np.asarray(g)[np.isfinite(dist)]
            tests.append(_test_row(ctx, (label, null_name), x, gx, y, gy))
    return rows_to_table(rows), rows_to_table(tests)


def build(inputs: TableInputs) -> tuple[Table, Table]:
    """The ``accumulation`` and ``accumulation_test`` tables (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> table, test = build(inputs)
    >>> table.row(0)["heads"], test["null"].tolist()
    (6, ['gaussian', 'uniform_simplex', 'gaussian', 'uniform_simplex'])
    """
    return _accumulation_tables(inputs.ok, inputs.base, inputs.ctx)

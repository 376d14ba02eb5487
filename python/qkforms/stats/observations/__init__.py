"""Observation tables from survey outputs (``docs/theory.md`` §12.3–§12.6, §13;
docs/statistics.md).

:func:`observations` turns the survey's per-head rows (``heads.parquet``) and spectra
(``spectra.parquet``) into one table per observation, with a row per model and a
pooled row (``model == "ALL"``). Every median, share and ratio carries a 95 %
bootstrap interval over heads (``<stat>_ci_low``, ``<stat>_ci_high``; see
:mod:`qkforms.stats.bootstrap`). The exact definition of every column is in
``docs/statistics.md``.

Examples
--------
>>> import numpy as np
>>> from qkforms import Head
>>> from qkforms.stats import observations
>>> from qkforms.stats.synthetic_rows import survey_rows
>>> rng = np.random.default_rng(0)
>>> heads = [Head(*rng.standard_normal((2, 4, 32))) for _ in range(6)]
>>> h, s = survey_rows("toy", heads, heads_per_layer=3)
>>> tables = observations(h, s, n_boot=50, fits=False)
>>> tables["observation1_balance"].row(0)["balanced"]
6
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms import _progress
from qkforms.errors import QKFormsError
from qkforms.stats.bootstrap import (
    DEFAULT_BOOT,
    cliffs_delta_ci,
    rng_for,
)
from qkforms.stats.cells import (
    BALANCE_READ_COLUMNS,
    POOLED,
    Context,
    floats,
    ordered_unique,
    put_median,
    put_ratio,
    put_share,
    rows_to_table,
    scopes,
    signature_masks,
)
from qkforms.stats.table import Table, as_table
from qkforms.stats.training import SERIES_TABLES, has_steps, last_step_rows, series_tables
from qkforms.survey.schema import SPECTRA_READ_COLUMNS, STAT_READ_COLUMNS
from qkforms.tolerances import NEAR_THETA, SPECTRAL_TYPE_RADIUS

__all__ = [
    "HEAD_COLUMNS",
    "POOLED",
    "signature_masks",
    "STRONGLY_SYMMETRIC",
    "TABLES",
    "UNDECIDED",
    "observations",
]

#: symmetric-energy threshold of a "strongly symmetric" head
STRONGLY_SYMMETRIC = 0.75
#: columns of heads.parquet that the statistics read (from the schema table)
HEAD_COLUMNS: tuple[str, ...] = STAT_READ_COLUMNS
#: label of a head whose certified intervals do not decide a rule (``--certify`` runs)
UNDECIDED = "undecided"
#: names of the returned tables, in report order
TABLES: tuple[str, ...] = (
    "observation1_balance",
    "symmetric_energy",
    "pairing",
    "proportional_lobes",
    "accumulation",
    "accumulation_test",
    "spectral_types",
    "spectral_types_sensitivity",
    "certified",
    "bands",
    "spectral_geometry",
    "families",
    "families_summary",
    "by_layer",
    "head_stats",
    "baseline_heads",
    *SERIES_TABLES,
)


# ---------------------------------------------------------------------------------------
# helpers


def _is_certified(t: Table) -> bool:
    """Whether the heads carry certified intervals (a ``--certify`` survey)."""
    if "theta_dist_lo" not in t or "theta_dist_hi" not in t:
        return False
    return bool(len(t)) and bool(np.any(~np.isnan(floats(t["theta_dist_lo"]))))


def _is_banded(t: Table) -> bool:
    """Whether the heads carry storage-precision bands (a ``--precision-bands`` survey)."""
    if "theta_dist_band_lo" not in t:
        return False
    return bool(len(t)) and bool(np.any(~np.isnan(floats(t["theta_dist_band_lo"]))))


#: interval column suffixes: certified enclosures, storage-precision bands
_CERTIFIED_ENDS = ("lo", "hi")
_BAND_ENDS = ("band_lo", "band_hi")


def _decisions(t: Table, stats: Sequence[str], rule: Any,
               ends: tuple[str, str] = _CERTIFIED_ENDS) -> NDArray[np.object_]:
    """Per head, the value of a float rule on the intervals of ``stats`` (certified, or
    the bands with ``ends=_BAND_ENDS``), or None where the intervals do not decide it
    (:func:`qkforms.exact.decide`)."""
    from qkforms.exact.enclosure import decide

    return decide(rule, [floats(t[f"{s}_{ends[0]}"]) for s in stats],
                  [floats(t[f"{s}_{ends[1]}"]) for s in stats])


def _certified_labels(t: Table, rule_on_profiles: Any,
                      ends: tuple[str, str] = _CERTIFIED_ENDS) -> NDArray[np.str_]:
    """A profile rule (e.g. a spectral-type rule) decided on the boxes of ``a, b, c, d``.

    Heads whose box the rule does not decide get :data:`UNDECIDED`; so do heads whose
    box reaches ``b = c = d = 0`` (where the symmetric profile is undefined).
    """
    lows = np.stack([floats(t[f"{s}_{ends[0]}"]) for s in "abcd"], axis=1)
    usable = lows[:, 1:].sum(axis=1) > 0
    out = np.full(len(t), UNDECIDED, dtype=object)
    idx = np.flatnonzero(usable)
    if idx.size:
        sub = t.take(idx)
        verdict = _decisions(sub, "abcd", lambda a, b, c, d: rule_on_profiles(
            np.stack([a, b, c, d], axis=-1)), ends)
        out[idx] = [UNDECIDED if v is None else str(v) for v in verdict]
    return np.asarray(out.tolist(), dtype=str) if len(t) else np.asarray([], str)


# ---------------------------------------------------------------------------------------
# execution of the per-layer tasks


def _layer_payloads(
    heads: Table, spectra: Table
) -> tuple[list[tuple[dict, dict]], NDArray[np.int64]]:
    """Split ok heads and spectra by (model, layer); return payloads and the head order."""
    models = heads["model"].tolist()
    layers = [int(v) for v in heads["layer"].tolist()]
    model_order = {m: i for i, m in enumerate(ordered_unique(models))}
    keys = sorted(set(zip(models, layers, strict=True)), key=lambda k: (model_order[k[0]], k[1]))
    by_key: dict[tuple, list[int]] = {}
    for i, k in enumerate(zip(models, layers, strict=True)):
        by_key.setdefault(k, []).append(i)
    s_models = spectra["model"].tolist() if len(spectra) else []
    s_layers = [int(v) for v in spectra["layer"].tolist()] if len(spectra) else []
    s_by_key: dict[tuple, list[int]] = {}
    for i, k in enumerate(zip(s_models, s_layers, strict=True)):
        s_by_key.setdefault(k, []).append(i)
    payloads = []
    order: list[int] = []
    for k in keys:
        idx = by_key[k]
        order += idx
        sidx = s_by_key.get(k, [])
        h = {name: heads[name][idx].tolist() for name in ("model", "layer", "head", "N", "n")}
        s = {
            name: [_to_list(v) for v in spectra[name][sidx]] if name in spectra else []
            for name in SPECTRA_READ_COLUMNS
        }
        payloads.append((h, s))
    return payloads, np.asarray(order, dtype=np.int64)


def _to_list(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _run_tasks(
    payloads: list[tuple[dict, dict]],
    *,
    seed: int,
    fits: bool,
    baseline: bool,
    baseline_max_heads: int | None,
    executor: str,
    scheduler: str | None,
    client: Any,
    n_workers: int,
) -> list[dict[str, dict[str, list[Any]]]]:
    from qkforms.stats.layer import fit_layers, layer_task
    from qkforms.threads import compute_threads, map_slices, single_threaded_libraries

    kwargs: dict[str, Any] = {"seed": seed, "fits": fits, "baseline": baseline,
                              "baseline_max_heads": baseline_max_heads}
    what = "stats: " + ("baseline and family fits" if baseline and fits else
                        "baseline" if baseline else "family fits" if fits else "layers")
    if executor == "local":
        # the thread policy (qkforms.threads): one BLAS/OpenMP thread, the fits of all
        # layers in one batch split over the cores; the same numbers as per-layer fits
        threads = compute_threads()
        with single_threaded_libraries(), _progress.phase(what, 2, unit="step") as bar:
            # each task is a pure function of its layer: slices of them run in threads
            results = [r for part in map_slices(
                lambda a, b: [layer_task(*payloads[i], **{**kwargs, "fits": False})
                              for i in range(a, b)], len(payloads), threads=threads)
                for r in part]
            bar.update()
            if fits:
                for res, cols in zip(results, fit_layers(payloads, threads=threads),
                                     strict=True):
                    res["head_stats"].update(cols)
            bar.update()
        return results
    if executor != "dask":
        raise QKFormsError(f"unknown executor {executor!r}; use 'local' or 'dask'")
    from qkforms.stats.executor import run_dask

    with _progress.phase(f"{what} (dask)", len(payloads), unit="layer") as bar:
        out = run_dask(payloads, kwargs, scheduler=scheduler, client=client,
                       n_workers=n_workers)
        bar.update(len(payloads))
    return out


def _merge(parts: list[dict[str, list[Any]]]) -> Table:
    names: list[str] = []
    for p in parts:
        for k in p:
            if k not in names:
                names.append(k)
    total: dict[str, list[Any]] = {k: [] for k in names}
    for p in parts:
        length = len(next(iter(p.values()))) if p else 0
        for k in names:
            total[k].extend(p.get(k, [None] * length))
    return Table(total) if names else Table()


# ---------------------------------------------------------------------------------------
# the tables


def _balance_table(heads_all: Table, ok: Table, ctx: Context) -> Table:
    """Observation 1: the counts of :func:`qkforms.survey.balance.balance_counts`, the share
    of balanced heads among those with a decided signature, and the smallest balance."""
    from qkforms.survey.balance import BALANCE_COUNTS, balance_counts

    rows = []
    all_models = heads_all["model"]
    ok_models = ok["model"]
    for label, mask, groups in scopes(all_models):
        okmask = ok_models == label if label != POOLED else np.ones(len(ok), dtype=bool)
        sub = ok.take(okmask)
        counts = balance_counts({c: heads_all.take(mask)[c].tolist()
                                 for c in BALANCE_READ_COLUMNS})
        row: dict[str, Any] = {"model": label}
        row.update({k: counts[k] for k in BALANCE_COUNTS})
        balanced, _ = signature_masks(sub)
        decided = ~np.isnan(floats(sub["n_pos"]))
        put_share(row, ctx, ("balance", label), "balanced_share", balanced[decided],
                   None if groups is None else sub["model"][decided])
        bal = floats(sub["balance"])
        row["balance_min"] = float(np.nanmin(bal)) if np.any(~np.isnan(bal)) else np.nan
        rows.append(row)
    return rows_to_table(rows)


def _sym_energy_table(ok: Table, base: Table, ctx: Context) -> Table:
    rows = []
    for label, mask, groups in scopes(ok["model"]):
        sub = ok.take(mask)
        g = None if groups is None else sub["model"]
        x = floats(sub["sym_energy"])
        N = floats(sub["N"])
        theory = (N + 1) / (2 * N)
        row: dict[str, Any] = {"model": label, "heads": len(sub)}
        Ns = sorted({int(v) for v in N if not np.isnan(v)})
        row["N"] = Ns[0] if len(Ns) == 1 else None
        ns = sorted({int(v) for v in floats(sub["n"]) if not np.isnan(v)})
        row["n"] = ns[0] if len(ns) == 1 else None
        row["baseline_theory"] = float(np.mean(theory)) if len(sub) else np.nan
        put_median(row, ctx, ("sym", label), "sym_energy", x, g)
        row["sym_energy_mean"] = float(np.nanmean(x)) if len(sub) else np.nan
        put_median(row, ctx, ("sym", label), "sym_energy_excess", x - theory, g, None)
        if _is_certified(ok):
            verdict = _decisions(sub, ("sym_energy",), lambda v: v >= STRONGLY_SYMMETRIC)
            strong = np.asarray([v is True for v in verdict], dtype=bool)
            row["strongly_symmetric_undecided"] = int(sum(v is None for v in verdict))
        else:
            strong = x >= STRONGLY_SYMMETRIC
        row["strongly_symmetric"] = int(strong.sum())
        put_share(row, ctx, ("sym", label), "strongly_symmetric_share", strong, g)
        bmask = base["model"] == label if label != POOLED else np.ones(len(base), dtype=bool)
        bsub = base.take(bmask) if len(base) else base
        row["baseline_heads"] = len(bsub)
        if len(bsub):
            bx = floats(bsub["sym_energy"])
            bg = None if groups is None else bsub["model"]
            row["baseline_sym_energy_mean"] = float(np.mean(bx))
            put_median(row, ctx, ("sym", label), "baseline_sym_energy", bx, bg, None,
                        "baseline")
            put_ratio(row, ctx, ("sym", label), "sym_energy_median_ratio", x, bx, g, bg)
        rows.append(row)
    return rows_to_table(rows)


def _pairing_table(ok: Table, base: Table, ctx: Context) -> Table:
    rows = []
    for label, mask, groups in scopes(ok["model"]):
        sub = ok.take(mask)
        g = None if groups is None else sub["model"]
        x = floats(sub["pairing"])
        row: dict[str, Any] = {"model": label, "heads": len(sub)}
        put_median(row, ctx, ("pairing", label), "pairing", x, g)
        bmask = base["model"] == label if label != POOLED else np.ones(len(base), dtype=bool)
        bsub = base.take(bmask) if len(base) else base
        row["baseline_heads"] = len(bsub)
        if len(bsub):
            bx = floats(bsub["pairing"])
            bg = None if groups is None else bsub["model"]
            put_median(row, ctx, ("pairing", label), "baseline_pairing", bx, bg,
                        sample="baseline")
            put_ratio(row, ctx, ("pairing", label), "pairing_median_ratio", x, bx, g, bg)
            put_share(row, ctx, ("pairing", label), "below_baseline_min_share",
                       x < np.min(bx), g)
        rows.append(row)
    return rows_to_table(rows)


def _lobes_table(ok: Table, base: Table, ctx: Context) -> Table:
    rows = []
    names = ("lobe_departure", "pairing_gap", "rho", "thm5_dist")
    for label, mask, groups in scopes(ok["model"]):
        sub = ok.take(mask)
        g = None if groups is None else sub["model"]
        row: dict[str, Any] = {"model": label, "heads": len(sub)}
        for name in names:
            put_median(row, ctx, ("lobes", label), name, floats(sub[name]), g)
        bmask = base["model"] == label if label != POOLED else np.ones(len(base), dtype=bool)
        bsub = base.take(bmask) if len(base) else base
        if len(bsub):
            bg = None if groups is None else bsub["model"]
            for name in ("lobe_departure", "pairing_gap"):
                put_median(row, ctx, ("lobes", label), f"baseline_{name}",
                            floats(bsub[name]), bg, None, "baseline")
        rows.append(row)
    # range of the per-model medians on the pooled row
    per_model = rows[:-1]
    for name in names:
        meds = [r[f"{name}_median"] for r in per_model if not math.isnan(r[f"{name}_median"])]
        rows[-1][f"{name}_model_median_min"] = min(meds) if meds else np.nan
        rows[-1][f"{name}_model_median_max"] = max(meds) if meds else np.nan
    return rows_to_table(rows)


def _uniform_simplex_null(count: int, seed: int, label: str) -> NDArray[np.float64]:
    from qkforms import theta_distance

    if count == 0:
        return np.zeros(0)
    rng = rng_for(seed, "uniform-simplex", label)
    pts = rng.dirichlet(np.ones(4), size=count)
    return np.asarray(theta_distance(pts), dtype=np.float64).reshape(count)


def _accumulation_tables(ok: Table, base: Table, ctx: Context) -> tuple[Table, Table]:
    from scipy import stats

    rows, tests = [], []
    null_cache: dict[str, NDArray] = {}
    for label, mask, groups in scopes(ok["model"]):
        sub = ok.take(mask)
        g = None if groups is None else sub["model"]
        key = ("accumulation", label)
        row: dict[str, Any] = {"model": label, "heads": len(sub)}
        dist = floats(sub["theta_dist"])
        put_median(row, ctx, key, "theta_dist", dist, g)
        if _is_certified(ok):
            verdict = _decisions(sub, ("theta_dist",), lambda v: v <= NEAR_THETA)
            near = np.asarray([v is True for v in verdict], dtype=bool)
            row["near_theta_undecided"] = int(sum(v is None for v in verdict))
        else:
            near = dist <= NEAR_THETA
        row["near_theta"] = int(near.sum())
        put_share(row, ctx, key, "near_theta_share", near, g)
        put_median(row, ctx, key, "theta_L_dist", floats(sub["theta_L_dist"]), g, None)
        bma = floats(sub["b_minus_a"])
        put_median(row, ctx, key, "b_minus_a", bma, g)
        finite = bma[np.isfinite(bma)]
        if finite.size >= 3 and np.std(finite) > 0:
            df, loc, scale = stats.t.fit(finite)
            row["b_minus_a_t_df"], row["b_minus_a_t_loc"], row["b_minus_a_t_scale"] = (
                float(df), float(loc), float(scale))
            row["b_minus_a_trimmed_mean25"] = float(stats.trim_mean(finite, 0.25))
        else:
            row["b_minus_a_t_df"] = row["b_minus_a_t_loc"] = row["b_minus_a_t_scale"] = np.nan
            row["b_minus_a_trimmed_mean25"] = float(np.mean(finite)) if finite.size else np.nan
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
            tests.append(t)
    return rows_to_table(rows), rows_to_table(tests)


def _type_labels(ok: Table, seed: int) -> dict[str, NDArray]:
    from qkforms.stats.types import imbalance_types, kmeans_types, radius_types

    prof = np.stack([floats(ok[c]) for c in ("a", "b", "c", "d")], axis=1)
    if _is_certified(ok):  # a head has a type only when its intervals decide it
        labels = {"radius": _certified_labels(ok, lambda q: radius_types(q, SPECTRAL_TYPE_RADIUS)),
                  "imbalance": _certified_labels(ok, imbalance_types)}
    else:
        labels = {"radius": radius_types(prof, SPECTRAL_TYPE_RADIUS),
                  "imbalance": imbalance_types(prof)}
    km = np.empty(len(ok), dtype=object)
    models = ok["model"]
    for m in ordered_unique(models.tolist()):
        idx = np.flatnonzero(models == m)
        km[idx] = kmeans_types([ok["_eig_S"][i] for i in idx], seed=seed)
    labels["kmeans"] = np.asarray(km.tolist(), dtype=str) if len(ok) else np.asarray([], str)
    return labels


def _types_tables(ok: Table, labels: dict[str, NDArray], ctx: Context) -> tuple[Table, Table]:
    from qkforms.stats.types import RADII, TYPES, best_k_silhouette, radius_types

    rows, sens = [], []
    c, d = floats(ok["c"]), floats(ok["d"])
    certified = _is_certified(ok)
    parity_undecided = np.zeros(len(ok), dtype=bool)
    if certified:
        verdict = _decisions(ok, ("c", "d"), lambda cc, dd: cc > dd)
        parity = np.asarray([v is True for v in verdict], dtype=bool)
        parity_undecided = np.asarray([v is None for v in verdict], dtype=bool)
    else:
        parity = c > d
    prof = np.stack([floats(ok[k]) for k in ("a", "b", "c", "d")], axis=1)
    survey_types = ok.get("spectral_type")
    for label, mask, groups in scopes(ok["model"]):
        g = None if groups is None else ok["model"][mask]
        best_k = None
        if label != POOLED:
            idx = np.flatnonzero(mask)
            best_k = best_k_silhouette([ok["_eig_S"][i] for i in idx], seed=0)
        for rule in ("radius", "imbalance", "kmeans"):
            lab = labels[rule][mask]
            row: dict[str, Any] = {"model": label, "rule": rule, "heads": int(mask.sum())}
            for t in TYPES:
                row[f"n_{t}"] = int(np.sum(lab == t))
            if certified:
                row["n_undecided"] = int(np.sum(lab == UNDECIDED))
            for t in TYPES:
                put_share(row, ctx, ("types", label, rule), f"share_{t}", lab == t, g)
            put_share(row, ctx, ("types", label, rule), "parity_plus_share", parity[mask], g)
            if certified:
                row["parity_undecided"] = int(parity_undecided[mask].sum())
            row["kmeans_best_k"] = best_k if rule == "kmeans" else None
            if rule == "radius" and survey_types is not None:
                st = np.asarray([str(v) for v in survey_types[mask]])
                put_share(row, ctx, ("types", label, rule), "survey_type_agreement",
                           st == lab, g)
            rows.append(row)
        for r in RADII:
            if not mask.any():
                lab = np.asarray([], str)
            elif certified:
                lab = _certified_labels(ok.take(mask), lambda q, r=r: radius_types(q, r))
            else:
                lab = radius_types(prof[mask], r)
            row = {"model": label, "radius": r, "heads": int(mask.sum())}
            for t in TYPES:
                row[f"n_{t}"] = int(np.sum(lab == t))
            if certified:
                row["n_undecided"] = int(np.sum(lab == UNDECIDED))
            for t in TYPES:
                put_share(row, ctx, ("types-sens", label, r), f"share_{t}", lab == t, g)
            sens.append(row)
    return rows_to_table(rows), rows_to_table(sens)


#: (column prefix, statistics, rule) of the certified decisions of the ``certified`` table
CERTIFIED_RULES: tuple[tuple[str, tuple[str, ...], Any], ...] = (
    ("near_theta", ("theta_dist",), lambda x: x <= NEAR_THETA),
    ("strongly_symmetric", ("sym_energy",), lambda x: x >= STRONGLY_SYMMETRIC),
    ("face_b0", ("b",), lambda x: x <= 0),
    ("face_c0", ("c",), lambda x: x <= 0),
    ("face_d0", ("d",), lambda x: x <= 0),
    ("cd0", ("c", "d"), lambda c, d: c * d <= 0),
    ("parity_plus", ("c", "d"), lambda c, d: c > d),
)


def _certified_table(ok: Table, types_radius: NDArray) -> Table:
    """Decided / undecided counts of every threshold rule (``--certify`` runs; else empty)."""
    from qkforms.exact.enclosure import CERTIFIED_STATS

    if not _is_certified(ok):
        return Table()
    verdicts = {name: _decisions(ok, stats, rule) for name, stats, rule in CERTIFIED_RULES}
    lo = {s: floats(ok[f"{s}_lo"]) for s in CERTIFIED_STATS}
    hi = {s: floats(ok[f"{s}_hi"]) for s in CERTIFIED_STATS}
    method = ok.get("certify_method")
    rows = []
    for label, mask, _ in scopes(ok["model"]):
        certified = mask & ~np.isnan(lo["theta_dist"])
        row: dict[str, Any] = {"model": label, "heads": int(mask.sum()),
                               "heads_certified": int(certified.sum())}
        if method is not None:
            m = np.asarray([str(v) for v in method], dtype=object)
            row["method_rump"] = int(np.sum(mask & (m == "rump")))
            row["method_charpoly"] = int(np.sum(mask & (m == "charpoly")))
        widths = [hi[s][mask] - lo[s][mask] for s in CERTIFIED_STATS]
        finite = np.concatenate([w[np.isfinite(w)] for w in widths]) if widths else np.zeros(0)
        row["max_width"] = float(finite.max()) if finite.size else np.nan
        for name, _, _ in CERTIFIED_RULES:
            v = verdicts[name][mask]
            row[f"{name}_yes"] = int(sum(x is True for x in v))
            row[f"{name}_no"] = int(sum(x is False for x in v))
            row[f"{name}_undecided"] = int(sum(x is None for x in v))
        lab = types_radius[mask]
        for t in ("I+", "II", "I-", UNDECIDED):
            row[f"type_{t}"] = int(np.sum(lab == t))
        rows.append(row)
    return rows_to_table(rows)


def _band_type_labels(ok: Table) -> NDArray[np.str_] | None:
    """The radius-rule types decided on the boxes of the bands (None without bands)."""
    from qkforms.stats.types import radius_types

    if not _is_banded(ok):
        return None
    return _certified_labels(ok, lambda q: radius_types(q, SPECTRAL_TYPE_RADIUS), _BAND_ENDS)


def _bands_table(ok: Table, types: NDArray[np.str_] | None) -> Table:
    """Decisions stable under the storage-precision bands (``--precision-bands``; else empty).

    A decision is *stable* when the rule has the same value at every corner of the box of
    the head's bands (:func:`qkforms.exact.decide`), hence for every weight within the
    storage precision (for a rigorous band; to first order for a first-order band).
    """
    from qkforms.bands import BAND_KINDS, BAND_STATS

    if types is None:
        return Table()
    verdicts = {name: _decisions(ok, stats, rule, _BAND_ENDS)
                for name, stats, rule in CERTIFIED_RULES}
    lo = {s: floats(ok[f"{s}_band_lo"]) for s in BAND_STATS}
    hi = {s: floats(ok[f"{s}_band_hi"]) for s in BAND_STATS}
    kind = np.asarray([str(v) for v in ok["band_kind"]], dtype=object)
    sig = np.asarray([v is not None and bool(v) for v in ok["signature_band_stable"]],
                     dtype=bool)
    radius = floats(ok["band_radius"])
    rows = []
    for label, mask, _ in scopes(ok["model"]):
        banded = mask & ~np.isnan(lo["theta_dist"])
        row: dict[str, Any] = {"model": label, "heads": int(mask.sum()),
                               "heads_banded": int(banded.sum())}
        for k in BAND_KINDS:
            row[f"kind_{k.replace('-', '_')}"] = int(np.sum(banded & (kind == k)))
        row["band_radius_median"] = (float(np.median(radius[banded])) if banded.any()
                                     else np.nan)
        for s in BAND_STATS:
            w = (hi[s] - lo[s])[banded]
            w = w[np.isfinite(w)]
            row[f"{s}_width_median"] = float(np.median(w)) if w.size else np.nan
        for name, _, _ in CERTIFIED_RULES:
            v = verdicts[name][banded]
            row[f"{name}_stable_yes"] = int(sum(x is True for x in v))
            row[f"{name}_stable_no"] = int(sum(x is False for x in v))
            row[f"{name}_unstable"] = int(sum(x is None for x in v))
        lab = types[banded]
        for t in ("I+", "II", "I-"):
            row[f"type_{t}"] = int(np.sum(lab == t))
        row["types_stable"] = int(np.sum(lab != UNDECIDED))
        row["types_unstable"] = int(np.sum(lab == UNDECIDED))
        row["signature_stable"] = int(np.sum(banded & sig))
        row["signature_unstable"] = int(np.sum(banded & ~sig))
        rows.append(row)
    return rows_to_table(rows)


def _geometry_table(hs: Table, ctx: Context) -> Table:
    rows = []
    for label, mask, groups in scopes(hs["model"]):
        sub = hs.take(mask)
        g = None if groups is None else sub["model"]
        key = ("geometry", label)
        kp, kn, kt = floats(sub["k_pos"]), floats(sub["k_neg"]), floats(sub["k_T"])
        fitted = np.isfinite(kp) & np.isfinite(kn) & np.isfinite(kt)
        allgt1 = np.asarray(sub["all_shapes_gt1"], dtype=bool) & fitted
        row: dict[str, Any] = {
            "model": label,
            "heads": len(sub),
            "heads_gamma_fitted": int(fitted.sum()),
            "heads_all_shapes_gt1": int(allgt1.sum()),
            "excluded_shapes_le1": int(fitted.sum() - allgt1.sum()),
        }
        for name, v in (("k_pos", kp), ("k_neg", kn), ("k_T", kt)):
            put_median(row, ctx, key, name, v, g, None)
        for name in ("mode_ratio", "shape_ratio", "sorted_corr", "geo_rel_err"):
            put_median(row, ctx, key, name, floats(sub[name]), g)
        rows.append(row)
    return rows_to_table(rows)


def _families_tables(hs: Table, ctx: Context) -> tuple[Table, Table]:
    from qkforms.stats.spectral import SAMPLES

    rows = []
    if f"{SAMPLES[0]}_best" not in hs:
        return Table(), Table()
    for label, mask, groups in scopes(hs["model"]):
        sub = hs.take(mask)
        for s in SAMPLES:
            best = sub[f"{s}_best"]
            fitted = np.asarray([b is not None for b in best], dtype=bool)
            f = sub.take(fitted)
            g = None if groups is None else f["model"]
            key = ("families", label, s)
            row: dict[str, Any] = {"model": label, "sample": s, "heads_fitted": int(fitted.sum())}
            bb = np.asarray([str(b) for b in f[f"{s}_best"]])
            put_share(row, ctx, key, "gengamma_share", bb == "gengamma", g)
            put_share(row, ctx, key, "lognormal_share", bb == "lognormal", g)
            aic = floats(f[f"{s}_aic_gg"]) <= floats(f[f"{s}_aic_ln"])
            bic = floats(f[f"{s}_bic_gg"]) <= floats(f[f"{s}_bic_ln"])
            put_share(row, ctx, key, "aic_gengamma_share", aic, g)
            put_share(row, ctx, key, "bic_gengamma_share", bic, g)
            ks = floats(f[f"{s}_ks_gg"])
            put_median(row, ctx, key, "ks_gengamma", ks, g, (25, 75))
            put_median(row, ctx, key, "ks_lognormal", floats(f[f"{s}_ks_ln"]), g, (25, 75))
            put_median(row, ctx, key, "delta_loglik",
                        floats(f[f"{s}_gg_loglik"]) - floats(f[f"{s}_ln_loglik"]), g, None)
            rows.append(row)
    fam = rows_to_table(rows)
    summary = []
    models = np.asarray([str(m) for m in hs["model"]])
    for s in SAMPLES:
        per = [r for r in rows if r["sample"] == s and r["model"] != POOLED
               and r["heads_fitted"] > 0]
        gg = np.asarray([r["gengamma_share"] for r in per])
        ln = np.asarray([r["lognormal_share"] for r in per])
        ksm = np.asarray([r["ks_gengamma_median"] for r in per])
        row = {
            "sample": s,
            "models": len(per),
            "gengamma_share_mean": float(gg.mean()) if gg.size else np.nan,
            "gengamma_share_sd": float(gg.std(ddof=1)) if gg.size > 1 else np.nan,
            "lognormal_share_mean": float(ln.mean()) if ln.size else np.nan,
            "lognormal_share_sd": float(ln.std(ddof=1)) if ln.size > 1 else np.nan,
            "ks_gengamma_median_of_model_medians": float(np.median(ksm)) if ksm.size else np.nan,
        }
        # interval of the mean over models of the per-model share: heads resampled
        # within every model, the per-model shares and their mean recomputed
        best = np.asarray([str(b) for b in hs[f"{s}_best"]])
        reps = []
        rng = ctx.rng("families-summary", s)
        for r in per:
            member = np.flatnonzero((models == r["model"]) & (best != "None"))
            if ctx.n_boot > 0 and member.size:
                idx = member[rng.integers(0, member.size, size=(ctx.n_boot, member.size))]
                reps.append(np.mean(best[idx] == "gengamma", axis=1))
        for name, sign in (("gengamma_share_mean", 1.0), ("lognormal_share_mean", -1.0)):
            if reps:
                m = np.mean(reps, axis=0)
                m = m if sign > 0 else 1.0 - m
                lo, hi = np.quantile(m, [0.025, 0.975])
                row[f"{name}_ci_low"], row[f"{name}_ci_high"] = float(lo), float(hi)
            else:
                row[f"{name}_ci_low"] = row[f"{name}_ci_high"] = np.nan
        summary.append(row)
    return fam, rows_to_table(summary)


def _by_layer_table(ok: Table, base: Table, types_radius: NDArray, ctx: Context) -> Table:
    rows = []
    models = ok["model"]
    layers = np.asarray([int(v) for v in ok["layer"]])
    b_models = base["model"] if len(base) else np.asarray([])
    b_layers = np.asarray([int(v) for v in base["layer"]]) if len(base) else np.asarray([])
    for m in ordered_unique(models.tolist()):
        for layer in sorted(set(layers[models == m].tolist())):
            mask = (models == m) & (layers == layer)
            sub = ok.take(mask)
            key = ("by_layer", m, layer)
            row: dict[str, Any] = {"model": m, "layer": layer, "heads": len(sub)}
            for name in ("sym_energy", "pairing", "theta_dist", "participation_ratio"):
                put_median(row, ctx, key, name, floats(sub[name]), None, None)
            pr = floats(sub["participation_ratio"])
            row["pr_lt2"] = int(np.sum(pr < 2))
            row["pr_lt5"] = int(np.sum(pr < 5))
            lab = types_radius[mask]
            for t in ("I+", "II", "I-"):
                row[f"n_{t}"] = int(np.sum(lab == t))
            if np.any(lab == UNDECIDED):
                row["n_undecided"] = int(np.sum(lab == UNDECIDED))
            if len(base):
                bmask = (b_models == m) & (b_layers == layer)
                for name in ("sym_energy", "pairing", "theta_dist"):
                    bx = floats(base[name][bmask])
                    put_median(row, ctx, key, f"baseline_{name}", bx, None, None, "baseline")
            rows.append(row)
    return rows_to_table(rows)


# ---------------------------------------------------------------------------------------
# entry point


def observations(
    heads_df: Any,
    spectra_df: Any,
    *,
    seed: int = 0,
    fits: bool = True,
    n_boot: int = DEFAULT_BOOT,
    baseline: bool = True,
    baseline_max_heads: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    client: Any = None,
    n_workers: int = 2,
) -> dict[str, Table]:
    """All observation tables from the survey's per-head rows and spectra.

    Parameters
    ----------
    heads_df, spectra_df : Table, pandas DataFrame, pyarrow Table or dict of columns
        Contents of ``heads.parquet`` and ``spectra.parquet`` (architecture.md §5);
        several models pool into one table set.
    seed : int
        Seed of the Gaussian baseline, the uniform-simplex null and the bootstrap.
    fits : bool
        Fit generalized gamma and lognormal laws to the four per-head samples
        (the ``families`` tables); ``False`` skips them.
    n_boot : int
        Bootstrap replicates per interval (0: no intervals).
    baseline : bool
        Draw the Gaussian baseline survey (same (N, n) and heads per layer).
    baseline_max_heads : int, optional
        Cap on baseline heads per layer (default: as many as the layer has).
    executor : {"local", "dask"}
        Where the per-(model, layer) tasks run; both give the same tables.
    scheduler : str, optional
        Address of a dask scheduler (default: a new ``LocalCluster``).
    client : dask.distributed.Client, optional
        An existing client (takes precedence over ``scheduler``).
    n_workers : int
        Workers of the LocalCluster started when neither client nor scheduler is given.

    Returns
    -------
    dict of table name -> :class:`~qkforms.stats.table.Table` (see :data:`TABLES`).
    For a training run (rows with a ``step``) the observation tables describe each
    model's last checkpoint and the series tables (:mod:`qkforms.stats.training`) all
    steps; otherwise there are no series tables.

    Raises
    ------
    QKFormsError
        If a needed column is missing, a table fails its checks
        (:mod:`qkforms.survey.validate`) or there is no ``ok`` head.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(1)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 1, 8))) for _ in range(4)])
    >>> t = observations(h, s, n_boot=20, fits=False)
    >>> t["accumulation"].row(0)["pr_lt2"], t["accumulation"].row(0)["theta_dist_median"] < 1e-12
    (4, True)
    """
    from qkforms.survey.validate import check_heads, check_spectra

    # columns, types, nulls, duplicates, run consistency, a spectrum per ok head
    heads_all = check_heads(as_table(heads_df), "heads table", required=HEAD_COLUMNS)
    spectra = check_spectra(as_table(spectra_df), heads_all, "spectra table")
    series: dict[str, Table] = {}
    if has_steps(heads_all):  # a training run: series tables, the rest on the last step
        with _progress.phase("stats: training-run series"):
            series = series_tables(heads_all, seed=seed, n_boot=n_boot, baseline=baseline)
        heads_all, spectra = last_step_rows(heads_all, spectra)
    status = np.asarray([str(s) for s in heads_all["status"]])
    ok = heads_all.take(status == "ok")
    if len(ok) == 0:
        raise QKFormsError("no head with status 'ok' in the heads table")
    ctx = Context(seed, n_boot)

    payloads, order = _layer_payloads(ok, spectra)
    ok = ok.take(order)  # the order of the tasks' rows: (model, layer, head as given)
    results = _run_tasks(
        payloads, seed=seed, fits=fits, baseline=baseline,
        baseline_max_heads=baseline_max_heads, executor=executor, scheduler=scheduler,
        client=client, n_workers=n_workers,
    )
    hs = _merge([r["head_stats"] for r in results])
    base = _merge([r["baseline"] for r in results])
    eig = [np.asarray(p[1]["eig_S"][p[1]["head"].index(h)], dtype=np.float64)
           for p in payloads for h in p[0]["head"]]
    ok_eig = ok.with_column("_eig_S", eig)

    tables: dict[str, Table] = {}
    with _progress.phase(f"stats: tables ({n_boot} bootstrap replicates)", 11,
                         unit="table") as bar:
        labels = _type_labels(ok_eig, seed)
        tables["observation1_balance"] = _balance_table(heads_all, ok, ctx)
        bar.update()
        tables["symmetric_energy"] = _sym_energy_table(ok, base, ctx)
        bar.update()
        tables["pairing"] = _pairing_table(ok, base, ctx)
        bar.update()
        tables["proportional_lobes"] = _lobes_table(ok, base, ctx)
        bar.update()
        tables["accumulation"], tables["accumulation_test"] = _accumulation_tables(
            ok, base, ctx)
        bar.update()
        tables["spectral_types"], tables["spectral_types_sensitivity"] = _types_tables(
            ok_eig, labels, ctx)
        bar.update()
        tables["certified"] = _certified_table(ok, labels["radius"])
        bar.update()
        band_types = _band_type_labels(ok)
        tables["bands"] = _bands_table(ok, band_types)
        bar.update()
        tables["spectral_geometry"] = _geometry_table(hs, ctx)
        bar.update()
        tables["families"], tables["families_summary"] = _families_tables(hs, ctx)
        bar.update()
        tables["by_layer"] = _by_layer_table(ok, base, labels["radius"], ctx)
        bar.update()
    head_cols: dict[str, Any] = {c: ok[c] for c in ok.columns}
    for rule, lab in labels.items():
        head_cols[f"type_{rule}"] = lab
    if band_types is not None:  # the readings under the storage-precision bands
        head_cols["type_radius_band"] = band_types
        near_rule = next(r for name, _, r in CERTIFIED_RULES if name == "near_theta")
        near = _decisions(ok, ("theta_dist",), near_rule, _BAND_ENDS)
        head_cols["near_theta_band"] = [None if v is None else bool(v) for v in near]
    for c in hs.columns:
        if c not in ("model", "layer", "head"):
            head_cols[c] = hs[c]
    tables["head_stats"] = Table(head_cols)
    tables["baseline_heads"] = base
    tables.update(series)
    return tables

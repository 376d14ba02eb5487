"""What heads do against what their forms are: the behaviour tables of ``qkforms stats``.

When a survey directory holds ``behaviour.parquet`` next to ``heads.parquet``,
``qkforms stats`` (and ``qkforms report``) join them (:mod:`qkforms.behaviour.join`) and
add these tables to ``DIR/stats/`` (definitions in ``docs/behaviour.md``). Every table
has rows per model and, when the directory holds several models, pooled rows
(``model == "ALL"``; bootstrap and permutations stratified by model).

* ``behaviour_join`` -- per model, the heads of each table and how many were joined;
* ``behaviour_heads`` -- the joined per-head table; ``behaviour_forms`` -- the survey
  statistics of the relative forms ``L(d)`` of RoPE heads at every displacement used;
* ``behaviour_summary`` -- per model, the distribution of every score and the size of
  every behaviour class;
* ``behaviour_classes`` -- per behaviour class (a head is in the class of a score of
  :data:`~qkforms.behaviour.scores.CLASS_SCORES` when at least
  :data:`~qkforms.behaviour.scores.CLASS_THRESHOLD` of its attention goes to the score's
  target; ``none``: in no class; ``all``: every head), the medians of the profile,
  distance to Θ, pairing score, ... and the shares of the spectral types, with 95 %
  bootstrap intervals, of ``L`` and, for RoPE heads, of ``L(d)`` at the displacement
  the class concerns;
* ``behaviour_correlations`` -- Spearman's rank correlation of every score with every
  survey statistic, a bootstrap interval, a permutation p-value and two corrections for
  the multiple comparisons of the table (Benjamini–Hochberg q-values and Holm);
* ``behaviour_rope`` -- the same correlations (no interval) with the statistics of
  ``L(d)`` for every displacement ``d`` (RoPE models), each row marking whether ``d`` is
  the displacement its score concerns; corrected as one family of its own;
* ``behaviour_strongest`` -- the strongest associations of the two tables.

These are associations between what a head does on the probes and the geometry of its
form, over the heads of a model; they are not causal claims, and they treat heads as
independent (they are not: heads of a layer share their input).

Examples
--------
>>> import numpy as np
>>> from qkforms.behaviour.associations import benjamini_hochberg, holm
>>> p = np.array([0.01, 0.04, 0.03, 0.5])
>>> benjamini_hochberg(p).round(4).tolist(), holm(p).round(4).tolist()
([0.04, 0.0533, 0.0533, 0.5], [0.04, 0.09, 0.09, 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.behaviour.join import GEOMETRY, Joined, join_directory
from qkforms.behaviour.schema import SCORE_COLUMNS
from qkforms.behaviour.scores import CLASS_SCORES, CLASS_THRESHOLD, SCORES
from qkforms.stats.bootstrap import CI_LEVEL, median_ci, resample_index, rng_for, share_ci
from qkforms.stats.table import Table, concat

__all__ = [
    "ALPHA",
    "PERMUTATIONS",
    "TABLE_NAMES",
    "benjamini_hochberg",
    "behaviour_tables",
    "holm",
    "markdown_lines",
    "spearman_tests",
    "tables_from_joined",
]

#: permutations per test (p-values are at least 1 / (PERMUTATIONS + 1))
PERMUTATIONS = 10_000
#: the level of the corrected tests (``significant``: q < ALPHA)
ALPHA = 0.05
#: rows of ``behaviour_strongest``
STRONGEST = 10
#: the spectral types whose shares the class table reports
TYPES: tuple[str, ...] = ("I+", "II", "I-")
#: every table this module adds, in order
TABLE_NAMES: tuple[str, ...] = ("behaviour_join", "behaviour_summary", "behaviour_classes",
                                "behaviour_correlations", "behaviour_rope",
                                "behaviour_strongest", "behaviour_heads", "behaviour_forms")
POOLED = "ALL"


def benjamini_hochberg(p: ArrayLike) -> NDArray[np.float64]:
    """Benjamini–Hochberg q-values of a family of p-values (NaN entries left out).

    Examples
    --------
    >>> benjamini_hochberg([0.02, np.nan, 0.02]).tolist()
    [0.02, nan, 0.02]
    """
    x = np.asarray(p, dtype=np.float64)
    q = np.full(x.shape, np.nan)
    keep = np.flatnonzero(~np.isnan(x))
    if keep.size:
        order = keep[np.argsort(x[keep], kind="stable")]
        m = order.size
        ranked = x[order] * m / np.arange(1, m + 1)
        q[order] = np.minimum(1.0, np.minimum.accumulate(ranked[::-1])[::-1])
    return q


def holm(p: ArrayLike) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values of a family (NaN entries left out).

    Examples
    --------
    >>> holm([0.01, 0.02]).tolist()
    [0.02, 0.02]
    """
    x = np.asarray(p, dtype=np.float64)
    out = np.full(x.shape, np.nan)
    keep = np.flatnonzero(~np.isnan(x))
    if keep.size:
        order = keep[np.argsort(x[keep], kind="stable")]
        m = order.size
        adj = (m - np.arange(m)) * x[order]
        out[order] = np.minimum(1.0, np.maximum.accumulate(adj))
    return out


def _zscore_ranks(values: NDArray[np.float64], axis: int) -> NDArray[np.float64]:
    from scipy.stats import rankdata

    r = rankdata(values, axis=axis)
    r = r - r.mean(axis=axis, keepdims=True)
    norm = np.sqrt((r * r).sum(axis=axis, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(norm > 0, r / norm, np.nan))


def _permutation_index(groups: NDArray[Any], n_perm: int,
                       rng: np.random.Generator) -> NDArray[np.intp]:
    """``(n_perm, m)`` permutations of the rows, each within its group (stratum)."""
    m = groups.size
    idx = np.empty((n_perm, m), dtype=np.intp)
    for value in dict.fromkeys(groups.tolist()):
        members = np.flatnonzero(groups == value)
        keys = rng.random((n_perm, members.size))
        idx[:, members] = members[np.argsort(keys, axis=1)]
    return idx


def spearman_tests(x: ArrayLike, Y: ArrayLike, *, groups: ArrayLike | None = None,
                   rng: np.random.Generator, n_perm: int = PERMUTATIONS,
                   n_boot: int = 0) -> dict[str, NDArray[np.float64]]:
    """Spearman's rank correlation of ``x`` with each column of ``Y``, with permutation
    p-values and (``n_boot > 0``) percentile-bootstrap intervals.

    Pairs with a NaN in either value are dropped (per column). The permutations permute
    ``x`` within each group (all rows one group by default), so a pooled test compares
    heads of the same model only; the bootstrap resamples heads within each group
    (:func:`qkforms.stats.bootstrap.resample_index`). Two-sided p-value:
    ``(1 + #{|rho_perm| >= |rho|}) / (1 + n_perm)``.

    Returns
    -------
    dict
        ``heads``, ``spearman``, ``ci_low``, ``ci_high``, ``p_value``: arrays of the
        length of ``Y``'s columns.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(20.0)
    >>> out = spearman_tests(x, np.stack([x ** 3, -x], axis=1), rng=np.random.default_rng(0),
    ...                      n_perm=999)
    >>> out["spearman"].round(12).tolist(), out["p_value"].tolist()
    ([1.0, -1.0], [0.001, 0.001])
    """
    xv = np.asarray(x, dtype=np.float64)
    Yv = np.asarray(Y, dtype=np.float64)
    if Yv.ndim == 1:
        Yv = Yv[:, None]
    g = np.zeros(xv.size, dtype=np.int64) if groups is None else np.asarray(groups)
    k = Yv.shape[1]
    out = {name: np.full(k, np.nan) for name in ("heads", "spearman", "ci_low", "ci_high",
                                                  "p_value")}
    valid = ~np.isnan(xv)[:, None] & ~np.isnan(Yv)
    keys = [valid[:, j].tobytes() for j in range(k)]
    for key in dict.fromkeys(keys):  # columns valid on the same rows are tested together
        cols = np.asarray([j for j in range(k) if keys[j] == key], dtype=np.intp)
        rows = np.flatnonzero(valid[:, cols[0]])
        out["heads"][cols] = rows.size
        if rows.size < 3:
            continue
        zx = _zscore_ranks(xv[rows], axis=0)
        ZY = _zscore_ranks(Yv[np.ix_(rows, cols)], axis=0)
        rho = zx @ ZY
        out["spearman"][cols] = rho
        if n_perm > 0 and np.all(np.isfinite(zx)):
            perm = _permutation_index(g[rows], n_perm, rng)
            R = zx[perm] @ ZY
            hits = (np.abs(R) >= np.abs(rho)[None, :] - 1e-12).sum(axis=0)
            out["p_value"][cols] = np.where(np.isfinite(rho), (1.0 + hits) / (1.0 + n_perm),
                                            np.nan)
        if n_boot > 0:
            idx = resample_index(g[rows], rows.size, n_boot, rng)
            bx = _zscore_ranks(xv[rows][idx], axis=1)
            bY = _zscore_ranks(Yv[np.ix_(rows, cols)][idx], axis=1)
            reps = np.einsum("bm,bmk->bk", bx, bY)
            alpha = (1.0 - CI_LEVEL) / 2.0
            with np.errstate(invalid="ignore"):
                lo, hi = np.nanquantile(reps, [alpha, 1.0 - alpha], axis=0)
            out["ci_low"][cols], out["ci_high"][cols] = lo, hi
    return out


def _groups(joined: Table) -> list[tuple[str, NDArray[np.intp]]]:
    models = np.asarray([str(m) for m in joined["model"]])
    out = [(m, np.flatnonzero(models == m)) for m in dict.fromkeys(models.tolist())]
    if len(out) > 1:  # a pooled row only when it differs from a model's
        out.append((POOLED, np.arange(models.size)))
    return out


def _float(col: Any) -> NDArray[np.float64]:
    return np.asarray([np.nan if v is None else float(v) for v in col], dtype=np.float64)


def _class_masks(joined: Table) -> dict[str, NDArray[np.bool_]]:
    masks = {s: _float(joined[s]) >= CLASS_THRESHOLD for s in CLASS_SCORES}
    anyone = np.zeros(len(joined), dtype=bool)
    for m in masks.values():
        anyone |= m
    masks["none"] = ~anyone
    masks["all"] = np.ones(len(joined), dtype=bool)
    return masks


def _forms_at(joined: Table, forms: Table, concerns: dict[str, dict[str, int | None]],
              score: str) -> tuple[Table, NDArray[np.bool_]]:
    """The statistics of ``L(d*)`` (d* the displacement ``score`` concerns in each model),
    aligned with the rows of ``joined``; the mask of rows that have them."""
    index: dict[tuple[str, int, int, int], int] = {}
    if len(forms):
        for i in range(len(forms)):
            index[(str(forms["model"][i]), int(forms["layer"][i]), int(forms["head"][i]),
                   int(forms["displacement"][i]))] = i
    cols: dict[str, list[Any]] = {g: [] for g in (*GEOMETRY, "spectral_type")}
    have = np.zeros(len(joined), dtype=bool)
    for r in range(len(joined)):
        model = str(joined["model"][r])
        d = (concerns.get(model) or {}).get(score)
        j = None if d is None else index.get((model, int(joined["layer"][r]),
                                              int(joined["head"][r]), int(d)))
        have[r] = j is not None
        for g in GEOMETRY:
            cols[g].append(np.nan if j is None else float(forms[g][j]))
        cols["spectral_type"].append(None if j is None else forms["spectral_type"][j])
    return Table(cols), have


def _summary(joined: Table, seed: int, n_boot: int) -> Table:
    masks = _class_masks(joined)
    models = np.asarray([str(m) for m in joined["model"]])
    rows: dict[str, list[Any]] = {"model": [], "heads": []}
    for model, idx in _groups(joined):
        rows["model"].append(model)
        rows["heads"].append(int(idx.size))
        for s in SCORE_COLUMNS:
            v = _float(joined[s])[idx]
            est, lo, hi = median_ci(v, groups=models[idx], rng=rng_for(
                seed, "behaviour_summary", model, s), n_boot=n_boot)
            finite = v[~np.isnan(v)]
            for name, value in ((f"{s}_median", est), (f"{s}_median_ci_low", lo),
                                (f"{s}_median_ci_high", hi),
                                (f"{s}_p10", np.quantile(finite, 0.1) if finite.size else np.nan),
                                (f"{s}_p90", np.quantile(finite, 0.9) if finite.size else np.nan)):
                rows.setdefault(name, []).append(float(value))
        for c, m in masks.items():
            if c != "all":
                rows.setdefault(f"n_{c}", []).append(int(m[idx].sum()))
    return Table(rows)


def _classes(joined: Joined, seed: int, n_boot: int) -> Table:
    heads = joined.heads
    masks = _class_masks(heads)
    models = np.asarray([str(m) for m in heads["model"]])
    rows: dict[str, list[Any]] = {k: [] for k in ("model", "class", "form", "displacement",
                                                  "heads", "share_of_heads")}
    for model, idx in _groups(heads):
        for cls, mask in masks.items():
            views: list[tuple[str, Table, NDArray[np.bool_], float]] = [
                ("L(0)", heads, np.ones(len(heads), dtype=bool), 0.0)]
            rule = SCORES[cls].displacement if cls in SCORES else None
            if rule is not None and len(joined.forms):
                at, have = _forms_at(heads, joined.forms, joined.concerns, cls)
                ds = {(joined.concerns.get(str(models[i])) or {}).get(cls)
                      for i in idx if have[i]}
                if have[idx].any():
                    one = ds.pop() if len(ds) == 1 else None
                    views.append((f"L({rule})", at, have,
                                  float(one) if one is not None else np.nan))
            for form, table, have, disp in views:
                members = idx[mask[idx] & have[idx]]
                rows["model"].append(model)
                rows["class"].append(cls)
                rows["form"].append(form)
                rows["displacement"].append(disp)
                rows["heads"].append(int(members.size))
                rows["share_of_heads"].append(members.size / idx[have[idx]].size
                                              if have[idx].any() else np.nan)
                g = models[members]
                for stat in GEOMETRY:
                    est, lo, hi = median_ci(_float(table[stat])[members], groups=g,
                                            rng=rng_for(seed, "behaviour_classes", model, cls,
                                                        form, stat), n_boot=n_boot)
                    for suffix, value in (("median", est), ("median_ci_low", lo),
                                          ("median_ci_high", hi)):
                        rows.setdefault(f"{stat}_{suffix}", []).append(value)
                types = np.asarray([str(t) for t in table["spectral_type"]], dtype=object)
                for t in TYPES:
                    if members.size:
                        est, lo, hi = share_ci(types[members] == t, groups=g, rng=rng_for(
                            seed, "behaviour_classes", model, cls, form, t), n_boot=n_boot)
                    else:
                        est = lo = hi = np.nan
                    for suffix, value in (("", est), ("_ci_low", lo), ("_ci_high", hi)):
                        rows.setdefault(f"share_{t}{suffix}", []).append(value)
    return Table(rows)


def _correlations(heads: Table, seed: int, n_boot: int, n_perm: int) -> Table:
    models = np.asarray([str(m) for m in heads["model"]])
    Y = np.stack([_float(heads[g]) for g in GEOMETRY], axis=1) if len(heads) else \
        np.zeros((0, len(GEOMETRY)))
    rows: dict[str, list[Any]] = {k: [] for k in (
        "model", "score", "statistic", "form", "heads", "spearman", "spearman_ci_low",
        "spearman_ci_high", "p_value")}
    for model, idx in _groups(heads):
        for s in SCORE_COLUMNS:
            res = spearman_tests(_float(heads[s])[idx], Y[idx], groups=models[idx],
                                 rng=rng_for(seed, "behaviour_correlations", model, s),
                                 n_perm=n_perm, n_boot=n_boot)
            for k, stat in enumerate(GEOMETRY):
                for key, value in (("model", model), ("score", s), ("statistic", stat),
                                   ("form", "L(0)"), ("heads", int(res["heads"][k])),
                                   ("spearman", res["spearman"][k]),
                                   ("spearman_ci_low", res["ci_low"][k]),
                                   ("spearman_ci_high", res["ci_high"][k]),
                                   ("p_value", res["p_value"][k])):
                    rows[key].append(value)
    return _corrected(Table(rows))


def _corrected(table: Table) -> Table:
    if not len(table):
        return table
    p = _float(table["p_value"])
    q = benjamini_hochberg(p)
    return (table.with_column("q_bh", q).with_column("p_holm", holm(p))
            .with_column("significant", [bool(v < ALPHA) for v in q]))


def _rope(joined: Joined, seed: int, n_perm: int) -> Table:
    heads, forms = joined.heads, joined.forms
    rows: dict[str, list[Any]] = {k: [] for k in (
        "model", "score", "statistic", "displacement", "concerns", "heads", "spearman",
        "p_value")}
    if not len(forms) or not len(heads):
        return Table()
    fmodels = {str(m) for m in forms["model"]}
    keep = np.asarray([str(m) in fmodels for m in heads["model"]])
    sub = heads.take(np.flatnonzero(keep))
    models = np.asarray([str(m) for m in sub["model"]])
    index = {(str(forms["model"][i]), int(forms["layer"][i]), int(forms["head"][i]),
              int(forms["displacement"][i])): i for i in range(len(forms))}
    disps = sorted({int(d) for d in forms["displacement"]})
    Y = np.full((len(sub), len(disps) * len(GEOMETRY)), np.nan)
    for r in range(len(sub)):
        for a, d in enumerate(disps):
            j = index.get((models[r], int(sub["layer"][r]), int(sub["head"][r]), d))
            if j is not None:
                for b, g in enumerate(GEOMETRY):
                    Y[r, a * len(GEOMETRY) + b] = float(forms[g][j])
    for model, idx in _groups(sub):
        for s in SCORE_COLUMNS:
            res = spearman_tests(_float(sub[s])[idx], Y[idx], groups=models[idx],
                                 rng=rng_for(seed, "behaviour_rope", model, s), n_perm=n_perm)
            for a, d in enumerate(disps):
                own = {(joined.concerns.get(m) or {}).get(s) for m in set(models[idx])}
                for b, g in enumerate(GEOMETRY):
                    k = a * len(GEOMETRY) + b
                    for key, value in (("model", model), ("score", s), ("statistic", g),
                                       ("displacement", d), ("concerns", d in own),
                                       ("heads", int(res["heads"][k])),
                                       ("spearman", res["spearman"][k]),
                                       ("p_value", res["p_value"][k])):
                        rows[key].append(value)
    return _corrected(Table(rows))


def _strongest(corr: Table, rope: Table) -> Table:
    cols = ("model", "score", "statistic", "form", "heads", "spearman", "spearman_ci_low",
            "spearman_ci_high", "p_value", "q_bh", "significant")
    rows: list[dict[str, Any]] = []
    for r in corr.rows() if len(corr) else []:
        rows.append({c: r.get(c) for c in cols})
    if len(rope):
        for r in rope.rows():
            if r["concerns"] and r["displacement"] != 0:
                rows.append({**{c: r.get(c) for c in cols},
                             "form": f"L({r['displacement']})", "spearman_ci_low": np.nan,
                             "spearman_ci_high": np.nan})
    rows = [r for r in rows if r["spearman"] is not None and np.isfinite(r["spearman"])]
    rows.sort(key=lambda r: (not r["significant"], -abs(float(r["spearman"]))))
    chosen = rows[:STRONGEST]
    return Table({c: [r[c] for r in chosen] for c in cols}) if chosen else Table()


def tables_from_joined(joined: Joined, *, seed: int = 0, n_boot: int = 1000,
                       n_perm: int = PERMUTATIONS) -> dict[str, Table]:
    """Every behaviour table (:data:`TABLE_NAMES`) of a join.

    Examples
    --------
    >>> from qkforms.behaviour.join import Joined
    >>> from qkforms.behaviour.synthetic import joined_example
    >>> t = tables_from_joined(joined_example(), n_boot=0, n_perm=99)
    >>> sorted(t) == sorted(TABLE_NAMES)
    True
    """
    corr = _correlations(joined.heads, seed, n_boot, n_perm)
    rope = _rope(joined, seed, n_perm)
    return {
        "behaviour_join": joined.report,
        "behaviour_summary": _summary(joined.heads, seed, n_boot),
        "behaviour_classes": _classes(joined, seed, n_boot),
        "behaviour_correlations": corr,
        "behaviour_rope": rope,
        "behaviour_strongest": _strongest(corr, rope),
        "behaviour_heads": joined.heads,
        "behaviour_forms": joined.forms,
    }


def behaviour_tables(directories: Sequence[str | Path], *, heads: Table | None = None,
                     seed: int = 0, n_boot: int = 1000,
                     n_perm: int = PERMUTATIONS) -> dict[str, Table]:
    """The behaviour tables of survey directories that hold ``behaviour.parquet`` ({}
    when none does); several directories are pooled like ``qkforms stats`` pools them.

    ``heads`` is the (already read) ``heads.parquet`` of a single directory.

    Examples
    --------
    >>> import tempfile
    >>> behaviour_tables([tempfile.mkdtemp()])
    {}
    """
    parts = []
    for d in directories:
        j = join_directory(d, heads if len(directories) == 1 else None)
        if j is not None:
            parts.append(j)
    if not parts:
        return {}
    concerns: dict[str, dict[str, int | None]] = {}
    for j in parts:
        concerns.update(j.concerns)
    joined = Joined(concat([j.heads for j in parts]), concat([j.forms for j in parts]),
                    concerns, concat([j.report for j in parts]))
    return tables_from_joined(joined, seed=seed, n_boot=n_boot, n_perm=n_perm)


def markdown_lines(tables: dict[str, Table]) -> list[str]:
    """The behaviour section of ``observations.md`` ([] without behaviour tables).

    Examples
    --------
    >>> markdown_lines({})
    []
    """
    summary = tables.get("behaviour_summary")
    if summary is None or not len(summary):
        return []
    lines = ["## Behaviour and geometry (associations, not causes)", "",
             "What each head does on the probes of `qkforms behaviour` (docs/behaviour.md), "
             "next to the geometry of its form. These are associations over the heads of a "
             "model: they do not say that the form causes the behaviour, and they treat "
             "heads as independent.", "",
             summary.to_markdown(("model", "heads", "previous_token_median",
                                  "induction_median", "duplicate_token_median",
                                  "sink_median", "entropy_norm_median",
                                  "bilinear_share_row_median", "n_previous_token",
                                  "n_induction", "n_duplicate_token", "n_sink", "n_none")),
             ""]
    strongest = tables.get("behaviour_strongest")
    if strongest is not None and len(strongest):
        lines += ["Strongest rank correlations (Spearman; permutation p-values, "
                  f"Benjamini–Hochberg q-values over each table; significant: q < {ALPHA:g}; "
                  "L(d): the relative form at the displacement the score concerns):", "",
                  strongest.to_markdown(("model", "score", "statistic", "form", "heads",
                                         "spearman", "spearman_ci_low", "spearman_ci_high",
                                         "q_bh", "significant")), ""]
    classes = tables.get("behaviour_classes")
    if classes is not None and len(classes):
        lines += [f"Behaviour classes (at least {CLASS_THRESHOLD:g} of the attention on the "
                  "score's target), medians with 95 % bootstrap intervals in "
                  "`behaviour_classes.csv`:", "",
                  classes.to_markdown(("model", "class", "form", "heads", "theta_dist_median",
                                       "pairing_median", "sym_energy_median", "c_median",
                                       "d_median", "share_I+", "share_II", "share_I-")), ""]
    return lines

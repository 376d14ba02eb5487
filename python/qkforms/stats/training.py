"""Statistics over training steps: how the heads of a training run move (docs/statistics.md).

For a survey of a training run (``heads.parquet`` rows with a ``step``), three tables:

* ``series_steps``: per (model, step) and per layer (plus all layers pooled,
  ``layer`` null, NaN in memory) the counts of Observation 1 (balanced and
  full-signature heads, exact certification), medians with 95 % bootstrap intervals
  of the observation quantities
  (:data:`MEDIAN_QUANTITIES`: symmetric energy, pairing, ρ, the profile coordinates and
  the symmetric profile, distances to Θ, to the Theorem 5 limit and to the midpoint M of
  Θ, participation ratio) and shares with intervals of balanced heads and of the
  spectral types (survey column ``spectral_type``, radius rule). Resampling unit: the
  head; pooled rows resample within each layer. Seeds as in
  :mod:`qkforms.stats.observation_tables` (named streams).
* ``series_settling``: for every (model, layer or pooled, quantity) the step at which the
  quantity *settles*, by the plateau rule of :func:`settle_step`.
* ``series_init``: when a run starts at step 0 (the random initialization), its heads
  against the predictions for random forms: the symmetric energy against Proposition 5's
  ``(N+1)/(2N)``, the symmetric profile against the Theorem 5 limit at each head's ρ
  (``thm5_dist``), the full profile against M = (½, ½, 0, 0) (``dist_M``: Theorem 5
  with ρ ≈ 1 and Proposition 5 with a ≈ ½), and the seeded Gaussian baseline of the same
  shapes (Cliff's δ of ``dist_M``, initialization vs Gaussian).

Examples
--------
>>> from qkforms.stats.training import settle_step
>>> settle_step([0, 1, 2, 3, 4], [0.0, 0.5, 0.9, 1.0, 1.0], 0.98, 1.02)
3
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms import theta
from qkforms.stats.baseline import baseline_heads, expected_sym_energy
from qkforms.stats.bootstrap import cliffs_delta_ci
from qkforms.stats.cells import (
    BALANCE_READ_COLUMNS,
    Context,
    floats,
    put_median,
    put_share,
    rows_to_table,
    signature_masks,
)
from qkforms.stats.table import Table
from qkforms.survey.balance import balance_counts

__all__ = [
    "MEDIAN_QUANTITIES",
    "SERIES_TABLES",
    "SETTLE_MARGIN",
    "SHARE_QUANTITIES",
    "dist_to_M",
    "has_steps",
    "last_step_rows",
    "series_tables",
    "settle_step",
]

#: names of the tables, in report order
SERIES_TABLES: tuple[str, ...] = ("series_steps", "series_settling", "series_init")
#: per-head quantities whose per-step median (with interval) is tracked
MEDIAN_QUANTITIES: tuple[str, ...] = (
    "sym_energy", "pairing", "rho", "a", "b", "c", "d", "b_S", "c_S", "d_S",
    "theta_dist", "thm5_dist", "dist_M", "participation_ratio",
)
#: shares tracked per step (with intervals)
SHARE_QUANTITIES: tuple[str, ...] = ("balanced_share", "full_signature_share", "share_I+",
                                     "share_II", "share_I-")
#: the plateau band is widened by this fraction of the quantity's range over the run
SETTLE_MARGIN = 0.05


def dist_to_M(profiles: NDArray[np.float64]) -> NDArray[np.float64]:
    """Euclidean distance in R⁴ from profiles ``(..., 4)`` to M = θ(0) = (½, ½, 0, 0).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.training import dist_to_M
    >>> dist_to_M(np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])).round(6).tolist()
    [0.0, 1.224745]
    """
    M = np.asarray(theta(0.0), dtype=np.float64)
    return np.asarray(np.linalg.norm(np.asarray(profiles, dtype=np.float64) - M, axis=-1))


def has_steps(heads: Table) -> bool:
    """True when the rows come from a training run (a non-null ``step``).

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> has_steps(Table({"step": [None, None]})), has_steps(Table({"step": [None, 3]}))
    (False, True)
    """

    col = heads.get("step")
    return col is not None and bool(np.isfinite(floats(col)).any())


def last_step_rows(heads: Table, spectra: Table) -> tuple[Table, Table]:
    """The rows of each model's last step (models without steps: all their rows).

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> h = Table({"model": ["r", "r", "m"], "step": [1, 5, None], "layer": [0, 0, 0]})
    >>> s = Table({"model": ["r", "r", "m"], "step": [1, 5, None], "layer": [0, 0, 0]})
    >>> [t["step"].tolist() for t in last_step_rows(h, s)]
    [[5.0, nan], [5.0, nan]]
    """

    def keep(t: Table) -> NDArray[np.bool_]:
        if "step" not in t or not len(t):
            return np.ones(len(t), dtype=bool)
        steps = floats(t["step"])
        models = np.asarray([str(m) for m in t["model"]])
        mask = np.ones(len(t), dtype=bool)
        for m in dict.fromkeys(models.tolist()):
            rows = models == m
            finite = steps[rows][np.isfinite(steps[rows])]
            if finite.size:
                mask[rows] = steps[rows] == finite.max()
        return mask

    return heads.take(keep(heads)), spectra.take(keep(spectra))


def settle_step(steps: Sequence[float], values: Sequence[float] | NDArray[np.float64],
                low: float, high: float) -> float:
    """The first step from which every later value lies in ``[low, high]`` (NaN if never).

    Values that are NaN count as outside the band.

    Examples
    --------
    >>> settle_step([0, 10, 20], [1.0, 5.0, 1.0], 0.5, 1.5)
    20
    """
    steps = list(steps)
    vals = np.asarray(values, dtype=np.float64)
    inside = (vals >= low) & (vals <= high)
    if not inside.size or not inside[-1]:
        return float("nan")
    k = len(inside) - 1
    while k > 0 and inside[k - 1]:
        k -= 1
    return steps[k]


def _signature_rows(sub: Table) -> dict[str, Any]:
    c = balance_counts({k: sub[k].tolist() for k in BALANCE_READ_COLUMNS})
    return {k: c[k] for k in ("balanced", "full_signature", "decided", "decided_exact",
                              "undecided", "contradictions")}


def _step_row(ctx: Any, key: tuple, sub: Table, groups: Any, base: dict[str, Any]) -> dict:

    row = dict(base)
    row["heads"] = len(sub)
    row.update(_signature_rows(sub))
    balanced, full = signature_masks(sub)
    put_share(row, ctx, key, "balanced_share", balanced, groups)
    put_share(row, ctx, key, "full_signature_share", full, groups)
    types = np.asarray([str(t) for t in sub["spectral_type"]])
    for t in ("I+", "II", "I-"):
        put_share(row, ctx, key, f"share_{t}", types == t, groups)
    for q in MEDIAN_QUANTITIES:
        put_median(row, ctx, key, q, floats(sub[q]), groups, None)
    return row


def _with_dist_M(ok: Table) -> Table:

    prof = np.stack([floats(ok[c]) for c in ("a", "b", "c", "d")], axis=-1)
    return ok.with_column("dist_M", dist_to_M(prof) if len(ok) else np.zeros(0))


def series_tables(heads: Table, *, seed: int = 0, n_boot: int = 1000,
                  baseline: bool = True) -> dict[str, Table]:
    """The three series tables from the heads rows of one or more training runs.

    Rows without a step (plain models) are ignored. Failed heads count in
    ``heads_total`` only.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.training import series_tables
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> from qkforms import Head
    >>> rng = np.random.default_rng(0)
    >>> h, _ = survey_rows("run", [Head(*rng.standard_normal((2, 2, 12))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> from qkforms.stats.table import Table, concat
    >>> t0, t1 = Table(h).with_column("step", [0] * 4), Table(h).with_column("step", [9] * 4)
    >>> out = series_tables(concat([t0, t1]), n_boot=0, baseline=False)
    >>> out["series_steps"]["step"].tolist(), out["series_steps"]["layer"].tolist()
    ([0, 0, 0, 9, 9, 9], [0.0, 1.0, nan, 0.0, 1.0, nan])
    """

    ctx = Context(seed, n_boot)
    steps_all = floats(heads["step"])
    runs = heads.take(np.isfinite(steps_all))
    status = np.asarray([str(s) for s in runs["status"]])
    ok = _with_dist_M(runs.take(status == "ok"))
    rows: list[dict[str, Any]] = []
    settling: list[dict[str, Any]] = []
    init: list[dict[str, Any]] = []
    models_all = np.asarray([str(m) for m in runs["model"]])
    models_ok = np.asarray([str(m) for m in ok["model"]])
    s_all, s_ok = floats(runs["step"]), floats(ok["step"])
    l_all = floats(runs["layer"]).astype(int) if len(runs) else np.zeros(0, int)
    l_ok = floats(ok["layer"]).astype(int) if len(ok) else np.zeros(0, int)
    tok = floats(runs["tokens_seen"]) if "tokens_seen" in runs else np.full(len(runs), np.nan)
    for model in dict.fromkeys(models_all.tolist()):
        steps = sorted(set(s_all[models_all == model].tolist()))
        layers = sorted(set(l_all[models_all == model].tolist()))
        model_rows: list[dict[str, Any]] = []
        for step in steps:
            here_all = (models_all == model) & (s_all == step)
            here_ok = (models_ok == model) & (s_ok == step)
            t = tok[here_all]
            tokens = int(t[0]) if t.size and np.isfinite(t[0]) else None
            for layer in [*layers, None]:
                if layer is None:
                    sub, groups, n_total = ok.take(here_ok), l_ok[here_ok], int(here_all.sum())
                else:
                    sub = ok.take(here_ok & (l_ok == layer))
                    groups, n_total = None, int((here_all & (l_all == layer)).sum())
                base = {"model": model, "step": int(step), "tokens_seen": tokens,
                        "layer": layer, "heads_total": n_total}
                row = _step_row(ctx, ("series", model, int(step), layer), sub, groups, base)
                model_rows.append(row)
        rows += model_rows
        settling += _settling_rows(model, layers, steps, model_rows)
        if steps and steps[0] == 0:
            first = ok.take((models_ok == model) & (s_ok == 0))
            init += _init_rows(ctx, model, first, seed=seed, baseline=baseline)
    return {"series_steps": rows_to_table(rows), "series_settling": rows_to_table(settling),
            "series_init": rows_to_table(init)}


def _settling_rows(model: str, layers: list[int], steps: list[float],
                   rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    names = [(f"{q}_median", q) for q in MEDIAN_QUANTITIES] + [(s, s) for s in SHARE_QUANTITIES]
    for layer in [*layers, None]:
        mine = [r for r in rows if r["layer"] == layer]
        tokens = {r["step"]: r["tokens_seen"] for r in mine}
        for col, q in names:
            vals = np.asarray([r.get(col, np.nan) for r in mine], dtype=np.float64)
            last = mine[-1]
            lo, hi = last.get(f"{col}_ci_low", np.nan), last.get(f"{col}_ci_high", np.nan)
            finite = vals[np.isfinite(vals)]
            span = float(finite.max() - finite.min()) if finite.size else np.nan
            v_last = vals[-1]
            lo = v_last if not np.isfinite(lo) else min(lo, v_last)
            hi = v_last if not np.isfinite(hi) else max(hi, v_last)
            margin = SETTLE_MARGIN * span if np.isfinite(span) else 0.0
            band = (lo - margin, hi + margin)
            s = settle_step([int(x) for x in steps], vals, *band)
            settled = bool(np.isfinite(s) and s < steps[-1])
            out.append({
                "model": model, "layer": layer, "quantity": q, "steps": len(steps),
                "first_step": int(steps[0]), "last_step": int(steps[-1]),
                "first_value": float(vals[0]), "last_value": float(v_last),
                "change": float(v_last - vals[0]), "range": span,
                "band_low": float(band[0]), "band_high": float(band[1]),
                "settle_step": int(s) if np.isfinite(s) else None,
                "settle_tokens": tokens.get(int(s)) if np.isfinite(s) else None,
                "settle_fraction": (float((s - steps[0]) / (steps[-1] - steps[0]))
                                    if np.isfinite(s) and steps[-1] > steps[0] else None),
                "settled": settled,
            })
    return out


def _init_rows(ctx: Any, model: str, first: Table, *, seed: int,
               baseline: bool) -> list[dict[str, Any]]:
    out = []
    layers = floats(first["layer"]).astype(int) if len(first) else np.zeros(0, int)
    base_rows: dict[int, dict[str, NDArray[np.float64]]] = {}
    for layer in sorted(set(layers.tolist())):
        sub = first.take(layers == layer)
        N, n = int(floats(sub["N"])[0]), int(floats(sub["n"])[0])
        if baseline:
            b = baseline_heads(len(sub), N=N, n=n, seed=seed, key=(model, "series-init", layer))
            prof = np.stack([b[c] for c in ("a", "b", "c", "d")], axis=-1)
            b["dist_M"] = dist_to_M(prof)
            base_rows[layer] = b
    for layer in [*sorted(set(layers.tolist())), None]:
        mask = np.ones(len(first), bool) if layer is None else layers == layer
        sub = first.take(mask)
        groups = layers[mask] if layer is None else None  # pooled: resample within layers
        key = ("series-init", model, layer)
        Ns = floats(sub["N"])
        row: dict[str, Any] = {"model": model, "layer": layer, "heads": len(sub),
                               "N": int(Ns[0]) if len(set(Ns.tolist())) == 1 else None,
                               "n": int(floats(sub["n"])[0])
                               if len(set(floats(sub["n"]).tolist())) == 1 else None}
        # Proposition 5 at each head's own N (the mean when a row mixes model dimensions);
        # NaN when no step-0 head is ok
        row["prop5_sym_energy"] = float(np.mean(expected_sym_energy(Ns))) if len(sub) else np.nan
        for q in ("sym_energy", "rho", "b_S", "c_S", "d_S", "thm5_dist", "theta_dist",
                  "dist_M", "a", "b"):
            put_median(row, ctx, key, q, floats(sub[q]), groups, None)
        row["sym_energy_excess_median"] = row["sym_energy_median"] - row["prop5_sym_energy"]
        if baseline and base_rows:
            chosen = [base_rows[la] for la in (sorted(base_rows) if layer is None else [layer])]
            bx = {q: np.concatenate([b[q] for b in chosen])
                  for q in ("sym_energy", "theta_dist", "dist_M", "b_S")}
            bg = (np.concatenate([np.full(len(b["dist_M"]), la) for la, b in zip(
                sorted(base_rows), chosen, strict=True)]) if layer is None else None)
            row["baseline_heads"] = int(bx["dist_M"].size)
            for q in ("sym_energy", "theta_dist", "dist_M", "b_S"):
                put_median(row, ctx, key, f"baseline_{q}", bx[q], bg, None)
            est, lo, hi = cliffs_delta_ci(floats(sub["dist_M"]), bx["dist_M"], groups_x=groups,
                                          groups_y=bg, rng=ctx.rng(*key, "cliff"),
                                          n_boot=ctx.n_boot)
            row["dist_M_cliffs_delta"] = est
            row["dist_M_cliffs_delta_ci_low"], row["dist_M_cliffs_delta_ci_high"] = lo, hi
        out.append(row)
    return out

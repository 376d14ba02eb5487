"""``families`` and ``families_summary``: generalized gamma against lognormal fits of
the per-head samples (docs/statistics.md, ``docs/theory.md`` §12.6); empty without fits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qkforms.stats.cells import (
    POOLED,
    Context,
    floats,
    put_median,
    put_share,
    rows_to_table,
    scopes,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table

__all__ = ["build"]


def _families_tables(hs: Table, ctx: Context) -> tuple[Table, Table]:
    # the per-head samples sit with the scipy fits: loaded when the table is built
    # lazy: keeps scipy out of this module's import
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


def build(inputs: TableInputs) -> tuple[Table, Table]:
    """The ``families`` and ``families_summary`` tables (docs/statistics.md).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats.observation_tables import ObservationOptions, prepare_inputs
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(0)
    >>> heads = [Head(*rng.standard_normal((2, 12, 32))) for _ in range(4)]
    >>> h, s = survey_rows("toy", heads, heads_per_layer=2)
    >>> inputs = prepare_inputs(h, s, ObservationOptions(n_boot=20, fits=True))
    >>> families, summary = build(inputs)
    >>> families.row(0)["sample"], families.row(0)["heads_fitted"], len(summary)
    ('abs_eig_L', 4, 4)
    """
    return _families_tables(inputs.hs, inputs.ctx)

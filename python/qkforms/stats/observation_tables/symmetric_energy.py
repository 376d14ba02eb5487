"""``symmetric_energy``: the symmetric energy of the heads against the random baseline
(docs/statistics.md, ``docs/theory.md`` §12.3).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qkforms.stats.cells import (
    POOLED,
    Context,
    floats,
    put_median,
    put_ratio,
    put_share,
    rows_to_table,
    scopes,
)
from qkforms.stats.observation_tables.decisions import (
    STRONGLY_SYMMETRIC,
    decisions,
    is_certified,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table

__all__ = ["build"]


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
        if is_certified(ok):
            verdict = decisions(sub, ("sym_energy",), lambda v: v >= STRONGLY_SYMMETRIC)
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


def build(inputs: TableInputs) -> tuple[Table]:
    """The ``symmetric_energy`` table (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> (table,) = build(inputs)
    >>> table.row(0)["heads"], table.row(0)["baseline_heads"]
    (6, 6)
    """
    return (_sym_energy_table(inputs.ok, inputs.base, inputs.ctx),)

"""``pairing``: the pairing level of the heads against the Gaussian baseline
(docs/statistics.md).
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
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table

__all__ = ["build"]


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


def build(inputs: TableInputs) -> tuple[Table]:
    """The ``pairing`` table (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> (table,) = build(inputs)
    >>> table.row(0)["heads"], 0 <= table.row(0)["below_baseline_min_share"] <= 1
    (6, True)
    """
    return (_pairing_table(inputs.ok, inputs.base, inputs.ctx),)

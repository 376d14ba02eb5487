"""``proportional_lobes``: Observation 5, lobe departure, pairing gap, rho and the
Theorem 5 distance (docs/statistics.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from qkforms.stats.cells import (
    POOLED,
    Context,
    floats,
    put_median,
    rows_to_table,
    scopes,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table

__all__ = ["build"]


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


def build(inputs: TableInputs) -> tuple[Table]:
    """The ``proportional_lobes`` table (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> (table,) = build(inputs)
    >>> "lobe_departure_model_median_min" in table.row(1), table.row(0)["heads"]
    (True, 6)
    """
    return (_lobes_table(inputs.ok, inputs.base, inputs.ctx),)

"""``observation1_balance``: Observation 1, and Theorem 3 head by head
(docs/statistics.md, ``docs/theory.md`` §13).

The counts of :func:`qkforms.survey.balance.balance_counts`, the share of balanced heads
among those with a decided signature, and the smallest balance, per model and pooled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qkforms.stats.cells import (
    BALANCE_READ_COLUMNS,
    POOLED,
    Context,
    floats,
    put_share,
    rows_to_table,
    scopes,
    signature_masks,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table
from qkforms.survey.balance import BALANCE_COUNTS, balance_counts

__all__ = ["build"]


def _balance_table(heads_all: Table, ok: Table, ctx: Context) -> Table:
    """Observation 1: the counts of :func:`qkforms.survey.balance.balance_counts`, the share
    of balanced heads among those with a decided signature, and the smallest balance."""

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


def build(inputs: TableInputs) -> tuple[Table]:
    """The ``observation1_balance`` table (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> (table,) = build(inputs)
    >>> table.row(0)["balanced"], table.row(1)["model"]
    (6, 'ALL')
    """
    return (_balance_table(inputs.heads_all, inputs.ok, inputs.ctx),)

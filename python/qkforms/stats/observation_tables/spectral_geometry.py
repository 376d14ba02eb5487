"""``spectral_geometry``: Observations 7-9, the gamma shapes of the spectra and their
geometry (docs/statistics.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qkforms.stats.cells import (
    Context,
    floats,
    put_median,
    rows_to_table,
    scopes,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table

__all__ = ["build"]


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


def build(inputs: TableInputs) -> tuple[Table]:
    """The ``spectral_geometry`` table (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> (table,) = build(inputs)
    >>> table.row(0)["heads"], table.row(1)["model"]
    (6, 'ALL')
    """
    return (_geometry_table(inputs.hs, inputs.ctx),)

"""``by_layer``: medians and counts per (model, layer), beside the baseline of the
same layer (docs/statistics.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.stats.cells import (
    Context,
    floats,
    ordered_unique,
    put_median,
    rows_to_table,
)
from qkforms.stats.observation_tables.decisions import (
    UNDECIDED,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table

__all__ = ["build"]


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


def build(inputs: TableInputs) -> tuple[Table]:
    """The ``by_layer`` table (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> (table,) = build(inputs)
    >>> table["layer"].tolist(), table["heads"].tolist()
    ([0, 1], [3, 3])
    """
    return (_by_layer_table(inputs.ok, inputs.base, inputs.labels["radius"], inputs.ctx),)

"""``certified``: threshold decisions from the certified intervals of ``--certify`` runs
(docs/statistics.md, docs/certified.md); empty otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.exact.enclosure import CERTIFIED_STATS
from qkforms.stats.cells import (
    floats,
    rows_to_table,
    scopes,
)
from qkforms.stats.observation_tables.decisions import (
    CERTIFIED_RULES,
    UNDECIDED,
    decisions,
    is_certified,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table

__all__ = ["build"]


def _certified_table(ok: Table, types_radius: NDArray) -> Table:
    """Decided / undecided counts of every threshold rule (``--certify`` runs; else empty)."""

    if not is_certified(ok):
        return Table()
    verdicts = {name: decisions(ok, stats, rule) for name, stats, rule in CERTIFIED_RULES}
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


def build(inputs: TableInputs) -> tuple[Table]:
    """The ``certified`` table (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> (table,) = build(inputs)  # a survey without --certify
    >>> len(table)
    0
    """
    return (_certified_table(inputs.ok, inputs.labels["radius"]),)

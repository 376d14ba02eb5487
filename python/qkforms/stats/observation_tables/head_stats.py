"""``head_stats`` and ``baseline_heads``: the per-head rows behind the observation tables
(docs/statistics.md).

``head_stats`` is a row per ok head: its survey columns, its spectral type under every
rule (``type_<rule>``), its readings under the storage-precision bands
(``--precision-bands`` runs) and the per-head columns of the layer tasks (gamma and
family fits). ``baseline_heads`` is a row per Gaussian baseline head.
"""

from __future__ import annotations

from typing import Any

from qkforms.stats.observation_tables.decisions import BAND_ENDS, CERTIFIED_RULES, decisions
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table

__all__ = ["build"]


def build(inputs: TableInputs) -> tuple[Table, Table]:
    """The ``head_stats`` and ``baseline_heads`` tables (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> head_stats, baseline_heads = build(inputs)
    >>> len(head_stats), len(baseline_heads), "type_kmeans" in head_stats
    (6, 6, True)
    """
    ok, hs, band_types = inputs.ok, inputs.hs, inputs.band_types
    head_cols: dict[str, Any] = {c: ok[c] for c in ok.columns}
    for rule, lab in inputs.labels.items():
        head_cols[f"type_{rule}"] = lab
    if band_types is not None:  # the readings under the storage-precision bands
        head_cols["type_radius_band"] = band_types
        near_rule = next(r for name, _, r in CERTIFIED_RULES if name == "near_theta")
        near = decisions(ok, ("theta_dist",), near_rule, BAND_ENDS)
        head_cols["near_theta_band"] = [None if v is None else bool(v) for v in near]
    for c in hs.columns:
        if c not in ("model", "layer", "head"):
            head_cols[c] = hs[c]
    return Table(head_cols), inputs.base

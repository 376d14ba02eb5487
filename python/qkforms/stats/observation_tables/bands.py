"""``bands``: decisions stable under the storage-precision bands of ``--precision-bands``
runs (docs/statistics.md, docs/certified.md); empty otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.bands import BAND_KINDS, BAND_STATS
from qkforms.stats.cells import (
    floats,
    rows_to_table,
    scopes,
)
from qkforms.stats.observation_tables.decisions import (
    BAND_ENDS,
    CERTIFIED_RULES,
    UNDECIDED,
    certified_labels,
    decisions,
    is_banded,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table
from qkforms.stats.types import radius_types
from qkforms.tolerances import SPECTRAL_TYPE_RADIUS

__all__ = ["build"]


def band_type_labels(ok: Table) -> NDArray[np.str_] | None:
    """The radius-rule types decided on the boxes of the bands (None without bands).

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> band_type_labels(Table({"theta_dist_band_lo": [None]})) is None
    True
    """
    if not is_banded(ok):
        return None
    return certified_labels(ok, lambda q: radius_types(q, SPECTRAL_TYPE_RADIUS), BAND_ENDS)


def _bands_table(ok: Table, types: NDArray[np.str_] | None) -> Table:
    """Decisions stable under the storage-precision bands (``--precision-bands``; else empty).

    A decision is *stable* when the rule has the same value at every corner of the box of
    the head's bands (:func:`qkforms.exact.decide`), hence for every weight within the
    storage precision (for a rigorous band; to first order for a first-order band).
    """

    if types is None:
        return Table()
    verdicts = {name: decisions(ok, stats, rule, BAND_ENDS)
                for name, stats, rule in CERTIFIED_RULES}
    lo = {s: floats(ok[f"{s}_band_lo"]) for s in BAND_STATS}
    hi = {s: floats(ok[f"{s}_band_hi"]) for s in BAND_STATS}
    kind = np.asarray([str(v) for v in ok["band_kind"]], dtype=object)
    sig = np.asarray([v is not None and bool(v) for v in ok["signature_band_stable"]],
                     dtype=bool)
    radius = floats(ok["band_radius"])
    rows = []
    for label, mask, _ in scopes(ok["model"]):
        banded = mask & ~np.isnan(lo["theta_dist"])
        row: dict[str, Any] = {"model": label, "heads": int(mask.sum()),
                               "heads_banded": int(banded.sum())}
        for k in BAND_KINDS:
            row[f"kind_{k.replace('-', '_')}"] = int(np.sum(banded & (kind == k)))
        row["band_radius_median"] = (float(np.median(radius[banded])) if banded.any()
                                     else np.nan)
        for s in BAND_STATS:
            w = (hi[s] - lo[s])[banded]
            w = w[np.isfinite(w)]
            row[f"{s}_width_median"] = float(np.median(w)) if w.size else np.nan
        for name, _, _ in CERTIFIED_RULES:
            v = verdicts[name][banded]
            row[f"{name}_stable_yes"] = int(sum(x is True for x in v))
            row[f"{name}_stable_no"] = int(sum(x is False for x in v))
            row[f"{name}_unstable"] = int(sum(x is None for x in v))
        lab = types[banded]
        for t in ("I+", "II", "I-"):
            row[f"type_{t}"] = int(np.sum(lab == t))
        row["types_stable"] = int(np.sum(lab != UNDECIDED))
        row["types_unstable"] = int(np.sum(lab == UNDECIDED))
        row["signature_stable"] = int(np.sum(banded & sig))
        row["signature_unstable"] = int(np.sum(banded & ~sig))
        rows.append(row)
    return rows_to_table(rows)


def build(inputs: TableInputs) -> tuple[Table]:
    """The ``bands`` table (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> (table,) = build(inputs)  # a survey without --precision-bands
    >>> len(table)
    0
    """
    return (_bands_table(inputs.ok, inputs.band_types),)

"""Threshold rules of the observation tables, decided on intervals (docs/statistics.md).

In ``--certify`` runs a rule holds for a head when it holds at every corner of the box
of the head's certified intervals (``<stat>_lo``, ``<stat>_hi``), fails when it fails at
every corner and is :data:`UNDECIDED` otherwise (:func:`qkforms.exact.decide`); in
``--precision-bands`` runs the same on the storage-precision bands (:data:`BAND_ENDS`).

Examples
--------
>>> [name for name, _, _ in CERTIFIED_RULES][:2]
['near_theta', 'strongly_symmetric']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.exact.enclosure import decide
from qkforms.stats.cells import floats
from qkforms.stats.table import Table
from qkforms.tolerances import NEAR_THETA

__all__ = [
    "BAND_ENDS",
    "CERTIFIED_ENDS",
    "CERTIFIED_RULES",
    "STRONGLY_SYMMETRIC",
    "UNDECIDED",
    "certified_labels",
    "decisions",
    "is_banded",
    "is_certified",
]

#: symmetric-energy threshold of a "strongly symmetric" head
STRONGLY_SYMMETRIC = 0.75
#: label of a head whose certified intervals do not decide a rule (``--certify`` runs)
UNDECIDED = "undecided"
#: interval column suffixes: certified enclosures, storage-precision bands
CERTIFIED_ENDS = ("lo", "hi")
BAND_ENDS = ("band_lo", "band_hi")

#: (column prefix, statistics, rule) of the certified decisions of the ``certified`` table
CERTIFIED_RULES: tuple[tuple[str, tuple[str, ...], Any], ...] = (
    ("near_theta", ("theta_dist",), lambda x: x <= NEAR_THETA),
    ("strongly_symmetric", ("sym_energy",), lambda x: x >= STRONGLY_SYMMETRIC),
    ("face_b0", ("b",), lambda x: x <= 0),
    ("face_c0", ("c",), lambda x: x <= 0),
    ("face_d0", ("d",), lambda x: x <= 0),
    ("cd0", ("c", "d"), lambda c, d: c * d <= 0),
    ("parity_plus", ("c", "d"), lambda c, d: c > d),
)


def is_certified(t: Table) -> bool:
    """Whether the heads carry certified intervals (a ``--certify`` survey).

    Examples
    --------
    >>> is_certified(Table({"theta_dist_lo": [None], "theta_dist_hi": [None]}))
    False
    """
    if "theta_dist_lo" not in t or "theta_dist_hi" not in t:
        return False
    return bool(len(t)) and bool(np.any(~np.isnan(floats(t["theta_dist_lo"]))))


def is_banded(t: Table) -> bool:
    """Whether the heads carry storage-precision bands (a ``--precision-bands`` survey).

    Examples
    --------
    >>> is_banded(Table({"theta_dist_band_lo": [0.1]}))
    True
    """
    if "theta_dist_band_lo" not in t:
        return False
    return bool(len(t)) and bool(np.any(~np.isnan(floats(t["theta_dist_band_lo"]))))


def decisions(t: Table, stats: Sequence[str], rule: Any,
               ends: tuple[str, str] = CERTIFIED_ENDS) -> NDArray[np.object_]:
    """Per head, the value of a float rule on the intervals of ``stats`` (certified, or
    the bands with ``ends=BAND_ENDS``), or None where the intervals do not decide it
    (:func:`qkforms.exact.decide`).

    Examples
    --------
    >>> t = Table({"x_lo": [0.1, 0.4], "x_hi": [0.2, 0.6]})
    >>> decisions(t, ("x",), lambda x: x <= 0.5).tolist()
    [True, None]
    """

    return decide(rule, [floats(t[f"{s}_{ends[0]}"]) for s in stats],
                  [floats(t[f"{s}_{ends[1]}"]) for s in stats])


def certified_labels(t: Table, rule_on_profiles: Any,
                      ends: tuple[str, str] = CERTIFIED_ENDS) -> NDArray[np.str_]:
    """A profile rule (e.g. a spectral-type rule) decided on the boxes of ``a, b, c, d``.

    Heads whose box the rule does not decide get :data:`UNDECIDED`; so do heads whose
    box reaches ``b = c = d = 0`` (where the symmetric profile is undefined).

    Examples
    --------
    >>> t = Table({f"{s}_{e}": [v, v] for s, v in zip("abcd", (0.1, 0.5, 0.3, 0.1))
    ...            for e in ("lo", "hi")})
    >>> certified_labels(t, lambda q: np.where(q[..., 1] > q[..., 0], "up", "down")).tolist()
    ['up', 'up']
    """
    lows = np.stack([floats(t[f"{s}_{ends[0]}"]) for s in "abcd"], axis=1)
    usable = lows[:, 1:].sum(axis=1) > 0
    out = np.full(len(t), UNDECIDED, dtype=object)
    idx = np.flatnonzero(usable)
    if idx.size:
        sub = t.take(idx)
        verdict = decisions(sub, "abcd", lambda a, b, c, d: rule_on_profiles(
            np.stack([a, b, c, d], axis=-1)), ends)
        out[idx] = [UNDECIDED if v is None else str(v) for v in verdict]
    return np.asarray(out.tolist(), dtype=str) if len(t) else np.asarray([], str)

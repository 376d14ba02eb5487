"""``spectral_types`` and ``spectral_types_sensitivity``: Types I+ / II / I- under the
radius, imbalance and k-means rules, and the radius rule over several radii
(docs/statistics.md, ``docs/theory.md`` §12.5).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.stats.cells import (
    POOLED,
    Context,
    floats,
    ordered_unique,
    put_share,
    rows_to_table,
    scopes,
)
from qkforms.stats.observation_tables.decisions import (
    UNDECIDED,
    certified_labels,
    decisions,
    is_certified,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.table import Table
from qkforms.stats.types import (
    RADII,
    TYPES,
    best_k_silhouette,
    imbalance_types,
    kmeans_types,
    radius_types,
)
from qkforms.tolerances import SPECTRAL_TYPE_RADIUS

__all__ = ["build"]


def type_labels(ok: Table, seed: int) -> dict[str, NDArray]:
    """The spectral type of every head under the ``radius``, ``imbalance`` and ``kmeans``
    rules (docs/statistics.md); in certified runs only where the intervals decide it.

    ``ok`` needs the profile ``a, b, c, d`` and the eigenvalues of S (``_eig_S``); the
    k-means rule clusters each model's heads with ``seed``.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.table import Table
    >>> ok = Table({"model": ["m"] * 3, "a": [0.5, 0.1, 0.25], "b": [0.1, 0.5, 0.25],
    ...             "c": [0.3, 0.2, 0.25], "d": [0.1, 0.2, 0.25]})
    >>> ok = ok.with_column("_eig_S", [np.array([1.0, -1.0]), np.array([2.0, -1.0]),
    ...                                np.array([1.0, -2.0])])
    >>> sorted(type_labels(ok, seed=0))
    ['imbalance', 'kmeans', 'radius']
    """
    prof = np.stack([floats(ok[c]) for c in ("a", "b", "c", "d")], axis=1)
    if is_certified(ok):  # a head has a type only when its intervals decide it
        labels = {"radius": certified_labels(ok, lambda q: radius_types(q, SPECTRAL_TYPE_RADIUS)),
                  "imbalance": certified_labels(ok, imbalance_types)}
    else:
        labels = {"radius": radius_types(prof, SPECTRAL_TYPE_RADIUS),
                  "imbalance": imbalance_types(prof)}
    km = np.empty(len(ok), dtype=object)
    models = ok["model"]
    for m in ordered_unique(models.tolist()):
        idx = np.flatnonzero(models == m)
        km[idx] = kmeans_types([ok["_eig_S"][i] for i in idx], seed=seed)
    labels["kmeans"] = np.asarray(km.tolist(), dtype=str) if len(ok) else np.asarray([], str)
    return labels


def _types_tables(ok: Table, labels: dict[str, NDArray], ctx: Context) -> tuple[Table, Table]:
    rows, sens = [], []
    c, d = floats(ok["c"]), floats(ok["d"])
    certified = is_certified(ok)
    parity_undecided = np.zeros(len(ok), dtype=bool)
    if certified:
        verdict = decisions(ok, ("c", "d"), lambda cc, dd: cc > dd)
        parity = np.asarray([v is True for v in verdict], dtype=bool)
        parity_undecided = np.asarray([v is None for v in verdict], dtype=bool)
    else:
        parity = c > d
    prof = np.stack([floats(ok[k]) for k in ("a", "b", "c", "d")], axis=1)
    survey_types = ok.get("spectral_type")
    for label, mask, groups in scopes(ok["model"]):
        g = None if groups is None else ok["model"][mask]
        best_k = None
        if label != POOLED:
            idx = np.flatnonzero(mask)
            best_k = best_k_silhouette([ok["_eig_S"][i] for i in idx], seed=0)
        for rule in ("radius", "imbalance", "kmeans"):
            lab = labels[rule][mask]
            row: dict[str, Any] = {"model": label, "rule": rule, "heads": int(mask.sum())}
            for t in TYPES:
                row[f"n_{t}"] = int(np.sum(lab == t))
            if certified:
                row["n_undecided"] = int(np.sum(lab == UNDECIDED))
            for t in TYPES:
                put_share(row, ctx, ("types", label, rule), f"share_{t}", lab == t, g)
            put_share(row, ctx, ("types", label, rule), "parity_plus_share", parity[mask], g)
            if certified:
                row["parity_undecided"] = int(parity_undecided[mask].sum())
            row["kmeans_best_k"] = best_k if rule == "kmeans" else None
            if rule == "radius" and survey_types is not None:
                st = np.asarray([str(v) for v in survey_types[mask]])
                put_share(row, ctx, ("types", label, rule), "survey_type_agreement",
                           st == lab, g)
            rows.append(row)
        for r in RADII:
            if not mask.any():
                lab = np.asarray([], str)
            elif certified:
                lab = certified_labels(ok.take(mask), lambda q, r=r: radius_types(q, r))
            else:
                lab = radius_types(prof[mask], r)
            row = {"model": label, "radius": r, "heads": int(mask.sum())}
            for t in TYPES:
                row[f"n_{t}"] = int(np.sum(lab == t))
            if certified:
                row["n_undecided"] = int(np.sum(lab == UNDECIDED))
            for t in TYPES:
                put_share(row, ctx, ("types-sens", label, r), f"share_{t}", lab == t, g)
            sens.append(row)
    return rows_to_table(rows), rows_to_table(sens)


def build(inputs: TableInputs) -> tuple[Table, Table]:
    """The ``spectral_types`` and ``spectral_types_sensitivity`` tables (docs/statistics.md).

    Examples
    --------
    >>> from qkforms.stats.synthetic_rows import toy_inputs
    >>> inputs = toy_inputs()
    >>> types, sensitivity = build(inputs)
    >>> types["rule"].tolist()[:3], sensitivity.row(0)["heads"]
    (['radius', 'imbalance', 'kmeans'], 6)
    """
    return _types_tables(inputs.ok_eig, inputs.labels, inputs.ctx)

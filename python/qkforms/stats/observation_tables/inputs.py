"""What the observation-table builders read (docs/statistics.md).

One :class:`TableInputs` per run of :func:`qkforms.stats.observation_tables`, made by
:func:`qkforms.stats.observation_tables.prepare_inputs`: the checked heads, the ok heads in task
order, the per-head columns and Gaussian baseline heads of the layer tasks, the spectral
type labels, the bootstrap :class:`~qkforms.stats.cells.Context` and, for a training run,
the series tables.

Examples
--------
>>> sorted(TableInputs.__dataclass_fields__)[:3]
['band_types', 'base', 'ctx']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from qkforms.stats.cells import Context
from qkforms.stats.table import Table

__all__ = ["TableInputs"]


@dataclass(frozen=True)
class TableInputs:
    """The inputs of every observation-table builder.

    Attributes
    ----------
    heads_all : Table
        The checked heads rows (each model's last step for a training run), every status.
    ok : Table
        The ``ok`` heads, in the order of the layer tasks (model, layer, head as given).
    ok_eig : Table
        ``ok`` with the eigenvalues of S of each head (column ``_eig_S``).
    base : Table
        The Gaussian baseline heads of the layer tasks (empty without a baseline).
    hs : Table
        The per-head columns of the layer tasks (``model``, ``layer``, ``head`` first).
    labels : dict of str -> ndarray
        Spectral type of every ok head under the ``radius``, ``imbalance`` and ``kmeans``
        rules (:mod:`qkforms.stats.observation_tables.spectral_types`).
    band_types : ndarray or None
        Radius-rule types decided on the storage-precision bands (None without bands).
    ctx : Context
        Seed, bootstrap size and replicates of the run.
    series : dict of str -> Table
        The training-run tables (:mod:`qkforms.stats.training`; empty for plain models).

    Examples
    --------
    >>> from qkforms.stats.cells import Context
    >>> t = TableInputs(Table(), Table(), Table(), Table(), Table(), {}, None, Context(0, 0), {})
    >>> t.ctx.n_boot, t.band_types is None
    (0, True)
    """

    heads_all: Table
    ok: Table
    ok_eig: Table
    base: Table
    hs: Table
    labels: dict[str, NDArray[np.str_]]
    band_types: NDArray[np.str_] | None
    ctx: Context
    series: dict[str, Table]

"""Observation tables from survey outputs (``docs/theory.md`` §12.3–§12.6, §13;
docs/statistics.md).

:func:`observations` turns the survey's per-head rows (``heads.parquet``) and spectra
(``spectra.parquet``) into one table per observation, with a row per model and a
pooled row (``model == "ALL"``). Every median, share and ratio carries a 95 %
bootstrap interval over heads (``<stat>_ci_low``, ``<stat>_ci_high``; see
:mod:`qkforms.stats.bootstrap`). The exact definition of every column is in
``docs/statistics.md``.

One module per observation table (or pair of tables), named as in docs/statistics.md;
each has a ``build`` that takes the run's :class:`~.inputs.TableInputs`
(:func:`prepare_inputs`) and gives its tables; :data:`BUILDERS` orders them, and
:func:`observations` runs them in that order. The per-layer tasks are in
:mod:`~qkforms.stats.observation_tables.tasks`, the threshold rules decided on intervals in
:mod:`~qkforms.stats.observation_tables.decisions`, the table cells in :mod:`qkforms.stats.cells`.

Examples
--------
>>> import numpy as np
>>> from qkforms import Head
>>> from qkforms.stats import observations
>>> from qkforms.stats.synthetic_rows import survey_rows
>>> rng = np.random.default_rng(0)
>>> heads = [Head(*rng.standard_normal((2, 4, 32))) for _ in range(6)]
>>> h, s = survey_rows("toy", heads, heads_per_layer=3)
>>> tables = observations(h, s, n_boot=50, fits=False)
>>> tables["observation1_balance"].row(0)["balanced"]
6
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from qkforms import _progress
from qkforms.errors import QKFormsError
from qkforms.stats.bootstrap import DEFAULT_BOOT
from qkforms.stats.cells import POOLED, Context, signature_masks
from qkforms.stats.observation_tables import (
    accumulation,
    balance,
    bands,
    by_layer,
    certified,
    families,
    head_stats,
    pairing,
    proportional_lobes,
    spectral_geometry,
    spectral_types,
    symmetric_energy,
)
from qkforms.stats.observation_tables.decisions import (
    CERTIFIED_RULES,
    STRONGLY_SYMMETRIC,
    UNDECIDED,
)
from qkforms.stats.observation_tables.inputs import TableInputs
from qkforms.stats.observation_tables.tasks import (
    ObservationOptions,
    layer_payloads,
    merge_parts,
    run_tasks,
)
from qkforms.stats.survey_input import check_heads, check_spectra
from qkforms.stats.table import Table, as_table
from qkforms.stats.training import SERIES_TABLES, has_steps, last_step_rows, series_tables
from qkforms.survey.schema import SPECTRA_READ_COLUMNS, STAT_READ_COLUMNS

__all__ = [
    "BUILDERS",
    "CERTIFIED_RULES",
    "HEAD_COLUMNS",
    "HEAD_TABLES",
    "ObservationOptions",
    "POOLED",
    "SPECTRA_READ_COLUMNS",
    "signature_masks",
    "STRONGLY_SYMMETRIC",
    "TABLES",
    "TableInputs",
    "UNDECIDED",
    "observations",
    "prepare_inputs",
]

#: columns of heads.parquet that the statistics read (from the schema table)
HEAD_COLUMNS: tuple[str, ...] = STAT_READ_COLUMNS
#: the observation tables, in report order: (names of the tables, their builder)
BUILDERS: dict[tuple[str, ...], Callable[[TableInputs], tuple[Table, ...]]] = {
    ("observation1_balance",): balance.build,
    ("symmetric_energy",): symmetric_energy.build,
    ("pairing",): pairing.build,
    ("proportional_lobes",): proportional_lobes.build,
    ("accumulation", "accumulation_test"): accumulation.build,
    ("spectral_types", "spectral_types_sensitivity"): spectral_types.build,
    ("certified",): certified.build,
    ("bands",): bands.build,
    ("spectral_geometry",): spectral_geometry.build,
    ("families", "families_summary"): families.build,
    ("by_layer",): by_layer.build,
}
#: the per-head tables (:mod:`~qkforms.stats.observation_tables.head_stats`)
HEAD_TABLES: tuple[str, ...] = ("head_stats", "baseline_heads")
#: names of the returned tables, in report order
TABLES: tuple[str, ...] = (*(name for names in BUILDERS for name in names), *HEAD_TABLES,
                           *SERIES_TABLES)


def prepare_inputs(heads_df: Any, spectra_df: Any, options: ObservationOptions) -> TableInputs:
    """Check the survey rows and run the layer tasks: what every table builder reads.

    For a training run (rows with a ``step``) the series tables are made here from all
    steps, and the rest describes each model's last step. The parameters and errors are
    those of :func:`observations`.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(1)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 1, 8))) for _ in range(4)])
    >>> inputs = prepare_inputs(h, s, ObservationOptions(n_boot=0, fits=False))
    >>> len(inputs.ok), len(inputs.base), sorted(inputs.labels)
    (4, 4, ['imbalance', 'kmeans', 'radius'])
    """
    # columns, types, nulls, duplicates, run consistency, a spectrum per ok head
    heads_all = check_heads(as_table(heads_df), "heads table", required=HEAD_COLUMNS)
    spectra = check_spectra(as_table(spectra_df), heads_all, "spectra table")
    series: dict[str, Table] = {}
    if has_steps(heads_all):  # a training run: series tables, the rest on the last step
        with _progress.phase("stats: training-run series"):
            series = series_tables(heads_all, seed=options.seed, n_boot=options.n_boot,
                                   baseline=options.baseline)
        heads_all, spectra = last_step_rows(heads_all, spectra)
    status = np.asarray([str(s) for s in heads_all["status"]])
    ok = heads_all.take(status == "ok")
    if len(ok) == 0:
        raise QKFormsError("no head with status 'ok' in the heads table")
    ctx = Context(options.seed, options.n_boot)

    payloads, order = layer_payloads(ok, spectra)
    ok = ok.take(order)  # the order of the tasks' rows: (model, layer, head as given)
    results = run_tasks(payloads, options)
    hs = merge_parts([r["head_stats"] for r in results])
    base = merge_parts([r["baseline"] for r in results])
    eig = [np.asarray(p[1]["eig_S"][p[1]["head"].index(h)], dtype=np.float64)
           for p in payloads for h in p[0]["head"]]
    ok_eig = ok.with_column("_eig_S", eig)
    return TableInputs(
        heads_all=heads_all, ok=ok, ok_eig=ok_eig, base=base, hs=hs,
        labels=spectral_types.type_labels(ok_eig, options.seed),
        band_types=bands.band_type_labels(ok), ctx=ctx, series=series,
    )


def observations(
    heads_df: Any,
    spectra_df: Any,
    *,
    seed: int = 0,
    fits: bool = True,
    n_boot: int = DEFAULT_BOOT,
    baseline: bool = True,
    baseline_max_heads: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    client: Any = None,
    n_workers: int = 2,
) -> dict[str, Table]:
    """All observation tables from the survey's per-head rows and spectra.

    Parameters
    ----------
    heads_df, spectra_df : Table, pandas DataFrame, pyarrow Table or dict of columns
        Contents of ``heads.parquet`` and ``spectra.parquet`` (architecture.md §5);
        several models pool into one table set.
    seed : int
        Seed of the Gaussian baseline, the uniform-simplex null and the bootstrap.
    fits : bool
        Fit generalized gamma and lognormal laws to the four per-head samples
        (the ``families`` tables); ``False`` skips them.
    n_boot : int
        Bootstrap replicates per interval (0: no intervals).
    baseline : bool
        Draw the Gaussian baseline survey (same (N, n) and heads per layer).
    baseline_max_heads : int, optional
        Cap on baseline heads per layer (default: as many as the layer has).
    executor : {"local", "dask"}
        Where the per-(model, layer) tasks run; both give the same tables.
    scheduler : str, optional
        Address of a dask scheduler (default: a new ``LocalCluster``).
    client : dask.distributed.Client, optional
        An existing client (takes precedence over ``scheduler``).
    n_workers : int
        Workers of the LocalCluster started when neither client nor scheduler is given.

    Returns
    -------
    dict of table name -> :class:`~qkforms.stats.table.Table` (see :data:`TABLES`).
    For a training run (rows with a ``step``) the observation tables describe each
    model's last checkpoint and the series tables (:mod:`qkforms.stats.training`) all
    steps; otherwise there are no series tables.

    Raises
    ------
    QKFormsError
        If a needed column is missing, a table fails its checks
        (:mod:`qkforms.stats.survey_input`) or there is no ``ok`` head.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> rng = np.random.default_rng(1)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 1, 8))) for _ in range(4)])
    >>> t = observations(h, s, n_boot=20, fits=False)
    >>> t["accumulation"].row(0)["pr_lt2"], t["accumulation"].row(0)["theta_dist_median"] < 1e-12
    (4, True)
    """
    options = ObservationOptions(
        seed=seed, fits=fits, n_boot=n_boot, baseline=baseline,
        baseline_max_heads=baseline_max_heads, executor=executor, scheduler=scheduler,
        client=client, n_workers=n_workers,
    )
    inputs = prepare_inputs(heads_df, spectra_df, options)
    tables: dict[str, Table] = {}
    with _progress.phase(f"stats: tables ({n_boot} bootstrap replicates)", len(BUILDERS),
                         unit="table") as bar:
        for names, build in BUILDERS.items():
            tables.update(zip(names, build(inputs), strict=True))
            bar.update()
    tables.update(zip(HEAD_TABLES, head_stats.build(inputs), strict=True))
    tables.update(inputs.series)
    return tables

"""The per-(model, layer) tasks of the observation tables (docs/statistics.md).

The ok heads and their spectra are split by (model, layer) (:func:`layer_payloads`);
each layer's task (:func:`qkforms.stats.layer.layer_task`) computes its per-head columns
and Gaussian baseline, locally in threads or on a dask cluster (:func:`run_tasks`, the
same numbers either way); :func:`merge_parts` joins the results. The options of a run are
one :class:`ObservationOptions`.

Examples
--------
>>> ObservationOptions(n_boot=0).executor
'local'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms import _progress
from qkforms.errors import QKFormsError
from qkforms.stats.bootstrap import DEFAULT_BOOT
from qkforms.stats.cells import ordered_unique
from qkforms.stats.executor import run_dask
from qkforms.stats.layer import fit_layers, layer_task
from qkforms.stats.table import Table
from qkforms.survey.schema import SPECTRA_READ_COLUMNS
from qkforms.threads import compute_threads, map_slices, single_threaded_libraries

__all__ = ["ObservationOptions", "layer_payloads", "merge_parts", "run_tasks"]


@dataclass(frozen=True)
class ObservationOptions:
    """The options of :func:`qkforms.stats.observation_tables` (its parameters, same defaults).

    Examples
    --------
    >>> ObservationOptions(seed=3, fits=False).baseline
    True
    """

    seed: int = 0
    fits: bool = True
    n_boot: int = DEFAULT_BOOT
    baseline: bool = True
    baseline_max_heads: int | None = None
    executor: str = "local"
    scheduler: str | None = None
    client: Any = None
    n_workers: int = 2


def layer_payloads(
    heads: Table, spectra: Table
) -> tuple[list[tuple[dict, dict]], NDArray[np.int64]]:
    """Split ok heads and spectra by (model, layer); return payloads and the head order.

    A payload is ``(head columns, spectra columns)`` of one layer, layers in order of the
    models' first appearance, then by layer; ``order`` takes the heads into that order.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> heads = Table({"model": ["m", "m", "m"], "layer": [1, 0, 1], "head": [0, 0, 1],
    ...                "N": [4, 4, 4], "n": [1, 1, 1]})
    >>> payloads, order = layer_payloads(heads, Table())
    >>> [p[0]["layer"] for p in payloads], order.tolist()
    ([[0], [1, 1]], [1, 0, 2])
    """
    models = heads["model"].tolist()
    layers = [int(v) for v in heads["layer"].tolist()]
    model_order = {m: i for i, m in enumerate(ordered_unique(models))}
    keys = sorted(set(zip(models, layers, strict=True)), key=lambda k: (model_order[k[0]], k[1]))
    by_key: dict[tuple, list[int]] = {}
    for i, k in enumerate(zip(models, layers, strict=True)):
        by_key.setdefault(k, []).append(i)
    s_models = spectra["model"].tolist() if len(spectra) else []
    s_layers = [int(v) for v in spectra["layer"].tolist()] if len(spectra) else []
    s_by_key: dict[tuple, list[int]] = {}
    for i, k in enumerate(zip(s_models, s_layers, strict=True)):
        s_by_key.setdefault(k, []).append(i)
    payloads = []
    order: list[int] = []
    for k in keys:
        idx = by_key[k]
        order += idx
        sidx = s_by_key.get(k, [])
        h = {name: heads[name][idx].tolist() for name in ("model", "layer", "head", "N", "n")}
        s = {
            name: [_to_list(v) for v in spectra[name][sidx]] if name in spectra else []
            for name in SPECTRA_READ_COLUMNS
        }
        payloads.append((h, s))
    return payloads, np.asarray(order, dtype=np.int64)


def _to_list(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def run_tasks(payloads: list[tuple[dict, dict]],
              options: ObservationOptions) -> list[dict[str, dict[str, list[Any]]]]:
    """Run the per-(model, layer) tasks where ``options.executor`` says.

    Every task gives its layer's ``head_stats`` columns (with the family fits when
    ``options.fits``) and its ``baseline`` heads; the local and the dask executor give the
    same numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import Head
    >>> from qkforms.stats.synthetic_rows import survey_rows
    >>> from qkforms.stats.table import Table
    >>> rng = np.random.default_rng(0)
    >>> h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 4, 32))) for _ in range(4)],
    ...                    heads_per_layer=2)
    >>> payloads, order = layer_payloads(Table(h), Table(s))
    >>> out = run_tasks(payloads, ObservationOptions(fits=False))
    >>> len(out), len(merge_parts([r["baseline"] for r in out]))
    (2, 4)
    """
    seed, fits, baseline = options.seed, options.fits, options.baseline
    executor = options.executor
    kwargs: dict[str, Any] = {"seed": seed, "fits": fits, "baseline": baseline,
                              "baseline_max_heads": options.baseline_max_heads}
    what = "stats: " + ("baseline and family fits" if baseline and fits else
                        "baseline" if baseline else "family fits" if fits else "layers")
    if executor == "local":
        # the thread policy (qkforms.threads): one BLAS/OpenMP thread, the fits of all
        # layers in one batch split over the cores; the same numbers as per-layer fits
        threads = compute_threads()
        with single_threaded_libraries(), _progress.phase(what, 2, unit="step") as bar:
            # each task is a pure function of its layer: slices of them run in threads
            results = [r for part in map_slices(
                lambda a, b: [layer_task(*payloads[i], **{**kwargs, "fits": False})
                              for i in range(a, b)], len(payloads), threads=threads)
                for r in part]
            bar.update()
            if fits:
                for res, cols in zip(results, fit_layers(payloads, threads=threads),
                                     strict=True):
                    res["head_stats"].update(cols)
            bar.update()
        return results
    if executor != "dask":
        raise QKFormsError(f"unknown executor {executor!r}; use 'local' or 'dask'")

    with _progress.phase(f"{what} (dask)", len(payloads), unit="layer") as bar:
        out = run_dask(payloads, kwargs, scheduler=options.scheduler, client=options.client,
                       n_workers=options.n_workers)
        bar.update(len(payloads))
    return out


def merge_parts(parts: list[dict[str, list[Any]]]) -> Table:
    """One table from the column dicts of the tasks; null where a part lacks a column.

    Examples
    --------
    >>> merge_parts([{"a": [1]}, {"a": [2], "b": [3.0]}])["b"].tolist()
    [nan, 3.0]
    """
    names: list[str] = []
    for p in parts:
        for k in p:
            if k not in names:
                names.append(k)
    total: dict[str, list[Any]] = {k: [] for k in names}
    for p in parts:
        length = len(next(iter(p.values()))) if p else 0
        for k in names:
            total[k].extend(p.get(k, [None] * length))
    return Table(total) if names else Table()

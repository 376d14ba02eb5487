"""The survey of one model: its layers read, computed and written, then all merged.

Per model (or checkpoint of a training run) :func:`prepare_model` checks or starts its
resumable parts (:mod:`qkforms.survey.store`), and :func:`survey_model` streams the
layers from the loader (:func:`~qkforms.survey.parallel.prefetched`: the next layer is
read while the current one is computed by :func:`~qkforms.survey.layer.process_layer`
and the previous one written), or hands them to worker processes with ``--workers``
(:func:`~qkforms.survey.parallel.run_processes`; the dask executor's tasks are
:func:`compute_layer`). :func:`finish_survey` merges the parts into ``heads.parquet``,
``spectra.parquet`` and (RoPE models) ``factors/<model>.npz``, and writes
``manifest.json`` (:mod:`qkforms.survey.manifest`) and ``summary.md``.

Examples
--------
>>> from qkforms.survey.pipeline import unique_labels
>>> unique_labels(["m", "m"])
(['m', 'm-2'], ['m [m]', 'm [m-2]'])
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qkforms import __version__, _progress
from qkforms.arguments import env_number
from qkforms.errors import CheckpointError, NonFiniteError, QKFormsError
from qkforms.models import load as load_model
from qkforms.survey.arrow_tables import concat_tables
from qkforms.survey.layer import (
    LayerInputs,
    LayerOptions,
    LayerResult,
    UnreadLayer,
    layer_precision,
    norm_gain,
    process_layer,
)
from qkforms.survey.manifest import ModelRun, check_resume, manifest, run_fingerprint
from qkforms.survey.options import SurveyOptions
from qkforms.survey.outdir import OutputLock
from qkforms.survey.parallel import OneBehind, prefetched, run_processes
from qkforms.survey.store import (
    FactorsStream,
    PartStore,
    atomic_write_bytes,
    atomic_write_table,
    model_key,
)
from qkforms.survey.summary import write_summary

if TYPE_CHECKING:
    from qkforms._progress import Phase
    from qkforms.models import LayerWeights, Model

__all__ = [
    "DELAY_ENV",
    "compute_layer",
    "finish_survey",
    "layer_progress",
    "prepare_model",
    "read_layer",
    "survey_model",
    "unique_labels",
    "write_layer",
]

#: test hook: seconds to sleep after each layer (lets a test kill a run mid-way)
DELAY_ENV = "QKFORMS_SURVEY_TEST_DELAY"


# --------------------------------------------------------------------------- reading layers


def read_layer(model: Model, layer: int) -> tuple[LayerWeights | None, str | None]:
    """``(LayerWeights, None)``, or ``(None, reason)`` for a layer that cannot be read."""
    try:
        return model.layer(layer), None
    except NonFiniteError:
        # read again without the check, so that only the affected heads fail
        return model.layer(layer, check_finite=False), None
    except CheckpointError as exc:  # e.g. a corrupt tensor: this layer fails, the run goes on
        return None, f"layer could not be read: {exc}"


# --------------------------------------------------------------------------- one model


def _layer_result(model: Model, layer: int, lw: LayerWeights | None, failure: str | None,
                  opts: SurveyOptions, label: str, keep_factors: bool,
                  gammas: dict[int, np.ndarray] | None, step: int | None = None,
                  tokens_seen: int | None = None) -> LayerResult:
    """:func:`process_layer` of one read (or unreadable) layer of ``model``."""
    info = model.info
    if lw is None:  # unreadable layer: all heads failed, no weights
        unread = UnreadLayer(layer, np.arange(info.n_q) // max(1, info.n_q // info.n_kv))
        return process_layer(unread, info,
                             LayerInputs(label, failure=failure or "layer could not be read",
                                         step=step, tokens_seen=tokens_seen),
                             LayerOptions(keep_factors=keep_factors))
    gamma = gammas.get(layer) if gammas is not None else None
    precision = layer_precision(model, layer, gamma is not None) if opts.precision_bands else None
    inputs = LayerInputs(label, gamma=gamma, precision=precision, failure=failure, step=step,
                         tokens_seen=tokens_seen)
    return process_layer(lw, info, inputs, LayerOptions.of(opts, keep_factors=keep_factors))


def _write(store: PartStore, layer: int, res: LayerResult,
           stream: FactorsStream | None = None) -> dict[str, float]:
    t = time.perf_counter()
    store.write_layer(layer, res.heads, res.spectra, res.factors)
    if stream is not None and res.factors is not None:
        stream.add(layer, res.factors)  # the merged file too, instead of at the end
    res.timings["write_s"] = time.perf_counter() - t
    delay = env_number(DELAY_ENV, 0.0)
    if delay > 0:
        time.sleep(delay)
    return res.timings


_WORKER_MODELS: dict[str, Model] = {}
#: models a worker process keeps open (a training run has many checkpoints)
_WORKER_MODELS_KEPT = 2


def _worker_model(source: str, qk_norm: str = "refuse") -> Model:
    """The opened model of ``source`` in this worker (the least recent one is closed)."""
    model = _WORKER_MODELS.pop(source, None)
    if model is None:
        model = load_model(source, checksum=False, qk_norm=qk_norm)
    _WORKER_MODELS[source] = model  # most recent last
    while len(_WORKER_MODELS) > _WORKER_MODELS_KEPT:
        old = _WORKER_MODELS.pop(next(iter(_WORKER_MODELS)))
        close = getattr(old, "close", None)
        if close is not None:
            close()
    return model


def compute_layer(source: str, label: str, layer: int, opts: dict[str, Any],
                  keep_factors: bool, step: int | None = None,
                  tokens_seen: int | None = None) -> LayerResult:
    """Survey one layer of ``source`` (opened once per worker); write nothing.

    The task of a worker that may live on another machine (the dask executor): it
    returns the layer's tables, and only the driver writes them into ``--out``.
    """
    model = _worker_model(source, opts.get("qk_norm", "refuse"))
    o = SurveyOptions(**opts)
    t = time.perf_counter()
    lw, failure = read_layer(model, layer)
    read_s = time.perf_counter() - t
    gammas = {layer: norm_gain(model, layer)} if o.fold_norm else None
    res = _layer_result(model, layer, lw, failure, o, label, keep_factors, gammas,
                        step=step, tokens_seen=tokens_seen)
    res.timings["read_s"] = read_s
    return res


def write_layer(store: PartStore, layer: int, res: LayerResult) -> dict[str, float]:
    """Write one computed layer's parts (atomically); return its timings."""
    return _write(store, layer, res)


def _worker_layer(source: str, out: str, key: str, label: str, layer: int,
                  opts: dict[str, Any], keep_factors: bool, step: int | None = None,
                  tokens_seen: int | None = None) -> dict[str, float]:
    """Local worker-process task: survey one layer of ``source`` and write its parts.

    (A child of the survey that dies with it: ``qkforms.survey.parallel``.)
    """
    res = compute_layer(source, label, layer, opts, keep_factors, step, tokens_seen)
    return _write(PartStore(Path(out), key), layer, res)


def layer_progress(total: int, desc: str, enabled: bool) -> Phase:
    """The progress phase of ``total`` layers (:mod:`qkforms._progress`: a bar on a
    terminal, plain lines otherwise; nothing but the callback when not ``enabled``)."""
    with _progress.settings(enabled=enabled and _progress.current().enabled):
        return _progress.phase(desc, total, unit="layer")


def prepare_model(model: Model, source: str | None, key: str, label: str,
                  opts: SurveyOptions, layers: list[int], *, step: int | None = None,
                  tokens_seen: int | None = None) -> tuple[ModelRun, list[int]]:
    """Check/prepare the parts of one model (or checkpoint); return its run and the layers to do.

    With ``opts.resume`` the existing parts must have been computed from the same files,
    options, thresholds, version (and checkpoint step); without it they are discarded.
    """
    info = model.info
    store = PartStore(opts.out, key)
    keep_factors = info.positional == "rope"
    run = run_fingerprint(info, opts, str(source))
    if step is not None or tokens_seen is not None:
        run["ids"] = {"step": step, "tokens_seen": tokens_seen}
    if opts.resume:
        check_resume(store, run)
    store.start(run, resume=opts.resume)
    done = set(store.done_layers(factors=keep_factors)) if opts.resume else set()
    todo = [layer for layer in layers if layer not in done]
    return ModelRun(key=key, label=label, store=store, layers=layers,
                    resumed_layers=len(layers) - len(todo), keep_factors=keep_factors), todo


def _survey_model(model: Model, source: str | None, key: str, label: str, opts: SurveyOptions,
                  layers: list[int], *, step: int | None = None,
                  tokens_seen: int | None = None, lock: OutputLock | None = None) -> ModelRun:
    mrun, todo = prepare_model(model, source, key, label, opts, layers, step=step,
                               tokens_seen=tokens_seen)
    gammas = None
    if opts.fold_norm:
        gammas = {layer: norm_gain(model, layer) for layer in todo}
    totals = {"read_s": 0.0, "compute_s": 0.0, "exact_s": 0.0, "certify_s": 0.0,
              "bands_s": 0.0, "table_s": 0.0, "write_s": 0.0}

    def add(timings: dict[str, float]) -> None:
        for k, v in timings.items():
            totals[k] += v
        bar.update(1)

    t0 = time.perf_counter()
    with layer_progress(len(todo), f"survey {label}", opts.progress) as bar:
        _survey_layers(model, source, key, label, opts, todo, mrun, gammas, add, step=step,
                       tokens_seen=tokens_seen, lock=lock)
    totals["wall_s"] = time.perf_counter() - t0
    mrun.timings = totals
    return mrun


def _survey_layers(model: Model, source: str | None, key: str, label: str,
                   opts: SurveyOptions, todo: list[int], mrun: ModelRun,
                   gammas: dict[int, np.ndarray] | None,
                   add: Callable[[dict[str, float]], None], *, step: int | None,
                   tokens_seen: int | None, lock: OutputLock | None) -> None:
    """Survey the layers ``todo`` of one model, in worker processes or in this one."""
    store, keep_factors = mrun.store, mrun.keep_factors
    try:
        if opts.workers > 1 and source is not None and len(todo) > 1:
            odict = asdict(opts)
            odict["out"] = str(opts.out)
            calls = [(source, str(opts.out), key, label, layer, odict, keep_factors, step,
                      tokens_seen) for layer in todo]
            run_processes(_worker_layer, calls, workers=opts.workers, on_result=add,
                          on_start=lock.record_workers if lock is not None else None)
        else:
            # with every layer computed here, in order, the merged factors file is
            # written as the parts are (finish_survey moves it into place)
            if keep_factors and todo and todo == mrun.layers:
                mrun.factors = store.factors_stream()
            # read layer i + 1, compute layer i, write layer i - 1: all at once
            with OneBehind(add) as writer:
                for layer, (lw, failure), read_s in prefetched(
                        lambda i: read_layer(model, i), todo):
                    res = _layer_result(model, layer, lw, failure, opts, label, keep_factors,
                                        gammas, step=step, tokens_seen=tokens_seen)
                    del lw  # let the reader's next layer take this one's memory
                    res.timings["read_s"] = read_s
                    writer.submit(functools.partial(_write, store, layer, res, mrun.factors))
            if mrun.factors is not None:
                mrun.factors.close()  # a training run holds one per checkpoint till the end
    except BaseException:
        discard_factor_streams([mrun])
        # the workers are dead (run_processes joined them) and the writer thread is
        # done: a write they were killed in left a temporary file, which goes now
        try:
            store.clean_temporaries()
        except (OSError, QKFormsError):  # pragma: no cover - best effort on the way out
            pass
        raise


#: the local layer pipeline of one model or checkpoint (used by the training-run driver)
survey_model = _survey_model


# --------------------------------------------------------------------------- whole survey


def unique_labels(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Part keys and ``model`` column values: made unique when two sources share a name.

    Examples
    --------
    >>> from qkforms.survey.pipeline import unique_labels
    >>> unique_labels(["m", "x/y", "m"])
    (['m', 'x_y', 'm-2'], ['m [m]', 'x/y', 'm [m-2]'])
    """
    keys: list[str] = []
    for name in names:
        base = model_key(name)
        key, i = base, 2
        while key in keys:
            key, i = f"{base}-{i}", i + 1
        keys.append(key)
    labels = [name if list(names).count(name) == 1 else f"{name} [{key}]"
              for name, key in zip(names, keys, strict=True)]
    return keys, labels


def finish_survey(models: Sequence[Any], srcs: Sequence[str | None], runs: Sequence[ModelRun],
                  opts: SurveyOptions, *, argv: Sequence[str] | None = None,
                  t_start: float | None = None,
                  entry_extra: Sequence[dict[str, Any]] | None = None,
                  extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Merge the parts of ``runs`` (in order) and write the tables, manifest and summary.

    ``models`` need only ``info``; ``entry_extra`` adds fields to each manifest entry
    (e.g. a checkpoint's ``step``), ``extra`` top-level fields (e.g. ``runs``).
    Returns the manifest.
    """
    try:
        return _finish_survey(models, srcs, runs, opts, argv=argv, t_start=t_start,
                              entry_extra=entry_extra, extra=extra)
    finally:
        discard_factor_streams(runs)  # those not moved into place: a failure on the way


def discard_factor_streams(runs: Sequence[ModelRun]) -> None:
    """Remove the unfinished merged factors files of ``runs`` (a failed survey)."""
    for run in runs:
        if run.factors is not None:
            stream, run.factors = run.factors, None
            stream.discard()


def _finish_survey(models: Sequence[Any], srcs: Sequence[str | None], runs: Sequence[ModelRun],
                   opts: SurveyOptions, *, argv: Sequence[str] | None,
                   t_start: float | None, entry_extra: Sequence[dict[str, Any]] | None,
                   extra: dict[str, Any] | None) -> dict[str, Any]:
    t_start = time.perf_counter() if t_start is None else t_start
    out = Path(opts.out)  # call it under the output lock (open_output)
    t_merge = time.perf_counter()
    heads_parts, spectra_parts = [], []
    for run in runs:
        for layer in run.layers:
            heads_parts.append(run.store.read_layer(layer, "heads"))
            spectra_parts.append(run.store.read_layer(layer, "spectra"))
    heads = concat_tables(heads_parts, "heads")
    spectra = concat_tables(spectra_parts, "spectra")
    atomic_write_table(out / "heads.parquet", heads, root=out)
    atomic_write_table(out / "spectra.parquet", spectra, root=out)
    for run in runs:
        if not run.keep_factors:
            continue
        stream, run.factors = run.factors, None
        if stream is not None and stream.layers == run.layers:
            stream.commit()
        else:
            if stream is not None:
                stream.discard()
            run.store.merge_factors(run.layers)
    merge_s = time.perf_counter() - t_merge
    man = manifest(models, srcs, runs, opts, heads, argv, __version__)
    if entry_extra is not None:
        for entry, more in zip(man["models"], entry_extra, strict=True):
            entry.update(more)
    if extra:
        man.update(extra)
    man["timings"] = {"merge_s": merge_s, "total_s": time.perf_counter() - t_start}
    atomic_write_bytes(out / "manifest.json", json.dumps(man, indent=2).encode(), root=out)
    write_summary(out / "summary.md", heads, man)
    return man

"""The survey run: models -> per-layer parts -> heads/spectra tables, manifest, summary.

:func:`survey` is what ``qkforms survey`` calls. Per model it streams the layers from
the loader (the next layer is read in a background thread while the current one is
computed), computes every head of a layer in one batch
(:func:`~qkforms.survey.spectra.layer_spectra`,
:func:`~qkforms.survey.statistics.head_columns`), optionally certifies Theorem 3
exactly per head (:func:`qkforms.exact.head_signature`), and writes an atomic part per
layer (:mod:`qkforms.survey.store`). Then the parts are merged into
``heads.parquet``, ``spectra.parquet`` and (RoPE models) ``factors/<model>.npz``, and
``manifest.json`` and ``summary.md`` are written.

Examples
--------
>>> from qkforms.survey.runner import parse_layers
>>> parse_layers(["0-2", "7,9"], 12)
[0, 1, 2, 7, 9]
"""

from __future__ import annotations

import json
import os
import platform
import queue
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from qkforms.errors import (
    CheckpointError,
    NonFiniteError,
    QKFormsError,
    UnsupportedArchitectureError,
)
from qkforms.survey.spectra import PIVOT_LIMIT, layer_spectra
from qkforms.survey.statistics import (
    FLOAT_COLUMNS,
    INT_COLUMNS,
    SPECTRAL_TYPE_RADIUS,
    ZERO_TOL,
    head_columns,
)
from qkforms.survey.store import PartStore, atomic_write_bytes, atomic_write_table, model_key

__all__ = ["LayerResult", "SurveyOptions", "norm_gain", "parse_layers", "process_layer", "survey"]

#: test hook: seconds to sleep after each layer (lets a test kill a run mid-way)
DELAY_ENV = "QKFORMS_SURVEY_TEST_DELAY"


@dataclass
class SurveyOptions:
    """Options of a survey run (the command-line flags).

    Attributes
    ----------
    out : Path
        Output directory.
    exact : bool
        Certify Theorem 3 exactly per head.
    exact_method : {"auto", "charpoly"}
        How :func:`qkforms.exact.head_signature` certifies: ``"auto"`` by an exact
        (modular) rank certificate of the stacked map plus Sylvester's law of inertia,
        falling back to Descartes on the characteristic polynomial for degenerate
        heads; ``"charpoly"`` always by Descartes' rule on the exact characteristic
        polynomial of ``J G`` (independent of the theorem, about 1 s per head at
        ``(576, 64)``).
    resume : bool
        Keep the complete parts of an earlier (interrupted) run with the same options.
    fold_norm : bool
        Fold the gain of the norm before each attention block into ``W_Q, W_K``.
    workers : int
        Worker processes (layers are distributed over them).
    layers : list of str or None
        Layer selection (``"3"``, ``"0-5"``, ``"1,4"``); all layers when None.
    progress : bool
        Show a progress bar (only when stderr is a terminal).
    threads : int or None
        Threads computing slices of a layer's heads in parallel (single-threaded BLAS
        each); default: the number of cores divided by ``workers``.
    """

    out: Path = Path("survey-out")
    exact: bool = False
    exact_method: str = "auto"
    resume: bool = False
    fold_norm: bool = False
    workers: int = 1
    layers: list[str] | None = None
    progress: bool = True
    threads: int | None = None

    def compute_threads(self) -> int:
        """The number of compute threads per process."""
        if self.threads is not None:
            return max(1, self.threads)
        return max(1, (os.cpu_count() or 1) // max(1, self.workers))

    def fingerprint(self) -> dict[str, Any]:
        """The options that change the numbers (must match to resume)."""
        return {"exact": self.exact, "exact_method": self.exact_method if self.exact else None,
                "fold_norm": self.fold_norm}


def parse_layers(spec: Sequence[str] | None, n_layers: int) -> list[int]:
    """Parse a layer selection (items like ``"3"``, ``"0-5"``, ``"1,4"``).

    Raises
    ------
    QKFormsError
        For malformed items or layers outside ``[0, n_layers)``.

    Examples
    --------
    >>> from qkforms.survey.runner import parse_layers
    >>> parse_layers(None, 3), parse_layers(["2", "0"], 3)
    ([0, 1, 2], [0, 2])
    """
    if not spec:
        return list(range(n_layers))
    chosen: set[int] = set()
    for item in spec:
        for tok in str(item).split(","):
            tok = tok.strip()
            if not tok:
                continue
            try:
                if "-" in tok[1:]:
                    lo, hi = tok.split("-", 1) if not tok.startswith("-") else ("", tok)
                    rng = range(int(lo), int(hi) + 1)
                else:
                    rng = range(int(tok), int(tok) + 1)
            except ValueError:
                raise QKFormsError(f"bad layer selection {tok!r} (use e.g. 3, 0-5, 1,4)") from None
            for layer in rng:
                if not 0 <= layer < n_layers:
                    raise QKFormsError(f"layer {layer} out of range: the model has "
                                       f"{n_layers} layers (0-{n_layers - 1})")
                chosen.add(layer)
    return sorted(chosen)


# --------------------------------------------------------------------------- norm gains

def norm_gain(model: Any, layer: int) -> np.ndarray:
    """The gain ``gamma`` (shape ``(N,)``) of the norm feeding layer ``layer``'s attention.

    Reads it through the loader (:meth:`qkforms.models.Model.norm_weight`).

    Raises
    ------
    UnsupportedArchitectureError
        When the architecture's norm placement is not known (e.g. OPT, whose pre/post
        norm order depends on the checkpoint) or the tensor is absent.

    Examples
    --------
    >>> import tempfile
    >>> import qkforms.models as qm
    >>> from qkforms.survey.runner import norm_gain
    >>> from qkforms.survey.synthetic import write_llama_checkpoint
    >>> d = write_llama_checkpoint(tempfile.mkdtemp(), n_layers=1, N=16, n=2, n_q=2,
    ...                            n_kv=1, norms=True)
    >>> norm_gain(qm.load(d), 0).shape
    (16,)
    """
    try:
        return np.asarray(model.norm_weight(layer), dtype=np.float64)
    except UnsupportedArchitectureError as exc:
        raise UnsupportedArchitectureError(f"--fold-norm: {exc}") from None


# --------------------------------------------------------------------------- BLAS threads

_CONTROLLER: Any = None


def blas_single_thread() -> Any:
    """Context manager limiting BLAS/LAPACK to one thread (no-op without threadpoolctl).

    The survey's linear algebra is a batch of many small problems (2n x 2n eigenvalue
    problems, n x N products): multi-threaded OpenBLAS gains little there and, when the
    cores are shared with other work, its spinning threads slow such calls down by an
    order of magnitude. Parallelism comes from ``--workers`` processes instead.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.runner import blas_single_thread
    >>> with blas_single_thread():
    ...     float(np.linalg.eigvalsh(np.eye(2)).sum())
    2.0
    """
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl is in the survey extra
        from contextlib import nullcontext

        return nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


# --------------------------------------------------------------------------- one layer

_POOL: Any = None


def _failed_spectra(n_q: int, n: int, reason: str, keep_factors: bool) -> Any:
    """A :class:`LayerSpectra` whose heads all failed for ``reason``."""
    from qkforms.survey.spectra import LayerSpectra

    def nan(*shape: int) -> np.ndarray:
        return np.full(shape, np.nan)

    return LayerSpectra(
        ok=np.zeros(n_q, dtype=bool), error=[reason] * n_q, eig_S=nan(n_q, 2 * n),
        norm_sq=nan(n_q), skew_sq=nan(n_q), trace=nan(n_q), sv_L_sq=nan(n_q, n),
        sv_T=nan(n_q, n), abs_eig_L=nan(n_q, n),
        Q_red=nan(n_q, n, 2 * n) if keep_factors else None,
        K_red=nan(n_q, n, 2 * n) if keep_factors else None,
    )


def _split_spectra(W_Q: np.ndarray, W_K: np.ndarray, kv_index: np.ndarray, keep_factors: bool,
                   threads: int) -> Any:
    """:func:`layer_spectra` on ``threads`` slices of the query heads, in parallel.

    Every per-head number is computed by the same calls on the same blocks whatever
    the slicing, so the result is identical to one batch.
    """
    from concurrent.futures import ThreadPoolExecutor

    from qkforms.survey.spectra import LayerSpectra

    n_q = W_Q.shape[0]
    threads = max(1, min(threads, n_q))
    if threads == 1:
        return layer_spectra(W_Q, W_K, kv_index, keep_factors=keep_factors)
    global _POOL
    if _POOL is None or _POOL._max_workers < threads:
        _POOL = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="qkforms-survey")
    bounds = np.linspace(0, n_q, threads + 1).round().astype(int)
    parts = list(_POOL.map(
        lambda ab: layer_spectra(W_Q[ab[0]:ab[1]], W_K, kv_index[ab[0]:ab[1]],
                                 keep_factors=keep_factors),
        list(zip(bounds[:-1], bounds[1:], strict=True))))
    merged: dict[str, Any] = {}
    for name in ("ok", "eig_S", "norm_sq", "skew_sq", "trace", "sv_L_sq", "sv_T", "abs_eig_L",
                 "Q_red", "K_red"):
        vals = [getattr(p, name) for p in parts]
        merged[name] = None if vals[0] is None else np.concatenate(vals)
    merged["error"] = [e for p in parts for e in p.error]
    return LayerSpectra(**merged)



@dataclass
class LayerResult:
    """The tables of one layer and how long each step took."""

    heads: Any
    spectra: Any
    factors: dict[str, np.ndarray] | None
    timings: dict[str, float] = field(default_factory=dict)


def _list_array(values: np.ndarray) -> Any:
    import pyarrow as pa

    rows, width = values.shape
    offsets = pa.array(np.arange(rows + 1, dtype=np.int32) * width, type=pa.int32())
    return pa.ListArray.from_arrays(offsets, pa.array(values.reshape(-1), type=pa.float64()))


def _certify(W_Q: np.ndarray, W_K: np.ndarray, gamma: np.ndarray | None, n: int, N: int,
             method: str = "auto") -> bool:
    """Exact Theorem 3 check on the decoded stored weights (see docs/survey.md)."""
    from qkforms.exact.signature import head_signature

    if gamma is not None and not np.all(gamma != 0):
        W_Q, W_K = W_Q * gamma, W_K * gamma  # a zero gain breaks the congruence argument
    # with all gains nonzero, S_folded = D S D (D = diag(gamma)): same inertia (Sylvester)
    return tuple(head_signature(W_Q, W_K, method=method)) == (n, n, N - 2 * n)


def process_layer(
    lw: Any,
    info: Any,
    *,
    model: str,
    exact: bool = False,
    exact_method: str = "auto",
    gamma: np.ndarray | None = None,
    keep_factors: bool = False,
    failure: str | None = None,
    threads: int = 1,
) -> LayerResult:
    """Compute the heads and spectra tables of one layer.

    Parameters
    ----------
    lw : LayerWeights
        ``W_Q (n_q, n, N)``, ``W_K (n_kv, n, N)``, ``kv_index``, ``layer``.
    info : ModelInfo
        Only ``N`` and ``n`` are used.
    model : str
        Value of the ``model`` column.
    exact : bool
        Certify each head exactly (``exact_certified``; None when not asked).
    gamma : ndarray, optional
        Norm gain folded into the weights (``W <- W diag(gamma)``).
    keep_factors : bool
        Return ``Q_red``/``K_red`` for the factors sidecar.
    failure : str, optional
        Mark every head failed with this reason (layer could not be read).
    threads : int
        Compute this many slices of the layer's query heads in parallel threads (each
        with single-threaded BLAS); the results do not depend on it.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from qkforms.survey.runner import process_layer
    >>> rng = np.random.default_rng(0)
    >>> lw = SimpleNamespace(layer=0, W_Q=rng.standard_normal((2, 2, 9)),
    ...                      W_K=rng.standard_normal((1, 2, 9)), kv_index=np.array([0, 0]))
    >>> res = process_layer(lw, SimpleNamespace(N=9, n=2), model="toy", exact=True)
    >>> res.heads.column("n_zero").to_pylist(), res.heads.column("exact_certified").to_pylist()
    ([5, 5], [True, True])
    """
    import pyarrow as pa

    from qkforms.survey.schema import heads_schema, spectra_schema

    t0 = time.perf_counter()
    N, n = int(info.N), int(info.n)
    kv_index = np.asarray(lw.kv_index, dtype=np.int64)
    n_q = int(kv_index.shape[0])
    with blas_single_thread():
        if failure is not None:  # nothing to compute: every head failed for one reason
            sp = _failed_spectra(n_q, n, failure, keep_factors)
        else:
            W_Q, W_K = lw.W_Q, lw.W_K
            if gamma is not None:
                W_Q, W_K = W_Q * gamma, W_K * gamma
            sp = _split_spectra(W_Q, W_K, kv_index, keep_factors, threads)
        cols = head_columns(sp, N=N, n=n)
    t1 = time.perf_counter()
    certified: list[bool | None] = [None] * n_q
    if exact and failure is None:
        for h in range(n_q):
            g = int(kv_index[h])
            if np.isfinite(lw.W_Q[h]).all() and np.isfinite(lw.W_K[g]).all():
                certified[h] = _certify(lw.W_Q[h], lw.W_K[g], gamma, n, N, exact_method)
    t2 = time.perf_counter()
    valid = cols["valid"]
    inval = ~valid
    data: dict[str, Any] = {
        "model": pa.array([model] * n_q, type=pa.string()),
        "layer": pa.array(np.full(n_q, lw.layer, dtype=np.int32)),
        "head": pa.array(np.arange(n_q, dtype=np.int32)),
        "kv_head": pa.array(kv_index.astype(np.int32)),
        "N": pa.array(np.full(n_q, N, dtype=np.int32)),
        "n": pa.array(np.full(n_q, n, dtype=np.int32)),
        "status": pa.array(["ok" if v else "failed" for v in valid], type=pa.string()),
        "error": pa.array(sp.error, type=pa.string()),
        "spectral_type": pa.array(cols["spectral_type"].tolist(), type=pa.string()),
        "exact_certified": pa.array(certified, type=pa.bool_()),
    }
    for name in INT_COLUMNS:
        data[name] = pa.array(cols[name].astype(np.int32), mask=inval)
    for name in FLOAT_COLUMNS:
        data[name] = pa.array(cols[name], mask=inval, type=pa.float64())
    schema = heads_schema()
    heads = pa.table([data[f.name] for f in schema], schema=schema)
    ok = np.flatnonzero(valid)
    sschema = spectra_schema()
    spectra = pa.table(
        [
            pa.array([model] * ok.size, type=pa.string()),
            pa.array(np.full(ok.size, lw.layer, dtype=np.int32)),
            pa.array(ok.astype(np.int32)),
            _list_array(sp.eig_S[ok]),
            _list_array(sp.sv_T[ok]),
            _list_array(sp.abs_eig_L[ok]),
        ],
        schema=sschema,
    )
    factors = None
    if keep_factors:
        assert sp.Q_red is not None and sp.K_red is not None
        factors = {"Q_red": sp.Q_red, "K_red": sp.K_red}
    return LayerResult(heads, spectra, factors, {
        "compute_s": t1 - t0, "exact_s": t2 - t1, "table_s": time.perf_counter() - t2,
    })


# --------------------------------------------------------------------------- reading layers


def _read_layer(model: Any, layer: int) -> tuple[Any, str | None]:
    """``(LayerWeights, None)``, or ``(LayerWeights or None, reason)`` for bad layers."""
    try:
        return model.layer(layer), None
    except NonFiniteError:
        # read again without the check, so that only the affected heads fail
        return model.layer(layer, check_finite=False), None
    except CheckpointError as exc:  # e.g. a corrupt tensor: this layer fails, the run goes on
        return None, f"layer could not be read: {exc}"


def _prefetched(model: Any, layers: list[int]) -> Iterator[tuple[int, Any, str | None, float]]:
    """Yield ``(layer, weights, failure, read_seconds)``; the next layer is read meanwhile.

    At most two layers are alive at once (the one being processed and the one read
    ahead): the reader takes a slot before reading and the consumer gives it back when
    it asks for the next layer.
    """
    q: queue.Queue[Any] = queue.Queue()
    slots = threading.Semaphore(2)
    stop = threading.Event()

    def produce() -> None:
        for layer in layers:
            while not slots.acquire(timeout=0.1):
                if stop.is_set():
                    return
            if stop.is_set():
                return
            t = time.perf_counter()
            try:
                item: Any = (layer, *_read_layer(model, layer), time.perf_counter() - t)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                q.put(exc)
                return
            q.put(item)

    thread = threading.Thread(target=produce, name="qkforms-survey-reader", daemon=True)
    thread.start()
    try:
        for i in range(len(layers)):
            if i:
                slots.release()  # the previous layer has been processed
            item = q.get()
            if isinstance(item, BaseException):
                raise item
            yield item
            item = None
    finally:
        stop.set()
        thread.join(timeout=5)


# --------------------------------------------------------------------------- one model


def _run_fingerprint(info: Any, opts: SurveyOptions, source: str) -> dict[str, Any]:
    from qkforms import __version__

    return {
        "source": source,
        "name": info.name,
        "files": [[f.path, f.sha256] for f in info.files],
        "options": opts.fingerprint(),
        "thresholds": _thresholds(),
        "version": __version__,
    }


def _thresholds() -> dict[str, float]:
    return {"zero_tol_reduced": ZERO_TOL, "spectral_type_radius": SPECTRAL_TYPE_RADIUS,
            "cholesky_pivot_limit": PIVOT_LIMIT}


def _check_resume(store: PartStore, run: dict[str, Any]) -> None:
    old = store.read_run()
    if old is None:
        return
    keys = ("files", "options", "thresholds", "version")
    diff = [k for k in keys if old.get(k) != run.get(k)]
    if diff:
        raise QKFormsError(
            f"cannot resume {run['name']!r} in {store.dir}: the earlier run differs in "
            f"{', '.join(diff)} (earlier: {', '.join(f'{k}={old.get(k)!r}' for k in diff)}); "
            "rerun without --resume to start over")


def _progress(total: int, desc: str, enabled: bool) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the survey extra
        return None
    disable = (not enabled) or not sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit="layer", disable=disable, file=sys.stderr)


def _layer_job(model: Any, layer: int, lw: Any, failure: str | None, opts: SurveyOptions,
               label: str, keep_factors: bool, gammas: dict[int, np.ndarray] | None,
               store: PartStore) -> dict[str, float]:
    info = model.info
    if lw is None:  # unreadable layer: all heads failed, no weights
        from types import SimpleNamespace

        lw = SimpleNamespace(layer=layer, W_Q=None, W_K=None,
                             kv_index=np.arange(info.n_q) // max(1, info.n_q // info.n_kv))
        res = process_layer(lw, info, model=label, keep_factors=keep_factors,
                            failure=failure or "layer could not be read")
    else:
        gamma = gammas.get(layer) if gammas is not None else None
        res = process_layer(lw, info, model=label, exact=opts.exact,
                            exact_method=opts.exact_method, gamma=gamma,
                            keep_factors=keep_factors, failure=failure,
                            threads=opts.compute_threads())
    t = time.perf_counter()
    store.write_layer(layer, res.heads, res.spectra, res.factors)
    res.timings["write_s"] = time.perf_counter() - t
    delay = float(os.environ.get(DELAY_ENV, "0") or 0)
    if delay > 0:
        time.sleep(delay)
    return res.timings


_WORKER_MODELS: dict[str, Any] = {}


def _worker_layer(source: str, out: str, key: str, label: str, layer: int,
                  opts: dict[str, Any], keep_factors: bool) -> dict[str, float]:
    """Worker-process task: survey one layer of ``source`` and write its parts."""
    from qkforms.models import load

    model = _WORKER_MODELS.get(source)
    if model is None:
        model = _WORKER_MODELS[source] = load(source, checksum=False)
    o = SurveyOptions(**opts)
    t = time.perf_counter()
    lw, failure = _read_layer(model, layer)
    read_s = time.perf_counter() - t
    gammas = {layer: norm_gain(model, layer)} if o.fold_norm else None
    timings = _layer_job(model, layer, lw, failure, o, label, keep_factors, gammas,
                         PartStore(Path(out), key))
    timings["read_s"] = read_s
    return timings


def _survey_model(model: Any, source: str | None, key: str, label: str, opts: SurveyOptions,
                  layers: list[int]) -> dict[str, Any]:
    info = model.info
    store = PartStore(opts.out, key)
    keep_factors = info.positional == "rope"
    run = _run_fingerprint(info, opts, str(source))
    if opts.resume:
        _check_resume(store, run)
    store.start(run, resume=opts.resume)
    done = set(store.done_layers(factors=keep_factors)) if opts.resume else set()
    todo = [layer for layer in layers if layer not in done]
    gammas = None
    if opts.fold_norm:
        gammas = {layer: norm_gain(model, layer) for layer in todo}
    totals = {"read_s": 0.0, "compute_s": 0.0, "exact_s": 0.0, "table_s": 0.0, "write_s": 0.0}
    t0 = time.perf_counter()
    bar = _progress(len(todo), label, opts.progress)
    try:
        if opts.workers > 1 and source is not None and len(todo) > 1:
            _run_workers(source, key, label, opts, todo, keep_factors, totals, bar)
        else:
            for layer, lw, failure, read_s in _prefetched(model, todo):
                timings = _layer_job(model, layer, lw, failure, opts, label, keep_factors,
                                     gammas, store)
                timings["read_s"] = read_s
                for k, v in timings.items():
                    totals[k] += v
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    totals["wall_s"] = time.perf_counter() - t0
    return {"key": key, "label": label, "store": store, "layers": layers,
            "resumed_layers": len(layers) - len(todo), "keep_factors": keep_factors,
            "timings": totals}


def _run_workers(source: str, key: str, label: str, opts: SurveyOptions, todo: list[int],
                 keep_factors: bool, totals: dict[str, float], bar: Any) -> None:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    threads = str(max(1, (os.cpu_count() or 1) // opts.workers))
    saved = {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                            "MKL_NUM_THREADS")}
    os.environ.update({k: threads for k in saved})
    odict = asdict(opts)
    odict["out"] = str(opts.out)
    try:
        with ProcessPoolExecutor(max_workers=opts.workers,
                                 mp_context=mp.get_context("spawn")) as pool:
            futures = [pool.submit(_worker_layer, source, str(opts.out), key, label, layer,
                                   odict, keep_factors) for layer in todo]
            for fut in as_completed(futures):
                for k, v in fut.result().items():
                    totals[k] += v
                if bar is not None:
                    bar.update(1)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# --------------------------------------------------------------------------- whole survey


def _unique_keys(names: list[str]) -> list[str]:
    keys: list[str] = []
    for name in names:
        base = model_key(name)
        key, i = base, 2
        while key in keys:
            key, i = f"{base}-{i}", i + 1
        keys.append(key)
    return keys


def survey(
    models: Sequence[Any],
    opts: SurveyOptions,
    *,
    sources: Sequence[str | None] | None = None,
    argv: Sequence[str] | None = None,
    load_seconds: Sequence[float] | None = None,
) -> dict[str, Any]:
    """Survey already opened models into ``opts.out``; return the manifest.

    Parameters
    ----------
    models : sequence of Model
        Objects with ``info`` and ``layer(i)`` (see :mod:`qkforms.models`).
    opts : SurveyOptions
    sources : sequence of str, optional
        The source each model was loaded from (recorded; needed for ``workers > 1``).
    argv : sequence of str, optional
        The command line (recorded in the manifest).
    load_seconds : sequence of float, optional
        Time spent opening each model (headers and sha256; recorded as ``load_s``).

    Returns
    -------
    dict
        The manifest written to ``manifest.json``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import qkforms.models as qm
    >>> from qkforms.survey.runner import SurveyOptions, survey
    >>> from qkforms.survey.synthetic import write_llama_checkpoint
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> d = write_llama_checkpoint(tmp / "ckpt", n_layers=2, N=24, n=3, n_q=2, n_kv=1)
    >>> man = survey([qm.load(d)], SurveyOptions(out=tmp / "out", progress=False))
    >>> man["models"][0]["heads"], sorted(p.name for p in (tmp / "out").glob("*.*"))
    (4, ['heads.parquet', 'manifest.json', 'spectra.parquet', 'summary.md'])
    """
    import pyarrow as pa

    from qkforms import __version__
    from qkforms.survey.schema import heads_schema, spectra_schema
    from qkforms.survey.summary import write_summary

    t_start = time.perf_counter()
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    srcs = list(sources) if sources is not None else [None] * len(models)
    names = [m.info.name for m in models]
    keys = _unique_keys(names)
    # the `model` column: the model's name, made unique when two sources share one
    labels = [name if names.count(name) == 1 else f"{name} [{key}]"
              for name, key in zip(names, keys, strict=True)]
    selections = [parse_layers(opts.layers, m.info.n_layers) for m in models]
    runs = []
    for model, src, key, label, layers in zip(models, srcs, keys, labels, selections,
                                              strict=True):
        runs.append(_survey_model(model, src, key, label, opts, layers))
    # merge
    t_merge = time.perf_counter()
    heads_parts, spectra_parts = [], []
    for run in runs:
        for layer in run["layers"]:
            heads_parts.append(run["store"].read_layer(layer, "heads"))
            spectra_parts.append(run["store"].read_layer(layer, "spectra"))
    heads = pa.concat_tables(heads_parts) if heads_parts else heads_schema().empty_table()
    spectra = (pa.concat_tables(spectra_parts) if spectra_parts
               else spectra_schema().empty_table())
    atomic_write_table(out / "heads.parquet", heads)
    atomic_write_table(out / "spectra.parquet", spectra)
    for run in runs:
        if run["keep_factors"]:
            (out / "factors").mkdir(exist_ok=True)
            run["store"].merge_factors(run["layers"], out / "factors" / f"{run['key']}.npz")
    merge_s = time.perf_counter() - t_merge
    if load_seconds is not None:
        for run, secs in zip(runs, load_seconds, strict=True):
            run["timings"]["load_s"] = secs
    manifest = _manifest(models, srcs, runs, opts, heads, argv, __version__)
    manifest["timings"] = {"merge_s": merge_s, "total_s": time.perf_counter() - t_start}
    atomic_write_bytes(out / "manifest.json", json.dumps(manifest, indent=2).encode())
    write_summary(out / "summary.md", heads, manifest)
    return manifest


def _manifest(models: Sequence[Any], srcs: list[str | None], runs: list[dict[str, Any]],
              opts: SurveyOptions, heads: Any, argv: Sequence[str] | None,
              version: str) -> dict[str, Any]:
    import pyarrow as pa

    entries = []
    model_col = heads.column("model").to_pylist()
    status = heads.column("status").to_pylist()
    for model, src, run in zip(models, srcs, runs, strict=True):
        info = model.info
        facts = {k: getattr(info, k, None) for k in (
            "name", "architecture", "n_layers", "N", "n", "n_q", "n_kv", "positional",
            "rope_base", "rotary_fraction", "rope_scaling", "has_qk_bias", "dtype", "format",
            "causal")}
        rows = [i for i, m in enumerate(model_col) if m == run["label"]]
        entries.append({
            "model": run["label"],
            "key": run["key"],
            "source": src,
            **facts,
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in info.files],
            "layers": run["layers"],
            "heads": len(rows),
            "failed": sum(status[i] == "failed" for i in rows),
            "resumed_layers": run["resumed_layers"],
            "factors": f"factors/{run['key']}.npz" if run["keep_factors"] else None,
            "timings": run["timings"],
        })
    return {
        "tool": "qkforms survey",
        "version": version,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "argv": list(argv) if argv is not None else None,
        "options": {"exact": opts.exact, "exact_method": opts.exact_method,
                    "resume": opts.resume, "fold_norm": opts.fold_norm,
                    "workers": opts.workers, "threads": opts.compute_threads(),
                    "layers": opts.layers},
        "thresholds": _thresholds(),
        "environment": {"python": platform.python_version(), "numpy": np.__version__,
                        "pyarrow": pa.__version__, "platform": platform.platform()},
        "certification": (
            "exact_certified: the exact signature (python-flint, no floating point) of the "
            "stored weights as decoded by the loader to float64 equals (n, n, N - 2n); "
            + ("method auto: exact modular rank certificate of [W_K; W_Q] = 2n, then "
               "Sylvester's law of inertia (pull-back of J); Descartes' rule on the exact "
               "characteristic polynomial for degenerate heads"
               if opts.exact_method == "auto" else
               "method charpoly: Descartes' rule of signs on the exact characteristic "
               "polynomial of J G (Lemma 10)") if opts.exact else None),
        "models": entries,
    }

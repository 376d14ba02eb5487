"""One layer of the survey: weights -> spectra -> per-head columns -> heads/spectra tables.

:func:`process_layer` computes every head of a layer in one batch through the Gram
engine (:func:`qkforms.gram.layer_spectra`, in slices over compute threads) and the
per-head statistics (:func:`~qkforms.survey.head_statistics.head_columns`); then, as the
:class:`LayerOptions` ask, it encloses each head's statistics in certified intervals
(:func:`qkforms.exact.enclose_layer`, ``--certify``), decides every head's signature
exactly (:func:`qkforms.exact.head_inertia`, ``--exact``) and bounds them by the storage
precision (:func:`qkforms.bands.layer_bands`, ``--precision-bands``), and builds the
layer's tables (:mod:`qkforms.survey.arrow_tables`). What the layer is besides its
weights (its model label, norm gain, storage precision, checkpoint step, read failure)
is a :class:`LayerInputs`.

Examples
--------
>>> import numpy as np
>>> from types import SimpleNamespace
>>> from qkforms.survey.layer import LayerInputs, process_layer
>>> rng = np.random.default_rng(0)
>>> lw = SimpleNamespace(layer=0, W_Q=rng.standard_normal((2, 2, 9)),
...                      W_K=rng.standard_normal((1, 2, 9)), kv_index=np.array([0, 0]))
>>> process_layer(lw, SimpleNamespace(N=9, n=2), LayerInputs("toy")).heads.num_rows
2
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from qkforms.bands import layer_bands
from qkforms.errors import UnsupportedArchitectureError, ZeroFormError
from qkforms.exact import enclose, enclose_layer
from qkforms.gram import LayerSpectra, layer_spectra, live_dimensions, unit_scale
from qkforms.models.precision import folded_half_widths
from qkforms.survey.arrow_tables import band_columns, certify_columns, heads_table, spectra_table
from qkforms.survey.head_statistics import (
    SIGNATURE_FACTS,
    ZERO_FORM,
    exact_facts,
    head_columns,
    rank_facts,
)
from qkforms.survey.options import ExactMethod, SurveyOptions
from qkforms.survey.parallel import blas_single_thread, map_slices

if TYPE_CHECKING:
    import pyarrow as pa

    from qkforms.exact.enclosure import Enclosure
    from qkforms.models import LayerWeights, Model, ModelInfo

__all__ = [
    "LayerInputs",
    "LayerOptions",
    "LayerPrecision",
    "LayerResult",
    "UnreadLayer",
    "layer_precision",
    "norm_gain",
    "process_layer",
]


# --------------------------------------------------------------------------- norm gains

def norm_gain(model: Model, layer: int) -> np.ndarray:
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
    >>> from qkforms.survey.layer import norm_gain
    >>> from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint
    >>> d = write_llama_checkpoint(tempfile.mkdtemp(), n_layers=1, N=16, n=2, n_q=2,
    ...                            n_kv=1, norms=True)
    >>> norm_gain(qm.load(d), 0).shape
    (16,)
    """
    try:
        return np.asarray(model.norm_weight(layer), dtype=np.float64)
    except UnsupportedArchitectureError as exc:
        raise UnsupportedArchitectureError(f"--fold-norm: {exc}") from None


# --------------------------------------------------------------------------- one layer


@dataclass(frozen=True)
class UnreadLayer:
    """A layer whose weights could not be read: only its index and key heads are known."""

    layer: int
    kv_index: np.ndarray


@dataclass
class LayerResult:
    """The tables of one layer and how long each step took."""

    heads: pa.Table
    spectra: pa.Table
    factors: dict[str, np.ndarray] | None
    timings: dict[str, float] = field(default_factory=dict)


def _spectra(W_Q: np.ndarray, W_K: np.ndarray, kv_index: np.ndarray, keep_factors: bool,
             threads: int) -> tuple[LayerSpectra, LayerSpectra]:
    """:func:`layer_spectra` of rescaled weights, on ``threads`` slices of the query heads.

    Returns the spectra of the rescaled heads (every query and key head divided by its
    power-of-two :func:`~qkforms.gram.unit_scale`, as :class:`qkforms.Head` does, so
    that weights of 1e-300 or 1e300 neither under- nor overflow) and the same scaled
    back to the stored weights (:meth:`LayerSpectra.scaled`; ``inf``/0 only where the
    true value is beyond float64). Every per-head number is computed by the same calls
    on the same blocks whatever the slicing, so the result is identical to one batch.
    """
    s_K = unit_scale(W_K)
    K = W_K / s_K[:, None, None]
    n_q = int(kv_index.shape[0])
    s_Q = np.ones(n_q)
    # the query heads go in chunks of about one key group, handed to the threads as they
    # come free (a thread slowed by other work takes fewer); each chunk is scaled and
    # rescaled by its thread (no serial pass over the layer's query weights before the
    # threads start), so a layer's rescaled query weights are never all in memory at once
    size = max(1, min(n_q, -(-n_q // max(1, W_K.shape[0]))))
    chunks = [(a, min(a + size, n_q)) for a in range(0, n_q, size)] or [(0, 0)]
    parts: list[LayerSpectra | None] = [None] * len(chunks)
    todo = iter(range(len(chunks)))
    lock = threading.Lock()

    def work(_a: int, _b: int) -> None:
        while True:
            with lock:
                i = next(todo, None)
            if i is None:
                return
            a, b = chunks[i]
            s_Q[a:b] = unit_scale(W_Q[a:b])  # per head: the same scales as of the layer
            Q = W_Q[a:b] / s_Q[a:b, None, None]
            parts[i] = layer_spectra(Q, K, kv_index[a:b], keep_factors=keep_factors)

    map_slices(work, min(threads, len(chunks)), threads=threads)
    done = [p for p in parts if p is not None]
    unit = done[0] if len(done) == 1 else LayerSpectra.concat(done)
    return unit, unit.scaled(s_Q, s_K[kv_index])


def _exact_note(layer: int, head: int) -> Any:
    """A progress callback for the slow steps of one head's exact computation."""
    import sys

    def note(message: str) -> None:
        if message.startswith("rank of the live pair"):
            return  # the fast first step of every head: not worth a line
        print(f"  --exact: layer {layer} head {head}: {message}", file=sys.stderr, flush=True)

    return note


def _exact_facts(cols: dict[str, np.ndarray], lw: LayerWeights, kv_index: np.ndarray,
                 gamma: np.ndarray | None, method: ExactMethod,
                 error: list[str | None]) -> None:
    """Decide every finite head exactly (``--exact``): the signature, the ranks, the
    prediction and whether ``L = 0`` (docs/survey.md); ``cols`` is updated in place."""
    for h in range(int(kv_index.shape[0])):
        if cols["status"][h] == "failed":
            continue
        g = int(kv_index[h])
        W_Q, W_K = lw.W_Q[h], lw.W_K[g]
        if gamma is not None and not np.all(gamma != 0):
            W_Q, W_K = W_Q * gamma, W_K * gamma  # a zero gain changes the ranks: fold it
        # with all gains nonzero, S_folded = D S D (D = diag(gamma)): same inertia and
        # ranks (Sylvester), so the stored weights are used as they are
        facts, zero = exact_facts(W_Q, W_K, method=method,
                                  progress=_exact_note(int(lw.layer), h))
        for name, value in facts.items():
            cols[name][h] = float(value) if cols[name].dtype != object else value
        if zero and cols["status"][h] == "ok":  # L = 0 by cancellation
            cols["status"][h] = "zero_form"
            cols["valid"][h] = False
            error[h] = ZERO_FORM
            for name, col in cols.items():
                if name not in SIGNATURE_FACTS and name not in ("status", "valid"):
                    col[h] = None if col.dtype == object else np.nan


def _enclosures(W_Q: np.ndarray, W_K: np.ndarray, kv_index: np.ndarray,
                valid: np.ndarray, method: str) -> list[Any]:
    """Certified enclosures of the valid heads (None for the others).

    Heads with dead dimensions are enclosed through their live pair (same ``L``, so the
    same certified statistics; the eigenvalues of the dead dimensions are exact zeros).
    """
    out: list[Any] = [None] * int(kv_index.shape[0])
    idx = np.flatnonzero(valid)
    if idx.size == 0:
        return out
    live = live_dimensions(W_Q[idx], W_K[kv_index[idx]])
    full = idx[live.all(axis=1)]
    for h, sel in zip(idx, live, strict=True):
        if not sel.all():
            try:
                out[int(h)] = enclose(W_Q[h][sel], W_K[int(kv_index[h])][sel], method=method)
            except ZeroFormError:
                out[int(h)] = None
    if full.size == 0:
        return out
    encs: list[Enclosure | None]
    try:
        encs = list(enclose_layer(W_Q[full], W_K, kv_index[full], method=method))
    except ZeroFormError:  # some head has L = 0: certify the heads one by one
        encs = []
        for h in full:
            try:
                encs.append(enclose_layer(W_Q[h:h + 1], W_K, kv_index[h:h + 1],
                                          method=method)[0])
            except ZeroFormError:
                encs.append(None)
    for h, enc in zip(full, encs, strict=True):
        out[int(h)] = enc
    return out


def _certified_signatures(cols: dict[str, np.ndarray], encs: Sequence[Any], n: int,
                          N: int) -> None:
    """Signatures decided by the enclosures (``--certify``) where float left them open.

    An eigenvalue interval excluding 0 certifies a sign; ``[0, 0]`` certifies a zero
    (exact root isolation). The eigenvalues of a live pair's enclosure are completed
    by the dead dimensions' exact zeros.
    """
    for h, enc in enumerate(encs):
        if enc is None or cols["signature_by"][h] == "exact":
            continue
        lo = np.array([iv.lo for iv in enc.eigenvalues])
        hi = np.array([iv.hi for iv in enc.eigenvalues])
        exact_zero = (lo == 0) & (hi == 0)
        if not np.all((lo > 0) | (hi < 0) | exact_zero):
            continue
        pos, neg = int(np.sum(lo > 0)), int(np.sum(hi < 0))
        m = int(cols["n_live"][h])
        cols["n_pos"][h], cols["n_neg"][h], cols["n_zero"][h] = pos, neg, N - pos - neg
        cols["signature_by"][h] = "certified"
        facts = rank_facts(np.array([pos + neg == min(2 * m, N)]), np.array([m]),
                           np.array([n]), np.array([N]), np.array([float(pos)]),
                           np.array([float(neg)]))
        for name, value in facts.items():
            cols[name][h] = value[0]


@dataclass(frozen=True)
class LayerPrecision:
    """Storage half-widths of a layer's maps (:meth:`qkforms.models.Model.layer_precision`),
    and of the folded norm gain when ``--fold-norm`` (``gamma``)."""

    H_Q: np.ndarray
    H_K: np.ndarray
    gamma: np.ndarray | None = None


def _bands(W_Q: np.ndarray, W_K: np.ndarray, kv_index: np.ndarray, valid: np.ndarray,
           precision: LayerPrecision, gamma: np.ndarray | None,
           enclosures: list[Any] | None) -> list[Any]:
    """Storage-precision bands of the valid heads (None for the others)."""
    H_Q, H_K = precision.H_Q, precision.H_K
    if gamma is not None:  # the folded float64 weights, exactly as surveyed
        h_g = precision.gamma if precision.gamma is not None else np.zeros_like(gamma)
        H_Q, H_K = (folded_half_widths(W_Q, H_Q, gamma, h_g),
                    folded_half_widths(W_K, H_K, gamma, h_g))
        W_Q, W_K = W_Q * gamma, W_K * gamma
    finite = np.array([bool(np.isfinite(W_Q[h]).all() and np.isfinite(W_K[g]).all())
                       for h, g in enumerate(kv_index)], dtype=bool)
    ok = np.asarray(valid, dtype=bool) & finite
    if not ok.any():
        return [None] * int(kv_index.shape[0])
    Q = np.where(np.isfinite(W_Q), W_Q, 0.0)
    K = np.where(np.isfinite(W_K), W_K, 0.0)
    return layer_bands(Q, K, H_Q, H_K, kv_index, valid=ok, enclosures=enclosures)




@dataclass(frozen=True)
class LayerOptions:
    """How a layer is surveyed (the computing part of :class:`SurveyOptions`).

    Attributes
    ----------
    exact : bool
        Decide every head exactly: signature, ranks, prediction (``signature_by`` is
        ``"exact"``; docs/survey.md).
    exact_method : {"auto", "charpoly"}
        See :class:`SurveyOptions`.
    certify : bool
        Certified enclosures of each ok head's statistics (the ``<stat>_lo``,
        ``<stat>_hi`` columns; null when not asked).
    certify_method : {"auto", "charpoly"}
        See :class:`SurveyOptions`.
    keep_factors : bool
        Return ``Q_red``/``K_red`` for the factors sidecar.
    threads : int
        Compute this many slices of the layer's query heads in parallel threads (each
        with single-threaded BLAS); the results do not depend on it.

    Examples
    --------
    >>> from qkforms.survey.layer import LayerOptions
    >>> from qkforms.survey.options import SurveyOptions
    >>> LayerOptions.of(SurveyOptions(exact=True, threads=2), keep_factors=True)
    ... # doctest: +NORMALIZE_WHITESPACE
    LayerOptions(exact=True, exact_method='auto', certify=False, certify_method='auto',
                 keep_factors=True, threads=2)
    """

    exact: bool = False
    exact_method: ExactMethod = "auto"
    certify: bool = False
    certify_method: str = "auto"
    keep_factors: bool = False
    threads: int = 1

    @classmethod
    def of(cls, opts: SurveyOptions, *, keep_factors: bool) -> LayerOptions:
        """The layer options of a survey run (its compute threads per process)."""
        return cls(exact=opts.exact, exact_method=opts.exact_method, certify=opts.certify,
                   certify_method=opts.certify_method, keep_factors=keep_factors,
                   threads=opts.compute_threads())


@dataclass(frozen=True)
class LayerInputs:
    """What is known of a layer besides its weights.

    Attributes
    ----------
    model : str
        Value of the ``model`` column.
    gamma : ndarray, optional
        Norm gain folded into the weights (``W <- W diag(gamma)``).
    precision : LayerPrecision, optional
        Storage half-widths of the layer's maps: the ok heads get storage-precision
        bands (``--precision-bands``; centred on the certified spectra with ``certify``).
    failure : str, optional
        Mark every head failed with this reason (layer could not be read).
    step, tokens_seen : int, optional
        The checkpoint's place in a training run (columns ``step``, ``tokens_seen``).

    Examples
    --------
    >>> from qkforms.survey.layer import LayerInputs
    >>> LayerInputs("toy", step=3).step
    3
    """

    model: str
    gamma: np.ndarray | None = None
    precision: LayerPrecision | None = None
    failure: str | None = None
    step: int | None = None
    tokens_seen: int | None = None


def layer_precision(model: Model, layer: int, fold_norm: bool = False) -> LayerPrecision:
    """The storage half-widths of one layer (``--precision-bands``), and of its norm gain.

    Raises
    ------
    PrecisionUnavailableError
        When the checkpoint's storage has no per-weight precision
        (:meth:`qkforms.models.Model.layer_precision`).

    Examples
    --------
    >>> import qkforms.models as qm
    >>> from qkforms.survey.layer import layer_precision
    >>> with qm.load("minilm") as m:
    ...     p = layer_precision(m, 0)
    >>> p.H_Q.shape, p.gamma is None
    ((12, 32, 384), True)
    """
    H_Q, H_K = model.layer_precision(layer)
    return LayerPrecision(H_Q, H_K, model.norm_precision(layer) if fold_norm else None)


def _float_columns(lw: LayerWeights | UnreadLayer, N: int, n: int, kv_index: np.ndarray,
                   inputs: LayerInputs,
                   options: LayerOptions) -> tuple[LayerSpectra, dict[str, np.ndarray]]:
    """The float stage: the layer's spectra and the per-head columns computed from them."""
    with blas_single_thread():
        if inputs.failure is not None or isinstance(lw, UnreadLayer):
            sp = LayerSpectra.failed(int(kv_index.shape[0]), n,
                                     inputs.failure or "layer could not be read",
                                     keep_factors=options.keep_factors)
            return sp, head_columns(sp, N=N, n=n)
        W_Q, W_K = lw.W_Q, lw.W_K
        if inputs.gamma is not None:
            W_Q, W_K = W_Q * inputs.gamma, W_K * inputs.gamma
        unit, sp = _spectra(W_Q, W_K, kv_index, options.keep_factors, options.threads)
        # every statistic is scale-invariant except norm_sq: compute them on the
        # rescaled heads, and take norm_sq (and the stored spectra) at true scale
        cols = head_columns(unit, N=N, n=n)
        sp.ok, sp.error = unit.ok, unit.error
        cols["norm_sq"] = np.where(cols["valid"], sp.norm_sq, np.nan)
        return sp, cols


def _rigorous_stages(lw: LayerWeights, N: int, n: int, kv_index: np.ndarray,
                     sp: LayerSpectra, cols: dict[str, np.ndarray], inputs: LayerInputs,
                     options: LayerOptions) -> tuple[Any, Any, dict[str, float]]:
    """The certified, exact and band stages (as asked); ``cols`` is updated in place.

    Returns the certified columns, the band columns (None when not asked) and the
    seconds of each stage.
    """
    gamma = inputs.gamma
    certify_cols = band_cols = None
    encs: list[Any] | None = None
    t1 = time.perf_counter()
    # the exact and certified stages call LAPACK on small matrices too (the float64
    # approximations of the verified eigenvalue method): one BLAS thread, as above
    with blas_single_thread():
        if options.certify:
            W_Q, W_K = lw.W_Q, lw.W_K
            if gamma is not None:  # the folded float64 weights, exactly as surveyed
                W_Q, W_K = W_Q * gamma, W_K * gamma
            encs = _enclosures(W_Q, W_K, kv_index, cols["valid"], options.certify_method)
            certify_cols = certify_columns(encs)
            _certified_signatures(cols, encs, n, N)
        t2 = time.perf_counter()
        if options.exact:
            _exact_facts(cols, lw, kv_index, gamma, options.exact_method, sp.error)
        t3 = time.perf_counter()
        if inputs.precision is not None:
            band_cols = band_columns(_bands(lw.W_Q, lw.W_K, kv_index, cols["valid"],
                                            inputs.precision, gamma, encs))
    t4 = time.perf_counter()
    return certify_cols, band_cols, {"certify_s": t2 - t1, "exact_s": t3 - t2,
                                     "bands_s": t4 - t3}


def process_layer(lw: LayerWeights | UnreadLayer, info: ModelInfo, inputs: LayerInputs,
                  options: LayerOptions | None = None) -> LayerResult:
    """Compute the heads and spectra tables of one layer.

    Parameters
    ----------
    lw : LayerWeights or UnreadLayer
        ``W_Q (n_q, n, N)``, ``W_K (n_kv, n, N)``, ``kv_index``, ``layer`` (with
        ``inputs.failure``, only ``layer`` and ``kv_index`` are used).
    info : ModelInfo
        Only ``N`` and ``n`` are used.
    inputs : LayerInputs
        The model label, norm gain, storage precision, checkpoint step and read failure.
    options : LayerOptions, optional
        What is computed (exact, certified, factors) and on how many threads; default
        ``LayerOptions()`` (float statistics only, one thread).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from qkforms.survey.layer import LayerInputs, LayerOptions, process_layer
    >>> rng = np.random.default_rng(0)
    >>> lw = SimpleNamespace(layer=0, W_Q=rng.standard_normal((2, 2, 9)),
    ...                      W_K=rng.standard_normal((1, 2, 9)), kv_index=np.array([0, 0]))
    >>> res = process_layer(lw, SimpleNamespace(N=9, n=2), LayerInputs("toy"),
    ...                     LayerOptions(exact=True, certify=True))
    >>> res.heads.column("n_zero").to_pylist(), res.heads.column("signature_by").to_pylist()
    ([5, 5], ['exact', 'exact'])
    >>> t = res.heads
    >>> all(lo <= v <= hi for lo, v, hi in zip(t.column("a_lo").to_pylist(),
    ...                                         t.column("a").to_pylist(),
    ...                                         t.column("a_hi").to_pylist()))
    True
    """
    options = LayerOptions() if options is None else options
    t0 = time.perf_counter()
    N, n = int(info.N), int(info.n)
    kv_index = np.asarray(lw.kv_index, dtype=np.int64)
    sp, cols = _float_columns(lw, N, n, kv_index, inputs, options)
    timings = {"compute_s": time.perf_counter() - t0}
    certify_cols = band_cols = None
    if inputs.failure is None and not isinstance(lw, UnreadLayer):
        certify_cols, band_cols, stages = _rigorous_stages(lw, N, n, kv_index, sp, cols,
                                                           inputs, options)
    else:  # nothing to certify, decide or band: the stages take no time
        stages = {"certify_s": 0.0, "exact_s": 0.0, "bands_s": 0.0}
    timings.update(stages)
    t4 = time.perf_counter()
    heads = heads_table(inputs.model, lw.layer, kv_index, N, n, sp.error, cols, certify_cols,
                        step=inputs.step, tokens_seen=inputs.tokens_seen, bands=band_cols)
    spectra = spectra_table(inputs.model, lw.layer, sp, cols["valid"], step=inputs.step)
    factors = None
    if options.keep_factors:
        assert sp.Q_red is not None and sp.K_red is not None
        factors = {"Q_red": sp.Q_red, "K_red": sp.K_red}
    timings["table_s"] = time.perf_counter() - t4
    return LayerResult(heads, spectra, factors, timings)

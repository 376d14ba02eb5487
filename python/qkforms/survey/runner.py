"""The survey run: models -> per-layer parts -> heads/spectra tables, manifest, summary.

:func:`survey` is what ``qkforms survey`` calls. Per model it streams the layers from
the loader (:func:`~qkforms.survey.parallel.prefetched`: the next layer is read while
the current one is computed), computes every head of a layer in one batch through the
Gram engine (:func:`qkforms.gram.layer_spectra`, in slices over compute threads) and
the per-head statistics (:func:`~qkforms.survey.head_statistics.head_columns`), optionally
decides every head's signature exactly (:func:`qkforms.exact.head_inertia`, ``--exact``) and
encloses each head's statistics in certified intervals (:func:`qkforms.exact.enclose_layer`,
``--certify``), and writes
an atomic part per layer (:mod:`qkforms.survey.store`, tables from
:mod:`qkforms.survey.arrow_tables`). Then the parts are merged into ``heads.parquet``,
``spectra.parquet`` and (RoPE models) ``factors/<model>.npz``, and ``manifest.json``
(:mod:`qkforms.survey.manifest`) and ``summary.md`` are written. With ``--workers``,
layers go to worker processes (:func:`~qkforms.survey.parallel.run_processes`).

Examples
--------
>>> from qkforms.survey.runner import parse_layers
>>> parse_layers(["0-2", "7,9"], 12)
[0, 1, 2, 7, 9]
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from qkforms.errors import (
    CheckpointError,
    NonFiniteError,
    QKFormsError,
    UnsupportedArchitectureError,
)
from qkforms.gram import LayerSpectra, layer_spectra, unit_scale
from qkforms.survey.head_statistics import head_columns
from qkforms.survey.manifest import ModelRun, check_resume, manifest, run_fingerprint
from qkforms.survey.outdir import OutputLock, check_out, check_resume_models, open_output
from qkforms.survey.parallel import (
    OneBehind,
    blas_single_thread,
    map_slices,
    prefetched,
    run_processes,
)
from qkforms.survey.store import PartStore, atomic_write_bytes, atomic_write_table, model_key
from qkforms.threads import compute_threads

if TYPE_CHECKING:
    import pyarrow as pa

    from qkforms._progress import Phase
    from qkforms.exact.enclosure import Enclosure
    from qkforms.models import LayerWeights, Model, ModelInfo

#: the exact signature of ``--exact`` (:func:`qkforms.exact.head_signature` methods)
ExactMethod = Literal["auto", "charpoly"]

__all__ = [
    "LayerPrecision",
    "LayerResult",
    "SurveyOptions",
    "UnreadLayer",
    "blas_single_thread",
    "layer_precision",
    "norm_gain",
    "parse_layers",
    "process_layer",
    "survey",
]

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
        Decide every head exactly (:func:`qkforms.exact.head_inertia`): signature, live
        dimension, ranks and Theorem 3 prediction, for heads of any rank.
    exact_method : {"auto", "charpoly"}
        How the exact signature is computed: ``"auto"`` by a certified rank of the live
        pair (Theorem 3's certificate when it is onto) and otherwise the exact inertia
        of the restricted form (Sylvester's law of inertia); ``"charpoly"`` by
        Descartes' rule on the exact characteristic polynomial of ``J G`` (independent
        of the theorem, about 1 s per head at ``(576, 64)``, slow for large degenerate
        heads).
    certify : bool
        Certified enclosures of every ok head's profile, ``1 - a``, pairing score, ``rho``
        and distance to Θ (:func:`qkforms.exact.enclose_layer`; the ``<stat>_lo``,
        ``<stat>_hi`` columns; docs/certified.md).
    certify_method : {"auto", "charpoly"}
        Eigenvalue certificate: ``"auto"`` (verified float eigenvectors with Weyl and
        Ostrowski bounds, exact root isolation as fallback) or ``"charpoly"`` (always
        root isolation of the exact characteristic polynomial; about ten times slower).
    precision_bands : bool
        Storage-precision bands of every ok head's certified statistics and signature
        (:func:`qkforms.bands.layer_bands`; the ``<stat>_band_lo``, ``<stat>_band_hi``,
        ``band_*`` and ``signature_band_*`` columns; docs/certified.md). With
        ``certify``, the rigorous bands are centred on the certified spectra.
    resume : bool
        Keep the complete parts of an earlier (interrupted) run with the same options.
    sha256 : bool
        The models were opened with the sha256 of every whole file (``load(...,
        checksum=True)``, a full read); by default sizes and mtimes identify the files
        and the sha256 of every tensor read is recorded as it streams.
    fold_norm : bool
        Fold the gain of the norm before each attention block into ``W_Q, W_K``.
    qk_norm : {"refuse", "fold"}
        Policy for models that normalize their projected queries/keys
        (:mod:`qkforms.models.scoremap`); the models must have been loaded with it.
    workers : int
        Worker processes (layers are distributed over them).
    layers : list of str or None
        Layer selection (``"3"``, ``"0-5"``, ``"1,4"``); all layers when None.
    progress : bool
        Show a progress bar (only when stderr is a terminal).
    threads : int or None
        Threads computing slices of a layer's heads in parallel (single-threaded BLAS
        each); default: the number of cores divided by ``workers``.
    executor : {"local", "dask"}
        Where the (model or checkpoint, layer) tasks run: this machine, or a dask
        cluster (:mod:`qkforms.survey.dask_executor`); the tables are identical.
    scheduler : str or None
        Dask scheduler address (``tcp://host:8786``); None starts a ``LocalCluster`` of
        ``workers`` processes.
    """

    out: Path = Path("survey-out")
    exact: bool = False
    exact_method: ExactMethod = "auto"
    certify: bool = False
    certify_method: str = "auto"
    precision_bands: bool = False
    resume: bool = False
    sha256: bool = False
    fold_norm: bool = False
    qk_norm: str = "refuse"
    workers: int = 1
    layers: list[str] | None = None
    progress: bool = True
    threads: int | None = None
    executor: str = "local"
    scheduler: str | None = None

    def compute_threads(self) -> int:
        """The number of compute threads per process (:func:`qkforms.threads.compute_threads`)."""
        return compute_threads(workers=self.workers, requested=self.threads)

    def fingerprint(self) -> dict[str, object]:
        """The options that change the numbers (must match to resume)."""
        return {"exact": self.exact, "exact_method": self.exact_method if self.exact else None,
                "certify": self.certify,
                "certify_method": self.certify_method if self.certify else None,
                "fold_norm": self.fold_norm, "qk_norm": self.qk_norm,
                # recorded only when asked, so that runs without bands resume as before
                **({"precision_bands": True} if self.precision_bands else {})}


def parse_layers(spec: Sequence[str] | None, n_layers: int) -> list[int]:
    """Parse a layer selection (items like ``"3"``, ``"0-5"``, ``"1,4"``).

    Raises
    ------
    QKFormsError
        For malformed items, empty ranges (``5-2``), an empty selection, or layers
        outside ``[0, n_layers)``.

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
            if not rng:
                raise QKFormsError(f"layer range {tok!r} is empty (its start is above its "
                                   f"end; did you mean {rng.stop - 1}-{rng.start}?)")
            for layer in rng:
                if not 0 <= layer < n_layers:
                    raise QKFormsError(f"layer {layer} out of range: the model has "
                                       f"{n_layers} layers (0-{n_layers - 1})")
                chosen.add(layer)
    if not chosen:
        raise QKFormsError(f"--layers {' '.join(map(str, spec))} selects no layer "
                           "(use e.g. 3, 0-5, 1,4)")
    return sorted(chosen)


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
    >>> from qkforms.survey.runner import norm_gain
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
    s_Q, s_K = unit_scale(W_Q), unit_scale(W_K)
    K = W_K / s_K[:, None, None]
    n_q = int(kv_index.shape[0])
    # the query heads go in chunks of about one key group, handed to the threads as they
    # come free (a thread slowed by other work takes fewer); each chunk is rescaled on
    # its own, so a layer's rescaled query weights are never all in memory at once
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
    from qkforms.survey.head_statistics import SIGNATURE_FACTS, ZERO_FORM, exact_facts

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
    from qkforms.errors import ZeroFormError
    from qkforms.exact import enclose, enclose_layer
    from qkforms.gram import live_dimensions

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
    from qkforms.survey.head_statistics import rank_facts

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
    from qkforms.bands import layer_bands
    from qkforms.models.precision import folded_half_widths

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


def process_layer(
    lw: LayerWeights | UnreadLayer,
    info: ModelInfo,
    *,
    model: str,
    exact: bool = False,
    exact_method: ExactMethod = "auto",
    certify: bool = False,
    certify_method: str = "auto",
    gamma: np.ndarray | None = None,
    keep_factors: bool = False,
    failure: str | None = None,
    threads: int = 1,
    step: int | None = None,
    tokens_seen: int | None = None,
    precision: LayerPrecision | None = None,
) -> LayerResult:
    """Compute the heads and spectra tables of one layer.

    Parameters
    ----------
    lw : LayerWeights or UnreadLayer
        ``W_Q (n_q, n, N)``, ``W_K (n_kv, n, N)``, ``kv_index``, ``layer`` (with
        ``failure``, only ``layer`` and ``kv_index`` are used).
    info : ModelInfo
        Only ``N`` and ``n`` are used.
    model : str
        Value of the ``model`` column.
    exact : bool
        Decide every head exactly: signature, ranks, prediction (``signature_by`` is
        ``"exact"``; docs/survey.md).
    certify : bool
        Certified enclosures of each ok head's statistics (the ``<stat>_lo``,
        ``<stat>_hi`` columns; null when not asked).
    certify_method : {"auto", "charpoly"}
        See :class:`SurveyOptions`.
    gamma : ndarray, optional
        Norm gain folded into the weights (``W <- W diag(gamma)``).
    keep_factors : bool
        Return ``Q_red``/``K_red`` for the factors sidecar.
    failure : str, optional
        Mark every head failed with this reason (layer could not be read).
    threads : int
        Compute this many slices of the layer's query heads in parallel threads (each
        with single-threaded BLAS); the results do not depend on it.
    step, tokens_seen : int, optional
        The checkpoint's place in a training run (columns ``step``, ``tokens_seen``).
    precision : LayerPrecision, optional
        Storage half-widths of the layer's maps: the ok heads get storage-precision
        bands (``--precision-bands``; centred on the certified spectra with ``certify``).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from qkforms.survey.runner import process_layer
    >>> rng = np.random.default_rng(0)
    >>> lw = SimpleNamespace(layer=0, W_Q=rng.standard_normal((2, 2, 9)),
    ...                      W_K=rng.standard_normal((1, 2, 9)), kv_index=np.array([0, 0]))
    >>> res = process_layer(lw, SimpleNamespace(N=9, n=2), model="toy", exact=True,
    ...                     certify=True)
    >>> res.heads.column("n_zero").to_pylist(), res.heads.column("signature_by").to_pylist()
    ([5, 5], ['exact', 'exact'])
    >>> t = res.heads
    >>> all(lo <= v <= hi for lo, v, hi in zip(t.column("a_lo").to_pylist(),
    ...                                         t.column("a").to_pylist(),
    ...                                         t.column("a_hi").to_pylist()))
    True
    """
    from qkforms.survey.arrow_tables import (
        band_columns,
        certify_columns,
        heads_table,
        spectra_table,
    )

    t0 = time.perf_counter()
    N, n = int(info.N), int(info.n)
    kv_index = np.asarray(lw.kv_index, dtype=np.int64)
    n_q = int(kv_index.shape[0])
    with blas_single_thread():
        if failure is not None or isinstance(lw, UnreadLayer):
            sp = LayerSpectra.failed(n_q, n, failure or "layer could not be read",
                                     keep_factors=keep_factors)
            cols = head_columns(sp, N=N, n=n)
        else:
            W_Q, W_K = lw.W_Q, lw.W_K
            if gamma is not None:
                W_Q, W_K = W_Q * gamma, W_K * gamma
            unit, sp = _spectra(W_Q, W_K, kv_index, keep_factors, threads)
            # every statistic is scale-invariant except norm_sq: compute them on the
            # rescaled heads, and take norm_sq (and the stored spectra) at true scale
            cols = head_columns(unit, N=N, n=n)
            sp.ok, sp.error = unit.ok, unit.error
            cols["norm_sq"] = np.where(cols["valid"], sp.norm_sq, np.nan)
    t1 = time.perf_counter()
    certify_cols = band_cols = None
    encs: list[Any] | None = None
    readable = failure is None and not isinstance(lw, UnreadLayer)
    # the exact and certified stages call LAPACK on small matrices too (the float64
    # approximations of the verified eigenvalue method): one BLAS thread, as above
    with blas_single_thread():
        if certify and readable:
            assert not isinstance(lw, UnreadLayer)
            W_Q, W_K = lw.W_Q, lw.W_K
            if gamma is not None:  # the folded float64 weights, exactly as surveyed
                W_Q, W_K = W_Q * gamma, W_K * gamma
            encs = _enclosures(W_Q, W_K, kv_index, cols["valid"], certify_method)
            certify_cols = certify_columns(encs)
            _certified_signatures(cols, encs, n, N)
        t2 = time.perf_counter()
        if exact and readable:
            assert not isinstance(lw, UnreadLayer)
            _exact_facts(cols, lw, kv_index, gamma, exact_method, sp.error)
        t3 = time.perf_counter()
        if precision is not None and readable:
            assert not isinstance(lw, UnreadLayer)
            band_cols = band_columns(_bands(lw.W_Q, lw.W_K, kv_index, cols["valid"],
                                            precision, gamma, encs))
    t4 = time.perf_counter()
    heads = heads_table(model, lw.layer, kv_index, N, n, sp.error, cols, certify_cols,
                        step=step, tokens_seen=tokens_seen, bands=band_cols)
    spectra = spectra_table(model, lw.layer, sp, cols["valid"], step=step)
    factors = None
    if keep_factors:
        assert sp.Q_red is not None and sp.K_red is not None
        factors = {"Q_red": sp.Q_red, "K_red": sp.K_red}
    return LayerResult(heads, spectra, factors, {
        "compute_s": t1 - t0, "certify_s": t2 - t1, "exact_s": t3 - t2, "bands_s": t4 - t3,
        "table_s": time.perf_counter() - t4,
    })


# --------------------------------------------------------------------------- reading layers


def _read_layer(model: Model, layer: int) -> tuple[LayerWeights | None, str | None]:
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
    info = model.info
    if lw is None:  # unreadable layer: all heads failed, no weights
        unread = UnreadLayer(layer, np.arange(info.n_q) // max(1, info.n_q // info.n_kv))
        return process_layer(unread, info, model=label, keep_factors=keep_factors,
                             failure=failure or "layer could not be read", step=step,
                             tokens_seen=tokens_seen)
    gamma = gammas.get(layer) if gammas is not None else None
    precision = layer_precision(model, layer, gamma is not None) if opts.precision_bands else None
    return process_layer(lw, info, model=label, exact=opts.exact,
                         exact_method=opts.exact_method, certify=opts.certify,
                         certify_method=opts.certify_method, gamma=gamma,
                         keep_factors=keep_factors, failure=failure,
                         threads=opts.compute_threads(), step=step, tokens_seen=tokens_seen,
                         precision=precision)


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
    >>> from qkforms.survey.runner import layer_precision
    >>> with qm.load("minilm") as m:
    ...     p = layer_precision(m, 0)
    >>> p.H_Q.shape, p.gamma is None
    ((12, 32, 384), True)
    """
    H_Q, H_K = model.layer_precision(layer)
    return LayerPrecision(H_Q, H_K, model.norm_precision(layer) if fold_norm else None)


def _write(store: PartStore, layer: int, res: LayerResult) -> dict[str, float]:
    t = time.perf_counter()
    store.write_layer(layer, res.heads, res.spectra, res.factors)
    res.timings["write_s"] = time.perf_counter() - t
    from qkforms.cli import env_number

    delay = env_number(DELAY_ENV, 0.0)
    if delay > 0:
        time.sleep(delay)
    return res.timings


_WORKER_MODELS: dict[str, Model] = {}
#: models a worker process keeps open (a training run has many checkpoints)
_WORKER_MODELS_KEPT = 2


def _worker_model(source: str, qk_norm: str = "refuse") -> Model:
    """The opened model of ``source`` in this worker (the least recent one is closed)."""
    from qkforms.models import load

    model = _WORKER_MODELS.pop(source, None)
    if model is None:
        model = load(source, checksum=False, qk_norm=qk_norm)
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
    lw, failure = _read_layer(model, layer)
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
    from qkforms import _progress

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
            # read layer i + 1, compute layer i, write layer i - 1: all at once
            with OneBehind(add) as writer:
                for layer, (lw, failure), read_s in prefetched(
                        lambda i: _read_layer(model, i), todo):
                    res = _layer_result(model, layer, lw, failure, opts, label, keep_factors,
                                        gammas, step=step, tokens_seen=tokens_seen)
                    del lw  # let the reader's next layer take this one's memory
                    res.timings["read_s"] = read_s
                    writer.submit(functools.partial(_write, store, layer, res))
    except BaseException:
        # the workers are dead (run_processes joined them) and the writer thread is
        # done: a write they were killed in left a temporary file, which goes now
        try:
            store.clean_temporaries()
        except (OSError, QKFormsError):  # pragma: no cover - best effort on the way out
            pass
        raise


#: the local layer pipeline of one model or checkpoint (used by the series driver)
survey_model = _survey_model


# --------------------------------------------------------------------------- whole survey


def unique_labels(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Part keys and ``model`` column values: made unique when two sources share a name.

    Examples
    --------
    >>> from qkforms.survey.runner import unique_labels
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


def survey(
    models: Sequence[Model],
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
    >>> from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> d = write_llama_checkpoint(tmp / "ckpt", n_layers=2, N=24, n=3, n_q=2, n_kv=1)
    >>> man = survey([qm.load(d)], SurveyOptions(out=tmp / "out", progress=False))
    >>> man["models"][0]["heads"], sorted(p.name for p in (tmp / "out").glob("*.*"))
    (4, ['heads.parquet', 'manifest.json', 'spectra.parquet', 'summary.md'])
    """
    t_start = time.perf_counter()
    out = check_out(opts.out)
    srcs = list(sources) if sources is not None else [None] * len(models)
    for m in models:
        policy = getattr(m.info, "qk_norm_policy", None)
        if policy is not None and policy != opts.qk_norm:
            raise QKFormsError(f"{m.info.name}: loaded with qk_norm={policy!r} but the survey "
                               f"options say qk_norm={opts.qk_norm!r}; load it with the "
                               "survey's policy")
    names = [m.info.name for m in models]
    if opts.executor != "local":
        if any(s is None for s in srcs):
            raise QKFormsError(f"--executor {opts.executor} needs the sources of the models "
                               "(the workers open them)")
        from qkforms.survey.training_runs import survey_units, units_for

        return survey_units(units_for([str(s) for s in srcs], names=names), opts, argv=argv)
    keys, labels = unique_labels(names)
    selections = [parse_layers(opts.layers, m.info.n_layers) for m in models]
    with open_output(out) as lock:
        if opts.resume:
            check_resume_models(out, keys, names)
        runs = []
        for model, src, key, label, layers in zip(models, srcs, keys, labels, selections,
                                                  strict=True):
            runs.append(_survey_model(model, src, key, label, opts, layers, lock=lock))
        if load_seconds is not None:
            for run, secs in zip(runs, load_seconds, strict=True):
                run.timings["load_s"] = secs
        return finish_survey(models, srcs, runs, opts, argv=argv, t_start=t_start)


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
    from qkforms import __version__
    from qkforms.survey.arrow_tables import concat_tables
    from qkforms.survey.summary import write_summary

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
        if run.keep_factors:
            run.store.merge_factors(run.layers, out / "factors" / f"{run.key}.npz")
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

"""Query and key maps of real checkpoints, one layer at a time.

:func:`load` opens a checkpoint -- a Hugging Face directory (``config.json`` +
safetensors, single or sharded), a llama.cpp GGUF file, a short name (``"smollm2"``,
``"minilm"``) or, when ``huggingface_hub`` is installed, a hub id -- reads and checks
its headers, and returns a :class:`Model`. Nothing but headers is read until
:meth:`Model.layers` or :meth:`Model.heads` is iterated; each step then reads only the
query/key tensors of one layer (memory independent of the depth of the model).

Every head comes out in the convention of THEORY §0: ``W_Q[h]``, ``W_K[g]`` of shape
``(n, N)`` (output x input), float64, ``g = kv_head = floor(h / (n_q / n_kv))``, and the
optional biases ``b_Q[h]``, ``b_K[g]`` of shape ``(n,)``. The score of a query token
``x_k`` on a key token ``x_j`` is ``<W_Q x_k + b_Q, W_K x_j + b_K>`` (times the model's
``1/sqrt(n)``, plus position terms), i.e. ``(x_j, 1)^T L_hat (x_k, 1)`` with the
homogenized form of Proposition 3 (:meth:`HeadWeights.homogenized`).

Errors (all from :mod:`qkforms.errors`): :class:`~qkforms.errors.CheckpointError`
for malformed, truncated or config-inconsistent files (and :class:`ModelNotFoundError`,
a subclass, for sources that do not exist); :class:`~qkforms.errors.MissingTensorError`;
:class:`~qkforms.errors.NonFiniteError` for NaN/Inf weights (raised while iterating, for
the layer that contains them); :class:`~qkforms.errors.UnsupportedArchitectureError`;
:class:`~qkforms.errors.UnsafeFormatError` for pickle checkpoints.

Examples
--------
>>> import qkforms.models as qm
>>> model = qm.load("minilm")
>>> model.info.n_layers, model.info.n_q, model.info.N, model.info.n
(6, 12, 384, 32)
>>> head = next(model.heads())
>>> head.W_Q.shape, head.b_Q.shape
((32, 384), (32,))
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from qkforms.errors import (
    CheckpointError,
    MissingTensorError,
    ModelNotFoundError,
    NonFiniteError,
    UnsafeFormatError,
    UnsupportedArchitectureError,
)

__all__ = [
    "HeadWeights",
    "LayerWeights",
    "Model",
    "ModelInfo",
    "ModelNotFoundError",
    "SourceFile",
    "load",
]


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class SourceFile:
    """One file a model was read from.

    Examples
    --------
    >>> SourceFile("/m/config.json", 10, None).size
    10
    """

    path: str
    size: int
    sha256: str | None


@dataclass(frozen=True)
class ModelInfo:
    """What a checkpoint is, from its config and headers (no weights read).

    Attributes
    ----------
    name
        Display name (config ``_name_or_path``, GGUF ``general.name``, the short name's
        hub id, or the directory/file name).
    architecture
        Model type (``gpt2``, ``opt``, ``bloom``, ``gpt_neox``, ``llama``, ``mistral``,
        ``qwen2``, ``bert``).
    n_layers, N, n, n_q, n_kv
        Layers, residual dimension, head dimension, query and key/value heads per layer.
    positional
        ``"absolute"``, ``"alibi"`` or ``"rope"``.
    rope_base, rotary_fraction, rope_scaling
        RoPE settings (``None`` unless ``positional == "rope"``; scaling ``None`` when
        not scaled).
    has_qk_bias
        Whether the query/key maps are affine (biases present).
    dtype
        Storage dtype(s) of the q/k weight tensors (``float32``, ``bfloat16``, ``Q4_1``,
        ...; comma-separated when mixed; biases not counted).
    files
        Files read, with sizes and sha256 (``None`` when ``load(checksum=False)``).
    format
        ``"safetensors"``, ``"gguf"`` or ``"pickle"``.
    causal
        Decoder (True) or bidirectional encoder (False).

    Examples
    --------
    >>> info = ModelInfo("m", "gpt2", 2, 8, 4, 2, 2, "absolute", None, None, None, True,
    ...                  "float32", ())
    >>> info.n_heads, info.kv_group
    (4, 1)
    """

    name: str
    architecture: str
    n_layers: int
    N: int
    n: int
    n_q: int
    n_kv: int
    positional: str
    rope_base: float | None
    rotary_fraction: float | None
    rope_scaling: dict[str, Any] | None = field(compare=False)
    has_qk_bias: bool
    dtype: str
    files: tuple[SourceFile, ...]
    format: str = "safetensors"
    causal: bool = True

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (files as dicts), e.g. for a survey manifest.

        Examples
        --------
        >>> info = ModelInfo("m", "bert", 1, 4, 2, 2, 2, "absolute", None, None, None,
        ...                  True, "float32", (SourceFile("/m/w", 3, "ab"),))
        >>> info.as_dict()["files"]
        [{'path': '/m/w', 'size': 3, 'sha256': 'ab'}]
        """
        out = dataclasses.asdict(self)
        out["files"] = [dataclasses.asdict(f) for f in self.files]
        return out

    @property
    def n_heads(self) -> int:
        """Query heads in the whole model (``n_layers * n_q``)."""
        return self.n_layers * self.n_q

    @property
    def kv_group(self) -> int:
        """Query heads per key/value head."""
        return self.n_q // self.n_kv


@dataclass(frozen=True, eq=False)
class HeadWeights:
    """Query and key maps of one (layer, query head).

    ``W_Q``/``W_K`` have shape ``(n, N)`` (output x input), ``b_Q``/``b_K`` shape
    ``(n,)`` or ``None``; all float64 and read-only.

    Examples
    --------
    >>> import numpy as np
    >>> hw = HeadWeights(0, 0, 0, np.eye(1, 2), np.eye(1, 2, 1), np.array([2.0]), None)
    >>> hw.form().tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    >>> hw.homogenized().tolist()
    [[0.0, 0.0, 0.0], [1.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    """

    layer: int
    head: int
    kv_head: int
    W_Q: np.ndarray
    W_K: np.ndarray
    b_Q: np.ndarray | None
    b_K: np.ndarray | None

    def form(self) -> np.ndarray:
        """The bilinear part ``L = W_K^T W_Q`` (``N x N``; key argument first)."""
        return self.W_K.T @ self.W_Q

    def homogenized(self) -> np.ndarray:
        """The homogenized form of Proposition 3 (``(N+1) x (N+1)``).

        ``L_hat = [[W_K^T W_Q, W_K^T b_Q], [b_K^T W_Q, b_K^T b_Q]]``, so that the
        unscaled score of query ``x_k`` on key ``x_j`` is ``(x_j, 1)^T L_hat (x_k, 1)``.
        Missing biases count as zero.
        """
        n, N = self.W_Q.shape
        b_Q = np.zeros(n) if self.b_Q is None else self.b_Q
        b_K = np.zeros(n) if self.b_K is None else self.b_K
        out = np.empty((N + 1, N + 1))
        out[:N, :N] = self.W_K.T @ self.W_Q
        out[:N, N] = self.W_K.T @ b_Q
        out[N, :N] = b_K @ self.W_Q
        out[N, N] = b_K @ b_Q
        return out


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """Query and key maps of all heads of one layer.

    Attributes
    ----------
    layer
        Layer index (0-based).
    W_Q, W_K
        ``(n_q, n, N)`` and ``(n_kv, n, N)`` float64, read-only.
    b_Q, b_K
        ``(n_q, n)`` and ``(n_kv, n)``, or ``None``.
    kv_index
        ``(n_q,)`` integer array: the key/value head each query head reads.

    Examples
    --------
    >>> import numpy as np
    >>> lw = LayerWeights(3, np.zeros((4, 2, 5)), np.ones((2, 2, 5)), None, None,
    ...                   np.array([0, 0, 1, 1]))
    >>> lw.head(2).kv_head, lw.head(2).W_K.sum()
    (1, np.float64(10.0))
    """

    layer: int
    W_Q: np.ndarray
    W_K: np.ndarray
    b_Q: np.ndarray | None
    b_K: np.ndarray | None
    kv_index: np.ndarray

    @property
    def n_q(self) -> int:
        """Query heads."""
        return int(self.W_Q.shape[0])

    def head(self, h: int) -> HeadWeights:
        """The :class:`HeadWeights` of query head ``h`` (views, no copy)."""
        g = int(self.kv_index[h])
        return HeadWeights(self.layer, int(h), g, self.W_Q[h], self.W_K[g],
                           None if self.b_Q is None else self.b_Q[h],
                           None if self.b_K is None else self.b_K[g])

    def heads(self) -> Iterator[HeadWeights]:
        """All query heads of the layer, in order."""
        for h in range(self.n_q):
            yield self.head(h)


# --------------------------------------------------------------------------- model


class TensorStore(Protocol):
    """What a checkpoint backend provides (safetensors, GGUF, pickle).

    Examples
    --------
    >>> from qkforms.models.safetensors import SafetensorsStore
    >>> all(hasattr(SafetensorsStore, m) for m in ("read", "shape", "dtype", "file_of"))
    True
    """

    @property
    def names(self) -> list[str]: ...

    def __contains__(self, name: object) -> bool: ...

    def shape(self, name: str) -> tuple[int, ...]: ...

    def dtype(self, name: str) -> str: ...

    def read(self, name: str) -> np.ndarray: ...

    def file_of(self, name: str) -> str: ...

    def close(self) -> None: ...


class Model:
    """A checkpoint opened for streaming its query/key maps.

    Create with :func:`load`. ``info`` describes the model; :meth:`layers` and
    :meth:`heads` are generators that read one layer's q/k tensors per step.

    Examples
    --------
    >>> import qkforms.models as qm
    >>> with qm.load("minilm") as model:
    ...     layer = next(model.layers())
    ...     layer.W_Q.shape, layer.W_K.shape
    ((12, 32, 384), (12, 32, 384))
    """

    def __init__(self, info: ModelInfo, spec: Any, layout: Any, store: TensorStore,
                 plan: list[dict[str, str]]) -> None:
        self.info = info
        self._spec = spec
        self._layout = layout
        self._store = store
        self._plan = plan

    def __repr__(self) -> str:
        i = self.info
        return (f"Model({i.name!r}, {i.architecture}, layers={i.n_layers}, "
                f"heads={i.n_q}/{i.n_kv}, N={i.N}, n={i.n}, {i.format})")

    def tensor_names(self, layer: int) -> dict[str, str]:
        """The checkpoint tensors (by role) that hold the q/k maps of ``layer``."""
        return dict(self._plan[self._check_layer(layer)])

    def _check_layer(self, layer: int) -> int:
        if not 0 <= int(layer) < self.info.n_layers:
            raise IndexError(f"layer {layer} out of range (model has {self.info.n_layers})")
        return int(layer)

    def layer(self, layer: int, *, check_finite: bool = True) -> LayerWeights:
        """Read, cut and check the q/k maps of one layer.

        Parameters
        ----------
        layer : int
        check_finite : bool
            With False, NaN/Inf weights are returned as they are (so that a caller
            can fail the affected heads one by one instead of the whole layer).

        Raises
        ------
        NonFiniteError
            If ``check_finite`` and a query/key weight or bias of the layer is NaN or
            infinite (naming the layer, the head and the tensor).
        """
        layer = self._check_layer(layer)
        spec = self._spec
        names = self._plan[layer]
        arrays = {role: self._store.read(name) for role, name in names.items()}
        qk = self._layout.split(spec, arrays)
        kv_index = np.arange(spec.n_q) // spec.kv_group
        if check_finite:
            _check_finite(self.info.name, layer, qk, kv_index, names)
        out = []
        for arr in (qk.W_Q, qk.W_K, qk.b_Q, qk.b_K):
            if arr is not None:
                arr = np.ascontiguousarray(arr, dtype=np.float64)
                arr.setflags(write=False)
            out.append(arr)
        kv_index.setflags(write=False)
        return LayerWeights(layer, out[0], out[1], out[2], out[3], kv_index)

    def norm_weight(self, layer: int) -> np.ndarray:
        """The gain ``gamma`` (shape ``(N,)``) of the norm feeding ``layer``'s attention.

        Folding it into the q/k maps (``W <- W diag(gamma)``) is a congruence of the
        form: the signature is kept, the profile changes.

        Raises
        ------
        UnsupportedArchitectureError
            When the architecture's norm placement is not known (e.g. OPT, whose
            pre/post-norm order depends on the checkpoint) or the tensor is absent.
        """
        layer = self._check_layer(layer)
        info = self.info
        kind = "gguf" if info.format == "gguf" else info.architecture
        rule = _NORM_TENSORS.get(kind)
        if rule is None:
            supported = ", ".join(sorted(k for k in _NORM_TENSORS if k != "gguf"))
            raise UnsupportedArchitectureError(
                f"the norm before the attention of {info.architecture!r} models is not "
                f"known (supported: {supported}, llama GGUF)"
            )
        want = rule(layer)
        hits = [t for t in self._store.names if t == want or t.endswith("." + want)]
        if len(hits) != 1:
            raise UnsupportedArchitectureError(
                f"{info.name}: norm tensor {want!r} "
                f"{'not found' if not hits else 'ambiguous'} in the checkpoint"
            )
        gamma = np.asarray(self._store.read(hits[0]), dtype=np.float64).reshape(-1)
        if gamma.shape != (info.N,):
            raise CheckpointError(
                f"{info.name}: norm tensor {hits[0]!r} has shape {gamma.shape}, "
                f"expected ({info.N},)"
            )
        return gamma

    def layers(self, layers: Iterable[int] | None = None) -> Iterator[LayerWeights]:
        """Yield :class:`LayerWeights` one layer at a time (all layers by default)."""
        chosen = range(self.info.n_layers) if layers is None else layers
        for layer in chosen:
            yield self.layer(layer)

    def heads(self, layers: Iterable[int] | None = None) -> Iterator[HeadWeights]:
        """Yield :class:`HeadWeights` for every (layer, query head), layer by layer."""
        for lw in self.layers(layers):
            yield from lw.heads()

    def close(self) -> None:
        """Close the checkpoint files."""
        self._store.close()

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: tensor holding the gain of the norm applied to the input of layer i's attention
_NORM_TENSORS: dict[str, Any] = {
    "gguf": lambda i: f"blk.{i}.attn_norm.weight",
    "llama": lambda i: f"layers.{i}.input_layernorm.weight",
    "mistral": lambda i: f"layers.{i}.input_layernorm.weight",
    "qwen2": lambda i: f"layers.{i}.input_layernorm.weight",
    "gpt_neox": lambda i: f"layers.{i}.input_layernorm.weight",
    "bloom": lambda i: f"h.{i}.input_layernorm.weight",
    "gpt2": lambda i: f"h.{i}.ln_1.weight",
    # post-LN encoder: the input of layer i is the output LayerNorm of layer i - 1
    "bert": lambda i: (
        "embeddings.LayerNorm.weight" if i == 0
        else f"encoder.layer.{i - 1}.output.LayerNorm.weight"
    ),
}


def _check_finite(model: str, layer: int, qk: Any, kv_index: np.ndarray,
                  names: dict[str, str]) -> None:
    """Raise NonFiniteError naming the first head with a NaN/Inf weight or bias."""
    checks = [("W_Q", qk.W_Q, "query", ("q", "qkv")), ("b_Q", qk.b_Q, "query",
                                                         ("q_bias", "qkv_bias")),
              ("W_K", qk.W_K, "key", ("k", "qkv")), ("b_K", qk.b_K, "key",
                                                     ("k_bias", "qkv_bias"))]
    for label, arr, side, roles in checks:
        if arr is None:
            continue
        bad = ~np.isfinite(arr).reshape(arr.shape[0], -1).all(axis=1)
        if bad.any():
            h = int(np.flatnonzero(bad)[0])
            count = int((~np.isfinite(arr[h])).sum())
            tensor = next((names[r] for r in roles if r in names), "?")
            if side == "query":
                who = f"query head {h} (key head {int(kv_index[h])})"
            else:
                users = np.flatnonzero(kv_index == h).tolist()
                who = f"key head {h} (used by query heads {users})"
            raise NonFiniteError(f"{model}: layer {layer}, {who}: {label} has {count} "
                                 f"non-finite (NaN/Inf) entries (tensor {tensor!r})")


# --------------------------------------------------------------------------- loading

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_CHUNK = 1 << 20


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _source_files(paths: Iterable[str], checksum: bool) -> tuple[SourceFile, ...]:
    return tuple(SourceFile(os.path.abspath(p), os.path.getsize(p),
                            _sha256(p) if checksum else None) for p in paths)


def _resolve(source: str | os.PathLike[str], download: bool) -> tuple[str, str | None]:
    """Turn a source into an existing path (and a display name when known)."""
    from qkforms.models.registry import SHORT_NAMES, resolve_short_name

    text = os.fspath(source)
    if os.path.exists(text):
        return text, None
    short = resolve_short_name(text)
    if short is not None:
        return short
    looks_like_path = (os.path.isabs(text) or text.startswith((".", "~"))
                       or text.count("/") > 1 or os.sep != "/" and os.sep in text
                       or Path(text).suffix in (".gguf", ".safetensors", ".json", ".bin"))
    if looks_like_path or not _HUB_ID.match(text):
        raise ModelNotFoundError(f"no such file or directory: {text!r} (and not a short "
                                 f"name: {', '.join(sorted(SHORT_NAMES))})")
    return _resolve_hub(text, download), text


def _resolve_hub(repo_id: str, download: bool) -> str:
    """A local snapshot of a hub repository (from the cache unless download=True)."""
    from qkforms.models.registry import SHORT_NAMES

    try:
        import huggingface_hub
    except ImportError:
        raise ModelNotFoundError(
            f"{repo_id!r} is not an existing path nor a short name "
            f"({', '.join(sorted(SHORT_NAMES))}); reading it as a Hugging Face hub id needs "
            "huggingface_hub (pip install huggingface_hub)") from None
    # Hugging Face names its weights model.safetensors / model-0000k-of-0000m.safetensors;
    # other safetensors in a repository (e.g. Mistral's consolidated.safetensors) are
    # duplicates in another layout and are not fetched.
    patterns = ["config.json", "model*.safetensors", "model.safetensors.index.json"]
    try:
        return str(huggingface_hub.snapshot_download(repo_id, allow_patterns=patterns,
                                                     local_files_only=not download))
    except Exception as exc:
        hint = ("it is not in the local Hugging Face cache; pass download=True to fetch "
                "it (needs network)" if not download else "the download failed")
        raise ModelNotFoundError(f"{repo_id!r} is not an existing path nor a short name "
                                 f"({', '.join(sorted(SHORT_NAMES))}), and as a hub id "
                                 f"{hint}: {type(exc).__name__}: {exc}") from exc


def _refuse_pickle(paths: list[str]) -> None:
    raise UnsafeFormatError(
        f"refusing pickle checkpoint {', '.join(os.path.basename(p) for p in paths)}: "
        "unpickling can execute arbitrary code. Convert it to safetensors, or pass "
        "allow_pickle=True to read it with torch.load(weights_only=True) if you trust it.")


def load(source: str | os.PathLike[str], *, name: str | None = None,
         allow_pickle: bool = False, checksum: bool = True,
         download: bool = False) -> Model:
    """Open a checkpoint for streaming its per-head query/key maps.

    Parameters
    ----------
    source
        A Hugging Face model directory (``config.json`` + ``*.safetensors``, optionally
        sharded with ``model.safetensors.index.json``), its ``config.json``, a ``.gguf``
        file (llama architecture), a short name (``"smollm2"``, ``"minilm"``; see
        :mod:`qkforms.models.registry`) or a hub id (``"org/model"``; needs
        ``huggingface_hub``, read from the local cache unless ``download=True``).
    name
        Display name for :attr:`ModelInfo.name` (default: from the checkpoint).
    allow_pickle
        Read ``pytorch_model.bin``-style checkpoints with
        ``torch.load(weights_only=True)`` when no safetensors exist. Default: refuse.
    checksum
        Compute the sha256 of every file read (streamed, 1 MiB at a time).
    download
        Allow fetching a hub id over the network.

    Returns
    -------
    Model
        Headers are validated against the config for every layer (tensor presence and
        shapes); no weights are read yet.

    Raises
    ------
    ModelNotFoundError
        The source does not exist (a :class:`~qkforms.errors.CheckpointError`).
    CheckpointError
        Malformed/truncated files, shapes inconsistent with the config.
    MissingTensorError
        A q/k tensor the architecture needs is absent (names tensor and files).
    UnsupportedArchitectureError
        Unknown architectures, and models that normalize queries/keys.
    UnsafeFormatError
        Pickle-only checkpoints without ``allow_pickle=True``.

    Examples
    --------
    >>> import qkforms.models as qm
    >>> try:
    ...     qm.load("/no/such/checkpoint")
    ... except qm.ModelNotFoundError as exc:
    ...     print(type(exc).__mro__[1].__name__)
    CheckpointError
    """
    path, display = _resolve(source, download)
    name = name or display
    if os.path.isdir(path):
        return _load_directory(path, name=name, allow_pickle=allow_pickle, checksum=checksum)
    suffix = Path(path).suffix.lower()
    if suffix == ".gguf":
        return _load_gguf(path, name=name, checksum=checksum)
    if Path(path).name == "config.json" or suffix == ".safetensors":
        return _load_directory(os.path.dirname(os.path.abspath(path)), name=name,
                               allow_pickle=allow_pickle, checksum=checksum)
    if suffix in _pickle_suffixes():
        if not allow_pickle:
            _refuse_pickle([path])
        return _load_directory(os.path.dirname(os.path.abspath(path)), name=name,
                               allow_pickle=True, checksum=checksum, only=[path])
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == b"GGUF":
        return _load_gguf(path, name=name, checksum=checksum)
    raise CheckpointError(f"{path}: unrecognised checkpoint file (expected a model "
                          "directory, config.json, .safetensors or .gguf)")


def _pickle_suffixes() -> tuple[str, ...]:
    from qkforms.models.torchbin import PICKLE_SUFFIXES

    return PICKLE_SUFFIXES


def _read_index(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as f:
            index = json.load(f)
        weight_map = index["weight_map"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{path}: not a valid shard index ({exc})") from exc
    if not isinstance(weight_map, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()):
        raise CheckpointError(f"{path}: weight_map must map tensor names to file names")
    return weight_map


def _load_directory(directory: str, *, name: str | None, allow_pickle: bool,
                    checksum: bool, only: list[str] | None = None) -> Model:
    from qkforms.models.config import read_config, refuse_qk_norm, spec_from_config
    from qkforms.models.layouts import layout_for_model_type

    cfg_path = os.path.join(directory, "config.json")
    entries = sorted(os.listdir(directory))
    if not os.path.isfile(cfg_path):
        ggufs = [e for e in entries if e.lower().endswith(".gguf")]
        if len(ggufs) == 1 and only is None:
            return _load_gguf(os.path.join(directory, ggufs[0]), name=name, checksum=checksum)
        raise CheckpointError(f"{directory}: no config.json (a Hugging Face model directory "
                              "needs config.json next to its weights)")
    cfg = read_config(cfg_path)
    spec = spec_from_config(cfg)
    layout = layout_for_model_type(spec.architecture)
    meta_files = [cfg_path]
    store: Any
    fmt = "safetensors"
    index = os.path.join(directory, "model.safetensors.index.json")
    if only is None and os.path.isfile(index):
        from qkforms.models.safetensors import SafetensorsStore

        weight_map = _read_index(index)
        shards = sorted(set(weight_map.values()))
        paths = [os.path.join(directory, s) for s in shards]
        for p in paths:
            if not os.path.isfile(p):
                raise CheckpointError(f"{index}: shard {os.path.basename(p)!r} is missing")
        store = SafetensorsStore(paths, weight_map)
        meta_files.append(index)
    elif only is None and any(e.endswith(".safetensors") for e in entries):
        from qkforms.models.safetensors import SafetensorsStore

        single = os.path.join(directory, "model.safetensors")
        named = [e for e in entries if e.startswith("model") and e.endswith(".safetensors")]
        paths = ([single] if os.path.isfile(single) else
                 [os.path.join(directory, e) for e in named or entries
                  if e.endswith(".safetensors")])
        store = SafetensorsStore(paths)
    else:
        suffixes = _pickle_suffixes()
        pickles = only or [os.path.join(directory, e) for e in entries
                           if e.endswith(suffixes) and "training_args" not in e]
        if not pickles:
            raise CheckpointError(f"{directory}: no weights found (expected *.safetensors, "
                                  "a shard index, or a .gguf file)")
        if not allow_pickle:
            _refuse_pickle(pickles)
        from qkforms.models.torchbin import TorchBinStore

        weight_map = None
        bin_index = os.path.join(directory, "pytorch_model.bin.index.json")
        if only is None and os.path.isfile(bin_index):
            weight_map = _read_index(bin_index)
            pickles = [os.path.join(directory, s) for s in sorted(set(weight_map.values()))]
            meta_files.append(bin_index)
        store = TorchBinStore(pickles, weight_map)
        paths = pickles
        fmt = "pickle"
    try:
        refuse_qk_norm(cfg, store.names)
        display = name or str(cfg.get("_name_or_path") or "") or os.path.basename(
            os.path.abspath(directory))
        return _assemble(display, spec, layout, store, [*meta_files, *paths], fmt, checksum)
    except BaseException:
        store.close()
        raise


def _load_gguf(path: str, *, name: str | None, checksum: bool) -> Model:
    from qkforms.models.ggufio import GGUFStore, spec_from_gguf
    from qkforms.models.layouts.llama import GGUF_LAYOUT

    store = GGUFStore(path)
    try:
        spec = spec_from_gguf(store.metadata, store.names)
        display = name or str(store.metadata.get("general.name") or Path(path).stem)
        return _assemble(display, spec, GGUF_LAYOUT, store, [path], "gguf", checksum)
    except BaseException:
        store.close()
        raise


def _find_prefix(store: TensorStore, anchor: str, files: list[str]) -> str:
    """The prefix (``""``, ``"model."``, ``"transformer."``, ...) of the layer tensors."""
    if anchor in store:
        return ""
    hits = [t[: -len(anchor)] for t in store.names
            if t.endswith("." + anchor)]
    if not hits:
        where = ", ".join(os.path.basename(f) for f in files)
        raise MissingTensorError(f"tensor {anchor!r} (with any prefix) is missing from "
                                 f"{where}: the checkpoint does not hold the query map of "
                                 "layer 0 where this architecture keeps it")
    return min(hits, key=len)


def _assemble(display: str, spec: Any, layout: Any, store: TensorStore, files: list[str],
              fmt: str, checksum: bool) -> Model:
    """Check every layer's q/k tensors against the config; build the Model."""
    weight_files = files[-1:] if fmt == "gguf" else files
    prefix = _find_prefix(store, layout.requests(spec, 0)[0].name, weight_files)
    plan: list[dict[str, str]] = []
    dtypes: set[str] = set()
    for layer in range(spec.n_layers):
        roles: dict[str, str] = {}
        for req in layout.requests(spec, layer):
            full = prefix + req.name
            if full not in store:
                where = ", ".join(os.path.basename(f) for f in weight_files
                                  if not f.endswith(".json"))
                raise MissingTensorError(f"tensor {full!r} (layer {layer} {req.role}) is "
                                         f"missing from {where}")
            shape = tuple(store.shape(full))
            if shape != tuple(req.shape):
                raise CheckpointError(
                    f"tensor {full!r} in {os.path.basename(store.file_of(full))} has shape "
                    f"{shape}, but the config ({spec.architecture}: N={spec.N}, "
                    f"{spec.n_q} query / {spec.n_kv} key heads of dimension {spec.n}) "
                    f"implies {tuple(req.shape)}")
            roles[req.role] = full
            if not req.role.endswith("bias"):
                dtypes.add(store.dtype(full))
        plan.append(roles)
    rope = spec.positional == "rope"
    info = ModelInfo(
        name=display, architecture=spec.architecture, n_layers=spec.n_layers, N=spec.N,
        n=spec.n, n_q=spec.n_q, n_kv=spec.n_kv, positional=spec.positional,
        rope_base=spec.rope_base if rope else None,
        rotary_fraction=spec.rotary_fraction if rope else None,
        rope_scaling=spec.rope_scaling if rope else None, has_qk_bias=spec.has_qk_bias,
        dtype=",".join(sorted(dtypes)), files=_source_files(files, checksum), format=fmt,
        causal=spec.causal)
    return Model(info, spec, layout, store, plan)

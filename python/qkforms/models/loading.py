"""Opening a checkpoint: format dispatch, header checks, and assembly of a :class:`Model`.

:func:`load` resolves the source (:mod:`qkforms.models.sources`), picks the backend
by format (a Hugging Face directory of safetensors, single or sharded; a GGUF file;
pickle checkpoints only when allowed), reads the config into an
:class:`~qkforms.models.config.ArchSpec`, and checks every layer's q/k tensors
(presence, shapes) against it before any weight is read.

Examples
--------
>>> from qkforms.models.loading import load
>>> load("minilm").info.architecture
'bert'
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

from qkforms._fs import open_regular, read_bytes
from qkforms.errors import (
    CheckpointError,
    MissingTensorError,
    QKFormsError,
    UnsafeFormatError,
    UnsafePathError,
)
from qkforms.models.config import ArchSpec, read_config, refuse_qk_norm
from qkforms.models.gguf_config import gguf_architecture, spec_from_gguf
from qkforms.models.ggufio import GGUFStore
from qkforms.models.layouts import Layout, layout_for_model_type, spec_from_config
from qkforms.models.layouts.gguf import GGUFLayout
from qkforms.models.model import Model, TensorStore
from qkforms.models.records import ModelInfo
from qkforms.models.safetensors import SafetensorsStore
from qkforms.models.scoremap import check_qk_norm_policy, qk_norm_refusal
from qkforms.models.sources import resolve, source_files
from qkforms.models.torchbin import PICKLE_SUFFIXES, TorchBinStore

__all__ = ["load"]


def _refuse_pickle(paths: list[str]) -> None:
    raise UnsafeFormatError(
        f"refusing pickle checkpoint {', '.join(os.path.basename(p) for p in paths)}: "
        "unpickling can execute arbitrary code. Convert it to safetensors, or pass "
        "allow_pickle=True to read it with torch.load(weights_only=True) if you trust it.")


def load(source: str | os.PathLike[str], *, name: str | None = None,
         allow_pickle: bool = False, checksum: bool = True,
         download: bool = False, qk_norm: str = "refuse") -> Model:
    """Open a checkpoint for streaming its per-head query/key maps.

    Parameters
    ----------
    source
        A Hugging Face model directory (``config.json`` + ``*.safetensors``, optionally
        sharded with ``model.safetensors.index.json``), its ``config.json``, a ``.gguf``
        file (any architecture of :data:`qkforms.models.gguf_config.GGUF_ARCHITECTURES`), a
        short name (``"smollm2"``, ``"minilm"``; see
        :mod:`qkforms.models.short_names`) or a hub id (``"org/model"``; needs
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
    qk_norm
        Policy for models that normalize their projected queries/keys (Qwen3, Gemma 3,
        OLMo 2, ...; Hugging Face checkpoints and GGUF files alike): ``"refuse"``
        (default) raises :class:`~qkforms.errors.UnsupportedArchitectureError`;
        ``"fold"`` hands out the maps of ``L' = (C W_K)^T diag(gamma_q gamma_k) (C W_Q)``,
        which fixes the sign of every score (:mod:`qkforms.models.scoremap`).

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
    check_qk_norm_policy(qk_norm)
    path, display = resolve(source, download)
    opts = _LoadOptions(name=name or display, allow_pickle=allow_pickle, checksum=checksum,
                        qk_norm=qk_norm)
    if os.path.isdir(path):
        return _load_directory(path, opts)
    return _load_file(path, opts)


@dataclass(frozen=True)
class _LoadOptions:
    """What :func:`load` was asked, handed to each format's loader."""

    name: str | None
    allow_pickle: bool
    checksum: bool
    qk_norm: str


def _load_file(path: str, opts: _LoadOptions) -> Model:
    """A checkpoint named by one file: chosen by suffix, then by the GGUF magic."""
    suffix = Path(path).suffix.lower()
    here = os.path.dirname(os.path.abspath(path))
    if suffix == ".gguf":
        return _load_gguf(path, opts)
    if Path(path).name == "config.json":
        return _load_directory(here, opts)
    if suffix == ".safetensors":  # exactly this file, not whatever else the directory holds
        return _load_directory(here, opts, weights=[os.path.abspath(path)])
    if suffix in PICKLE_SUFFIXES:
        if not opts.allow_pickle:
            _refuse_pickle([path])
        return _load_directory(here, dataclasses.replace(opts, allow_pickle=True), only=[path])
    try:
        with open_regular(path, "rb") as f:
            magic = f.read(4)
    except UnsafePathError as exc:
        raise CheckpointError(str(exc)) from None
    if magic == b"GGUF":
        return _load_gguf(path, opts)
    raise CheckpointError(f"{path}: unrecognised checkpoint file (expected a model "
                          "directory, config.json, .safetensors or .gguf)")


def _read_index(path: str) -> dict[str, str]:
    """The ``weight_map`` of a shard index; every shard a plain file name in its directory.

    A shard named with a directory part (``../other/model.safetensors``,
    ``/abs/x.safetensors``, ``sub/x``) would read weights from outside the model
    directory, i.e. survey another checkpoint than the one named: it is refused.
    """
    try:
        raw = read_bytes(path, "shard index")  # a regular file of bounded size
    except QKFormsError as exc:
        raise CheckpointError(str(exc)) from None
    except OSError as exc:
        raise CheckpointError(f"{path}: not a valid shard index ({exc})") from exc
    try:
        index = json.loads(raw.decode("utf-8"))
        weight_map = index["weight_map"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError,
            RecursionError) as exc:
        raise CheckpointError(f"{path}: not a valid shard index ({exc})") from exc
    if not isinstance(weight_map, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()):
        raise CheckpointError(f"{path}: weight_map must map tensor names to file names")
    for tensor, shard in weight_map.items():
        if (shard in ("", ".", "..") or "/" in shard or "\\" in shard or "\0" in shard
                or os.path.basename(shard) != shard):
            raise CheckpointError(
                f"{path}: the shard of tensor {tensor!r} is {shard!r}, which is not a file "
                "name in the model directory; an index may only name shards next to it")
    return weight_map


def _load_directory(directory: str, opts: _LoadOptions, *, only: list[str] | None = None,
                    weights: list[str] | None = None) -> Model:
    """A Hugging Face model directory (or its one GGUF file, without ``config.json``);
    ``weights``: the safetensors files named, ``only``: the pickle file named."""
    cfg_path = os.path.join(directory, "config.json")
    entries = sorted(os.listdir(directory))
    if not os.path.isfile(cfg_path):
        ggufs = [e for e in entries if e.lower().endswith(".gguf")]
        if len(ggufs) == 1 and only is None:
            return _load_gguf(os.path.join(directory, ggufs[0]), opts)
        raise CheckpointError(f"{directory}: no config.json (a Hugging Face model directory "
                              "needs config.json next to its weights)")
    cfg = read_config(cfg_path)
    spec = spec_from_config(cfg)
    layout = layout_for_model_type(spec.architecture)
    refuse_by_qk_norm_policy(f"{directory}: {spec.architecture!r}", spec, layout, opts.qk_norm)
    found = _directory_weights(directory, entries, opts.allow_pickle, only, weights)
    store = found.store
    try:
        if spec.qk_norm is None:
            refuse_qk_norm(cfg, store.names)
        display = opts.name or str(cfg.get("_name_or_path") or "") or os.path.basename(
            os.path.abspath(directory))
        return _assemble(display, spec, layout, store,
                         [cfg_path, *found.indexes, *found.paths], found.fmt, opts.checksum)
    except BaseException:
        store.close()
        raise


@dataclass(frozen=True)
class _DirectoryWeights:
    """The weight files of a model directory, opened: the store, its files, the shard
    index read (if any), and the format (``safetensors`` or ``pickle``)."""

    store: TensorStore
    paths: list[str]
    indexes: list[str]
    fmt: str


def _directory_weights(directory: str, entries: list[str], allow_pickle: bool,
                       only: list[str] | None, weights: list[str] | None
                       ) -> _DirectoryWeights:
    """Open the weights of a model directory: the files named, the shards of the index,
    the safetensors files, or (allowed only) the pickle checkpoints."""
    index = os.path.join(directory, "model.safetensors.index.json")
    if weights is not None:  # the safetensors file(s) the user named, nothing else
        return _DirectoryWeights(SafetensorsStore(weights), list(weights), [], "safetensors")
    if only is None and os.path.isfile(index):
        weight_map = _read_index(index)
        shards = sorted(set(weight_map.values()))
        paths = [os.path.join(directory, s) for s in shards]
        for p in paths:
            if not os.path.isfile(p):
                raise CheckpointError(f"{index}: shard {os.path.basename(p)!r} is missing")
        return _DirectoryWeights(SafetensorsStore(paths, weight_map), paths, [index],
                                 "safetensors")
    if only is None and any(e.endswith(".safetensors") for e in entries):
        single = os.path.join(directory, "model.safetensors")
        named = [e for e in entries if e.startswith("model") and e.endswith(".safetensors")]
        paths = ([single] if os.path.isfile(single) else
                 [os.path.join(directory, e) for e in named or entries
                  if e.endswith(".safetensors")])
        return _DirectoryWeights(SafetensorsStore(paths), paths, [], "safetensors")
    pickles = only or [os.path.join(directory, e) for e in entries
                       if e.endswith(PICKLE_SUFFIXES) and "training_args" not in e]
    if not pickles:
        raise CheckpointError(f"{directory}: no weights found (expected *.safetensors, "
                              "a shard index, or a .gguf file)")
    if not allow_pickle:
        _refuse_pickle(pickles)
    bin_map: dict[str, str] | None = None
    indexes: list[str] = []
    bin_index = os.path.join(directory, "pytorch_model.bin.index.json")
    if only is None and os.path.isfile(bin_index):
        bin_map = _read_index(bin_index)
        pickles = [os.path.join(directory, s) for s in sorted(set(bin_map.values()))]
        indexes.append(bin_index)
    return _DirectoryWeights(TorchBinStore(pickles, bin_map), pickles, indexes, "pickle")


def refuse_by_qk_norm_policy(subject: str, spec: ArchSpec, layout: Layout, qk_norm: str
                             ) -> None:
    """Policy ``refuse``: raise for a model that normalizes its projected queries/keys.

    Raises
    ------
    UnsupportedArchitectureError
        When ``spec.qk_norm`` is set and ``qk_norm == "refuse"`` (naming the gains).

    Examples
    --------
    >>> from qkforms.models.layouts import layout_for_model_type
    >>> spec = ArchSpec("llama", "llama", 1, 4, 2, 2, 2, "rope", 1e4, 1.0)
    >>> refuse_by_qk_norm_policy("m", spec, layout_for_model_type("llama"), "refuse")
    """
    if spec.qk_norm is not None and qk_norm == "refuse":
        gains = tuple(r.name for r in layout.requests(spec, 0)
                      if r.role in ("q_norm", "k_norm"))
        raise qk_norm_refusal(subject, spec.qk_norm, gains)


def _load_gguf(path: str, opts: _LoadOptions) -> Model:
    """A llama.cpp GGUF file; every q/k tensor checked to be decodable."""
    qk_norm = opts.qk_norm
    store = GGUFStore(path)
    try:
        norms = {f"blk.0.attn_{s}_norm.weight": s for s in "qk"}
        shapes = {t: tuple(store.shape(t)) for t in norms if t in store}
        spec = spec_from_gguf(store.metadata, store.names, shapes)
        arch = gguf_architecture(store.metadata)
        if spec.qk_norm is not None and qk_norm == "refuse":
            raise qk_norm_refusal(f"{os.path.basename(path)}: GGUF {arch.name!r}",
                                  spec.qk_norm)
        value_rows = None
        if arch.fused:
            n_v = int(store.metadata.get(f"{arch.name}.attention.value_length", spec.n))
            value_rows = spec.n_kv * n_v
        layout = GGUFLayout(arch, value_rows=value_rows, fold_qk_norm=qk_norm == "fold",
                            norm_shapes={s: shapes[t] for t, s in norms.items() if t in shapes})
        display = opts.name or str(store.metadata.get("general.name") or Path(path).stem)
        model = _assemble(display, spec, layout, store, [path], "gguf", opts.checksum)
        for layer in range(spec.n_layers):
            for tensor in model.tensor_names(layer).values():
                store.check_decodable(tensor)
        return model
    except BaseException:
        store.close()
        raise


def _find_prefix(store: TensorStore, anchor: str, files: list[str], marker: str = "") -> str:
    """The prefix (``""``, ``"model."``, ``"transformer."``, ...) of the layer tensors:
    the shortest one containing ``marker`` (``Layout.prefix_marker``)."""
    if anchor in store and not marker:
        return ""
    hits = [t[: -len(anchor)] for t in store.names
            if t.endswith("." + anchor) and marker in t[: -len(anchor)]]
    if not hits:
        where = ", ".join(os.path.basename(f) for f in files) or "the model in memory"
        within = f" under a prefix containing {marker!r}" if marker else ""
        raise MissingTensorError(f"tensor {anchor!r} (with any prefix{within}) is missing "
                                 f"from {where}: the checkpoint does not hold the query map "
                                 "of layer 0 where this architecture keeps it")
    return min(hits, key=len)


def _refuse_extra_layers(spec: ArchSpec, layout: Layout, store: TensorStore, prefix: str,
                         files: list[str]) -> None:
    """Refuse a checkpoint that holds more layers than its config declares.

    A config whose layer count is smaller than the checkpoint's would otherwise survey
    the first layers only and silently ignore the rest.
    """
    def present(layer: int) -> bool:
        names = [prefix + r.name for r in layout.requests(spec, layer)
                 if r.role in ("q", "k", "qkv")]
        return bool(names) and all(name in store for name in names)

    extra = spec.n_layers
    while extra < spec.n_layers + 100_000 and present(extra):
        extra += 1
    if extra > spec.n_layers:
        where = ", ".join(os.path.basename(f) for f in files if not f.endswith(".json"))
        raise CheckpointError(
            f"{where} holds the query/key tensors of {extra} layers, but the config "
            f"({spec.architecture}) declares {spec.n_layers}; qkforms would ignore "
            + (f"layer {extra - 1}" if extra == spec.n_layers + 1
               else f"layers {spec.n_layers} to {extra - 1}")
            + ": fix the config's layer count")


def _assemble(display: str, spec: ArchSpec, layout: Layout, store: TensorStore,
              files: list[str], fmt: str, checksum: bool) -> Model:
    """Check every layer's q/k tensors against the config; build the Model (its q/k-norm
    policy is ``fold`` when the spec has a q/k norm: the loaders refused it otherwise)."""
    weight_files = files[-1:] if fmt == "gguf" else files
    prefix = _find_prefix(store, layout.requests(spec, 0)[0].name, weight_files,
                          layout.prefix_marker(spec))
    plan: list[dict[str, str]] = []
    dtypes: set[str] = set()
    for layer in range(spec.n_layers):
        roles: dict[str, str] = {}
        for req in layout.requests(spec, layer):
            full = prefix + req.name
            if full not in store:
                where = ", ".join(os.path.basename(f) for f in weight_files
                                  if not f.endswith(".json")) or "the model in memory"
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
            if req.role in ("q", "k", "qkv"):
                dtypes.add(store.dtype(full))
        plan.append(roles)
    _refuse_extra_layers(spec, layout, store, prefix, weight_files)
    info = ModelInfo(name=display, spec=spec, dtype=",".join(sorted(dtypes)),
                     files=source_files(files, checksum), format=fmt,
                     qk_norm_policy="fold" if spec.qk_norm is not None else None)
    return Model(info, layout, store, plan)

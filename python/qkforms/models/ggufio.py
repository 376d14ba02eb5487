"""Reading llama.cpp GGUF files through the ``gguf`` package.

:class:`GGUFStore` wraps :class:`gguf.GGUFReader` (which memory-maps the file, so only
the pages of the tensors actually dequantized are read) and serves tensors by name in
Hugging Face orientation: a GGUF tensor of ggml shape ``(ne0, ne1) = (in, out)`` is
returned as a float64 ``(out, in)`` array, dequantized with
:func:`gguf.quants.dequantize`. :func:`spec_from_gguf` turns the ``llama.*`` metadata
into an :class:`~qkforms.models.config.ArchSpec`.

The module is named ``ggufio`` so that ``import gguf`` always means the package.

Examples
--------
>>> import os, tempfile, numpy as np, gguf
>>> path = os.path.join(tempfile.mkdtemp(), "t.gguf")
>>> w = gguf.GGUFWriter(path, "llama")
>>> w.add_tensor("x", np.arange(6, dtype=np.float32).reshape(2, 3))
>>> w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file()
>>> w.close()
>>> store = GGUFStore(path)
>>> store.shape("x"), store.dtype("x"), store.read("x")[1].tolist()
((2, 3), 'F32', [3.0, 4.0, 5.0])
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from qkforms._fs import require_regular
from qkforms.errors import (
    CheckpointError,
    MissingTensorError,
    UnsafePathError,
    UnsupportedArchitectureError,
)
from qkforms.models.config import ArchSpec, config_float, refuse_qk_norm

__all__ = ["GGUFStore", "SUPPORTED_GGUF_ARCHITECTURES", "spec_from_gguf"]

#: GGUF ``general.architecture`` values this loader understands (permuted q/k rows)
SUPPORTED_GGUF_ARCHITECTURES = ("llama",)


def _import_gguf() -> Any:
    try:
        import gguf
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise CheckpointError("reading GGUF files needs the 'gguf' package "
                              "(pip install 'qkforms[survey]' or pip install gguf)") from exc
    return gguf


class GGUFStore:
    """Tensors and metadata of one GGUF file.

    Parameters
    ----------
    path
        The ``.gguf`` file.

    Raises
    ------
    CheckpointError
        If the file is not a readable GGUF file (bad magic, truncated header or data).

    Examples
    --------
    >>> import os, tempfile
    >>> bad = os.path.join(tempfile.mkdtemp(), "bad.gguf")
    >>> with open(bad, "wb") as f:
    ...     _ = f.write(b"GGUF\\x03\\x00")
    >>> try:
    ...     GGUFStore(bad)
    ... except CheckpointError as exc:
    ...     print("GGUF" in str(exc))
    True
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        gguf = _import_gguf()
        self.path = os.fspath(path)
        try:
            size = require_regular(self.path)  # a FIFO would block the memory map forever
        except UnsafePathError as exc:
            raise CheckpointError(str(exc)) from None
        try:
            reader = gguf.GGUFReader(self.path, "r")
        except Exception as exc:  # the reader raises ValueError, IndexError, struct errors
            raise CheckpointError(f"{self.path}: not a readable GGUF file (corrupt or "
                                  f"truncated, {size} bytes): {type(exc).__name__}: "
                                  f"{exc}") from exc
        self._reader = reader
        self._tensors = {t.name: t for t in reader.tensors}
        for t in reader.tensors:
            if t.data_offset + t.n_bytes > size or t.data.nbytes != t.n_bytes:
                raise CheckpointError(f"{self.path}: truncated GGUF file: tensor {t.name!r} "
                                      f"needs bytes up to {t.data_offset + t.n_bytes}, the "
                                      f"file has {size}")
        self.metadata: dict[str, Any] = {}
        for key, field in reader.fields.items():
            if key.startswith("tokenizer.") or key.startswith("GGUF."):
                continue
            try:
                self.metadata[key] = field.contents()
            except Exception as exc:
                raise CheckpointError(f"{self.path}: corrupt GGUF metadata field "
                                      f"{key!r}: {exc}") from exc

    @property
    def names(self) -> list[str]:
        """Tensor names."""
        return list(self._tensors)

    def __contains__(self, name: object) -> bool:
        return name in self._tensors

    def _tensor(self, name: str) -> Any:
        try:
            return self._tensors[name]
        except KeyError:
            raise MissingTensorError(f"tensor {name!r} is not in {self.path}") from None

    def file_of(self, name: str) -> str:
        """Path of the file holding ``name`` (always this file)."""
        self._tensor(name)
        return self.path

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape in row-major (Hugging Face) order: ggml's ``ne`` reversed."""
        return tuple(int(s) for s in reversed(self._tensor(name).shape.tolist()))

    def dtype(self, name: str) -> str:
        """ggml type name (``F32``, ``F16``, ``Q4_1``, ``Q8_0``, ...)."""
        return str(self._tensor(name).tensor_type.name)

    def raw(self, name: str) -> np.ndarray:
        """The stored bytes/values of a tensor as the reader exposes them (memory-mapped)."""
        return self._tensor(name).data

    def read(self, name: str) -> np.ndarray:
        """Dequantize one tensor to float64, shape :meth:`shape`."""
        gguf = _import_gguf()
        t = self._tensor(name)
        try:
            values = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type)
        except NotImplementedError as exc:
            raise CheckpointError(f"{self.path}: cannot dequantize tensor {name!r} of type "
                                  f"{t.tensor_type.name}: {exc}") from exc
        return np.asarray(values, dtype=np.float64).reshape(self.shape(name))

    def close(self) -> None:
        """Drop the memory map (the store cannot be read afterwards)."""
        self._tensors = {}
        self._reader = None


def _meta_int(meta: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = meta.get(key, default)
    if value is None:
        raise CheckpointError(f"GGUF metadata lacks {key!r}")
    if isinstance(value, list | tuple):
        if len(set(value)) != 1:
            raise UnsupportedArchitectureError(f"GGUF metadata {key!r} varies per layer "
                                               f"({value!r}); not supported")
        value = value[0]
    try:
        out = int(value)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"GGUF metadata {key!r} is not an integer: {value!r}") from exc
    if out <= 0:
        raise CheckpointError(f"GGUF metadata {key!r} must be positive, got {out}")
    return out


def spec_from_gguf(meta: Mapping[str, Any], tensor_names: list[str]) -> ArchSpec:
    """Build an :class:`ArchSpec` from GGUF metadata (``general.architecture = llama``).

    Raises
    ------
    UnsupportedArchitectureError
        For other GGUF architectures, or query/key-normalizing checkpoints.

    Examples
    --------
    >>> spec = spec_from_gguf({"general.architecture": "llama", "llama.block_count": 30,
    ...     "llama.embedding_length": 576, "llama.attention.head_count": 9,
    ...     "llama.attention.head_count_kv": 3, "llama.rope.freq_base": 1e5}, [])
    >>> spec.n, spec.kv_group, spec.rope_base, spec.rotary_fraction
    (64, 3, 100000.0, 1.0)
    """
    arch = meta.get("general.architecture")
    refuse_qk_norm({"model_type": f"gguf:{arch}"}, tensor_names)
    if arch not in SUPPORTED_GGUF_ARCHITECTURES:
        raise UnsupportedArchitectureError(
            f"unknown GGUF architecture {arch!r}: qkforms reads GGUF files of architecture "
            f"{', '.join(SUPPORTED_GGUF_ARCHITECTURES)} (and Hugging Face safetensors "
            "checkpoints of gpt2, opt, bloom, gpt_neox, llama, mistral, qwen2, bert)")
    N = _meta_int(meta, f"{arch}.embedding_length")
    n_q = _meta_int(meta, f"{arch}.attention.head_count")
    n_kv = _meta_int(meta, f"{arch}.attention.head_count_kv", n_q)
    if f"{arch}.attention.key_length" not in meta and N % n_q:
        raise CheckpointError(f"GGUF: embedding_length={N} is not divisible by "
                              f"head_count={n_q} and no attention.key_length is given")
    n = _meta_int(meta, f"{arch}.attention.key_length", N // n_q)
    rot = meta.get(f"{arch}.rope.dimension_count")
    fraction = (config_float(rot, f"GGUF metadata {arch}.rope.dimension_count", high=n) / n
                if rot is not None else 1.0)
    scaling: dict[str, Any] | None = None
    kind = meta.get(f"{arch}.rope.scaling.type")
    if kind not in (None, "none"):
        scaling = {"rope_type": kind}
        for key in ("factor", "original_context_length"):
            if f"{arch}.rope.scaling.{key}" in meta:
                scaling[key] = meta[f"{arch}.rope.scaling.{key}"]
    has_bias = "blk.0.attn_q.bias" in tensor_names or "blk.0.attn_k.bias" in tensor_names
    return ArchSpec(architecture=str(arch), layout="gguf-llama",
                    n_layers=_meta_int(meta, f"{arch}.block_count"), N=N, n=n, n_q=n_q,
                    n_kv=n_kv, positional="rope",
                    rope_base=config_float(meta.get(f"{arch}.rope.freq_base", 10000.0),
                                           f"GGUF metadata {arch}.rope.freq_base"),
                    rotary_fraction=fraction, rope_scaling=scaling, has_qk_bias=has_bias,
                    causal=True)

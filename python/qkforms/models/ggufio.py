"""Reading llama.cpp GGUF files through the ``gguf`` package.

:class:`GGUFStore` reads the file's header lazily (its own parser: the metadata without
the tokenizer arrays, and the table of tensors, so that checks and refusals take
milliseconds whatever the vocabulary), memory-maps the file, so only the pages of the
tensors actually dequantized are read, and serves tensors by name in Hugging Face
orientation: a GGUF tensor of ggml shape ``(ne0, ne1) = (in, out)`` is returned as a
float64 ``(out, in)`` array, dequantized with :func:`gguf.quants.dequantize`.
:func:`spec_from_gguf` turns the ``llama.*`` metadata
into an :class:`~qkforms.models.config.ArchSpec` for every architecture of
:data:`GGUF_ARCHITECTURES` (and refuses the others with a reason,
:data:`REFUSED_GGUF_ARCHITECTURES`). Every tensor type the installed ``gguf`` package can
dequantize is read (:func:`decodable_types`), through the library's own dequantizer.

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
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from qkforms._fs import require_regular
from qkforms.errors import (
    CheckpointError,
    MissingTensorError,
    UnsafePathError,
    UnsupportedArchitectureError,
    format_value,
)
from qkforms.models.config import (
    GEMMA3N_REASON,
    ArchSpec,
    QKNorm,
    config_float,
    refuse_clamped_qkv,
)

__all__ = [
    "GGUFArchitecture",
    "GGUFStore",
    "GGUF_ARCHITECTURES",
    "GGUF_VERSIONS",
    "REFUSED_GGUF_ARCHITECTURES",
    "SUPPORTED_GGUF_ARCHITECTURES",
    "decodable_types",
    "gguf_architecture",
    "spec_from_gguf",
]


@dataclass(frozen=True)
class GGUFArchitecture:
    """Where one GGUF architecture keeps its query/key maps, as llama.cpp's converter
    (``convert_hf_to_gguf.py``) writes them.

    Attributes
    ----------
    name
        ``general.architecture``.
    models
        The model families stored under this name (documentation).
    fused
        One ``attn_qkv`` tensor (rows: all query heads, all key heads, all value
        heads) instead of ``attn_q``/``attn_k``.
    permuted
        The converter permuted each head's q/k rows (``LlamaModel.permute``) for
        llama.cpp's interleaved RoPE; the loader undoes it. Only for these.
    positional
        ``"rope"`` or ``"absolute"``.
    rope_layout
        The RoPE pairing of the rows the loader hands out (after undoing a
        permutation): ``"split-half"``, or ``"interleaved"`` for models that rotate
        adjacent pairs in their own code (Command-R).
    qk_norm_kind
        ``"rms"`` or ``"layer"``: what ``attn_q_norm``/``attn_k_norm`` tensors mean in
        this architecture, when the file has them.

    Examples
    --------
    >>> GGUF_ARCHITECTURES["phi3"].fused, GGUF_ARCHITECTURES["llama"].permuted
    (True, True)
    """

    name: str
    models: str
    fused: bool = False
    permuted: bool = False
    positional: str = "rope"
    rope_layout: str = "split-half"
    qk_norm_kind: str = "rms"


#: GGUF architectures with ordinary dot-product heads, by ``general.architecture``
GGUF_ARCHITECTURES: dict[str, GGUFArchitecture] = {a.name: a for a in (
    GGUFArchitecture("llama", "Llama 1-3, Mistral, Mixtral (attention), SmolLM, TinyLlama",
                     permuted=True),
    GGUFArchitecture("granite", "IBM Granite 3 (attention multiplier)", permuted=True),
    GGUFArchitecture("olmo", "OLMo 1", permuted=True),
    GGUFArchitecture("qwen2", "Qwen1.5, Qwen2, Qwen2.5 (q/k biases)"),
    GGUFArchitecture("qwen2moe", "Qwen1.5-MoE, Qwen2-MoE (attention only)"),
    GGUFArchitecture("qwen3", "Qwen3 (q/k RMSNorm per head)"),
    GGUFArchitecture("qwen3moe", "Qwen3-MoE (attention only; q/k RMSNorm per head)"),
    GGUFArchitecture("phi3", "Phi-3, Phi-3.5, Phi-4 (fused attn_qkv)", fused=True),
    GGUFArchitecture("gemma", "Gemma"),
    GGUFArchitecture("gemma2", "Gemma 2 (logit soft-capping)"),
    GGUFArchitecture("gemma3", "Gemma 3 (q/k RMSNorm per head)"),
    GGUFArchitecture("starcoder2", "StarCoder2 (q/k biases)"),
    GGUFArchitecture("stablelm", "StableLM 2 (partial RoPE; q/k LayerNorm per head in 12B)",
                     qk_norm_kind="layer"),
    GGUFArchitecture("olmo2", "OLMo 2, OLMo 3 (q/k RMSNorm over all heads)"),
    GGUFArchitecture("gpt2", "GPT-2 (fused attn_qkv, learned positions)", fused=True,
                     positional="absolute", qk_norm_kind="layer"),
    GGUFArchitecture("falcon", "Falcon 7B/40B/180B (fused attn_qkv, multi-query)", fused=True),
    GGUFArchitecture("command-r", "Command-R, Command-R+ (interleaved RoPE; q/k LayerNorm "
                     "per head in R+)", rope_layout="interleaved", qk_norm_kind="layer"),
)}

#: GGUF ``general.architecture`` values this loader understands
SUPPORTED_GGUF_ARCHITECTURES = tuple(GGUF_ARCHITECTURES)

_MLA = ("multi-head latent attention: keys and values come from a compressed latent that "
        "is RMS-normalized (kv_a_norm) and a RoPE key part shared by all heads; qkforms "
        "does not map it to per-head query/key maps")
_NO_ATTENTION = "it has no dot-product attention (a state-space or recurrent model)"

#: architectures refused with a reason (besides the unknown ones)
REFUSED_GGUF_ARCHITECTURES: dict[str, str] = {
    "deepseek2": _MLA,
    "minicpm3": _MLA,
    "plm": _MLA,
    "mamba": _NO_ATTENTION,
    "mamba2": _NO_ATTENTION,
    "rwkv6": _NO_ATTENTION,
    "rwkv6qwen2": _NO_ATTENTION,
    "rwkv7": _NO_ATTENTION,
    "arwkv7": _NO_ATTENTION,
    "cohere2": ("Command R7B interleaves RoPE layers with layers without positional "
                "encoding; qkforms records one positional scheme per model"),
    "llama4": ("Llama 4 interleaves RoPE layers with position-free layers that "
               "L2-normalize queries and keys, and chunks its attention"),
    "gemma3n": GEMMA3N_REASON,
}


def _import_gguf() -> Any:
    try:
        import gguf
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise CheckpointError("reading GGUF files needs the 'gguf' package "
                              "(pip install 'qkforms[survey]' or pip install gguf)") from exc
    return gguf


#: GGUF format versions the lazy reader understands (those of ``gguf.GGUFReader``)
GGUF_VERSIONS = (2, 3)
#: metadata keys skipped without decoding (the tokenizer arrays: 150k+ strings)
SKIPPED_KEY_PREFIXES = ("tokenizer.",)

# GGUF value types (gguf.GGUFValueType): struct format of each scalar
_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
           12: "d"}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class _TensorInfo:
    """Where one tensor's bytes are: ggml dims ``ne``, type, absolute offset, size."""

    name: str
    ne: tuple[int, ...]
    qtype: Any  # gguf.GGMLQuantizationType
    offset: int
    n_bytes: int


class _Header:
    """A lazy parse of a GGUF file's header: metadata (tokenizer arrays skipped, not
    decoded) and the tensor table, read with ``struct`` from the memory map.

    Skipping an array of ``k`` strings walks their ``k`` length fields (no string is
    decoded and no object is made per element), so a 150k-token vocabulary costs
    milliseconds, where ``gguf.GGUFReader`` builds several numpy views per token.
    """

    def __init__(self, buf: Any, size: int, gguf: Any) -> None:
        self.buf, self.size, self.gguf = buf, size, gguf
        self.offs = 0
        if bytes(buf[:4]) != b"GGUF":
            # error-contract: header parse error, re-raised as CheckpointError
            raise ValueError("GGUF magic invalid")
        version = struct.unpack_from("<I", buf, 4)[0]
        self.order = "<"
        if version & 0xFFFF == 0:  # written for the other byte order
            self.order = ">"
            version = struct.unpack_from(">I", buf, 4)[0]
        if version not in GGUF_VERSIONS:
            # error-contract: header parse error, re-raised as CheckpointError
            raise ValueError(f"GGUF version {version} is not supported (reads "
                             f"{', '.join(map(str, GGUF_VERSIONS))})")
        self.offs = 8
        n_tensors, n_kv = self._unpack("QQ")
        self.metadata: dict[str, Any] = {}
        self.skipped: list[str] = []
        for _ in range(self._count(n_kv, 12)):
            key = self._string()
            vtype = self._unpack("I")[0]
            if key.startswith(SKIPPED_KEY_PREFIXES):
                self._skip(vtype)
                self.skipped.append(key)
            else:
                self.metadata[key] = self._value(vtype)
        raw: list[tuple[str, tuple[int, ...], int, int]] = []
        for _ in range(self._count(n_tensors, 24)):
            name = self._string()
            n_dims = self._unpack("I")[0]
            if n_dims > 8:
                # error-contract: header parse error, re-raised as CheckpointError
                raise ValueError(f"tensor {name!r} has {n_dims} dimensions")
            ne = self._unpack("Q" * n_dims)
            qtype, offset = self._unpack("IQ")
            raw.append((name, tuple(int(d) for d in ne), int(qtype), int(offset)))
        align = self.metadata.get("general.alignment", 32)
        if not isinstance(align, int) or align <= 0 or align & (align - 1):
            # error-contract: header parse error, re-raised as CheckpointError
            raise ValueError(f"invalid general.alignment {align!r}")
        start = -(-self.offs // align) * align
        self.tensors: dict[str, _TensorInfo] = {}
        for name, ne, qtype, offset in raw:
            if name in self.tensors:
                # error-contract: header parse error, re-raised as CheckpointError
                raise ValueError(f"duplicated tensor {name!r}")
            kind = gguf.GGMLQuantizationType(qtype)
            block, type_size = gguf.GGML_QUANT_SIZES[kind]
            n_elems = int(np.prod(ne, dtype=np.int64)) if ne else 1
            self.tensors[name] = _TensorInfo(name, ne, kind, start + offset,
                                             n_elems * type_size // block)

    def _unpack(self, fmt: str) -> tuple[Any, ...]:
        out = struct.unpack_from(self.order + fmt, self.buf, self.offs)
        self.offs += struct.calcsize(self.order + fmt)
        return out

    def _count(self, count: int, least: int) -> int:
        """``count`` items of at least ``least`` bytes each must fit in the file."""
        if count * least > self.size - self.offs:
            # error-contract: header parse error, re-raised as CheckpointError
            raise ValueError(f"count {count} at byte {self.offs} exceeds the file")
        return int(count)

    def _string(self) -> str:
        length = self._count(self._unpack("Q")[0], 1)
        out = bytes(self.buf[self.offs:self.offs + length]).decode("utf-8")
        self.offs += length
        return out

    def _value(self, vtype: int) -> Any:
        if vtype == _STRING:
            return self._string()
        if vtype == _ARRAY:
            etype, count = self._unpack("IQ")
            return [self._value(etype) for _ in range(self._count(count, 1))]
        if vtype not in _SCALAR:
            # error-contract: header parse error, re-raised as CheckpointError
            raise ValueError(f"unknown GGUF value type {vtype}")
        value = self._unpack(_SCALAR[vtype])[0]
        return bool(value) if vtype == 7 else value

    def _skip(self, vtype: int) -> None:
        if vtype == _STRING:
            length = self._count(self._unpack("Q")[0], 1)
            self.offs += length
        elif vtype == _ARRAY:
            etype, count = self._unpack("IQ")
            count = self._count(count, 1)
            if etype in _SCALAR:
                width = struct.calcsize(_SCALAR[etype])
                self._count(count, width)
                self.offs += count * width
            elif etype == _STRING:
                fmt, buf, offs, end = self.order + "Q", self.buf, self.offs, self.size
                for _ in range(count):
                    offs += 8 + struct.unpack_from(fmt, buf, offs)[0]
                    if offs > end:
                        # error-contract: header parse error, re-raised as CheckpointError
                        raise ValueError("a string array runs past the end of the file")
                self.offs = offs
            else:
                for _ in range(count):
                    self._skip(etype)
        elif vtype in _SCALAR:
            self.offs += struct.calcsize(_SCALAR[vtype])
        else:
            # error-contract: header parse error, re-raised as CheckpointError
            raise ValueError(f"unknown GGUF value type {vtype}")


class GGUFStore:
    """Tensors and metadata of one GGUF file, read lazily.

    Opening parses only the header (:class:`_Header`): the metadata without the
    tokenizer arrays (:data:`SKIPPED_KEY_PREFIXES`, whose keys are listed in
    ``skipped``) and the table of tensors (name, shape, type, offset). Nothing else of
    the file is read: the architecture checks and refusals of the loader take
    milliseconds whatever the vocabulary, and each tensor's bytes are located by its
    offset and mapped only when it is read.

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
            data: Any = np.memmap(self.path, mode="r") if size else np.zeros(0, np.uint8)
            header = _Header(data, size, gguf)
        except Exception as exc:  # struct errors, ValueError, UnicodeDecodeError, OSError
            raise CheckpointError(f"{self.path}: not a readable GGUF file (corrupt or "
                                  f"truncated, {size} bytes): {type(exc).__name__}: "
                                  f"{exc}") from exc
        self._data: Any = data
        self._order = header.order
        self._tensors = header.tensors
        self.skipped: list[str] = header.skipped
        for t in self._tensors.values():
            if t.offset + t.n_bytes > size:
                raise CheckpointError(f"{self.path}: truncated GGUF file: tensor {t.name!r} "
                                      f"needs bytes up to {t.offset + t.n_bytes}, the "
                                      f"file has {size}")
        self.metadata: dict[str, Any] = header.metadata

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
        return tuple(reversed(self._tensor(name).ne))

    def dtype(self, name: str) -> str:
        """ggml type name (``F32``, ``F16``, ``Q4_1``, ``Q8_0``, ...)."""
        return str(self._tensor(name).qtype.name)

    def raw(self, name: str) -> np.ndarray:
        """The stored values of a tensor, memory-mapped, as ``gguf.GGUFReader`` exposes
        them: F16/F32/F64/I8-I64 typed in row-major shape, other types as bytes of shape
        ``(..., bytes per row)``."""
        t = self._tensor(name)
        typed = _TYPED.get(t.qtype.name)
        shape = tuple(reversed(t.ne))
        data = self._data[t.offset:t.offset + t.n_bytes]
        if typed is None:
            gguf = _import_gguf()
            return data.reshape(gguf.quants.quant_shape_to_byte_shape(shape, t.qtype))
        order: Literal["<", ">"] = "<" if self._order == "<" else ">"
        return data.view(np.dtype(typed).newbyteorder(order)).reshape(shape)

    def check_decodable(self, name: str) -> None:
        """Raise unless the installed ``gguf`` package can dequantize tensor ``name``.

        Raises
        ------
        CheckpointError
            Naming the tensor, its type and the types that can be read.
        """
        kind = self.dtype(name)
        if kind not in decodable_types():
            from importlib.metadata import PackageNotFoundError
            from importlib.metadata import version as dist_version

            try:
                version = dist_version("gguf")
            except PackageNotFoundError:  # pragma: no cover - imported from a source tree
                version = "?"
            raise CheckpointError(
                f"{self.path}: tensor {name!r} is stored as ggml type {kind}, which the "
                f"installed gguf package ({version}) cannot dequantize; it reads "
                f"{', '.join(decodable_types())} (a newer gguf may add {kind}: "
                "pip install -U gguf)")

    def read(self, name: str) -> np.ndarray:
        """Dequantize one tensor to float64, shape :meth:`shape`.

        The values are those of ``gguf.quants.dequantize`` (float32), widened exactly.
        """
        gguf = _import_gguf()
        t = self._tensor(name)
        self.check_decodable(name)
        values = gguf.quants.dequantize(np.asarray(self.raw(name)), t.qtype)
        return np.asarray(values, dtype=np.float64).reshape(self.shape(name))

    def read_with_digest(self, name: str) -> tuple[np.ndarray, str | None]:
        """:meth:`read`, and the sha256 of the tensor's stored bytes."""
        import hashlib

        stored = np.ascontiguousarray(self.raw(name)).data
        return self.read(name), hashlib.sha256(stored).hexdigest()

    def close(self) -> None:
        """Drop the memory map (the store cannot be read afterwards)."""
        self._tensors = {}
        self._data = None


#: numpy types of the tensors the reader hands out typed (the others as bytes)
_TYPED = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8,
          "I16": np.int16, "I32": np.int32, "I64": np.int64}


@lru_cache(maxsize=1)
def decodable_types() -> tuple[str, ...]:
    """The ggml tensor types the installed ``gguf`` package can dequantize.

    Probed once: each type of ``gguf.GGMLQuantizationType`` is asked to dequantize one
    zero block; the types whose dequantizer raises ``NotImplementedError`` are left out.

    Examples
    --------
    >>> {"F32", "F16", "BF16", "Q4_0", "Q8_0", "Q4_K", "Q6_K", "IQ4_XS"} <= set(decodable_types())
    True
    """
    gguf = _import_gguf()
    out = []
    for qtype in gguf.GGMLQuantizationType:
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        try:
            values = gguf.quants.dequantize(np.zeros((1, size), dtype=np.uint8), qtype)
        except NotImplementedError:
            continue
        except Exception:  # pragma: no cover - a broken dequantizer: not offered
            continue
        if np.asarray(values).size == block:
            out.append(qtype.name)
    return tuple(out)


def _meta_int(meta: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = meta.get(key, default)
    if value is None:
        raise CheckpointError(f"GGUF metadata lacks {key!r}")
    if isinstance(value, list | tuple):
        if len(set(value)) != 1:
            raise UnsupportedArchitectureError(f"GGUF metadata {key!r} varies per layer "
                                               f"({format_value(value)}); not supported")
        value = value[0]
    try:
        out = int(value)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(
            f"GGUF metadata {key!r} is not an integer: {format_value(value)}") from exc
    if out <= 0:
        raise CheckpointError(f"GGUF metadata {key!r} must be positive, got {out}")
    return out


def _meta_float(meta: Mapping[str, Any], key: str) -> float | None:
    value = meta.get(key)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"GGUF metadata {key!r} is not a number: {value!r}") from exc


def gguf_architecture(meta: Mapping[str, Any]) -> GGUFArchitecture:
    """The :class:`GGUFArchitecture` of a file's metadata.

    Raises
    ------
    UnsupportedArchitectureError
        For refused architectures (with the reason) and unknown ones (naming the
        supported).

    Examples
    --------
    >>> gguf_architecture({"general.architecture": "qwen2"}).permuted
    False
    >>> try:
    ...     gguf_architecture({"general.architecture": "deepseek2"})
    ... except UnsupportedArchitectureError as exc:
    ...     print("latent attention" in str(exc))
    True
    """
    from qkforms.models.layouts import supported_model_types

    arch = meta.get("general.architecture")
    if arch in REFUSED_GGUF_ARCHITECTURES:
        raise UnsupportedArchitectureError(
            f"GGUF architecture {arch!r} is not supported: "
            f"{REFUSED_GGUF_ARCHITECTURES[arch]}")
    if not isinstance(arch, str) or arch not in GGUF_ARCHITECTURES:
        raise UnsupportedArchitectureError(
            f"unknown GGUF architecture {arch!r}: qkforms reads GGUF files of architecture "
            f"{', '.join(SUPPORTED_GGUF_ARCHITECTURES)} (and Hugging Face safetensors "
            f"checkpoints of {', '.join(supported_model_types())})")
    return GGUF_ARCHITECTURES[arch]


def _rope_scaling(meta: Mapping[str, Any], arch: str, tensor_names: list[str]
                  ) -> dict[str, Any] | None:
    """RoPE scaling facts: ``rope.scaling.*`` keys, frequency-factor tensors, local base."""
    scaling: dict[str, Any] = {}
    kind = meta.get(f"{arch}.rope.scaling.type")
    if kind not in (None, "none"):
        scaling["rope_type"] = str(kind)
    prefix = f"{arch}.rope.scaling."
    for key, value in meta.items():
        if key.startswith(prefix) and key != f"{arch}.rope.scaling.type":
            scaling[key[len(prefix):]] = value
    if "rope_freqs.weight" in tensor_names:  # Llama 3.1 style per-frequency factors
        scaling.setdefault("rope_type", "llama3")
        scaling["frequency_factors"] = "rope_freqs.weight"
    if "rope_factors_long.weight" in tensor_names:  # Phi-3 LongRoPE
        scaling.setdefault("rope_type", "longrope")
        scaling["frequency_factors"] = "rope_factors_long.weight, rope_factors_short.weight"
    swa = _meta_float(meta, f"{arch}.rope.freq_base_swa")
    if swa is not None:  # Gemma 3: another base in the sliding-window layers
        scaling["rope_base_sliding_window"] = swa
    return scaling or None


def _qk_norm(meta: Mapping[str, Any], entry: GGUFArchitecture, tensor_names: list[str],
             shapes: Mapping[str, tuple[int, ...]], n: int, n_q: int) -> QKNorm | None:
    q_name, k_name = "blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight"
    if q_name not in tensor_names and k_name not in tensor_names:
        return None
    arch = entry.name
    if q_name not in tensor_names or k_name not in tensor_names:
        raise UnsupportedArchitectureError(
            f"GGUF {arch!r}: the file normalizes only the "
            f"{'queries' if q_name in tensor_names else 'keys'} (one of attn_q_norm / "
            "attn_k_norm is missing); not supported")
    if entry.permuted:
        raise UnsupportedArchitectureError(
            f"GGUF {arch!r} with q/k normalization: the converter permuted the q/k rows, "
            "and where it put the norm gains is not mapped")
    if any(f"blk.0.attn_{s}_norm.bias" in tensor_names for s in "qk"):
        raise UnsupportedArchitectureError(
            f"GGUF {arch!r}: the q/k normalization has a bias, so the normalized score is "
            "not f(x) g(y) x^T L' y; not supported")
    shape = shapes.get(q_name, ())
    scope = "all" if shape == (n_q * n,) and n_q > 1 else "head"
    if entry.qk_norm_kind == "rms":
        eps = _meta_float(meta, f"{arch}.attention.layer_norm_rms_epsilon")
    else:
        eps = _meta_float(meta, f"{arch}.attention.layer_norm_epsilon")
    return QKNorm(entry.qk_norm_kind, scope, 1e-6 if eps is None else eps)


def spec_from_gguf(meta: Mapping[str, Any], tensor_names: list[str],
                   shapes: Mapping[str, tuple[int, ...]] | None = None) -> ArchSpec:
    """Build an :class:`ArchSpec` from GGUF metadata.

    Parameters
    ----------
    meta
        The file's metadata (``general.architecture``, ``<arch>.*``).
    tensor_names
        The file's tensor names (biases, q/k norms, RoPE factor tensors are detected
        from them).
    shapes
        Row-major shapes of (at least) the q/k norm tensors, to tell a per-head norm
        from one over all heads.

    Raises
    ------
    UnsupportedArchitectureError
        For refused or unknown architectures, per-layer head counts, clamped q/k/v.

    Examples
    --------
    >>> spec = spec_from_gguf({"general.architecture": "llama", "llama.block_count": 30,
    ...     "llama.embedding_length": 576, "llama.attention.head_count": 9,
    ...     "llama.attention.head_count_kv": 3, "llama.rope.freq_base": 1e5}, [])
    >>> spec.n, spec.kv_group, spec.rope_base, spec.rotary_fraction
    (64, 3, 100000.0, 1.0)
    """
    entry = gguf_architecture(meta)
    arch = entry.name
    if meta.get(f"{arch}.attention.clamp_kqv") is not None:
        refuse_clamped_qkv(f"GGUF {arch!r}", meta[f"{arch}.attention.clamp_kqv"])
    N = _meta_int(meta, f"{arch}.embedding_length")
    n_q = _meta_int(meta, f"{arch}.attention.head_count")
    n_kv = _meta_int(meta, f"{arch}.attention.head_count_kv", n_q)
    if f"{arch}.attention.key_length" not in meta and N % n_q:
        raise CheckpointError(f"GGUF: embedding_length={N} is not divisible by "
                              f"head_count={n_q} and no attention.key_length is given")
    n = _meta_int(meta, f"{arch}.attention.key_length", N // n_q)
    rope = entry.positional == "rope"
    rot = meta.get(f"{arch}.rope.dimension_count")
    fraction = (config_float(rot, f"GGUF metadata {arch}.rope.dimension_count", high=n) / n
                if rope and rot is not None else 1.0)
    softcap = _meta_float(meta, f"{arch}.attn_logit_softcapping")
    if softcap is None and arch == "gemma2":
        softcap = 50.0  # llama.cpp's default for Gemma 2 files written without the key
    has_bias = any(f"blk.0.attn_{t}.bias" in tensor_names for t in ("q", "k", "qkv"))
    return ArchSpec(
        architecture=arch, layout="gguf", n_layers=_meta_int(meta, f"{arch}.block_count"),
        N=N, n=n, n_q=n_q, n_kv=n_kv, positional=entry.positional,
        rope_base=config_float(meta.get(f"{arch}.rope.freq_base", 10000.0),
                               f"GGUF metadata {arch}.rope.freq_base") if rope else None,
        rotary_fraction=fraction if rope else None,
        rope_scaling=_rope_scaling(meta, arch, tensor_names) if rope else None,
        has_qk_bias=has_bias, causal=True, rope_layout=entry.rope_layout,
        attention_scale=_meta_float(meta, f"{arch}.attention.scale"),
        attn_softcap=softcap,
        qk_norm=_qk_norm(meta, entry, tensor_names, shapes or {}, n, n_q))

"""Reading llama.cpp GGUF files through the ``gguf`` package.

:class:`GGUFStore` reads the file's header lazily (its own parser: the metadata without
the tokenizer arrays, and the table of tensors, so that checks and refusals take
milliseconds whatever the vocabulary), memory-maps the file, so only the pages of the
tensors actually dequantized are read, and serves tensors by name in Hugging Face
orientation: a GGUF tensor of ggml shape ``(ne0, ne1) = (in, out)`` is returned as a
float64 ``(out, in)`` array, dequantized with :func:`gguf.quants.dequantize`. The
metadata becomes an :class:`~qkforms.models.config.ArchSpec` in
:mod:`qkforms.models.gguf_config` (:func:`~qkforms.models.gguf_config.spec_from_gguf`).
Every tensor type the installed ``gguf`` package can
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
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from qkforms._fs import require_regular
from qkforms.errors import (
    CheckpointError,
    MissingTensorError,
    UnsafePathError,
)

__all__ = [
    "GGUFStore",
    "GGUF_VERSIONS",
    "decodable_types",
]


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

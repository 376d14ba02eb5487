"""Reading safetensors checkpoints without torch, one tensor at a time.

A safetensors file is an 8-byte little-endian header length ``H``, a JSON header of
``H`` bytes mapping tensor names to ``{"dtype", "shape", "data_offsets"}``, then the raw
little-endian tensor bytes (offsets relative to the end of the header). This module
parses and validates the header only when a file is opened, and reads the bytes of one
tensor on request with a single ``seek`` + ``readinto`` -- nothing else of the file is
touched, so memory use is one tensor, whatever the size of the checkpoint.

Sharded checkpoints (``model.safetensors.index.json`` with a ``weight_map`` from tensor
name to shard file) are served by :class:`SafetensorsStore` as one name space.

Decoding is exact: ``F64``/``F32``/``F16`` through numpy, ``BF16`` bit-level (the 16
stored bits are the high half of a float32), ``F8_E4M3``/``F8_E5M2`` through
``ml_dtypes`` when it is installed.

Examples
--------
>>> import json, struct, tempfile, os, numpy as np
>>> from qkforms.models.safetensors import SafetensorsFile
>>> data = np.arange(6, dtype="<f4").tobytes()
>>> header = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})
>>> path = os.path.join(tempfile.mkdtemp(), "x.safetensors")
>>> with open(path, "wb") as f:
...     _ = f.write(struct.pack("<Q", len(header)) + header.encode() + data)
>>> with SafetensorsFile(path) as st:
...     print(st.shape("w"), st.read("w")[1])
(2, 3) [3. 4. 5.]
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import struct
import threading
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

from qkforms._fs import open_regular
from qkforms.errors import CheckpointError, MissingTensorError, UnsafePathError

__all__ = [
    "DTYPE_SIZES",
    "SafetensorsFile",
    "SafetensorsStore",
    "decode",
    "read_header",
]

#: bytes per element of every safetensors dtype code
DTYPE_SIZES: dict[str, int] = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "U16": 2,
    "U32": 4,
    "U64": 8,
    "BOOL": 1,
}

#: readable names of the floating dtypes (what ``ModelInfo.dtype`` reports)
DTYPE_NAMES: dict[str, str] = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
}

#: refuse headers larger than this (the format's own limit is 100 MB)
MAX_HEADER_BYTES = 100_000_000


def _open(path: str) -> io.BufferedReader:
    """Open a checkpoint file for binary reading (one place, so tests can count reads).

    Regular files only (:func:`qkforms._fs.open_regular`): a FIFO or device named like a
    checkpoint is refused instead of blocking forever.
    """
    try:
        # binary mode gives a BufferedReader (open_regular is typed IO[Any] for both modes)
        return cast(io.BufferedReader, open_regular(path, "rb"))
    except UnsafePathError as exc:
        raise CheckpointError(str(exc)) from None


#: each reading thread's reusable read buffer (shared by every file it reads)
_READ_BUFFER = threading.local()


def _read_buffer(length: int) -> memoryview:
    """A buffer of ``length`` bytes for this thread, reused from read to read.

    :func:`decode` always copies, so nothing returned by a read refers to it; reusing it
    spares the page faults of a fresh buffer per tensor. One per thread (not per file),
    freed by :meth:`SafetensorsFile.close` in that thread.
    """
    have: bytearray | None = getattr(_READ_BUFFER, "buf", None)
    if have is None or len(have) < length:
        have = _READ_BUFFER.buf = bytearray(length)
    return memoryview(have)[:length]


#: values per step of the bfloat16 decoder: its uint32 scratch (512 KiB) stays in cache
_BF16_STEP = 1 << 17


def _decode_bf16(bits: np.ndarray) -> np.ndarray:
    """float64 values of little-endian bfloat16 bit patterns (``uint16``), exactly.

    bfloat16 is the upper half of an IEEE float32: each step shifts the bits into place
    in a small scratch buffer and widens them into the output, so the only large array
    made is the float64 result (one pass over memory instead of four).
    """
    out = np.empty(bits.shape, dtype=np.float64)
    scratch = np.empty(min(bits.size, _BF16_STEP), dtype=np.uint32)
    for a in range(0, bits.size, _BF16_STEP):
        b = min(a + _BF16_STEP, bits.size)
        tmp = scratch[: b - a]
        np.left_shift(bits[a:b], 16, out=tmp, dtype=np.uint32)
        np.copyto(out[a:b], tmp.view(np.float32))
    return out


def decode(raw: bytes | bytearray | memoryview | np.ndarray, dtype: str,
           shape: Iterable[int]) -> np.ndarray:
    """Decode the little-endian bytes of a stored tensor to a float64 array.

    Parameters
    ----------
    raw
        The tensor's bytes, exactly ``prod(shape) * DTYPE_SIZES[dtype]`` of them.
    dtype
        A safetensors dtype code: ``F64``, ``F32``, ``F16``, ``BF16``, ``F8_E4M3``,
        ``F8_E5M2`` (the last two need ``ml_dtypes``).
    shape
        The tensor's shape.

    Returns
    -------
    numpy.ndarray
        float64 array of the given shape; every stored value is represented exactly.

    Raises
    ------
    CheckpointError
        If the dtype is not a floating type or the byte count is wrong.

    Examples
    --------
    >>> import numpy as np
    >>> bits = np.array([0x3F80, 0xC000, 0x7F80], dtype="<u2")  # 1, -2, inf in bfloat16
    >>> decode(bits.tobytes(), "BF16", (3,))
    array([ 1., -2., inf])
    """
    shape = tuple(int(s) for s in shape)
    buf = np.frombuffer(raw, dtype=np.uint8)
    size = DTYPE_SIZES.get(dtype)
    if size is None or dtype not in DTYPE_NAMES:
        raise CheckpointError(f"unsupported tensor dtype {dtype!r} (expected one of "
                              f"{', '.join(DTYPE_NAMES)})")
    count = int(np.prod(shape, dtype=np.int64))
    if buf.size != count * size:
        raise CheckpointError(f"tensor of dtype {dtype} and shape {shape} needs "
                              f"{count * size} bytes, got {buf.size}")
    if dtype == "F64":
        out = buf.view("<f8").astype(np.float64)
    elif dtype == "F32":
        out = buf.view("<f4").astype(np.float64)
    elif dtype == "F16":
        out = buf.view("<f2").astype(np.float64)
    elif dtype == "BF16":
        out = _decode_bf16(buf.view("<u2"))
    else:
        try:
            import ml_dtypes
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise CheckpointError(f"decoding {dtype} needs the 'ml_dtypes' package "
                                  "(pip install ml-dtypes)") from exc
        np_type = ml_dtypes.float8_e4m3fn if dtype == "F8_E4M3" else ml_dtypes.float8_e5m2
        out = buf.view(np_type).astype(np.float64)
    return out.reshape(shape)


def read_header(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, str], int]:
    """Read and validate the header of a safetensors file.

    Parameters
    ----------
    path
        The ``.safetensors`` file.

    Returns
    -------
    (entries, metadata, data_start)
        ``entries`` maps tensor names to ``{"dtype", "shape", "data_offsets"}``;
        ``metadata`` is the optional ``__metadata__`` dict; ``data_start`` is the file
        offset of the first data byte.

    Raises
    ------
    CheckpointError
        If the file is shorter than its header claims, the header is not valid JSON,
        or an entry is malformed, overlaps another, or points past the end of the file.

    Examples
    --------
    >>> import json, struct, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "bad.safetensors")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(struct.pack("<Q", 1000) + b"{}")
    >>> try:
    ...     read_header(path)
    ... except CheckpointError as exc:
    ...     print("truncated" in str(exc))
    True
    """
    path = os.fspath(path)
    with _open(path) as f:
        size = os.path.getsize(path)  # a regular file: _open checked what it opened
        head = f.read(8)
        if len(head) < 8:
            raise CheckpointError(f"{path}: truncated safetensors file ({size} bytes, "
                                  "shorter than the 8-byte header length)")
        (n,) = struct.unpack("<Q", head)
        if n > MAX_HEADER_BYTES:
            raise CheckpointError(f"{path}: corrupt safetensors header length {n} "
                                  f"(limit {MAX_HEADER_BYTES})")
        if 8 + n > size:
            raise CheckpointError(f"{path}: truncated safetensors file: header claims "
                                  f"{n} bytes but the file has only {size - 8} after the "
                                  "length field")
        text = f.read(n)
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: corrupt safetensors header (not JSON: {exc})") from exc
    if not isinstance(header, dict):
        raise CheckpointError(f"{path}: corrupt safetensors header (not a JSON object)")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict):
        raise CheckpointError(f"{path}: corrupt safetensors header (__metadata__ not an object)")
    data_start = 8 + n
    data_len = size - data_start
    spans = []
    for name, entry in header.items():
        _check_entry(path, name, entry, data_len)
        begin, end = entry["data_offsets"]
        if end > begin:
            spans.append((begin, end, name))
    spans.sort()
    for (_b0, e0, n0), (b1, _e1, n1) in zip(spans, spans[1:], strict=False):
        if b1 < e0:
            raise CheckpointError(f"{path}: corrupt safetensors header: tensors {n0!r} and "
                                  f"{n1!r} overlap")
    return header, metadata, data_start


def _check_entry(path: str, name: str, entry: Any, data_len: int) -> None:
    """Validate one header entry (dtype, shape, offsets within the data section)."""
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= set(entry):
        raise CheckpointError(f"{path}: corrupt safetensors header entry for {name!r}")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if dtype not in DTYPE_SIZES:
        raise CheckpointError(f"{path}: tensor {name!r} has unknown dtype {dtype!r}")
    if (not isinstance(shape, list)
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                       for s in shape)):
        raise CheckpointError(f"{path}: tensor {name!r} has a malformed shape {shape!r}")
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1]):
        raise CheckpointError(f"{path}: tensor {name!r} has malformed data_offsets {offsets!r}")
    need = math.prod(shape) * DTYPE_SIZES[dtype]  # Python ints: no int64 wrap-around
    if offsets[1] - offsets[0] != need:
        raise CheckpointError(f"{path}: tensor {name!r} of dtype {dtype} and shape {shape} "
                              f"needs {need} bytes but its offsets span "
                              f"{offsets[1] - offsets[0]}")
    if offsets[1] > data_len:
        raise CheckpointError(f"{path}: truncated safetensors file: tensor {name!r} ends at "
                              f"data byte {offsets[1]} but the data section has only "
                              f"{data_len} bytes")


class SafetensorsFile:
    """One safetensors file: validated header, tensors read on demand.

    Parameters
    ----------
    path
        The ``.safetensors`` file. The header is read and validated at once; tensor data
        is read only by :meth:`read`.

    Examples
    --------
    >>> import json, struct, tempfile, os, numpy as np
    >>> raw = np.array([1.5, -2.0], dtype="<f2").tobytes()
    >>> header = json.dumps({"b": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})
    >>> path = os.path.join(tempfile.mkdtemp(), "y.safetensors")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(struct.pack("<Q", len(header)) + header.encode() + raw)
    >>> st = SafetensorsFile(path)
    >>> st.names, st.dtype("b"), st.read("b").tolist()
    (['b'], 'F16', [1.5, -2.0])
    >>> st.close()
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._entries, self.metadata, self._data_start = read_header(self.path)
        self._fh: io.BufferedReader | None = None
        self._lock = threading.Lock()  # one seek + read at a time on the shared handle

    @property
    def names(self) -> list[str]:
        """Tensor names in header order."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def _entry(self, name: str) -> dict[str, Any]:
        try:
            return self._entries[name]
        except KeyError:
            raise MissingTensorError(f"tensor {name!r} is not in {self.path}") from None

    def shape(self, name: str) -> tuple[int, ...]:
        """Stored shape of a tensor (from the header, no data read)."""
        return tuple(self._entry(name)["shape"])

    def dtype(self, name: str) -> str:
        """Stored dtype code of a tensor (``F32``, ``BF16``, ...)."""
        return str(self._entry(name)["dtype"])

    def byte_range(self, name: str) -> tuple[int, int]:
        """Absolute ``(offset, length)`` of the tensor's bytes in the file."""
        begin, end = self._entry(name)["data_offsets"]
        return self._data_start + begin, end - begin

    def read(self, name: str) -> np.ndarray:
        """Read one tensor and decode it to float64 (exactly)."""
        return self.read_with_digest(name, digest=False)[0]

    def read_with_digest(self, name: str, *, digest: bool = True) -> tuple[np.ndarray, str | None]:
        """:meth:`read`, and the sha256 of the tensor's stored bytes (hashed as read)."""
        entry = self._entry(name)
        offset, length = self.byte_range(name)
        buf = _read_buffer(length)
        with self._lock:
            if self._fh is None:
                self._fh = _open(self.path)
            self._fh.seek(offset)
            got = self._fh.readinto(buf) if length else 0
        if got != length:
            raise CheckpointError(f"{self.path}: truncated while reading tensor {name!r} "
                                  f"({got} of {length} bytes)")
        hexdigest = hashlib.sha256(buf).hexdigest() if digest else None
        return decode(buf, entry["dtype"], entry["shape"]), hexdigest

    def close(self) -> None:
        """Close the file handle (reopened on the next read); free this thread's buffer."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
        _READ_BUFFER.__dict__.pop("buf", None)

    def __enter__(self) -> SafetensorsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SafetensorsStore:
    """All tensors of a (possibly sharded) safetensors checkpoint, by name.

    Parameters
    ----------
    files
        The ``.safetensors`` files. When several files hold the same name the first wins
        only if ``weight_map`` says so; without a ``weight_map`` duplicate names are an
        error.
    weight_map
        Optional name -> file mapping from ``model.safetensors.index.json``; every file
        it names must be among ``files`` and must contain the tensor.

    Examples
    --------
    >>> import json, struct, tempfile, os, numpy as np
    >>> d = tempfile.mkdtemp()
    >>> def write(name, tensors):
    ...     header, blob = {}, b""
    ...     for key, arr in tensors.items():
    ...         raw = np.asarray(arr, dtype="<f4").tobytes()
    ...         header[key] = {"dtype": "F32", "shape": list(np.shape(arr)),
    ...                        "data_offsets": [len(blob), len(blob) + len(raw)]}
    ...         blob += raw
    ...     text = json.dumps(header).encode()
    ...     with open(os.path.join(d, name), "wb") as f:
    ...         _ = f.write(struct.pack("<Q", len(text)) + text + blob)
    ...     return os.path.join(d, name)
    >>> store = SafetensorsStore([write("a.safetensors", {"x": [1.0]}),
    ...                           write("b.safetensors", {"y": [2.0, 3.0]})])
    >>> sorted(store.names), store.read("y").tolist()
    (['x', 'y'], [2.0, 3.0])
    >>> store.close()
    """

    def __init__(self, files: Iterable[str | os.PathLike[str]],
                 weight_map: dict[str, str] | None = None) -> None:
        self.files = [SafetensorsFile(p) for p in files]
        by_base = {os.path.basename(f.path): f for f in self.files}
        self._where: dict[str, SafetensorsFile] = {}
        if weight_map is not None:
            for name, shard in weight_map.items():
                st = by_base.get(os.path.basename(shard))
                if st is None:
                    raise CheckpointError(f"index maps {name!r} to shard {shard!r}, which is "
                                          "not among the checkpoint files")
                if name not in st:
                    raise MissingTensorError(f"tensor {name!r} is not in {st.path} (the "
                                             "shard the index maps it to)")
                self._where[name] = st
        else:
            for st in self.files:
                for name in st.names:
                    if name in self._where:
                        raise CheckpointError(f"tensor {name!r} appears in both "
                                              f"{self._where[name].path} and {st.path}")
                    self._where[name] = st

    @property
    def names(self) -> list[str]:
        """All tensor names."""
        return list(self._where)

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def file_of(self, name: str) -> str:
        """Path of the file that holds a tensor."""
        return self._lookup(name).path

    def _lookup(self, name: str) -> SafetensorsFile:
        try:
            return self._where[name]
        except KeyError:
            where = ", ".join(os.path.basename(f.path) for f in self.files)
            raise MissingTensorError(f"tensor {name!r} is not in the checkpoint "
                                     f"({where})") from None

    def shape(self, name: str) -> tuple[int, ...]:
        """Stored shape of a tensor."""
        return self._lookup(name).shape(name)

    def dtype(self, name: str) -> str:
        """Readable dtype name of a tensor (``float32``, ``bfloat16``, ...)."""
        code = self._lookup(name).dtype(name)
        return DTYPE_NAMES.get(code, code)

    def read(self, name: str) -> np.ndarray:
        """Read one tensor as float64."""
        return self._lookup(name).read(name)

    def read_with_digest(self, name: str) -> tuple[np.ndarray, str | None]:
        """One tensor as float64 and the sha256 of its stored bytes."""
        return self._lookup(name).read_with_digest(name)

    def close(self) -> None:
        """Close every open file handle."""
        for f in self.files:
            f.close()

"""Storage precision: how far a trained weight may lie from the value the file stores.

A checkpoint stores each weight as a value of a finite grid: the floats of its dtype
(float32, bfloat16, ...) or, for llama.cpp's quantized GGUF types, the codes of a block
times the block's scale (plus an offset). :func:`half_widths` returns, for every weight
of a tensor, the **storage half-width** ``h >= 0``: every real weight that the storage
rounds to the stored value ``v`` lies in ``[v - h, v + h]``
(docs/certified.md, "Storage-precision bands"):

* floating dtypes: half the gap from ``|v|`` to the next representable magnitude, i.e.
  half an ulp (the larger of the two gaps around ``v``; ``v = 0`` gives half the
  smallest subnormal);
* uniform GGUF grids (``Q4_0, Q4_1, Q5_0, Q5_1, Q8_0``, the K-quants ``Q2_K`` to
  ``Q6_K``, ``TQ1_0``, ``TQ2_0``): half the quantization step ``d`` of the weight's
  (sub-)block, read from the block's stored scale;
* non-uniform GGUF grids (``IQ4_NL``, ``IQ4_XS``, ``MXFP4``): half the larger gap from
  the weight's grid value to its neighbouring grid values, in units of the block scale.

The steps are read through the ``gguf`` package's own dequantizer: a copy of the blocks
whose codes are all set to two adjacent values is dequantized, and the difference is the
step (so the scales are unpacked by the library that decodes the weights, not a second
time here). Vector codebooks (``IQ1_*``, ``IQ2_*``, ``IQ3_*``: lattice points of eight
weights) have no per-weight grid and are refused with
:class:`~qkforms.errors.PrecisionUnavailableError`.

*What the half-width claims.* It models the quantizer as rounding each weight to the
nearest point of its block's grid. Where the reference quantizer (ggml's
``quantize_row_*``, reimplemented by ``gguf.quants``) chooses the codes with the
unrounded scale and stores the scale (and offset) in float16 afterwards (``Q4_0`` to
``Q8_0``, ``TQ1_0``, ``TQ2_0``), the rounding of the scale and offset is added, and where
its grid clips the block's range (the short end of ``Q4_0``/``Q5_0``, the top of
``MXFP4``) the end codes get the reach of the clipped range: for every type that
``gguf.quants`` can quantize, every weight it quantizes lies within the half-width of
its stored value (``tests/models/test_models_precision.py``). For the K-quants and ``IQ4_*``
(quantized by llama.cpp's searches, which may clip a few weights) the half step is the
model. A (sub-)block whose stored step is 0 gets half-width 0.

Examples
--------
>>> import numpy as np
>>> from qkforms.models.precision import float_half_widths
>>> float_half_widths(np.array([1.0, 0.75, -3.0]), "bfloat16").tolist()
[0.00390625, 0.001953125, 0.0078125]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from qkforms.errors import PrecisionUnavailableError, format_value

__all__ = [
    "FLOAT_FORMATS",
    "GGUF_GRID_TYPES",
    "float_half_widths",
    "folded_half_widths",
    "gguf_half_widths",
    "half_widths",
    "precision_types",
    "split_half_widths",
]

#: dtype names of the backends (safetensors codes, GGUF and torch names) -> float format
FLOAT_FORMATS: dict[str, str] = {
    "F64": "float64", "float64": "float64",
    "F32": "float32", "float32": "float32",
    "F16": "float16", "float16": "float16",
    "BF16": "bfloat16", "bfloat16": "bfloat16",
    "F8_E4M3": "float8_e4m3fn", "float8_e4m3fn": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2", "float8_e5m2": "float8_e5m2",
}

#: GGUF types with a uniform grid: byte ranges of the codes, the fill byte giving the
#: lowest code in every code field and the one giving the next code
_UNIFORM: dict[str, tuple[tuple[tuple[int, int], ...], int, int]] = {
    "Q4_0": (((2, 18),), 0x00, 0x11),
    "Q4_1": (((4, 20),), 0x00, 0x11),
    "Q5_0": (((6, 22),), 0x00, 0x11),
    "Q5_1": (((8, 24),), 0x00, 0x11),
    "Q8_0": (((2, 34),), 0x00, 0x01),
    "Q2_K": (((16, 80),), 0x00, 0x55),
    "Q3_K": (((32, 96),), 0x00, 0x55),
    "Q4_K": (((16, 144),), 0x00, 0x11),
    "Q5_K": (((48, 176),), 0x00, 0x11),
    "Q6_K": (((0, 128),), 0x00, 0x11),
    "TQ2_0": (((0, 64),), 0x00, 0x55),
}
#: bytes set to a constant for the step probe (high bits: code = low bits only)
_FIXED: dict[str, tuple[tuple[int, int, int], ...]] = {
    "Q5_0": ((2, 6, 0x00),),
    "Q5_1": ((4, 8, 0x00),),
    "Q3_K": ((0, 32, 0xFF),),  # hmask bit 1: no -4 offset
    "Q5_K": ((16, 48, 0x00),),
    "Q6_K": ((128, 192, 0x00),),
}
#: Types whose quantizer (ggml's reference ``quantize_row_*``, as ``gguf.quants``
#: reimplements it) picks the codes with the unrounded block scale ``d`` (and offset
#: ``m``) and then stores them as float16: ``v = d k + m`` with ``k`` the weight's
#: multiplier; value: (``k`` of the lowest code, whether ``m`` is stored, the multiplier
#: whose weights the grid may clip, or None). For these the half-width adds the float16
#: rounding of the scale and offset, ``|k| u(d) + u(m)`` (``u`` = half an ulp), and a
#: clipped end gets a full step: Q4_0 spans ``-8 d ... 7 d`` with ``d = max/-8``, so a
#: weight near ``8 |d|`` on the short side is stored as ``7 d``.
_SCALE_ROUNDED: dict[str, tuple[int, bool, int | None]] = {
    "Q4_0": (-8, False, 7),
    "Q4_1": (0, True, None),
    "Q5_0": (-16, False, 15),
    "Q5_1": (0, True, None),
    "Q8_0": (0, False, None),
    "TQ2_0": (-1, False, None),
}
#: GGUF types with a non-uniform grid per block: (code bytes, fill byte of the code
#: whose grid value is 1, name of the gguf class whose ``kvalues`` is the grid, reach of
#: the quantizer beyond the grid's largest magnitude in grid units, or 0)
_NONUNIFORM: dict[str, tuple[tuple[int, int], int, str, float]] = {
    "IQ4_NL": ((2, 18), 0x88, "IQ4_NL", 0.0),
    "IQ4_XS": ((8, 136), 0x88, "IQ4_NL", 0.0),
    # MXFP4 scales by 2^(floor(log2 max|w|) - 3), so |w| reaches 16 units, the grid 12
    "MXFP4": ((1, 17), 0x11, "MXFP4", 4.0),
}
#: vector-codebook types (no per-weight grid): refused
_VECTOR = ("IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S")


def _tq1_steps(blocks: np.ndarray) -> np.ndarray:
    """TQ1_0: codes in {-1, 0, 1} times the float16 scale ``d`` in the last two bytes;
    ``d = max|w|`` is rounded after the codes were chosen, so ``|k| u(d) <= u(d)`` is
    added (as for :data:`_SCALE_ROUNDED`)."""
    d = np.abs(np.ascontiguousarray(blocks[:, -2:]).view(np.float16).astype(np.float64))
    return d / 2 + float_half_widths(d, "float16")


#: GGUF types whose step is read directly (base-3 packed codes cannot be probed byte-wise)
_DIRECT: dict[str, Callable[[np.ndarray], np.ndarray]] = {"TQ1_0": _tq1_steps}

#: every GGUF quantized type with a storage half-width
GGUF_GRID_TYPES: tuple[str, ...] = (*_UNIFORM, *_DIRECT, *_NONUNIFORM)


def precision_types() -> tuple[str, ...]:
    """Every dtype / ggml type name :func:`half_widths` accepts.

    Examples
    --------
    >>> {"bfloat16", "F16", "Q4_1", "Q6_K", "IQ4_NL"} <= set(precision_types())
    True
    """
    return (*FLOAT_FORMATS, *GGUF_GRID_TYPES)


def float_half_widths(values: np.ndarray, dtype: str) -> np.ndarray:
    """Half an ulp of every value of a floating dtype (float64 array, same shape).

    ``h(v) = (next(|v|) - |v|) / 2`` with ``next`` the next representable magnitude of
    the dtype; this is the larger of the two half-gaps around ``v``, so every real that
    rounds to ``v`` lies within ``h`` of it.

    Parameters
    ----------
    values
        Values exactly representable in the dtype (decoded weights).
    dtype
        A key of :data:`FLOAT_FORMATS`.

    Raises
    ------
    PrecisionUnavailableError
        For an unknown dtype.

    Examples
    --------
    >>> import numpy as np
    >>> float_half_widths(np.array([1.0, 0.0]), "float16").tolist()
    [0.00048828125, 2.9802322387695312e-08]
    """
    fmt = FLOAT_FORMATS.get(dtype)
    if fmt is None:
        raise PrecisionUnavailableError(
            f"no storage precision for dtype {format_value(dtype)}; known: "
            f"{', '.join(sorted(set(FLOAT_FORMATS.values())))}")
    mag = np.abs(np.asarray(values, dtype=np.float64))
    if fmt == "float64":
        return np.spacing(mag) / 2
    if fmt == "float32":
        return np.spacing(mag.astype(np.float32)).astype(np.float64) / 2
    if fmt == "float16":
        return np.spacing(mag.astype(np.float16)).astype(np.float64) / 2
    if fmt == "bfloat16":  # 8 of float32's 24 significand bits, same exponent range
        return np.spacing(mag.astype(np.float32)).astype(np.float64) * 2.0**15
    return _grid_half_widths(mag, _small_float_grid(fmt))


def _small_float_grid(fmt: str) -> np.ndarray:
    """The sorted nonnegative finite values of an 8-bit float format (ml_dtypes)."""
    try:
        import ml_dtypes
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise PrecisionUnavailableError(f"the precision of {fmt} needs the 'ml_dtypes' "
                                        "package (pip install ml-dtypes)") from exc
    vals = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, fmt)).astype(np.float64)
    return np.unique(np.abs(vals[np.isfinite(vals)]))


def _grid_half_widths(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Half the larger gap from each value to its neighbours in a sorted grid.

    Values outside the grid's range or between grid points are placed by ``searchsorted``
    (each decoded value is a grid point). At the ends the one neighbour counts.
    """
    idx = np.clip(np.searchsorted(grid, values), 0, grid.size - 1)
    up = grid[np.minimum(idx + 1, grid.size - 1)] - grid[idx]
    down = grid[idx] - grid[np.maximum(idx - 1, 0)]
    return np.maximum(up, down) / 2


def _probe(blocks: np.ndarray, qtype: Any, ranges: tuple[tuple[int, int], ...], fill: int,
           fixed: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """Dequantize a copy of ``blocks`` whose code bytes are all ``fill``."""
    import gguf

    probe = np.array(blocks, dtype=np.uint8, copy=True)
    for lo, hi in ranges:
        probe[:, lo:hi] = fill
    for lo, hi, value in fixed:
        probe[:, lo:hi] = value
    with np.errstate(all="ignore"):
        return np.asarray(gguf.quants.dequantize(probe, qtype), dtype=np.float64)


def gguf_half_widths(raw: np.ndarray, kind: str, values: np.ndarray) -> np.ndarray:
    """Storage half-widths of a quantized GGUF tensor, flattened in storage order.

    Parameters
    ----------
    raw
        The tensor's bytes as the GGUF reader exposes them (any shape, uint8).
    kind
        The ggml type name (``Q4_1``, ``Q6_K``, ``IQ4_NL``, ...).
    values
        The dequantized values, flattened in storage order (for the non-uniform grids).

    Returns
    -------
    ndarray
        One half-width per weight, flat, in storage order.

    Raises
    ------
    PrecisionUnavailableError
        For vector-codebook types and types without a known grid.

    Examples
    --------
    >>> import numpy as np, gguf
    >>> w = np.linspace(-1, 1, 32, dtype=np.float32)          # one Q8_0 block
    >>> raw = gguf.quants.quantize(w, gguf.GGMLQuantizationType.Q8_0)
    >>> v = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType.Q8_0)
    >>> h = gguf_half_widths(raw, "Q8_0", v)    # half the step d = 1/127, plus its rounding
    >>> bool(np.all(h >= 0.5 / 127)), bool(np.all(np.abs(w - v) <= h))
    (True, True)
    """
    import gguf

    if kind in _VECTOR:
        raise PrecisionUnavailableError(
            f"ggml type {kind} stores groups of 8 weights as points of a lattice codebook: "
            "a weight has no grid of its own, so its storage precision is not defined "
            f"(--precision-bands reads {', '.join(precision_types())})")
    if kind not in GGUF_GRID_TYPES:
        raise PrecisionUnavailableError(
            f"no storage precision for ggml type {format_value(kind)}; known: "
            f"{', '.join(precision_types())}")
    qtype = gguf.GGMLQuantizationType[kind]
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    blocks = np.asarray(raw, dtype=np.uint8).reshape(-1, size)
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if kind in _DIRECT:
        return np.repeat(_DIRECT[kind](blocks).reshape(-1), block)
    if kind in _UNIFORM:
        ranges, q0, q1 = _UNIFORM[kind]
        fixed = _FIXED.get(kind, ())
        low = _probe(blocks, qtype, ranges, q0, fixed).reshape(-1)
        d = _probe(blocks, qtype, ranges, q1, fixed).reshape(-1) - low
        h = np.abs(d) / 2
        if kind in _SCALE_ROUNDED:
            k0, has_offset, clipped = _SCALE_ROUNDED[kind]
            m = low - d * k0
            with np.errstate(divide="ignore", invalid="ignore"):
                k = np.where(d != 0, np.round((v - m) / d), 0.0)
            h = h + np.abs(k) * float_half_widths(d, "float16")
            if has_offset:
                h = h + float_half_widths(m, "float16")
            if clipped is not None:
                h = np.where(k == clipped, h + np.abs(d) / 2, h)
        return h
    rng, one, grid_of, reach = _NONUNIFORM[kind]
    scale = _probe(blocks, qtype, (rng,), one, ()).reshape(-1)
    grid = np.unique(np.asarray(getattr(gguf.quants, grid_of).kvalues, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        units = np.where(scale != 0, v / scale, 0.0)
    h = _grid_half_widths(units, grid)
    if reach:
        h = np.where(np.abs(units) >= np.abs(grid).max(), np.maximum(h, reach), h)
    return h * np.abs(scale)


def half_widths(store: Any, name: str) -> np.ndarray:
    """Storage half-widths of one tensor of a checkpoint, in the shape ``store.read`` gives.

    Parameters
    ----------
    store
        A :class:`~qkforms.models.model.TensorStore` (safetensors, GGUF or pickle).
    name
        The tensor.

    Raises
    ------
    PrecisionUnavailableError
        When the tensor's dtype has no per-weight precision (vector codebooks, integer
        dtypes).

    Examples
    --------
    >>> import qkforms.models as qm
    >>> from qkforms.models.precision import half_widths
    >>> with qm.load("minilm") as m:
    ...     name = m.tensor_names(0)["q"]
    ...     h, w = half_widths(m._store, name), m._store.read(name)
    >>> h.shape == w.shape, bool((h > 0).all()), float((h / abs(w)).max()) <= 2.0**-24
    (True, True, True)
    """
    kind = str(store.dtype(name))
    values = np.asarray(store.read(name), dtype=np.float64)
    if kind in FLOAT_FORMATS:
        return float_half_widths(values, kind)
    raw = getattr(store, "raw", None)
    if raw is None:
        raise PrecisionUnavailableError(
            f"tensor {name!r} is stored as {format_value(kind)}: no storage precision "
            f"(known: {', '.join(precision_types())})")
    # a GGUF tensor read as (out, in) is stored row-major in that order
    return gguf_half_widths(raw(name), kind, values.reshape(-1)).reshape(values.shape)


def split_half_widths(layout: Any, spec: Any, arrays: Mapping[str, np.ndarray],
                      widths: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The half-widths of a layer's ``W_Q``, ``W_K`` through the layout's cut into heads.

    The layout's :meth:`~qkforms.models.layouts.Layout.split` is run on arrays of
    entry indices; when it only rearranges entries (slicing, reshaping, transposing,
    undoing a permutation), every output entry is one input entry and takes its
    half-width. A split that computes (folding q/k norm gains) is refused.

    Parameters
    ----------
    layout, spec
        The model's layout and :class:`~qkforms.models.config.ArchSpec`.
    arrays
        The layer's tensors by role (only their shapes are used).
    widths
        Their half-widths (same shapes).

    Raises
    ------
    PrecisionUnavailableError
        When the split is not a rearrangement of entries.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.models.config import ArchSpec
    >>> from qkforms.models.layouts.opt import OPTLayout
    >>> spec = ArchSpec("opt", "opt", 1, 3, 1, 2, 2, "absolute", None, None)
    >>> hq, hk = split_half_widths(OPTLayout(), spec, {"q": np.zeros((2, 3)),
    ...     "k": np.zeros((2, 3))}, {"q": np.full((2, 3), 0.5), "k": np.full((2, 3), 0.25)})
    >>> hq.shape, float(hk.max())
    ((2, 1, 3), 0.25)
    """
    roles = list(arrays)
    sizes = [int(np.asarray(arrays[r]).size) for r in roles]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    ids = {r: (np.arange(sizes[i], dtype=np.float64) + offsets[i]).reshape(
        np.asarray(arrays[r]).shape) for i, r in enumerate(roles)}
    flat = np.concatenate([np.asarray(widths[r], dtype=np.float64).reshape(-1)
                           for r in roles]) if roles else np.zeros(0)
    qk = layout.split(spec, ids)
    out = []
    for label, arr in (("W_Q", qk.W_Q), ("W_K", qk.W_K)):
        a = np.asarray(arr, dtype=np.float64)
        idx = a.astype(np.int64)
        if not (np.array_equal(idx, a) and (idx >= 0).all() and (idx < flat.size).all()):
            raise PrecisionUnavailableError(
                f"the {layout.name!r} layout computes {label} from the stored tensors "
                "(e.g. folded q/k norm gains), so the weights' storage precision does not "
                "carry over entry by entry; --precision-bands needs a layout that only "
                "rearranges entries")
        out.append(flat[idx])
    return out[0], out[1]


def folded_half_widths(W: np.ndarray, H: np.ndarray, gamma: np.ndarray,
                       h_gamma: np.ndarray) -> np.ndarray:
    """Half-widths of the folded maps ``W diag(gamma)`` (``--fold-norm``), as computed.

    With ``|W' - W| <= H`` and ``|gamma' - gamma| <= h_gamma``,
    ``|W' gamma' - W gamma| <= H |gamma| + |W| h_gamma + H h_gamma``; the survey's folded
    weights are the float64 products, rounded once more (half an ulp of float64). The
    sum is rounded upward.

    Examples
    --------
    >>> import numpy as np
    >>> h = folded_half_widths(np.array([[2.0]]), np.array([[0.5]]), np.array([3.0]),
    ...                        np.array([0.25]))
    >>> bool(h[0, 0] >= 0.5 * 3 + 2 * 0.25 + 0.5 * 0.25)
    True
    """
    g = np.abs(np.asarray(gamma, dtype=np.float64))
    hg = np.asarray(h_gamma, dtype=np.float64)
    Wa, Ha = np.abs(np.asarray(W, dtype=np.float64)), np.asarray(H, dtype=np.float64)
    with np.errstate(over="ignore"):
        total = Ha * g + Wa * hg + Ha * hg + float_half_widths(Wa * g, "float64")
        return np.nextafter(total * (1.0 + 2.0**-50), np.inf)

"""Input validation shared by the float core (internal)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.errors import NonFiniteError, ShapeError


def as_float_array(x: ArrayLike, name: str, *, min_ndim: int = 0) -> NDArray[np.float64]:
    """Return ``x`` as a float64 array, refusing NaN/Inf and too few dimensions."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim < min_ndim:
        raise ShapeError(
            f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}"
        )
    if arr.size and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))
        raise NonFiniteError(
            f"{name} contains {len(bad)} non-finite value(s) (NaN or Inf); "
            f"first at index {tuple(int(i) for i in bad[0])}"
        )
    return arr


def as_square(x: ArrayLike, name: str = "L") -> NDArray[np.float64]:
    """Return ``x`` as a float64 array of shape (..., N, N) with N >= 1."""
    arr = as_float_array(x, name, min_ndim=2)
    if arr.shape[-1] != arr.shape[-2] or arr.shape[-1] == 0:
        raise ShapeError(f"{name} must be a non-empty square matrix, got shape {arr.shape}")
    return arr

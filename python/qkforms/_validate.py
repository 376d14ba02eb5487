"""Input validation shared by the float core (internal)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.errors import NonFiniteError, ParameterError, ShapeError, format_value


def as_real_array(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """Return ``x`` as a float64 array; a value that is not real numbers is a ParameterError.

    NaN and infinities pass (callers that refuse them check themselves).

    Examples
    --------
    >>> as_real_array([1, 2], "t").tolist()
    [1.0, 2.0]
    >>> as_real_array("x", "t")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    qkforms.errors.ParameterError: t must be real numbers, got 'x' (could not convert ...)
    """
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:  # numpy's conversion errors, re-raised as ours
        raise ParameterError(
            f"{name} must be real numbers, got {format_value(x)} ({exc})"
        ) from None


def as_float_array(x: ArrayLike, name: str, *, min_ndim: int = 0) -> NDArray[np.float64]:
    """Return ``x`` as a float64 array, refusing NaN/Inf and too few dimensions."""
    arr = as_real_array(x, name)
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

"""Input validation shared by the float core (internal)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.errors import NonFiniteError, NotRealError, ShapeError


def as_float_array(x: ArrayLike, name: str, *, min_ndim: int = 0,
                   finite: bool = True) -> NDArray[np.float64]:
    """Return ``x`` as a float64 array, refusing what is not a finite real array.

    Refused (each with a :class:`~qkforms.errors.QKFormsError` naming ``name``):
    complex values (numpy would drop the imaginary part with only a warning), strings
    (numpy would parse numeric strings), non-numeric objects, masked arrays with masked
    entries (numpy would use the hidden values), NaN/inf (unless ``finite=False``, for
    the arguments where they mean something, e.g. ``rho = inf``), too few dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> as_float_array([1, 2.5], "x").tolist()
    [1.0, 2.5]
    >>> try:
    ...     as_float_array(np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "L")
    ... except NotRealError as exc:
    ...     print(str(exc).split(";")[0])
    L is a masked array with 1 masked entry
    """
    if isinstance(x, np.ma.MaskedArray):
        masked = int(np.ma.count_masked(x))
        if masked:
            raise NotRealError(f"{name} is a masked array with {masked} masked "
                               f"entr{'y' if masked == 1 else 'ies'}; qkforms would read the "
                               "values under the mask: fill them (x.filled(...)) or drop them")
        x = np.ma.getdata(x)
    try:
        raw = np.asarray(x)
    except ValueError as exc:  # ragged nested lists: numpy's "inhomogeneous shape"
        raise ShapeError(f"{name} is a ragged nested sequence (rows of different lengths), "
                         f"not an array: {exc}") from None
    kind = raw.dtype.kind
    if kind == "O":
        where = next((i for i, v in np.ndenumerate(raw) if v is None), None)
        if where is not None:
            raise NotRealError(f"{name} has a None (missing) entry at index "
                               f"{tuple(int(i) for i in where)}; fill it with a number")
    if kind in "USV" or kind == "O" and any(
            isinstance(v, str | bytes | complex | np.complexfloating) for v in raw.flat):
        raise NotRealError(f"{name} must be a real numeric array, got dtype {raw.dtype} "
                           "(strings, bytes or complex values)")
    if kind == "c":
        raise NotRealError(f"{name} must be real, got complex dtype {raw.dtype}: the forms "
                           "of qkforms are real bilinear forms (pass x.real if the imaginary "
                           "part is zero)")
    if kind == "M" or kind == "m":
        raise NotRealError(f"{name} must be a real numeric array, got dtype {raw.dtype}")
    try:
        with np.errstate(over="ignore"):
            arr = np.asarray(raw, dtype=np.float64)
    except OverflowError:  # a Python int or Fraction beyond float64
        raise NonFiniteError(f"{name} has an entry beyond the float64 range "
                             "(|x| > 1.8e308): qkforms computes in float64") from None
    except (TypeError, ValueError) as exc:
        raise NotRealError(f"{name} must be a real numeric array ({exc})") from None
    if kind == "f" and raw.dtype.itemsize > 8 and arr.size:
        over = np.isfinite(raw) & ~np.isfinite(arr)  # extended precision beyond float64
        if over.any():
            at = tuple(int(i) for i in np.argwhere(over)[0])
            raise NonFiniteError(f"{name} has an entry beyond the float64 range (|x| > "
                                 f"1.8e308) at index {at} (dtype {raw.dtype}): qkforms "
                                 "computes in float64")
    if arr.ndim < min_ndim:
        raise ShapeError(
            f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}"
        )
    if finite and arr.size and not np.isfinite(arr).all():
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

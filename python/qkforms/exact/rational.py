"""Exact rational conversions: floats, fractions, sympy and flint matrices.

Every float64 is a dyadic rational, so a float array can be turned into rationals
*exactly* (``Fraction(0.1)`` is ``3602879701896397/36028797018963968``, not ``1/10``).
This module does those conversions, and scales whole arrays to integer matrices with
a common power-of-two (floats) or least common (fractions) denominator, which is what
the fast flint routines (``fmpz_mat``) want.

No floating-point arithmetic happens on converted values: a float is only
decomposed into its integer mantissa and binary exponent with :func:`numpy.frexp`,
which is exact.

Examples
--------
>>> from fractions import Fraction
>>> to_fraction(0.5), to_fraction("3/4"), to_fraction(Fraction(1, 3))
(Fraction(1, 2), Fraction(3, 4), Fraction(1, 3))
>>> Z, scale = scaled_integer_matrix([[0.5, 0.25], [1.0, -2.0]])
>>> Z.tolist(), scale
([[2, 1], [4, -8]], Fraction(1, 4))
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import flint
import numpy as np

from qkforms.errors import (
    NonFiniteError,
    NotSymmetricError,
    QKFormsError,
    ShapeError,
    format_value,
)

__all__ = [
    "NotRationalError",
    "to_fraction",
    "fraction_matrix",
    "to_fmpq_mat",
    "to_sympy_matrix",
    "scaled_integer_matrix",
    "is_symmetric",
    "require_symmetric",
    "float_array_to_integer_array",
    "frob_sq",
    "matrix_shape",
    "modular_image",
    "stacked_matrix",
]

#: Anything that :func:`fraction_matrix` accepts.
MatrixLike = Any


class NotRationalError(QKFormsError, TypeError):
    """An entry that must be rational (int, Fraction, float, sympy Rational) is not."""


def to_fraction(x: Any) -> Fraction:
    """Convert one scalar to an exact :class:`fractions.Fraction`.

    Floats (Python or numpy) are converted exactly (their dyadic value), never
    rounded to a "nice" decimal. Strings are parsed by ``Fraction``.

    Parameters
    ----------
    x
        int, bool, Fraction, float, numpy integer/float, sympy Rational, flint
        ``fmpz``/``fmpq``, or a string such as ``"3/4"``.

    Returns
    -------
    Fraction

    Raises
    ------
    NonFiniteError
        For NaN or infinite floats.
    NotRationalError
        For values with no exact rational value (e.g. sympy ``sqrt(2)``, complex).

    Examples
    --------
    >>> to_fraction(0.1) == Fraction(1, 10)
    False
    >>> to_fraction(0.1) == Fraction(3602879701896397, 36028797018963968)
    True
    >>> import sympy
    >>> to_fraction(sympy.Rational(-2, 6))
    Fraction(-1, 3)
    """
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (bool, int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, np.floating) and x.dtype.itemsize > 8 and np.isfinite(x):
        num, den = x.as_integer_ratio()  # extended precision: its exact value, not float's
        return Fraction(int(num), int(den))
    if isinstance(x, (float, np.floating)):
        xf = float(x)
        if not math.isfinite(xf):
            raise NonFiniteError(f"cannot convert non-finite value {xf!r} to a rational")
        return Fraction(xf)
    if isinstance(x, flint.fmpz):
        return Fraction(int(x))
    if isinstance(x, flint.fmpq):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, str):
        try:
            return Fraction(x)
        except (ValueError, ZeroDivisionError):
            raise NotRationalError(f"entry {format_value(x)} is text that is not a rational "
                                   "number (e.g. '3/4' or '0.25')") from None
    # sympy numbers, without importing sympy unless it is already in use
    is_rational = getattr(x, "is_Rational", None)
    if is_rational is True:
        return Fraction(int(x.p), int(x.q))
    if is_rational is False and getattr(x, "is_Float", False):
        return to_fraction(float(x)) if x == float(x) else Fraction(str(x))
    raise NotRationalError(
        f"entry {format_value(x)} of type {type(x).__name__} has no exact rational value; "
        "pass ints, Fractions, floats or sympy Rationals"
    )


def matrix_shape(A: MatrixLike) -> tuple[int, int]:
    """Return ``(rows, cols)`` of a matrix-like object (2-D only).

    Examples
    --------
    >>> matrix_shape([[1, 2, 3], [4, 5, 6]])
    (2, 3)
    """
    if isinstance(A, (flint.fmpq_mat, flint.fmpz_mat)):
        return A.nrows(), A.ncols()
    shape = getattr(A, "shape", None)
    if shape is not None:
        if len(shape) != 2:
            raise ShapeError(f"expected a 2-D matrix, got shape {tuple(shape)}")
        return int(shape[0]), int(shape[1])
    rows = list(A)
    if not rows:
        return 0, 0
    lengths = {len(r) for r in rows}
    if len(lengths) != 1:
        raise ShapeError(f"ragged nested list: row lengths {sorted(lengths)}")
    return len(rows), lengths.pop()


def fraction_matrix(A: MatrixLike) -> list[list[Fraction]]:
    """Convert a 2-D matrix-like object to a list of rows of Fractions, exactly.

    Accepts nested lists, numpy arrays (int, float, object), sympy matrices and
    flint ``fmpz_mat`` / ``fmpq_mat``.

    Examples
    --------
    >>> fraction_matrix([[1, 0.5], ["1/3", 2]])
    [[Fraction(1, 1), Fraction(1, 2)], [Fraction(1, 3), Fraction(2, 1)]]
    """
    r, c = matrix_shape(A)
    if isinstance(A, flint.fmpz_mat):
        return [[Fraction(int(A[i, j])) for j in range(c)] for i in range(r)]
    if isinstance(A, flint.fmpq_mat):
        return [[to_fraction(A[i, j]) for j in range(c)] for i in range(r)]
    if isinstance(A, np.ndarray):
        return [[to_fraction(v) for v in row] for row in A.tolist()]
    if hasattr(A, "tolist") and not isinstance(A, list):  # sympy Matrix
        return [[to_fraction(v) for v in row] for row in A.tolist()]
    return [[to_fraction(v) for v in row] for row in A]


def _dyadic_parts(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Exact ``A = odd * 2**(shift + emin)`` entrywise, ``odd`` int64, ``shift >= 0``."""
    if not np.all(np.isfinite(A)):
        raise NonFiniteError("matrix contains NaN or infinite entries")
    mant, expo = np.frexp(A)  # A = mant * 2**expo, 0.5 <= |mant| < 1 (exact)
    ints = (mant * 2.0**53).astype(np.int64)  # exact: 53-bit significands
    expo = expo.astype(np.int64) - 53
    nz = ints != 0
    if not np.any(nz):
        zero = np.zeros(A.shape, dtype=np.int64)
        return zero, zero, 0
    # strip trailing zero bits, so float32/bf16-born data stays small: the lowest set
    # bit of |m| is |m| & -|m|, a power of two <= 2^53, whose log2 is exact in float64
    absint = np.abs(ints)
    lowbit = np.where(nz, absint & -absint, 1)
    tz = np.log2(lowbit.astype(np.float64)).astype(np.int64)
    odd = np.where(nz, ints >> tz, 0)
    low = expo + tz
    emin = int(low[nz].min())
    shift = np.where(nz, low - emin, 0)
    return odd, shift, emin


def float_array_to_integer_array(A: np.ndarray) -> tuple[np.ndarray, Fraction]:
    """Exact ``A = scale * Z`` for a finite float array, ``scale`` a power of two.

    ``Z`` has the shape of ``A``: an int64 array when every entry fits in 62 bits
    (float16/bf16/float32/quantized data usually does), else an object array of Python
    ints.

    Raises
    ------
    NonFiniteError
        For NaN or infinite entries.

    Examples
    --------
    >>> Z, s = float_array_to_integer_array(np.array([[0.5, -0.75]]))
    >>> Z.tolist(), Z.dtype.name, s
    ([[2, -3]], 'int64', Fraction(1, 4))
    """
    odd, shift, emin = _dyadic_parts(A)
    bits = np.zeros(odd.shape, dtype=np.int64)
    nz = odd != 0
    if np.any(nz):
        bits[nz] = np.floor(np.log2(np.abs(odd[nz]).astype(np.float64))).astype(np.int64) + 1
    if int((bits + shift).max(initial=0)) < 62:
        Z = odd << shift
    else:
        Z = np.empty(odd.shape, dtype=object)
        Z.ravel()[:] = [o << s for o, s in zip(odd.ravel().tolist(), shift.ravel().tolist(),
                                                strict=True)]
    return Z, Fraction(2) ** emin


def _float_array_to_integers(A: np.ndarray) -> tuple[list[int], Fraction]:
    """Exact ``A = scale * Z`` for a finite float array, ``scale`` a power of two (flat list)."""
    Z, scale = float_array_to_integer_array(A)
    return Z.ravel().tolist(), scale


def modular_image(A: MatrixLike, p: int) -> flint.nmod_mat:
    """The integer matrix ``Z`` of :func:`scaled_integer_matrix`, reduced modulo ``p``.

    For float arrays this never builds big integers (residues are computed with
    int64 arithmetic), so it is fast; ``p`` must be below ``2**31``.

    Examples
    --------
    >>> modular_image([[0.5, 0.75]], 7).tolist()
    [[2, 3]]
    """
    if isinstance(A, np.ndarray) and A.dtype.kind == "f" and p < 2**31:
        if A.ndim != 2:
            raise ShapeError(f"expected a 2-D matrix, got shape {A.shape}")
        odd, shift, _ = _dyadic_parts(A.astype(np.float64, copy=False))
        values, inverse = np.unique(shift, return_inverse=True)
        table = np.array([pow(2, int(v), p) for v in values], dtype=np.int64)
        res = (np.mod(odd, p) * table[inverse.reshape(shift.shape)]) % p
        r, c = A.shape
        return flint.nmod_mat(r, c, res.ravel().tolist(), p)
    Z, _ = scaled_integer_matrix(A)
    return flint.nmod_mat(Z, p)


def scaled_integer_matrix(A: MatrixLike) -> tuple[flint.fmpz_mat, Fraction]:
    """Write a rational matrix exactly as ``A = scale * Z`` with ``Z`` an integer matrix.

    For float input ``scale`` is a power of two (common binary exponent); for
    rational input it is ``1 / lcm(denominators)`` (times nothing else). ``scale`` is
    always positive, so ``Z`` and ``A`` have the same sign pattern and the same
    eigenvalue signs.

    Returns
    -------
    (Z, scale)
        ``Z`` a ``flint.fmpz_mat``, ``scale`` a positive Fraction.

    Examples
    --------
    >>> Z, s = scaled_integer_matrix([["1/2", "1/3"]])
    >>> Z.tolist(), s
    ([[3, 2]], Fraction(1, 6))
    """
    if isinstance(A, flint.fmpz_mat):
        return A, Fraction(1)
    if isinstance(A, np.ndarray) and A.dtype.kind == "f":
        if A.ndim != 2:
            raise ShapeError(f"expected a 2-D matrix, got shape {A.shape}")
        flat, scale = _float_array_to_integers(A.astype(np.float64, copy=False))
        r, c = A.shape
        return flint.fmpz_mat(r, c, flat), scale
    if isinstance(A, np.ndarray) and A.dtype.kind in "iub":
        r, c = matrix_shape(A)
        return flint.fmpz_mat(r, c, [int(v) for v in A.ravel().tolist()]), Fraction(1)
    F = fraction_matrix(A)
    r, c = len(F), (len(F[0]) if F else 0)
    den = 1
    for row in F:
        for v in row:
            den = math.lcm(den, v.denominator)
    flat = [int(v * den) for row in F for v in row]
    return flint.fmpz_mat(r, c, flat), Fraction(1, den)


def to_fmpq_mat(A: MatrixLike) -> flint.fmpq_mat:
    """Convert a matrix-like object to ``flint.fmpq_mat`` exactly.

    Examples
    --------
    >>> to_fmpq_mat([[0.5, 1], [0, "2/3"]]).tolist()
    [[1/2, 1], [0, 2/3]]
    """
    if isinstance(A, flint.fmpq_mat):
        return A
    Z, scale = scaled_integer_matrix(A)
    return flint.fmpq_mat(Z) * flint.fmpq(scale.numerator, scale.denominator)


def to_sympy_matrix(A: MatrixLike) -> Any:
    """Convert to a ``sympy.Matrix`` of Rationals (exactly).

    Examples
    --------
    >>> to_sympy_matrix([[0.5, 1]])
    Matrix([[1/2, 1]])
    """
    import sympy

    F = fraction_matrix(A)
    return sympy.Matrix([[sympy.Rational(v.numerator, v.denominator) for v in row] for row in F])


def is_symmetric(A: MatrixLike) -> bool:
    """Exact test ``A == A^T`` (square and entrywise equal).

    Examples
    --------
    >>> is_symmetric([[1, 2], [2, 1]]), is_symmetric([[1, 2], [3, 1]])
    (True, False)
    """
    r, c = matrix_shape(A)
    if r != c:
        return False
    Q = to_fmpq_mat(A)
    return Q == Q.transpose()


def require_symmetric(A: MatrixLike, what: str = "matrix") -> flint.fmpq_mat:
    """Return ``A`` as ``fmpq_mat``, raising if it is not square and exactly symmetric.

    Raises
    ------
    ShapeError
        If ``A`` is not square.
    NotSymmetricError
        If ``A != A^T`` exactly (the first offending entry is named).

    Examples
    --------
    >>> require_symmetric([[1, 2], [2, 0]]).tolist()
    [[1, 2], [2, 0]]
    """
    r, c = matrix_shape(A)
    if r != c:
        raise ShapeError(f"{what} must be square, got shape ({r}, {c})")
    Q = to_fmpq_mat(A)
    for i in range(r):
        for j in range(i + 1, r):
            if Q[i, j] != Q[j, i]:
                raise NotSymmetricError(
                    f"{what} is not symmetric: entry ({i}, {j}) = {Q[i, j]} but "
                    f"({j}, {i}) = {Q[j, i]}"
                )
    return Q


def frob_sq(A: MatrixLike) -> Fraction:
    """Exact squared Frobenius norm ``sum_ij A_ij^2``.

    Examples
    --------
    >>> frob_sq([[1, 2], [0, "1/2"]])
    Fraction(21, 4)
    """
    Z, scale = scaled_integer_matrix(A)
    total = sum(int(v) ** 2 for v in Z.entries())
    return Fraction(total) * scale * scale


def _as_weight(W: Any, name: str) -> Any:
    if isinstance(W, np.ndarray):
        if W.ndim != 2:
            raise ShapeError(f"{name} must be a 2-D (n, N) matrix, got shape {W.shape}")
        if W.dtype.kind == "f":
            return W.astype(np.float64, copy=False)
        if W.dtype.kind in "iub":
            return W
    return fraction_matrix(W)


def stacked_matrix(W_Q: MatrixLike, W_K: MatrixLike) -> Any:
    """The stacked matrix ``M = [W_K; W_Q]`` (``2n x N``), in an exact-convertible form.

    Float arrays stay float (converted exactly downstream); anything else becomes
    a list of rows of Fractions.

    Raises
    ------
    ShapeError
        If the shapes differ or are not 2-D.

    Examples
    --------
    >>> stacked_matrix([[1, 2]], [[3, 4]])
    [[Fraction(3, 1), Fraction(4, 1)], [Fraction(1, 1), Fraction(2, 1)]]
    """
    Q = _as_weight(W_Q, "W_Q")
    K = _as_weight(W_K, "W_K")
    sq, sk = matrix_shape(Q), matrix_shape(K)
    if sq != sk:
        raise ShapeError(f"W_Q and W_K must have the same shape (n, N), got {sq} and {sk}")
    if isinstance(Q, np.ndarray) and isinstance(K, np.ndarray):
        if Q.dtype.kind == "f" or K.dtype.kind == "f":
            return np.vstack([K.astype(np.float64), Q.astype(np.float64)])
        return np.vstack([K, Q])
    Qf = Q if isinstance(Q, list) else fraction_matrix(Q)
    Kf = K if isinstance(K, list) else fraction_matrix(K)
    return Kf + Qf

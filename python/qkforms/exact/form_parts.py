"""Exact symmetric/antisymmetric parts and energies (Lemma 5) over the rationals.

Examples
--------
>>> S, T = parts([[1, 2], [0, 3]])
>>> S.tolist(), T.tolist()
([[1, 1], [1, 3]], [[0, 1], [-1, 0]])
>>> [str(x) for x in energies([[1, 2], [0, 3]])]
['14', '12', '2', '10']
"""

from __future__ import annotations

from fractions import Fraction

import flint

from qkforms.errors import ShapeError
from qkforms.exact.rational import MatrixLike, matrix_shape, to_fmpq_mat
from qkforms.form_parts import Energies

__all__ = ["parts", "energies", "frobenius_inner", "trace", "as_fraction"]

_HALF = flint.fmpq(1, 2)


def as_fraction(x: flint.fmpq | flint.fmpz | int | Fraction) -> Fraction:
    """Convert a flint scalar to ``Fraction``.

    Examples
    --------
    >>> as_fraction(flint.fmpq(3, 6))
    Fraction(1, 2)
    """
    if isinstance(x, flint.fmpq):
        return Fraction(int(x.p), int(x.q))
    return Fraction(int(x)) if not isinstance(x, Fraction) else x


def _square(L: MatrixLike) -> flint.fmpq_mat:
    r, c = matrix_shape(L)
    if r != c:
        raise ShapeError(f"L must be square, got shape ({r}, {c})")
    return to_fmpq_mat(L)


def parts(L: MatrixLike) -> tuple[flint.fmpq_mat, flint.fmpq_mat]:
    """Exact ``S = (L + L^T)/2`` and ``T = (L - L^T)/2`` as ``fmpq_mat``.

    Examples
    --------
    >>> S, T = parts([[0, 1], [0, 0]])
    >>> S.tolist(), T.tolist()
    ([[0, 1/2], [1/2, 0]], [[0, 1/2], [-1/2, 0]])
    """
    Lq = _square(L)
    Lt = Lq.transpose()
    return (Lq + Lt) * _HALF, (Lq - Lt) * _HALF


def frobenius_inner(A: MatrixLike, B: MatrixLike) -> Fraction:
    """Exact ``<A, B>_F = tr(A^T B) = sum_ij A_ij B_ij``.

    Examples
    --------
    >>> frobenius_inner([[1, 2]], [[3, "1/2"]])
    Fraction(4, 1)
    """
    Aq, Bq = to_fmpq_mat(A), to_fmpq_mat(B)
    if (Aq.nrows(), Aq.ncols()) != (Bq.nrows(), Bq.ncols()):
        raise ShapeError("frobenius_inner needs matrices of the same shape")
    pairs = zip(Aq.entries(), Bq.entries(), strict=True)
    return as_fraction(sum((a * b for a, b in pairs), flint.fmpq(0)))


def trace(A: MatrixLike) -> Fraction:
    """Exact trace of a square rational matrix.

    Examples
    --------
    >>> trace([[1, 5], [7, "1/2"]])
    Fraction(3, 2)
    """
    Aq = _square(A)
    return as_fraction(sum((Aq[i, i] for i in range(Aq.nrows())), flint.fmpq(0)))


def energies(L: MatrixLike) -> Energies[Fraction]:
    """Exact ``Energies(norm_sq, sym_sq, skew_sq, trace_sq)`` with Fraction fields.

    Each field is computed from its own definition (sums of squared entries of
    ``L``, ``S``, ``T``, and ``tr(L L)``), never from Lemma 5, so the identities of
    Lemma 5 can be checked on the result.

    Examples
    --------
    >>> e = energies([[0, 1], [-1, 0]])
    >>> (e.norm_sq, e.sym_sq, e.skew_sq, e.trace_sq)
    (Fraction(2, 1), Fraction(0, 1), Fraction(2, 1), Fraction(-2, 1))
    """
    Lq = _square(L)
    S, T = parts(Lq)
    return Energies(
        frobenius_inner(Lq, Lq),
        frobenius_inner(S, S),
        frobenius_inner(T, T),
        trace(Lq * Lq),
    )

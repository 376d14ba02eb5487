"""Symmetric and antisymmetric parts of a bilinear form, and their energies (Lemma 5).

For ``L`` in ``M_N(R)``: ``S = (L + L^T)/2``, ``T = (L - L^T)/2``, and (Lemma 5)
``|L|^2 = |S|^2 + |T|^2``, ``|S|^2 = (|L|^2 + tr L^2)/2``, ``|T|^2 = (|L|^2 - tr L^2)/2``,
all norms Frobenius. Functions accept stacks of matrices (leading axes are batch axes).
"""

from __future__ import annotations

from typing import Any, Generic, NamedTuple, TypeAlias, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms._validate import as_square

__all__ = ["Energies", "energies", "energies_from_norm_and_trace", "parts"]


def _transpose(a: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.swapaxes(a, -1, -2)


def parts(L: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return the symmetric and antisymmetric parts ``(S, T)`` of ``L``.

    Parameters
    ----------
    L : array_like, shape (..., N, N)
        A square matrix (or a stack of them), the Gram matrix of a bilinear form.

    Returns
    -------
    S, T : ndarray
        ``S = (L + L^T)/2`` (symmetric) and ``T = (L - L^T)/2`` (antisymmetric);
        ``S + T == L``.

    Raises
    ------
    ShapeError
        If ``L`` is not square.
    NonFiniteError
        If ``L`` contains NaN or Inf.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import parts
    >>> S, T = parts(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> S
    array([[1., 1.],
           [1., 3.]])
    >>> T
    array([[ 0.,  1.],
           [-1.,  0.]])
    """
    arr = as_square(L)
    tr = _transpose(arr)
    # halves first: no overflow for entries near the float64 limit, same bits otherwise
    half, half_tr = 0.5 * arr, 0.5 * tr
    return half + half_tr, half - half_tr


#: The number type of the fields of :class:`Energies`.
E = TypeVar("E")


class Energies(NamedTuple, Generic[E]):
    """Squared Frobenius norms of ``L``, ``S``, ``T`` and the trace of ``L^2``.

    Generic over the number type: floats (one matrix) or arrays (a stack) in the float
    core (:data:`FloatEnergies`), Fractions in :mod:`qkforms.exact`, balls in the
    certified enclosures.
    """

    norm_sq: E
    sym_sq: E
    skew_sq: E
    trace_sq: E


#: Energies of the float core: floats for one matrix, arrays over the leading axes.
FloatEnergies: TypeAlias = Energies[float | NDArray[np.float64]]


def energies_from_norm_and_trace(norm_sq: Any, trace_sq: Any) -> Energies[Any]:
    """Lemma 5: ``Energies`` from ``|L|^2`` and ``tr(L^2)``; generic over the number type.

    ``|S|^2 = (|L|^2 + tr L^2)/2`` and ``|T|^2 = (|L|^2 - tr L^2)/2`` (division by 2 is
    exact for floats and Fractions; pass Fractions, not ints, for exact values). Used by
    the float Gram route (:func:`qkforms.head.head_energies`) and, with exact rationals,
    by the certified enclosures (:mod:`qkforms.exact.verified_spectrum`).

    Examples
    --------
    >>> from fractions import Fraction
    >>> [str(v) for v in energies_from_norm_and_trace(Fraction(14), Fraction(10))]
    ['14', '12', '2', '10']
    """
    # generic over the number backend (float, ndarray, Fraction, ball): typed Any
    return Energies(norm_sq, (norm_sq + trace_sq) / 2, (norm_sq - trace_sq) / 2, trace_sq)


def energies(L: ArrayLike) -> FloatEnergies:
    """Return ``Energies(norm_sq, sym_sq, skew_sq, trace_sq)`` of ``L`` (Lemma 5).

    ``norm_sq = |L|^2`` (sum of squared entries), ``sym_sq = |S|^2``,
    ``skew_sq = |T|^2`` and ``trace_sq = tr(L^2) = <L, L^T>_F``. Lemma 5 says
    ``norm_sq = sym_sq + skew_sq`` and ``sym_sq - skew_sq = trace_sq``.

    Parameters
    ----------
    L : array_like, shape (..., N, N)

    Returns
    -------
    Energies
        Floats for one matrix, arrays over the leading axes for a stack.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import energies
    >>> e = energies(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> e
    Energies(norm_sq=14.0, sym_sq=12.0, skew_sq=2.0, trace_sq=10.0)
    >>> e.sym_sq + e.skew_sq == e.norm_sq
    True
    """
    arr = as_square(L)
    S, T = parts(arr)
    out = (
        np.sum(arr * arr, axis=(-2, -1)),
        np.sum(S * S, axis=(-2, -1)),
        np.sum(T * T, axis=(-2, -1)),
        np.sum(arr * _transpose(arr), axis=(-2, -1)),
    )
    if arr.ndim == 2:
        return Energies(*(float(v) for v in out))
    return Energies(*out)

"""Signature ``(n_+, n_-, n_0)`` of a symmetric form, counted with a relative zero threshold.

``docs/theory.md`` §3.1: an eigenvalue ``lam`` counts as zero when ``|lam| <= tol * max|lam|``.
Defaults (:mod:`qkforms.tolerances`): ``DENSE_TOL`` for dense N x N spectra
(:func:`signature`), ``REDUCED_TOL`` for the reduced 2n x 2n spectra of heads
(:meth:`qkforms.Head.signature`). For an
exact count with no threshold at all use :func:`qkforms.exact.signature`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from qkforms._validate import as_float_array
from qkforms.errors import ParameterError, format_value
from qkforms.parts import parts
from qkforms.tolerances import DENSE_TOL, REDUCED_TOL

__all__ = ["DENSE_TOL", "REDUCED_TOL", "Signature", "count_signs", "signature"]


class Signature(NamedTuple):
    """Numbers of positive, negative and zero eigenvalues, with multiplicity."""

    n_pos: int
    n_neg: int
    n_zero: int


def count_signs(eigvals: ArrayLike, *, tol: float = DENSE_TOL) -> Signature:
    """Count positive, negative and zero values among eigenvalues.

    Parameters
    ----------
    eigvals : array_like, shape (..., k)
        Real eigenvalues (a stack of spectra along leading axes is allowed).
    tol : float
        Relative threshold: ``lam`` is zero when ``|lam| <= tol * max|lam|``
        (per spectrum). An all-zero spectrum counts as ``k`` zeros.

    Returns
    -------
    Signature
        Python ints for one spectrum; integer arrays for a stack.

    Examples
    --------
    >>> from qkforms import count_signs
    >>> count_signs([3.0, -2.0, 1e-12, 0.0])
    Signature(n_pos=1, n_neg=1, n_zero=2)
    >>> count_signs([[1.0, -1.0], [2.0, 2.0]]).n_pos
    array([1, 2])
    """
    lam = as_float_array(eigvals, "eigvals", min_ndim=1)
    if tol < 0:
        raise ParameterError(f"tol must be >= 0, got {format_value(tol)}")
    scale = np.max(np.abs(lam), axis=-1, keepdims=True) if lam.shape[-1] else np.zeros(1)
    cut = tol * scale
    pos = np.sum(lam > cut, axis=-1)
    neg = np.sum(lam < -cut, axis=-1)
    zero = lam.shape[-1] - pos - neg
    if lam.ndim == 1:
        return Signature(int(pos), int(neg), int(zero))
    return Signature(pos, neg, zero)


def signature(L: ArrayLike, *, tol: float = DENSE_TOL) -> Signature:
    """Return the signature of the symmetric part of a square matrix.

    For a symmetric ``L`` this is the signature of ``L`` itself. Uses a dense
    symmetric eigensolver (O(N^3)); for heads prefer :meth:`qkforms.Head.signature`,
    which never forms an N x N matrix.

    Parameters
    ----------
    L : array_like, shape (N, N)
    tol : float
        Relative zero threshold, see :func:`count_signs`.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import signature
    >>> signature(np.diag([2.0, -1.0, 0.0]))
    Signature(n_pos=1, n_neg=1, n_zero=1)
    >>> signature(np.array([[0.0, 1.0], [0.0, 0.0]]))  # S = [[0, 1/2], [1/2, 0]]
    Signature(n_pos=1, n_neg=1, n_zero=0)
    """
    S, _ = parts(L)
    # the signature is scale invariant: a power-of-two scale (exact) keeps the
    # eigenvalues of entries near the float64 limit from overflowing
    with np.errstate(invalid="ignore"):
        m = np.max(np.abs(S), axis=(-2, -1), keepdims=True) if S.size else np.ones(1)
    _, e = np.frexp(np.where(m > 0, m, 1.0))
    return count_signs(np.linalg.eigvalsh(np.ldexp(S, -e)), tol=tol)

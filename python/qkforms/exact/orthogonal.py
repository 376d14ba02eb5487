"""Rational orthogonal matrices (Cayley transform) and exact eigenbases.

The Cayley transform ``U = (I - A)(I + A)^{-1}`` of a rational skew-symmetric ``A``
is a rational orthogonal matrix (``I + A`` is invertible because the eigenvalues of
``A`` are imaginary). Rational orthogonal matrices let us build symmetric matrices
with a prescribed rational spectrum, ``U^T diag(lambda) U``, whose profiles are then
known exactly. Conversely, :func:`orthogonal_eigenbasis` recovers, for a rational
symmetric matrix whose characteristic polynomial splits over ``Q``, an orthogonal
(unnormalized, rational) eigenbasis; rank-one projectors ``v v^T / (v^T v)`` are
rational, so spectral constructions (e.g. the ``H + P`` split of Theorem 4) stay exact.

Examples
--------
>>> U = cayley_orthogonal([[0, 1], [-1, 0]])
>>> U.tolist()
[[0, -1], [1, 0]]
>>> (U.transpose() * U).tolist()
[[1, 0], [0, 1]]
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import numpy as np

from qkforms.errors import QKFormsError, ShapeError
from qkforms.exact.form_signature import charpoly
from qkforms.exact.rational import MatrixLike, matrix_shape, require_symmetric, to_fmpq_mat

__all__ = [
    "IrrationalSpectrumError",
    "cayley_orthogonal",
    "is_orthogonal",
    "random_skew",
    "random_orthogonal",
    "rational_spectrum",
    "orthogonal_eigenbasis",
    "line_projector",
]


class IrrationalSpectrumError(QKFormsError, ValueError):
    """A symmetric matrix has eigenvalues that are not rational."""


def _identity(n: int) -> flint.fmpq_mat:
    return flint.fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])


def cayley_orthogonal(A: MatrixLike) -> flint.fmpq_mat:
    """Rational orthogonal matrix ``(I - A)(I + A)^{-1}`` from a rational skew ``A``.

    Parameters
    ----------
    A
        Square skew-symmetric rational matrix (``A^T = -A`` exactly).

    Returns
    -------
    flint.fmpq_mat
        ``U`` with ``U^T U = I`` exactly and ``det U = 1``.

    Raises
    ------
    ShapeError
        If ``A`` is not square.
    QKFormsError
        If ``A`` is not skew-symmetric.

    Examples
    --------
    >>> U = cayley_orthogonal([[0, "1/2"], ["-1/2", 0]])
    >>> U.tolist()
    [[3/5, -4/5], [4/5, 3/5]]
    """
    r, c = matrix_shape(A)
    if r != c:
        raise ShapeError(f"A must be square, got shape ({r}, {c})")
    Aq = to_fmpq_mat(A)
    if Aq.transpose() != -Aq:
        raise QKFormsError("cayley_orthogonal needs a skew-symmetric A (A^T = -A)")
    eye = _identity(r)
    return (eye - Aq) * (eye + Aq).inv()


def is_orthogonal(U: MatrixLike) -> bool:
    """Exact test ``U^T U = I``.

    Examples
    --------
    >>> is_orthogonal([[0, 1], [1, 0]]), is_orthogonal([[1, 1], [0, 1]])
    (True, False)
    """
    r, c = matrix_shape(U)
    if r != c:
        return False
    Uq = to_fmpq_mat(U)
    return Uq.transpose() * Uq == _identity(r)


def random_skew(N: int, rng: np.random.Generator, height: int = 3) -> flint.fmpq_mat:
    """Random integer skew-symmetric ``N x N`` matrix, entries in ``[-height, height]``.

    Examples
    --------
    >>> A = random_skew(3, np.random.default_rng(0))
    >>> A.transpose() == -A
    True
    """
    B = rng.integers(-height, height + 1, size=(N, N))
    A = np.triu(B, 1)
    A = A - A.T
    return flint.fmpq_mat(N, N, [int(v) for v in A.ravel()])


def random_orthogonal(N: int, rng: np.random.Generator, height: int = 2) -> flint.fmpq_mat:
    """Random rational orthogonal matrix: Cayley transform times random signs.

    The sign flips reach orthogonal matrices with eigenvalue ``-1`` (including
    ``det = -1``), which the Cayley transform alone never produces.

    Examples
    --------
    >>> U = random_orthogonal(4, np.random.default_rng(1))
    >>> is_orthogonal(U)
    True
    """
    U = cayley_orthogonal(random_skew(N, rng, height))
    signs = rng.choice([-1, 1], size=N)
    D = flint.fmpq_mat(N, N, [int(signs[i]) if i == j else 0 for i in range(N) for j in range(N)])
    return U * D


def rational_spectrum(S: MatrixLike) -> list[Fraction]:
    """Eigenvalues (with multiplicity, decreasing) of a rational symmetric matrix.

    Raises
    ------
    IrrationalSpectrumError
        If the characteristic polynomial does not split into linear factors over Q.
    NotSymmetricError
        If ``S`` is not symmetric.

    Examples
    --------
    >>> rational_spectrum([[2, 1], [1, 2]])
    [Fraction(3, 1), Fraction(1, 1)]
    """
    require_symmetric(S, "S")
    p = charpoly(S)
    if p.degree() <= 0:
        return []
    _, factors = p.factor()
    eigs: list[Fraction] = []
    for f, mult in factors:
        if f.degree() != 1:
            raise IrrationalSpectrumError(
                f"the characteristic polynomial has the irreducible factor {f} of degree "
                f"{f.degree()}: the spectrum is not rational"
            )
        c0, c1 = f.coeffs()
        root = -c0 / c1
        eigs.extend([Fraction(int(root.p), int(root.q))] * int(mult))
    return sorted(eigs, reverse=True)


def _nullspace(A: flint.fmpq_mat) -> list[list[Fraction]]:
    """Rational basis of ``ker A`` (columns returned as lists)."""
    den = math.lcm(1, *(int(v.q) for v in A.entries()))
    Z = flint.fmpz_mat(A.nrows(), A.ncols(), [int(v * den) for v in A.entries()])
    X, nullity = Z.nullspace()
    return [[Fraction(int(X[i, j])) for i in range(X.nrows())] for j in range(int(nullity))]


def orthogonal_eigenbasis(S: MatrixLike) -> list[tuple[Fraction, list[Fraction]]]:
    """Rational orthogonal eigenbasis of a symmetric matrix with rational spectrum.

    Returns pairs ``(eigenvalue, v)``, one per eigenvalue counted with multiplicity,
    sorted by decreasing eigenvalue; the vectors are pairwise orthogonal and
    rational but **not normalized** (normalizing would need square roots). Inside
    an eigenspace the basis comes from Gram-Schmidt without normalization.

    Examples
    --------
    >>> basis = orthogonal_eigenbasis([[0, 1], [1, 0]])
    >>> [(str(lam), [str(x) for x in v]) for lam, v in basis]
    [('1', ['1', '1']), ('-1', ['1', '-1'])]
    """
    Sq = require_symmetric(S, "S")
    N = Sq.nrows()
    spectrum = rational_spectrum(Sq)
    out: list[tuple[Fraction, list[Fraction]]] = []
    eye = _identity(N)
    for lam in sorted(set(spectrum), reverse=True):
        shifted = Sq - eye * flint.fmpq(lam.numerator, lam.denominator)
        basis = _nullspace(shifted)
        ortho: list[list[Fraction]] = []
        for v in basis:
            w = list(v)
            for u in ortho:
                coef = _dot(w, u) / _dot(u, u)
                w = [wi - coef * ui for wi, ui in zip(w, u, strict=True)]
            ortho.append(w)
        out.extend((lam, w) for w in ortho)
    return out


def _dot(x: list[Fraction], y: list[Fraction]) -> Fraction:
    return sum((a * b for a, b in zip(x, y, strict=True)), Fraction(0))


def line_projector(v: list[Fraction]) -> flint.fmpq_mat:
    """Orthogonal projector ``v v^T / (v^T v)`` onto the line of a nonzero rational ``v``.

    Examples
    --------
    >>> line_projector([Fraction(1), Fraction(1)]).tolist()
    [[1/2, 1/2], [1/2, 1/2]]
    """
    nsq = _dot(v, v)
    if nsq == 0:
        raise QKFormsError("line_projector needs a nonzero vector")
    n = len(v)
    vals = [v[i] * v[j] / nsq for i in range(n) for j in range(n)]
    return flint.fmpq_mat(n, n, [flint.fmpq(x.numerator, x.denominator) for x in vals])

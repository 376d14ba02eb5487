"""Exact signatures (inertia) of symmetric forms and of attention heads.

Everything here is integer/rational arithmetic with python-flint; no floating point
touches a value. The inertia of a rational symmetric matrix is read off its
characteristic polynomial by Descartes' rule of signs (exact for real-rooted
polynomials, see :mod:`qkforms.exact.polynomial`).

For a head ``(W_Q, W_K)`` (each ``n x N``) the symmetric form is
``S = sym(W_K^T W_Q) = 1/2 M^T J M`` with ``M = [W_K; W_Q]`` and
``J = [[0, I_n], [I_n, 0]]`` (Lemma 10). Two exact routes avoid the ``N x N``
characteristic polynomial:

* **Gram route (Lemma 10).** ``charpoly(S) = x^(N-2n) charpoly(1/2 J G)`` with
  ``G = M M^T`` (``2n x 2n``), by ``det(xI - AB) x^(2n) = det(xI - BA) x^N`` for
  ``A = M^T``, ``B = 1/2 J M``. ``1/2 J G`` is not symmetric, but its eigenvalues are
  eigenvalues of ``S`` (or 0), hence real, so Descartes is exact on it.
* **Congruence route (Sylvester).** ``S`` is the pull-back ``M^* (1/2 J)`` of the form
  ``1/2 J`` on ``R^(2n)`` along ``M : R^N -> R^(2n)``. *Lemma:* for a symmetric form
  ``B`` on ``V`` and a linear map ``P : U -> V``, ``n_+(P^*B) = n_+(B|im P)`` and
  ``n_-(P^*B) = n_-(B|im P)``. *Proof:* ``ker P`` lies in the radical of ``P^*B``;
  choosing a complement ``U'`` of ``ker P``, ``P`` maps ``U'`` isomorphically onto
  ``im P`` and carries ``P^*B|U'`` to ``B|im P`` (an isometry), while the radical
  direction ``ker P`` only adds zero eigenvalues (Sylvester's law of inertia: the
  inertia of ``U' (+) ker P`` is that of ``U'`` plus ``dim ker P`` zeros). Hence, if
  ``M`` is surjective, ``n_+(S) = n_+(J) = n`` and ``n_-(S) = n_-(J) = n``, and
  ``n_0 = N - 2n``; in general the inertia is that of ``J`` restricted to ``im M`` (of
  the live pair, after dropping dead dimensions), computed exactly in
  :mod:`qkforms.exact.inertia`. Surjectivity is certified
  exactly: the rank of ``M`` modulo a prime is a lower bound of its rank over ``Q``
  (a nonzero ``2n``-minor mod ``p`` is nonzero over ``Z``), with an exact flint rank
  as fallback.

Examples
--------
>>> signature([[2, 1], [1, 2]])
Signature(n_pos=2, n_neg=0, n_zero=0)
>>> head_signature([[1, 0, 0]], [[0, 1, 0]])          # n = 1, N = 3
Signature(n_pos=1, n_neg=1, n_zero=1)
"""

from __future__ import annotations

from typing import Any, Literal

import flint
import numpy as np

from qkforms.errors import ParameterError, ShapeError, format_value
from qkforms.exact.inertia import head_inertia
from qkforms.exact.polynomial import descartes_counts
from qkforms.exact.rational import (
    MatrixLike,
    matrix_shape,
    modular_image,
    require_symmetric,
    scaled_integer_matrix,
    stacked_matrix,
    to_fmpq_mat,
)

try:  # the float core's NamedTuple, shared so that results compare equal
    from qkforms.form_signature import Signature
except ImportError:  # pragma: no cover - only while the float core is absent
    from typing import NamedTuple

    class Signature(NamedTuple):  # type: ignore[no-redef]
        """Inertia ``(n_pos, n_neg, n_zero)`` of a symmetric form."""

        n_pos: int
        n_neg: int
        n_zero: int


__all__ = [
    "Signature",
    "charpoly",
    "signature",
    "rank",
    "stacked_matrix",
    "stacked_is_surjective",
    "symmetric_head_form",
    "gram_operator",
    "head_signature",
]

#: Primes below 2**31 used for modular rank certificates.
_PRIMES = (2147483647, 2147483629, 2147483587)


def charpoly(A: MatrixLike) -> flint.fmpq_poly:
    """Exact characteristic polynomial ``det(xI - A)`` of a rational square matrix.

    Examples
    --------
    >>> charpoly([[0, 1], [1, 0]])
    x^2 + (-1)
    """
    r, c = matrix_shape(A)
    if r != c:
        raise ShapeError(f"charpoly needs a square matrix, got shape ({r}, {c})")
    Z, scale = scaled_integer_matrix(A)
    pz = Z.charpoly()  # det(xI - Z); A = s Z so det(xI - A) = s^r det(x/s I - Z)
    s = flint.fmpq(scale.numerator, scale.denominator)
    coeffs = [flint.fmpq(int(cf)) for cf in pz.coeffs()]
    return flint.fmpq_poly([cf * s ** (r - k) for k, cf in enumerate(coeffs)])


def _integer_signature(Z: flint.fmpz_mat) -> tuple[int, int, int]:
    """Descartes counts of ``charpoly(Z)``; exact when ``Z`` has real eigenvalues."""
    if Z.nrows() == 0:
        return 0, 0, 0
    return descartes_counts([int(v) for v in Z.charpoly().coeffs()])


def signature(S: MatrixLike) -> Signature:
    """Exact inertia ``(n_pos, n_neg, n_zero)`` of a rational symmetric matrix.

    Computed from the integer characteristic polynomial of a positive multiple of
    ``S`` by Descartes' rule of signs (exact: a symmetric matrix has only real
    eigenvalues). Floats are converted exactly.

    Parameters
    ----------
    S
        Square symmetric matrix: sympy ``Matrix``, nested list / numpy array of
        ints, Fractions or floats, or a flint matrix.

    Raises
    ------
    ShapeError
        If ``S`` is not square.
    NotSymmetricError
        If ``S`` is not exactly symmetric.

    Examples
    --------
    >>> signature([[0, 1], [1, 0]])
    Signature(n_pos=1, n_neg=1, n_zero=0)
    >>> import sympy
    >>> signature(sympy.Matrix([[1, 1, 0], [1, 1, 0], [0, 0, -3]]))
    Signature(n_pos=1, n_neg=1, n_zero=1)
    """
    require_symmetric(S, "S")
    Z, _ = scaled_integer_matrix(S)
    return Signature(*_integer_signature(Z))


def _integer_rank(Z: flint.fmpz_mat) -> int:
    r, c = Z.nrows(), Z.ncols()
    if r == 0 or c == 0:
        return 0
    # rank(A) = rank(A A^T) over the reals; flint is much faster on square input
    G = Z * Z.transpose() if r <= c else Z.transpose() * Z
    return int(G.rank())


def rank(A: MatrixLike) -> int:
    """Exact rank over ``Q`` of a rational matrix (floats converted exactly).

    Examples
    --------
    >>> rank([[1, 2, 3], [2, 4, 6]])
    1
    >>> rank([[0.5, 0.0], [0.0, 1e-300]])
    2
    """
    Z, _ = scaled_integer_matrix(A)
    return _integer_rank(Z)


def stacked_is_surjective(W_Q: MatrixLike, W_K: MatrixLike) -> bool:
    """Exact test that ``M = [W_K; W_Q]`` has rank ``2n`` (the head is nondegenerate).

    A modular rank equal to ``2n`` (of a few columns first, then of all of ``M``) is a
    proof: the rank of a column submatrix modulo a prime is a lower bound of the
    rank of ``M`` over ``Q``. Otherwise the exact rational rank decides.

    Examples
    --------
    >>> stacked_is_surjective([[1, 0, 0]], [[0, 1, 0]])
    True
    >>> stacked_is_surjective([[1, 2, 3]], [[2, 4, 6]])   # W_K = 2 W_Q
    False
    """
    M = stacked_matrix(W_Q, W_K)
    two_n, N = matrix_shape(M)
    if two_n == 0:
        return True
    if N < two_n:
        return False
    if isinstance(M, np.ndarray) and N > two_n + 16:
        # a column submatrix of full row rank mod p already certifies rank 2n
        cols = np.linspace(0, N - 1, two_n + 16).round().astype(int)
        if modular_image(M[:, cols], _PRIMES[0]).rank() == two_n:
            return True
    for p in _PRIMES[:2]:
        if modular_image(M, p).rank() == two_n:
            return True
    return rank(M) == two_n


def symmetric_head_form(W_Q: MatrixLike, W_K: MatrixLike) -> flint.fmpq_mat:
    """Exact ``S = 1/2 (W_K^T W_Q + W_Q^T W_K)`` (``N x N``), the symmetric part of L.

    Examples
    --------
    >>> symmetric_head_form([[1, 0]], [[0, 1]]).tolist()
    [[0, 1/2], [1/2, 0]]
    """
    M = to_fmpq_mat(stacked_matrix(W_Q, W_K))
    n = M.nrows() // 2
    N = M.ncols()
    K = flint.fmpq_mat(n, N, [M[i, j] for i in range(n) for j in range(N)])
    Q = flint.fmpq_mat(n, N, [M[n + i, j] for i in range(n) for j in range(N)])
    L = K.transpose() * Q
    return (L + L.transpose()) * flint.fmpq(1, 2)


def _integer_gram(M: Any) -> tuple[flint.fmpz_mat, int]:
    Z, _ = scaled_integer_matrix(M)
    return Z * Z.transpose(), Z.nrows() // 2


def _swap_halves(G: flint.fmpz_mat, n: int) -> flint.fmpz_mat:
    """``J G``: swap the two block rows."""
    rows = G.tolist()
    return flint.fmpz_mat(rows[n:] + rows[:n])


def gram_operator(W_Q: MatrixLike, W_K: MatrixLike) -> flint.fmpq_mat:
    """Exact ``1/2 J G`` with ``G = M M^T``, ``M = [W_K; W_Q]`` (Lemma 10, ``2n x 2n``).

    Examples
    --------
    >>> gram_operator([[1, 0]], [[0, 1]]).tolist()
    [[0, 1/2], [1/2, 0]]
    """
    M = to_fmpq_mat(stacked_matrix(W_Q, W_K))
    G = M * M.transpose()
    n = M.nrows() // 2
    rows = G.tolist()
    return flint.fmpq_mat(rows[n:] + rows[:n]) * flint.fmpq(1, 2)


def head_signature(
    W_Q: MatrixLike,
    W_K: MatrixLike,
    *,
    method: Literal["auto", "congruence", "charpoly", "dense"] = "auto",
) -> Signature:
    """Exact signature on ``R^N`` of ``S = sym(W_K^T W_Q)`` for one head, of any rank.

    Parameters
    ----------
    W_Q, W_K
        Query and key weights, each ``n x N`` (floats are converted exactly, as
        are Fractions, ints, sympy Rationals).
    method
        ``"auto"`` or ``"congruence"`` (Sylvester, :func:`qkforms.exact.head_inertia`:
        dead dimensions dropped, a certified rank of the live pair -- Theorem 3's
        certificate when it is onto -- and otherwise the exact inertia of the form ``J``
        restricted to the image of the live pair; seconds per head at
        ``(N, n) = (640, 256)`` even for rank-deficient heads), ``"charpoly"`` (Lemma 10:
        Descartes on ``charpoly(J G)``, ``2n x 2n``; slow for large degenerate heads),
        ``"dense"`` (Descartes on the ``N x N`` characteristic polynomial of ``S``; for
        small ``N`` and tests).

    Returns
    -------
    Signature
        ``(n_pos, n_neg, n_zero)`` with ``n_pos + n_neg + n_zero = N``.

    Examples
    --------
    >>> W_Q = [[1, 0, 0, 0], [0, 1, 0, 0]]
    >>> W_K = [[0, 0, 1, 0], [0, 0, 0, 1]]
    >>> head_signature(W_Q, W_K)
    Signature(n_pos=2, n_neg=2, n_zero=0)
    >>> head_signature(W_Q, W_Q, method="charpoly")       # W_K = W_Q: S is PSD
    Signature(n_pos=2, n_neg=0, n_zero=2)
    """
    if method in ("auto", "congruence"):
        return head_inertia(W_Q, W_K).signature
    M = stacked_matrix(W_Q, W_K)
    _, N = matrix_shape(M)
    if method == "charpoly":
        G, n = _integer_gram(M)
        n_pos, n_neg, _ = _integer_signature(_swap_halves(G, n))
        return Signature(n_pos, n_neg, N - n_pos - n_neg)
    if method == "dense":
        S = symmetric_head_form(W_Q, W_K)
        return signature(S)
    raise ParameterError(
        f"unknown method {format_value(method)}; use 'auto', 'congruence', 'charpoly' or 'dense'"
    )

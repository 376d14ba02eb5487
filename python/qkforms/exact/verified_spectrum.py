"""Verified enclosures of the nonzero spectrum of a head's symmetric form (Lemma 10).

For a head ``(W_Q, W_K)`` (each ``n x N``, the weights as stored, i.e. exact dyadic
rationals after decoding) let ``M = [W_K; W_Q]``, ``G = M M^T`` and
``J = [[0, I_n], [I_n, 0]]``. By Lemma 10 the characteristic polynomials satisfy
``charpoly(S) = x^(N - 2n) charpoly(J G / 2)``, so the ``2n`` eigenvalues of ``J G / 2``
are the nonzero eigenvalues of ``S = sym(W_K^T W_Q)`` padded with zeros.
:func:`enclose_spectrum` returns ``2n`` Arb balls, the k-th containing the k-th largest
of them. Nothing is assumed of the floating-point steps: they only produce an
approximation, which the ball computations then certify. The theorems, in order
(docs/certified.md has the proofs):

1. *Exact Gram blocks.* ``W_K = u Z_K``, ``W_Q = u Z_Q`` with integer ``Z_K, Z_Q`` and
   ``u`` a power of two (:func:`qkforms.exact.rational.float_array_to_integer_array`);
   the ``n x n`` blocks ``Z_K Z_K^T``, ``Z_Q Z_Q^T``, ``Z_Q Z_K^T`` of
   ``G = u^2 [Z_K; Z_Q][Z_K; Z_Q]^T`` are computed exactly with ``fmpz_mat`` products
   (and give the exact energies of Lemma 5).
2. *Congruence of the pencil.* If ``G`` is positive definite, the eigenvalues of
   ``J G / 2`` are those of the symmetric-definite pencil ``(A, B) = (G J G / 2, G)``
   (``B^{-1} A = J G / 2``), and for every nonsingular ``X`` also those of
   ``(X^T A X, X^T B X)`` (``(X^T B X)^{-1} X^T A X = X^{-1} B^{-1} A X``).
   ``X`` is an approximate matrix of generalized eigenvectors from float64
   (Cholesky ``G ~ F F^T``, eigenvectors ``V`` of ``F^T J F / 2``, ``X = F^{-T} V``).
3. *Ball products.* ``Y = G X`` (by block rows ``Y_K, Y_Q``), ``B^ = X^T Y`` and
   ``A^ = Y^T J Y / 2 = (Y_K^T Y_Q + Y_Q^T Y_K) / 2`` are computed in Arb ball
   arithmetic (at :data:`qkforms.exact.balls.PREC` bits) from the exact blocks and the
   float64 entries of ``X`` (exact binary numbers), so each ball contains the exact
   entry.
4. *Norm bounds.* With ``D = diag(mid A^_kk)``, ``E_A = A^ - D`` and ``E_B = B^ - I``,
   ``||E||_2^2 = lambda_max(E^T E) <= tr(E^T E)`` (Frobenius) gives
   ``eps >= ||E_A||_2`` and ``beta >= ||E_B||_2``.
5. *Definiteness.* If ``beta < 1`` the eigenvalues of ``B^`` lie in
   ``[1 - beta, 1 + beta]`` (Weyl), so ``B^ = X^T G X`` is positive definite: ``X`` is
   nonsingular, ``G`` is positive definite and ``M`` has rank ``2n`` (the hypothesis
   of Lemma 10 and of Theorem 3 is certified on the way).
6. *Ostrowski.* The pencil's eigenvalues are those of ``C = B^{-1/2} A^ B^{-1/2}`` and
   ``lambda_k(C) = theta_k lambda_k(A^)`` with
   ``theta_k in [lambda_min(B^{-1}), lambda_max(B^{-1})] in [1/(1 + beta), 1/(1 - beta)]``
   (Ostrowski's theorem, Horn & Johnson, *Matrix Analysis*, 2nd ed., Thm. 4.5.9; the
   same index ``k`` on both sides, eigenvalues sorted).
7. *Weyl.* ``|lambda_k(A^) - d_(k)| <= ||E_A||_2 <= eps`` with ``d_(k)`` the k-th largest
   diagonal entry of ``D`` (Weyl's inequalities, Horn & Johnson, Thm. 4.3.1).

Hence the k-th largest eigenvalue of ``J G / 2`` lies in
``[1/(1 + beta), 1/(1 - beta)] * [d_(k) - eps, d_(k) + eps]`` (an interval product),
whatever the clustering of the spectrum: no eigenvector is certified, only sorted
eigenvalues, index by index. Widths are about ``eps + beta |d_(k)|``, i.e. a few units
of ``1e-15 ||S||`` on well-conditioned heads.

If the float steps fail (Cholesky breaks down: ``M`` is not of full rank or very
ill-conditioned) or ``beta >= 1``, the fallback isolates the real roots of the exact
integer characteristic polynomial of ``J G / u^2`` with Arb
(``fmpz_poly.complex_roots``: rigorous isolation of every root with its
multiplicity); it is independent of the steps above, slower (about 0.5 s per head at
``n = 64``), tighter, and handles degenerate heads (zero eigenvalues) as well.

Examples
--------
>>> import numpy as np
>>> from qkforms.exact.verified_spectrum import enclose_spectrum
>>> W_Q = np.array([[1.0, 0.0, 0.0]]); W_K = np.array([[0.0, 1.0, 0.0]])
>>> enc = enclose_spectrum(W_Q, W_K)          # S has eigenvalues 1/2, -1/2 and 0
>>> enc.method, [iv.contains(v) for iv, v in zip(enc.intervals(), (0.5, -0.5))]
('rump', [True, True])
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint
import numpy as np
from numpy.typing import NDArray

from qkforms.errors import NonFiniteError, ParameterError, QKFormsError, ShapeError, format_value
from qkforms.exact.balls import PREC, Interval, ball, exact_fraction, to_interval, working_precision
from qkforms.exact.rational import (
    float_array_to_integer_array,
    fraction_matrix,
    matrix_shape,
    scaled_integer_matrix,
)
from qkforms.form_parts import Energies, energies_from_norm_and_trace

__all__ = [
    "ExactGram",
    "SpectrumEnclosure",
    "enclose_spectrum",
    "exact_gram",
    "gram_spectrum_enclosure",
    "layer_exact_grams",
]

#: Methods of :class:`SpectrumEnclosure`.
METHODS = ("rump", "charpoly")


@dataclass(frozen=True)
class ExactGram:
    """The exact Gram blocks of one head, in integer units.

    ``W_K = u Z_K`` and ``W_Q = u Z_Q`` exactly, with ``Z_K, Z_Q`` integer matrices and
    ``u`` a positive rational (a power of two for float weights); the Gram matrix of
    ``M = [W_K; W_Q]`` is ``G = u^2 [[KK, QK^T], [QK, QQ]]``.

    Attributes
    ----------
    n, N : int
    KK, QQ, QK : flint.fmpz_mat
        ``Z_K Z_K^T``, ``Z_Q Z_Q^T`` and ``Z_Q Z_K^T`` (``n x n``), exact.
    unit : Fraction
        ``u``.
    approx : ndarray
        Shape ``(2n, N)``: float64 approximation of ``[Z_K; Z_Q] / 2**shift`` (entries
        of modulus <= 1), used only to compute approximate eigenvectors.
    shift : int
    """

    n: int
    N: int
    KK: flint.fmpz_mat
    QQ: flint.fmpz_mat
    QK: flint.fmpz_mat
    unit: Fraction
    approx: np.ndarray
    shift: int

    def energies(self) -> Energies[Fraction]:
        """Exact Lemma 5 energies of ``L = W_K^T W_Q`` (Fractions, units of the weights).

        ``|L|^2 = <W_K W_K^T, W_Q W_Q^T>_F = tr(KK QQ) u^4`` and
        ``tr(L^2) = tr((W_Q W_K^T)^2) = tr(QK QK) u^4``.

        Examples
        --------
        >>> from qkforms.exact.verified_spectrum import exact_gram
        >>> exact_gram([[1.0, 0.5]], [[0.0, 2.0]]).energies().norm_sq   # L = [[0,0],[2,1]]
        Fraction(5, 1)
        """
        u4 = self.unit**4
        return energies_from_norm_and_trace(Fraction(_trace(self.KK * self.QQ)) * u4,
                                            Fraction(_trace(self.QK * self.QK)) * u4)

    def gram(self) -> flint.fmpz_mat:
        """``[[KK, QK^T], [QK, QQ]] = [Z_K; Z_Q][Z_K; Z_Q]^T`` (``2n x 2n``, exact).

        Examples
        --------
        >>> from qkforms.exact.verified_spectrum import exact_gram
        >>> exact_gram([[1, 2, 0]], [[0, 1, 0]]).gram().tolist()
        [[1, 2], [2, 5]]
        """
        return _blocks(self.KK, self.QK.transpose(), self.QK, self.QQ)

    def j_gram(self) -> flint.fmpz_mat:
        """``J G / u^2 = [[QK, QQ], [KK, QK^T]]`` (the rows of :meth:`gram` swapped).

        Examples
        --------
        >>> from qkforms.exact.verified_spectrum import exact_gram
        >>> exact_gram([[1, 0, 0]], [[0, 1, 0]]).j_gram().tolist()
        [[0, 1], [1, 0]]
        """
        return _blocks(self.QK, self.QQ, self.KK, self.QK.transpose())


def _blocks(A: flint.fmpz_mat, B: flint.fmpz_mat, C: flint.fmpz_mat,
            D: flint.fmpz_mat) -> flint.fmpz_mat:
    top = [ra + rb for ra, rb in zip(A.tolist(), B.tolist(), strict=True)]
    bottom = [rc + rd for rc, rd in zip(C.tolist(), D.tolist(), strict=True)]
    return flint.fmpz_mat(top + bottom)


def _trace(A: flint.fmpz_mat) -> int:
    return int(sum((A[i, i] for i in range(A.nrows())), flint.fmpz(0)))


def _fmpz(Z: np.ndarray) -> flint.fmpz_mat:
    r, c = Z.shape
    return flint.fmpz_mat(r, c, Z.ravel().tolist())


def _integer_blocks(blocks: Sequence[Any]) -> tuple[np.ndarray, Fraction, np.ndarray]:
    """Stack 2-D blocks (same shape) as ``u Z`` exactly; also a float64 copy.

    Returns ``Z`` (int64 or object array, shape (blocks, n, N)), ``u`` and the float64
    stack (exact for float input).
    """
    if all(isinstance(b, np.ndarray) and b.dtype.kind == "f" for b in blocks):
        stacked = np.stack([np.asarray(b, dtype=np.float64) for b in blocks])
        if not np.all(np.isfinite(stacked)):
            raise NonFiniteError("W_Q or W_K contains NaN or infinite entries")
        Z, unit = float_array_to_integer_array(stacked)
        return Z, unit, stacked
    rows = [fraction_matrix(b) for b in blocks]
    flat = [v for block in rows for row in block for v in row]
    Zm, unit = scaled_integer_matrix([flat])
    shape = (len(rows), len(rows[0]), len(rows[0][0]) if rows[0] else 0)
    Z = np.empty(shape, dtype=object)
    Z.ravel()[:] = [int(v) for v in Zm.entries()]
    approx = np.array([float(v) for v in flat], dtype=np.float64).reshape(shape)
    return Z, unit, approx


def _as_blocks(W: Any, name: str) -> list[Any]:
    """A list of 2-D ``(n, N)`` blocks from an (h, n, N) array or a single (n, N) matrix."""
    if isinstance(W, np.ndarray):
        if W.ndim == 3:
            return [W[i] for i in range(W.shape[0])]
        if W.ndim == 2:
            return [W]
        raise ShapeError(f"{name} must have shape (n, N) or (heads, n, N), got {W.shape}")
    if isinstance(W, (flint.fmpq_mat, flint.fmpz_mat)):
        return [W]
    if np.asarray(W, dtype=object).ndim != 2:
        raise ShapeError(f"{name} must be a 2-D (n, N) matrix")
    return [W]


def layer_exact_grams(
    W_Q: Any, W_K: Any, kv_index: Sequence[int] | NDArray[np.integer[Any]] | None = None
) -> list[ExactGram]:
    """Exact Gram blocks of every query head of a layer (key heads shared, GQA).

    All heads of the layer share one unit ``u``; ``Z_K Z_K^T`` is computed once per key
    head. Cost: three ``n x N x n`` integer products per query head.

    Parameters
    ----------
    W_Q, W_K : array or matrix
        ``W_Q`` of shape ``(n_q, n, N)`` and ``W_K`` of shape ``(n_kv, n, N)``, or one
        ``(n, N)`` matrix each. Floats (converted exactly) or, for single matrices, anything
        :func:`qkforms.exact.rational.fraction_matrix` accepts.
    kv_index : sequence of int, optional
        Key head of each query head (default: ``0`` for all when ``n_kv == 1``,
        else ``h``).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.exact.verified_spectrum import layer_exact_grams
    >>> rng = np.random.default_rng(0)
    >>> grams = layer_exact_grams(rng.standard_normal((2, 1, 4)), rng.standard_normal((1, 1, 4)))
    >>> len(grams), grams[0].gram().nrows()
    (2, 2)
    """
    qs = _as_blocks(W_Q, "W_Q")
    ks = _as_blocks(W_K, "W_K")
    shapes = {matrix_shape(b) for b in qs + ks}
    if len(shapes) != 1:
        raise ShapeError(f"all W_Q and W_K heads must have the same shape (n, N), got {shapes}")
    n, N = shapes.pop()
    if n == 0 or N == 0:
        raise ShapeError(f"a head needs n >= 1 and N >= 1, got shape {(n, N)}")
    if kv_index is None:
        kv_index = [0] * len(qs) if len(ks) == 1 else list(range(len(qs)))
    kv = [int(g) for g in kv_index]
    if len(kv) != len(qs) or any(not 0 <= g < len(ks) for g in kv):
        raise ShapeError(f"kv_index must give a key head in [0, {len(ks)}) for each of "
                         f"the {len(qs)} query heads, got {kv}")
    Z, unit, approx = _integer_blocks(ks + qs)
    # rescale the float approximation to entries of modulus <= 1, exactly by 2**-shift
    zmax = int(np.max(np.abs(Z))) if Z.size else 0
    shift = max(zmax.bit_length(), 1)
    approx = approx * float(Fraction(1) / unit / 2**shift)
    ZK = [_fmpz(Z[g]) for g in range(len(ks))]
    ZKt = [z.transpose() for z in ZK]
    KK = [z * zt for z, zt in zip(ZK, ZKt, strict=True)]
    out = []
    for h, g in enumerate(kv):
        ZQ = _fmpz(Z[len(ks) + h])
        out.append(ExactGram(
            n=n, N=N, KK=KK[g], QQ=ZQ * ZQ.transpose(), QK=ZQ * ZKt[g], unit=unit,
            approx=np.concatenate([approx[g], approx[len(ks) + h]]), shift=shift,
        ))
    return out


def exact_gram(W_Q: Any, W_K: Any) -> ExactGram:
    """Exact Gram blocks of one head (see :func:`layer_exact_grams`).

    Examples
    --------
    >>> from qkforms.exact.verified_spectrum import exact_gram
    >>> g = exact_gram([[1, 0, 0]], [[0, 1, 0]])
    >>> g.KK.tolist(), g.QQ.tolist(), g.QK.tolist(), g.unit
    ([[1]], [[1]], [[0]], Fraction(1, 1))
    """
    return layer_exact_grams(W_Q, W_K, [0])[0]


@dataclass(frozen=True)
class SpectrumEnclosure:
    """Balls containing the sorted eigenvalues of ``J G / 2`` (Lemma 10).

    Attributes
    ----------
    balls : tuple of flint.arb
        Decreasing order; ball k contains the k-th largest eigenvalue of ``J G' / 2``
        where ``G' = G_true / scale`` (a power-of-two rescaling; the profile does not
        see it).
    scale : Fraction
        True eigenvalues are ``scale`` times the values in ``balls``.
    method : {"rump", "charpoly"}
    beta, eps : float or None
        The bounds of the "rump" method (``||X^T G' X - I||_2 <= beta``,
        ``||A^ - D||_2 <= eps``); None for "charpoly".
    full_rank : bool or None
        True when the certificate proves that ``M`` has rank ``2n`` ("rump" always
        does); None when not established.
    """

    balls: tuple[flint.arb, ...]
    scale: Fraction
    method: str
    beta: float | None
    eps: float | None
    full_rank: bool | None

    def intervals(self) -> list[Interval]:
        """The eigenvalues of ``J G / 2`` in true units, as float intervals (decreasing).

        Examples
        --------
        >>> from qkforms.exact.verified_spectrum import enclose_spectrum
        >>> [iv.contains(v) for iv, v in zip(
        ...     enclose_spectrum([[2.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]).intervals(), (1, -1))]
        [True, True]
        """
        with working_precision():
            s = ball(self.scale)
            return [to_interval(b * s) for b in self.balls]


def _sorted_exact(values: Sequence[flint.arb]) -> list[flint.arb]:
    """Exact balls (radius 0) sorted decreasingly; comparisons of exact balls are exact."""
    if any(v.rad() != 0 for v in values):
        # error-contract: internal invariant of this private helper (callers pass the
        # exact balls they built); no user input reaches it
        raise ValueError("_sorted_exact needs exact (radius 0) balls")

    def cmp(x: flint.arb, y: flint.arb) -> int:
        return -1 if x > y else (1 if x < y else 0)

    return sorted(values, key=functools.cmp_to_key(cmp))


def _frobenius_upper(E: flint.arb_mat) -> flint.arb:
    """An exact upper bound of ``||E||_F >= ||E||_2``, valid for every matrix in the balls of E."""
    total = flint.arb(0)
    for v in E.entries():
        total += v * v
    return total.upper().nonnegative_part().sqrt().upper()


_IDENTITY: dict[tuple[int, int], flint.arb_mat] = {}


def _identity(m: int) -> flint.arb_mat:
    key = (m, flint.ctx.prec)
    if key not in _IDENTITY:
        I = flint.arb_mat(m, m)  # noqa: E741 (the identity)
        for i in range(m):
            I[i, i] = 1
        _IDENTITY[key] = I
    return _IDENTITY[key]


def _approximate_vectors(gram: ExactGram) -> np.ndarray | None:
    """float64 ``X ~ F^{-T} V`` (generalized eigenvectors of ``(G J G/2, G)``), or None."""
    from scipy.linalg import solve_triangular

    n = gram.n
    Mf = gram.approx
    try:
        F = np.linalg.cholesky(Mf @ Mf.T)
    except np.linalg.LinAlgError:
        return None
    A = 0.5 * (F[:n].T @ F[n:] + F[n:].T @ F[:n])  # F^T J F / 2
    _, V = np.linalg.eigh(A)
    X = solve_triangular(F.T, V, lower=False)
    return X if np.all(np.isfinite(X)) else None


def _arb(Z: flint.fmpz_mat, c: flint.arb) -> flint.arb_mat:
    return flint.arb_mat(Z) * c


def _residuals(blocks: tuple[flint.arb_mat, flint.arb_mat, flint.arb_mat],
               XK: flint.arb_mat, XQ: flint.arb_mat
               ) -> tuple[flint.arb_mat, flint.arb_mat, list[flint.arb], flint.arb, flint.arb]:
    """``A^, B^``, the exact diagonal ``D = mid diag A^`` and the bounds ``eps, beta``."""
    KK, QQ, QK = blocks
    # Y = G' X in two block rows; A^ = X^T G' J G' X / 2 = (YK^T YQ + YQ^T YK)/2;
    # B^ = X^T G' X = XK^T YK + XQ^T YQ
    YK = KK * XK + QK.transpose() * XQ
    YQ = QK * XK + QQ * XQ
    C = YK.transpose() * YQ
    A = (C + C.transpose()) * flint.arb(0.5)
    B = XK.transpose() * YK + XQ.transpose() * YQ
    m = A.nrows()
    D = [A[i, i].mid() for i in range(m)]
    eps = _frobenius_upper(A - _diag(D))
    beta = _frobenius_upper(B - _identity(m))
    return A, B, D, eps, beta


def _refinement(A: flint.arb_mat, B: flint.arb_mat) -> flint.arb_mat:
    """One step of Ogita-Aishima refinement: ``X <- X (I + E)``, returns ``E`` (float64 entries).

    With ``R = I - B^`` and ``S = A^`` (midpoints), ``l_i = S_ii / (1 - R_ii)``,
    ``E_ii = R_ii / 2`` and ``E_ij = (S_ij + l_j R_ij) / (l_j - l_i)`` for well separated
    ``l_i, l_j`` (else ``R_ij / 2``). Only the approximation improves; nothing here needs
    to be exact (the refined ``X`` is certified afresh).
    """
    m = A.nrows()
    S = np.array([[float(v.mid()) for v in row] for row in A.tolist()])
    R = np.eye(m) - np.array([[float(v.mid()) for v in row] for row in B.tolist()])
    lam = np.diag(S) / (1.0 - np.diag(R))
    gap = lam[None, :] - lam[:, None]
    scale = np.max(np.abs(lam)) or 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        E = np.where(np.abs(gap) > 1e-6 * scale, (S + lam[None, :] * R) / gap, R / 2)
    np.fill_diagonal(E, np.diag(R) / 2)
    return flint.arb_mat(E.tolist())


#: A "rump" certificate with ``beta`` above this is refined (up to :data:`REFINE_STEPS`).
REFINE_BETA = 1e-12
REFINE_STEPS = 3


def _rump(gram: ExactGram) -> SpectrumEnclosure | None:
    X = _approximate_vectors(gram)
    if X is None:
        return None
    n = gram.n
    # G' = G_true / scale = [[KK, KQ], [QK, QQ]] 2^(-2 shift): exact powers of two
    c2 = ball(Fraction(1, 4**gram.shift))
    blocks = (_arb(gram.KK, c2), _arb(gram.QQ, c2), _arb(gram.QK, c2))
    XK = flint.arb_mat(X[:n].tolist())  # rows of X facing the key block
    XQ = flint.arb_mat(X[n:].tolist())
    A, B, D, eps, beta = _residuals(blocks, XK, XQ)
    for _ in range(REFINE_STEPS):
        if not REFINE_BETA < beta < 1:
            break
        # ill-conditioned head: refine X beyond float64 (exact midpoints of X (I + E))
        E = _refinement(A, B)
        XK2, XQ2 = (XK + XK * E).mid(), (XQ + XQ * E).mid()
        A2, B2, D2, eps2, beta2 = _residuals(blocks, XK2, XQ2)
        if not beta2 < beta:
            break
        XK, XQ, A, B, D, eps, beta = XK2, XQ2, A2, B2, D2, eps2, beta2
    if not beta < 1:
        return None
    one = flint.arb(1)
    theta = (one / (one + beta)).union(one / (one - beta))
    balls = tuple(theta * (d + flint.arb(0, eps)) for d in _sorted_exact(D))
    return SpectrumEnclosure(
        balls=balls, scale=gram.unit**2 * 4**gram.shift, method="rump",
        beta=float(beta), eps=float(eps), full_rank=True,
    )


def _diag(values: Sequence[flint.arb]) -> flint.arb_mat:
    m = len(values)
    D = flint.arb_mat(m, m)
    for i, v in enumerate(values):
        D[i, i] = v
    return D


def _charpoly(gram: ExactGram) -> SpectrumEnclosure:
    """Root isolation of the exact ``charpoly(J Z Z^T)`` (eigenvalues ``2 lambda / u^2``)."""
    poly = gram.j_gram().charpoly()
    lows: list[Fraction] = []
    highs: list[Fraction] = []
    half = flint.arb(0.5)
    # python-flint's stub types complex_roots() as list[acb]; it returns (root,
    # multiplicity) pairs (as this loop, and the tests, use it)
    roots: list[tuple[flint.acb, int]] = poly.complex_roots()  # type: ignore[assignment]
    for root, mult in roots:
        b = root.real * half
        lo, hi = exact_fraction(b.lower()), exact_fraction(b.upper())
        lows += [lo] * int(mult)
        highs += [hi] * int(mult)
    # the k-th largest root lies between the k-th largest lower endpoint and the k-th
    # largest upper endpoint (order statistics are monotone in every argument)
    lows.sort(reverse=True)
    highs.sort(reverse=True)
    balls = tuple(ball(lo).union(ball(hi)) for lo, hi in zip(lows, highs, strict=True))
    return SpectrumEnclosure(balls=balls, scale=gram.unit**2, method="charpoly",
                             beta=None, eps=None, full_rank=None)


def gram_spectrum_enclosure(gram: ExactGram, *, method: str = "auto",
                            prec: int = PREC) -> SpectrumEnclosure:
    """Enclose the sorted eigenvalues of ``J G / 2`` from exact Gram data.

    Parameters
    ----------
    gram : ExactGram
    method : {"auto", "rump", "charpoly"}
        ``"rump"`` (verified float eigenvectors, Weyl and Ostrowski; raises if it
        cannot certify), ``"charpoly"`` (root isolation of the exact characteristic
        polynomial; about ten times slower), ``"auto"`` (rump, falling back to
        charpoly).
    prec : int
        Arb working precision in bits.

    Raises
    ------
    QKFormsError
        ``method="rump"`` on a head it cannot certify (singular or very
        ill-conditioned Gram matrix).

    Examples
    --------
    >>> from qkforms.exact.verified_spectrum import exact_gram, gram_spectrum_enclosure
    >>> g = exact_gram([[1, 1, 0]], [[1, 1, 0]])            # W_K = W_Q: S PSD, rank 1
    >>> enc = gram_spectrum_enclosure(g)
    >>> enc.method, [iv.contains(v) for iv, v in zip(enc.intervals(), (2, 0))]
    ('charpoly', [True, True])
    """
    if method not in ("auto", *METHODS):
        raise ParameterError(f"unknown method {format_value(method)}; use 'auto', 'rump' or "
                             "'charpoly'")
    with working_precision(prec):
        if method in ("auto", "rump"):
            enc = _rump(gram)
            if enc is not None:
                return enc
            if method == "rump":
                raise QKFormsError(
                    "the verified eigenvalue bound could not certify this head (its Gram "
                    "matrix is singular or too ill-conditioned); use method='charpoly'")
        return _charpoly(gram)


def enclose_spectrum(W_Q: Any, W_K: Any, *, method: str = "auto",
                     prec: int = PREC) -> SpectrumEnclosure:
    """Verified enclosures of the eigenvalues of ``J G / 2`` of one head (decreasing).

    These are the nonzero eigenvalues of ``S = sym(W_K^T W_Q)`` (padded with zeros if
    ``M`` is not of full rank); see the module docstring for the theorems.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.exact.verified_spectrum import enclose_spectrum
    >>> rng = np.random.default_rng(0)
    >>> Q, K = rng.standard_normal((2, 3, 10))
    >>> enc = enclose_spectrum(Q, K)
    >>> lam = np.linalg.eigvalsh((K.T @ Q + Q.T @ K) / 2)[::-1]
    >>> nonzero = np.concatenate([lam[:3], lam[-3:]])
    >>> all(abs(v - iv.mid) <= 1e-12 * abs(lam).max() for iv, v in zip(enc.intervals(), nonzero))
    True
    >>> max(iv.width for iv in enc.intervals()) < 1e-12
    True
    """
    return gram_spectrum_enclosure(exact_gram(W_Q, W_K), method=method, prec=prec)

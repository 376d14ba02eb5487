r"""Exact inertia of every head, surjective or not (``docs/theory.md`` §3.3).

For a head with rows ``q_i`` of ``W_Q`` and ``k_i`` of ``W_K`` (each of length N) the form
is ``L = sum_i k_i q_i^T`` and ``S = 1/2 M^T J M`` with ``M = [W_K; W_Q]`` and
``J = [[0, I], [I, 0]]``. Everything here is integer arithmetic (python-flint); floats are
converted exactly. The route, for a head of any rank:

1. **Dead dimensions.** An index ``i`` with ``q_i = 0`` or ``k_i = 0`` contributes nothing
   to ``L``: delete row ``i`` from both maps. The *live pair* ``M' = [K'; Q']``
   (``2n' x N``) has the same ``L``. (The rank of ``M`` itself is the wrong test: a dead
   index may still carry a nonzero ``q_i`` or ``k_i``.)
2. **Rank of the live pair** (:func:`certified_rank`): the rank ``r`` modulo a prime is a
   lower bound of the rank over ``Q`` (a nonzero minor mod p is a nonzero integer), and
   the pivot columns mod p are independent over ``Q``. If ``r`` is the number of rows or
   columns, it is the rank. Otherwise an exact kernel proves the upper bound: the
   kernel basis in reduced echelon form is rebuilt from its residues modulo several
   primes (Chinese remainders and rational reconstruction) and *checked* by an exact
   product ``A V = 0``; a kernel of dimension ``k`` with an identity block proves
   ``rank <= cols - k``. Structured rank deficiency (tied, negated or zeroed rows, zero
   gains) has small kernels, found with one or two primes; the exact elimination of
   flint is the last resort.
3. **Surjective live pair** (``r = 2n'``): by Theorem 3 applied to the live pair,
   ``(n_+, n_-, n_0) = (n', n', N - 2n')``; the rank is the certificate.
4. **Otherwise, the restricted form.** With ``U`` the pivot columns of ``M'`` (a basis of
   ``im M'``) and ``X`` the coordinates of the columns of ``M'`` in it, ``M' = U X`` with
   ``X`` of full row rank, so ``S = 1/2 X^T (U^T J U) X`` and, by Sylvester's law of
   inertia, ``n_+-(S) = n_+-(U^T J U)`` (``r x r``; no ``N x N`` object).
5. **Inertia of a symmetric integer matrix** ``A`` (:func:`symmetric_inertia`): its rank
   and a column basis ``P`` as in step 2; ``A[P, P]`` is nonsingular and
   ``A = W^T A[P, P] W`` with ``W`` of full row rank, so the inertia of ``A`` is that of
   ``A[P, P]`` plus zeros. For a nonsingular ``B`` the diagonal of ``V^T B V`` is read
   off an exact congruence: ``V`` is an integer rounding of float eigenvectors, and if
   ``C = V^T B V`` is strictly diagonally dominant it is nonsingular (so ``V`` is), and
   its inertia is the signs of its diagonal (the path ``diag(C) + t (C - diag(C))``,
   ``0 <= t <= 1``, stays dominant, so no eigenvalue crosses 0). When ``B`` is badly
   conditioned the congruence is repeated on the (rescaled) ``C``; Descartes' rule on
   the characteristic polynomial is the last resort. Its diagonal may vanish (e.g.
   ``J`` itself), so an ``LDL^T`` without 2 x 2 pivots would not do.

Examples
--------
>>> import numpy as np
>>> from qkforms.exact.inertia import head_inertia
>>> rng = np.random.default_rng(0)
>>> Q = rng.standard_normal((3, 8))
>>> head_inertia(Q, Q).signature                       # W_K = W_Q: S = Q^T Q
Signature(n_pos=3, n_neg=0, n_zero=5)
>>> Q2 = Q.copy(); Q2[1] = 0.0                           # a zero gain: n' = 2
>>> r = head_inertia(Q2, rng.standard_normal((3, 8)))
>>> r.signature, r.n_live, r.prediction
(Signature(n_pos=2, n_neg=2, n_zero=4), 2, 'thm3-live')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import NamedTuple

import flint
import numpy as np

from qkforms.errors import ShapeError
from qkforms.exact.polynomial import descartes_counts
from qkforms.exact.rational import (
    MatrixLike,
    float_array_to_integer_array,
    matrix_shape,
    scaled_integer_matrix,
    stacked_matrix,
)

try:  # the float core's NamedTuple, shared so that results compare equal
    from qkforms.form_signature import Signature
except ImportError:  # pragma: no cover - only while the float core is absent
    from typing import NamedTuple as _NT

    class Signature(_NT):  # type: ignore[no-redef]
        """Inertia ``(n_pos, n_neg, n_zero)`` of a symmetric form."""

        n_pos: int
        n_neg: int
        n_zero: int


__all__ = [
    "PREDICTIONS",
    "HeadInertia",
    "certified_rank",
    "head_inertia",
    "integer_rows",
    "prediction_of",
    "symmetric_inertia",
]

#: what Theorem 3 predicts for a head: for the head itself, for its live part, or nothing
PREDICTIONS: tuple[str, ...] = ("thm3", "thm3-live", "none")

#: primes below 2**31 for modular images (the first ones also certify lower bounds)
_PRIMES: tuple[int, ...] = (
    2147483647, 2147483629, 2147483587, 2147483579, 2147483563, 2147483549, 2147483543,
    2147483497, 2147483489, 2147483477, 2147483423, 2147483399, 2147483353, 2147483323,
    2147483269, 2147483249,
)

Progress = Callable[[str], None]


class HeadInertia(NamedTuple):
    """Exact facts about one head (:func:`head_inertia`).

    Attributes
    ----------
    signature : Signature
        Inertia of ``S`` on ``R^N``.
    n_live : int
        Live head dimensions ``n'`` (``q_i != 0`` and ``k_i != 0``).
    stacked_rank : int
        Rank of ``M = [W_K; W_Q]``.
    live_rank : int
        Rank of the live pair ``[K'; Q']``.
    prediction : str
        ``"thm3"`` (``M`` onto: Theorem 3 predicts ``(n, n, N - 2n)``), ``"thm3-live"``
        (``M`` not onto but the live pair is: ``(n', n', N - 2n')``) or ``"none"``.
    zero_form : bool
        ``L = 0`` exactly (its profile is undefined).
    """

    signature: Signature
    n_live: int
    stacked_rank: int
    live_rank: int
    prediction: str
    zero_form: bool


# --------------------------------------------------------------------------- integers


def integer_rows(M: MatrixLike) -> np.ndarray:
    """``M`` as a numpy array of integers (int64 or Python ints), up to a positive scale.

    Examples
    --------
    >>> integer_rows(np.array([[0.5, -0.25]])).tolist()
    [[2, -1]]
    """
    if isinstance(M, np.ndarray) and M.dtype.kind == "f":
        Z, _ = float_array_to_integer_array(M.astype(np.float64, copy=False))
        return Z
    if isinstance(M, np.ndarray) and M.dtype.kind in "iub":
        return M.astype(np.int64)
    Zf, _ = scaled_integer_matrix(M)
    r, c = Zf.nrows(), Zf.ncols()
    out = np.empty((r, c), dtype=object)
    for i, row in enumerate(Zf.tolist()):
        out[i, :] = [int(v) for v in row]
    return out


def _fmpz(Z: np.ndarray) -> flint.fmpz_mat:
    r, c = Z.shape
    return flint.fmpz_mat(r, c, [int(v) for v in Z.ravel().tolist()])


def _residues(Z: np.ndarray, p: int) -> flint.nmod_mat:
    r, c = Z.shape
    if Z.dtype == np.int64:
        vals = np.mod(Z, p).ravel().tolist()
    else:
        vals = [int(v) % p for v in Z.ravel().tolist()]
    return flint.nmod_mat(r, c, vals, p)


def _rref_pivots(R: flint.nmod_mat, rank: int) -> list[int]:
    rows = R.tolist()
    piv = []
    for i in range(rank):
        row = rows[i]
        piv.append(next(j for j, v in enumerate(row) if int(v) != 0))
    return piv


def _rational_reconstruct(a: int, m: int) -> Fraction | None:
    """``r/s`` with ``r = a s (mod m)``, ``|r|, s <= sqrt(m/2)``, or None."""
    bound = math.isqrt(m // 2)
    r0, r1 = m, a % m
    s0, s1 = 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        s0, s1 = s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound or math.gcd(r1, abs(s1)) != 1:
        return None
    return Fraction(r1, s1)


def _crt(residues: Sequence[int], primes: Sequence[int]) -> tuple[int, int]:
    x, m = 0, 1
    for a, p in zip(residues, primes, strict=True):
        # x + m t = a (mod p)
        t = ((a - x) * pow(m, -1, p)) % p
        x, m = x + m * t, m * p
    return x, m


def _kernel_certificate(A: np.ndarray, rank: int, progress: Progress | None) -> bool:
    """Prove ``rank(A) <= rank`` with an exact right kernel of dimension ``cols - rank``.

    The kernel basis in reduced echelon form (``v_f = e_f - sum_i R[i, f] e_{p_i}`` for
    the free columns ``f``) is reconstructed from its residues and checked exactly.
    """
    cols = A.shape[1]
    k = cols - rank
    primes: list[int] = []
    residues: list[list[list[int]]] = []
    pivots: list[int] | None = None
    for count in (2, 6):
        while len(primes) < count:
            p = _PRIMES[len(primes)]
            R, r = _residues(A, p).rref()
            if r != rank:  # an unlucky prime (lower rank) or a higher rank: not usable
                primes.append(p)
                residues.append([])
                continue
            piv = _rref_pivots(R, r)
            if pivots is None:
                pivots = piv
            rows = R.tolist()
            free = [j for j in range(cols) if j not in set(pivots)]
            residues.append([[int(rows[i][f]) for f in free] for i in range(r)]
                            if piv == pivots else [])
            primes.append(p)
        if pivots is None:
            continue
        use = [i for i, res in enumerate(residues) if res]
        if not use:
            continue
        ps = [primes[i] for i in use]
        free = [j for j in range(cols) if j not in set(pivots)]
        if progress is not None:
            progress(f"kernel certificate: {k} vectors, {len(ps)} primes")
        basis = _reconstructed_kernel(residues, use, ps, pivots, free, cols)
        if basis is not None and _annihilates(A, basis):
            return True
    return False


def _reconstructed_kernel(residues: list[list[list[int]]], use: list[int], ps: list[int],
                          pivots: list[int], free: list[int], cols: int
                          ) -> list[list[int]] | None:
    vectors = []
    for c, f in enumerate(free):
        vals: list[Fraction] = []
        for i in range(len(pivots)):
            x, m = _crt([residues[u][i][c] for u in use], ps)
            q = _rational_reconstruct(x, m)
            if q is None:
                return None
            vals.append(q)
        den = 1
        for q in vals:
            den = math.lcm(den, q.denominator)
        v = [0] * cols
        v[f] = den
        for i, q in zip(pivots, vals, strict=True):
            v[i] = -int(q * den)
        vectors.append(v)
    return vectors


def _annihilates(A: np.ndarray, vectors: list[list[int]]) -> bool:
    if not vectors:
        return True
    V = flint.fmpz_mat(len(vectors[0]), len(vectors),
                       [vectors[c][j] for j in range(len(vectors[0]))
                        for c in range(len(vectors))])
    return bool((_fmpz(A) * V).is_zero())


def certified_rank(Z: np.ndarray, *, progress: Progress | None = None
                   ) -> tuple[int, list[int]]:
    """Exact rank over ``Q`` of an integer matrix, and a set of independent pivot columns.

    Parameters
    ----------
    Z : ndarray of int (int64 or object)

    Returns
    -------
    (rank, pivots)
        ``pivots``: ``rank`` column indices whose columns are linearly independent.

    Examples
    --------
    >>> import numpy as np
    >>> certified_rank(np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]]))
    (2, [0, 1])
    """
    rows, cols = Z.shape
    if rows == 0 or cols == 0:
        return 0, []
    if cols > rows + 16:  # a column subset of full row rank mod p already proves rank = rows
        cols_sub = np.linspace(0, cols - 1, rows + 16).round().astype(int)
        R, r = _residues(Z[:, cols_sub], _PRIMES[0]).rref()
        if r == rows:
            return rows, [int(cols_sub[j]) for j in _rref_pivots(R, int(r))]
    best = -1
    pivots: list[int] = []
    for p in _PRIMES[:2]:
        R, r = _residues(Z, p).rref()
        if r > best:
            best, pivots = int(r), _rref_pivots(R, int(r))
    if best == min(rows, cols):
        return best, pivots
    # an upper bound: an exact kernel on the smaller side (left kernel = kernel of Z^T)
    side = Z.T if rows - best <= cols - best else Z
    if _kernel_certificate(side, best, progress):
        return best, pivots
    if progress is not None:
        progress("no small kernel: exact elimination (slower)")
    exact, rank = flint.fmpq_mat(_fmpz(Z)).rref()
    rows = exact.tolist()
    return int(rank), [next(j for j, v in enumerate(rows[i]) if v != 0) for i in range(rank)]


# --------------------------------------------------------------------------- inertia


def _dominant_signs(C: flint.fmpz_mat) -> tuple[int, int] | None:
    """``(n_pos, n_neg)`` of a strictly diagonally dominant symmetric ``C``, else None."""
    rows = C.tolist()
    pos = neg = 0
    for i, row in enumerate(rows):
        d = int(row[i])
        off = sum(abs(int(v)) for v in row) - abs(d)
        if abs(d) <= off:
            return None
        if d > 0:
            pos += 1
        else:
            neg += 1
    return pos, neg


def _to_float(C: flint.fmpz_mat) -> np.ndarray:
    """``C / 2^e`` as float64 (entries at most 1 in size), by exact integer shifts."""
    vals = [int(v) for v in C.entries()]
    top = max((abs(v).bit_length() for v in vals), default=0)
    shift = max(top - 60, 0)
    k = C.nrows()
    ints = [v >> shift if v >= 0 else -((-v) >> shift) for v in vals]
    return np.array(ints, dtype=np.float64).reshape(k, k) / 2.0 ** min(top, 60)


def _balanced(C: flint.fmpz_mat) -> flint.fmpz_mat:
    """``D C D`` with ``D`` a diagonal of powers of two equalizing the row sizes."""
    rows = C.tolist()
    sizes = [max(abs(int(v)) for v in row).bit_length() for row in rows]
    top = max(sizes)
    d = [(top - s) // 2 for s in sizes]
    k = C.nrows()
    return flint.fmpz_mat(k, k, [int(rows[i][j]) << (d[i] + d[j])
                                 for i in range(k) for j in range(k)])


def _nonsingular_inertia(B: flint.fmpz_mat, progress: Progress | None) -> tuple[int, int]:
    """``(n_pos, n_neg)`` of a nonsingular symmetric integer matrix (exact congruences)."""
    k = B.nrows()
    if k == 0:
        return 0, 0
    C = B
    for _ in range(6):
        C = _balanced(C)
        w, V = np.linalg.eigh(_to_float(C))
        Vi = flint.fmpz_mat(k, k, [int(x) for x in np.rint(V * 2.0**50).ravel().tolist()])
        C = Vi.transpose() * C * Vi
        signs = _dominant_signs(C)
        if signs is not None:
            return signs
    if progress is not None:
        progress(f"congruence did not converge on a {k} x {k} form: Descartes' rule")
    n_pos, n_neg, _ = descartes_counts([int(v) for v in B.charpoly().coeffs()])
    return n_pos, n_neg


def symmetric_inertia(A: np.ndarray, *, progress: Progress | None = None
                      ) -> tuple[int, int, int]:
    """Exact ``(n_pos, n_neg, n_zero)`` of a symmetric integer matrix (singular or not).

    Examples
    --------
    >>> import numpy as np
    >>> symmetric_inertia(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))   # J (+) 0
    (1, 1, 1)
    >>> symmetric_inertia(np.array([[2, 2], [2, 2]]))
    (1, 0, 1)
    """
    k = A.shape[0]
    if k == 0:
        return 0, 0, 0
    r, piv = certified_rank(A, progress=progress)
    sub = A[np.ix_(piv, piv)]
    n_pos, n_neg = _nonsingular_inertia(_fmpz(sub), progress)
    return n_pos, n_neg, k - n_pos - n_neg


# --------------------------------------------------------------------------- heads


def prediction_of(n: int, n_live: int, stacked_rank: int, live_rank: int) -> str:
    """What Theorem 3 predicts for a head with these ranks (:data:`PREDICTIONS`).

    Examples
    --------
    >>> prediction_of(4, 4, 8, 8), prediction_of(4, 3, 7, 6), prediction_of(4, 4, 5, 5)
    ('thm3', 'thm3-live', 'none')
    """
    if stacked_rank == 2 * n:
        return "thm3"
    if n_live < n and live_rank == 2 * n_live:
        return "thm3-live"
    return "none"


def head_inertia(W_Q: MatrixLike, W_K: MatrixLike, *,
                 progress: Progress | None = None) -> HeadInertia:
    """Exact signature, live dimension, ranks and Theorem 3 prediction of one head.

    Parameters
    ----------
    W_Q, W_K
        ``n x N`` each: float arrays (converted exactly), ints, Fractions, sympy.
    progress : callable, optional
        Called with a short message before each slow step.

    Returns
    -------
    HeadInertia

    See Also
    --------
    qkforms.Head.exact : the same facts for a float head (an
        :class:`~qkforms.exact.head.ExactHead`).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.exact.inertia import head_inertia
    >>> Q = np.eye(2, 6)
    >>> head_inertia(Q, -Q).signature, head_inertia(Q, np.eye(2, 6, 2)).prediction
    (Signature(n_pos=0, n_neg=2, n_zero=4), 'thm3')
    """
    M = stacked_matrix(W_Q, W_K)
    two_n, N = matrix_shape(M)
    n = two_n // 2
    Z = integer_rows(M if isinstance(M, np.ndarray) else np.array(M, dtype=object))
    if Z.ndim != 2 or Z.shape != (two_n, N):
        raise ShapeError(f"expected a (2n, N) stacked matrix, got {Z.shape}")
    K, Q = Z[:n], Z[n:]
    live = np.array([any(int(v) != 0 for v in K[i]) and any(int(v) != 0 for v in Q[i])
                     for i in range(n)], dtype=bool)
    m = int(live.sum())
    Kl, Ql = K[live], Q[live]
    if progress is not None:
        progress(f"rank of the live pair ({2 * m} x {N})")
    live_rank, piv = certified_rank(np.concatenate([Kl, Ql]), progress=progress)
    # a surjective live pair with n' >= 1 has n' positive eigenvalues, so L != 0
    zero = m == 0 or (live_rank < 2 * m and _frobenius_sq_is_zero(Kl, Ql))
    if m == n:
        stacked = live_rank
    else:
        nonzero = np.array([any(int(v) != 0 for v in row) for row in Z], dtype=bool)
        stacked = certified_rank(Z[nonzero], progress=progress)[0]
    if live_rank == 2 * m:
        sig = Signature(m, m, N - 2 * m)
    else:
        U = np.concatenate([Kl, Ql])[:, piv]
        Uk, Uq = _fmpz(U[:m]), _fmpz(U[m:])
        A = Uk.transpose() * Uq
        A = A + A.transpose()
        if progress is not None:
            progress(f"inertia of the restricted form ({live_rank} x {live_rank})")
        A_np = np.array([[int(v) for v in row] for row in A.tolist()], dtype=object)
        p, q, _ = symmetric_inertia(A_np.reshape(live_rank, live_rank), progress=progress)
        sig = Signature(p, q, N - p - q)
    return HeadInertia(sig, m, stacked, live_rank, prediction_of(n, m, stacked, live_rank),
                       bool(zero))


def _frobenius_sq_is_zero(K: np.ndarray, Q: np.ndarray) -> bool:
    """``L = K^T Q = 0`` exactly: ``|L|^2 = <K K^T, Q Q^T>`` over the integers."""
    Kf, Qf = _fmpz(K), _fmpz(Q)
    KK = Kf * Kf.transpose()
    QQ = Qf * Qf.transpose()
    total = 0
    for a, b in zip(KK.entries(), QQ.entries(), strict=True):
        total += int(a) * int(b)
    return total == 0

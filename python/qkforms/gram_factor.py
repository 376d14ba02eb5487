r"""Factors of a head's Gram matrix, their float error model, and the spectra they give.

A *factor* of the head ``L = W_K^T W_Q`` is an ``F`` (``2n x 2n``) with ``G = F F^T``
(``G = M M^T``, ``M = [W_K; W_Q]``, :func:`stack`) whose first n rows vanish beyond
column n. :func:`factor_heads` makes it by Cholesky of ``G`` or, by the one fallback
rule of :mod:`qkforms.gram` (:data:`qkforms.tolerances.PIVOT_LIMIT`), by Householder QR
of ``M^T`` (:func:`qr_factor`), together with the error model of Claim 3 below;
:func:`spectra_from_factor` reads the spectra off a factor (Claim 2 of
:mod:`qkforms.gram`). The Gram engine (:func:`qkforms.gram.layer_spectra`) is the caller.

**Claim 3 (float error model for signs).** *Let* ``u = 2^-53``, ``t = tr G = |M|_F^2``
*and* ``lam_hat`` *a computed eigenvalue of* ``S_red`` *(of the live pair). To first
order in* ``u``, *under the standard backward-error model of floating point, the
eigenvalue* ``lam`` *of the exact* ``S_red`` *matched to it in sorted order satisfies*
``|lam_hat - lam| <= err = rel * |lam_hat| + abs``, *with*

* *Cholesky heads:* ``rel = eta = (N + 2n + 1) u t |F^-1|_F^2`` *and* ``abs = 4 n u t``;
  *if* ``eta < 1`` *the exact* ``G`` *is positive definite, so the stacked map is onto;*
* *QR heads:* ``rel = 0`` *and* ``abs = (2 n N + 4 n) u t``.

*Proof sketch.* Forming ``G`` (dot products of length N) and its Cholesky factor give
``F F^T = G + E`` with ``|E|_2 <= (N + 2n + 1) u t`` (Higham, *Accuracy and Stability of
Numerical Algorithms*, 2002, (3.5) and Thm 10.3). Write ``G = F W F^T`` with
``W = I - F^-1 E F^-T``, ``|I - W| <= eta``; if ``eta < 1``, ``W = V V^T`` and ``F V`` is
an exact factor of ``G``, so the exact ``S_red`` is congruent to the computed one by
``V`` and Ostrowski's theorem moves each eigenvalue by a factor in ``[1 - eta, 1 + eta]``.
Householder QR is backward stable: ``M + dM = F U^T`` with ``|dM|_F <= 2nN u |M|_F``
(Higham Thm 19.4, its constant taken as 1), which moves the eigenvalues of ``S`` by at
most ``|dM|_2 |M|_2`` (Weyl). Forming ``S_red`` from ``n x n`` blocks and the symmetric
eigensolver add at most ``4 n u t``. ∎

The constants are those of the worst-case analysis, so the bound is pessimistic, but it
is *not* a certificate (the ``O(u^2)`` terms and the eigensolver's constant are not
bounded rigorously): :func:`qkforms.form_signature.decide_signature` calls a signature
*decided in float* when every live eigenvalue clears its ``err`` (or is a known
structural zero), and reports the margin otherwise. Certificates: ``--certify``
(verified enclosures) and ``--exact`` (exact arithmetic).

Examples
--------
>>> import numpy as np
>>> from qkforms.gram_factor import qr_factor, spectra_from_factor, stack
>>> rng = np.random.default_rng(0)
>>> Q, K = rng.standard_normal((2, 3, 10))
>>> F = qr_factor(stack(Q, K))[None]
>>> eig_S = spectra_from_factor(F, 3, want=("eig_S",))["eig_S"][0]
>>> S = (K.T @ Q + Q.T @ K) / 2
>>> bool(np.allclose(eig_S, np.linalg.eigvalsh(S)[::-1][[0, 1, 2, -3, -2, -1]]))
True
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Literal, overload

import numpy as np
from numpy.typing import NDArray

from qkforms.errors import ParameterError, format_value
from qkforms.tolerances import PIVOT_LIMIT

__all__ = [
    "SPECTRA",
    "UNIT_ROUNDOFF",
    "factor_heads",
    "padded_factor",
    "qr_factor",
    "spectra_from_factor",
    "stack",
    "stacked_rank",
]

#: the spectra the engine can compute (each costs one eigenproblem per head)
SPECTRA: tuple[str, ...] = ("eig_S", "sv_T", "sv_L_sq", "abs_eig_L")

Array = NDArray[np.float64]


def stack(W_Q: Array, W_K: Array) -> Array:
    """The stacked matrix ``M = [W_K; W_Q]`` (keys first), batched over leading axes.

    Examples
    --------
    >>> import numpy as np
    >>> stack(np.ones((1, 2)), np.zeros((1, 2))).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    return np.concatenate([W_K, W_Q], axis=-2)


def stacked_rank(W_Q: Array, W_K: Array, *, rtol: float | None = None) -> int:
    """Numerical rank of ``M = [W_K; W_Q]`` (singular values, ``numpy.linalg.matrix_rank``).

    Examples
    --------
    >>> import numpy as np
    >>> stacked_rank(np.eye(2, 5), np.eye(2, 5)), stacked_rank(np.eye(2, 5), np.eye(2, 5, 2))
    (2, 4)
    """
    M = stack(np.asarray(W_Q, dtype=np.float64), np.asarray(W_K, dtype=np.float64))
    return int(np.linalg.matrix_rank(M, rtol=rtol))


@overload
def qr_factor(M: Array, *, basis: Literal[False] = False) -> Array: ...


@overload
def qr_factor(M: Array, *, basis: Literal[True]) -> tuple[Array, Array]: ...


def qr_factor(M: Array, *, basis: bool = False) -> Array | tuple[Array, Array]:
    """The factor ``F = R^T`` from the Householder QR ``M^T = U R``; batched.

    Parameters
    ----------
    M : ndarray, shape (..., 2n, N)
    basis : bool
        Also return ``U`` (orthonormal columns spanning ``im W_K^T + im W_Q^T``).

    Returns
    -------
    F : ndarray, shape (..., 2n, k), k = min(N, 2n)
        Lower trapezoidal, ``F F^T = M M^T`` and ``M = F U^T``.
    (U, F) when ``basis``; U has shape (..., N, k).

    Examples
    --------
    >>> import numpy as np
    >>> M = np.random.default_rng(3).standard_normal((4, 9))
    >>> U, F = qr_factor(M, basis=True)
    >>> bool(np.allclose(F @ U.T, M)), bool(np.allclose(np.triu(F, 1), 0))
    (True, True)
    """
    Mt = np.swapaxes(M, -1, -2)
    if basis:
        U, R = np.linalg.qr(Mt, mode="reduced")
        return U, np.swapaxes(R, -1, -2)
    return np.swapaxes(np.linalg.qr(Mt, mode="r"), -1, -2)


def padded_factor(F: Array) -> Array:
    """Pad a ``(2n, k)`` factor with zero columns to ``(2n, 2n)``.

    Examples
    --------
    >>> import numpy as np
    >>> padded_factor(np.ones((2, 1))).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    m, k = F.shape[-2:]
    if k == m:
        return F
    out = np.zeros(F.shape[:-1] + (m,))
    out[..., :k] = F
    return out


#: unit roundoff of float64 (Claim 3)
UNIT_ROUNDOFF = 2.0 ** -53


def _cholesky(G: Array) -> tuple[Array, NDArray[np.bool_]]:
    """Cholesky factors and the mask of heads that pass the pivot rule."""
    F = np.zeros_like(G, dtype=np.float64)
    if not G.shape[0]:
        return F, np.zeros(0, dtype=bool)
    try:
        F[:] = np.linalg.cholesky(G)
        done = np.ones(G.shape[0], dtype=bool)
    except np.linalg.LinAlgError:  # some head is not positive definite: one at a time
        done = np.zeros(G.shape[0], dtype=bool)
        for h in range(G.shape[0]):
            try:
                F[h] = np.linalg.cholesky(G[h])
                done[h] = True
            except np.linalg.LinAlgError:
                pass
    diag = np.diagonal(G, axis1=1, axis2=2)
    piv = np.diagonal(F, axis1=1, axis2=2) ** 2
    return F, done & (piv.min(axis=1) > PIVOT_LIMIT * diag.max(axis=1))


def _inverse_frobenius_sq(F: Array) -> Array:
    """``|F^-1|_F^2`` of lower triangular factors (LAPACK ``trtri``); inf if singular."""
    from scipy.linalg import lapack

    out = np.empty(F.shape[0])
    for h in range(F.shape[0]):
        inv, info = lapack.dtrtri(F[h], lower=1)
        out[h] = float(np.sum(inv * inv)) if info == 0 else np.inf
    return out


def factor_heads(G: Array, n: int, N: int, M_of: Callable[[int], Array]
                  ) -> tuple[Array, Array, Array]:
    """Factors of heads with Gram matrices ``G`` (h, 2n, 2n), by the one fallback rule.

    ``M_of(i)`` gives the stacked matrix of head ``i`` (for QR). Returns ``F`` (h, 2n, 2n)
    and the error model ``(rel, abs)`` of Claim 3 per head.

    Examples
    --------
    >>> import numpy as np
    >>> M = np.random.default_rng(4).standard_normal((1, 4, 9))
    >>> F, rel, absolute = factor_heads(M @ M.transpose(0, 2, 1), 2, 9, lambda i: M[i])
    >>> bool(np.allclose(F[0] @ F[0].T, M[0] @ M[0].T)), bool(0 < rel[0] < 1)
    (True, True)
    """
    h = G.shape[0]
    t = np.trace(G, axis1=1, axis2=2)
    F, well = _cholesky(G)
    rel = np.zeros(h)
    absolute = 4 * n * UNIT_ROUNDOFF * t
    chol = np.flatnonzero(well)
    if chol.size:
        eta = (N + 2 * n + 1) * UNIT_ROUNDOFF * t[chol] * _inverse_frobenius_sq(F[chol])
        rel[chol] = eta
        well[chol[~(eta < 1.0)]] = False  # Cholesky does not prove G positive definite
    for i in np.flatnonzero(~well):  # the one fallback rule: QR of M^T
        F[i] = padded_factor(qr_factor(M_of(int(i)).astype(np.float64)))
        rel[i] = 0.0
        absolute[i] = (2 * n * N + 4 * n) * UNIT_ROUNDOFF * t[i]
    return F, rel, absolute


def spectra_from_factor(F: Array, n: int, *, want: Collection[str] = SPECTRA) -> dict[str, Array]:
    """The spectra of heads from their factors (Claim 2), batched.

    Parameters
    ----------
    F : ndarray, shape (h, 2n, 2n)
        Factors: ``F F^T = G`` and ``F[:, :n, n:] == 0`` (Cholesky, or padded QR).
    n : int
    want : collection of str
        Which of :data:`SPECTRA` to compute.

    Returns
    -------
    dict
        The wanted entries of ``eig_S``, ``sv_T``, ``sv_L_sq``, ``abs_eig_L`` as in
        :class:`LayerSpectra`.

    Examples
    --------
    >>> import numpy as np
    >>> F = np.eye(2)[None]                    # K_red = [1, 0], Q_red = [0, 1]
    >>> out = spectra_from_factor(F, 1)        # L_red = [[0, 1], [0, 0]]
    >>> out["eig_S"].tolist(), out["sv_T"].tolist(), out["sv_L_sq"].tolist()
    ([[0.5, -0.5]], [[0.5]], [[1.0]])
    """
    unknown = set(want) - set(SPECTRA)
    if unknown:
        raise ParameterError(
            f"unknown spectra {format_value(sorted(unknown))}; choose from {format_value(SPECTRA)}")
    At = np.swapaxes(F[:, :n, :n], 1, 2)
    X = np.matmul(At, F[:, n:, :n])  # A^T B
    Y = np.matmul(At, F[:, n:, n:])  # A^T C
    Yt = np.swapaxes(Y, 1, 2)
    h = F.shape[0]
    out: dict[str, Array] = {}
    if "eig_S" in want:
        S = np.empty((h, 2 * n, 2 * n))
        S[:, :n, :n] = 0.5 * (X + np.swapaxes(X, 1, 2))
        S[:, :n, n:] = 0.5 * Y
        S[:, n:, :n] = 0.5 * Yt
        S[:, n:, n:] = 0.0
        out["eig_S"] = np.ascontiguousarray(np.linalg.eigvalsh(S)[:, ::-1])
    YYt = np.matmul(Y, Yt) if ("sv_T" in want or "sv_L_sq" in want) else None
    if "sv_T" in want:
        assert YYt is not None
        D = X - np.swapaxes(X, 1, 2)
        Dt = -D
        TtT = np.empty((h, 2 * n, 2 * n))
        TtT[:, :n, :n] = np.matmul(Dt, D) + YYt
        TtT[:, :n, n:] = np.matmul(Dt, Y)
        TtT[:, n:, :n] = np.swapaxes(TtT[:, :n, n:], 1, 2)
        TtT[:, n:, n:] = np.matmul(Yt, Y)
        # eigenvalues of (2T)^T (2T), each twice; relative accuracy of a value s is about
        # eps * (s_max / s)^2 (1e-9 for the smallest ratio seen on SmolLM2)
        lam = np.linalg.eigvalsh(TtT)[:, ::-1][:, ::2][:, :n]
        out["sv_T"] = np.ascontiguousarray(0.5 * np.sqrt(np.clip(lam, 0.0, None)))
    if "sv_L_sq" in want:
        assert YYt is not None
        sv2 = np.linalg.eigvalsh(np.matmul(X, np.swapaxes(X, 1, 2)) + YYt)[:, ::-1]
        out["sv_L_sq"] = np.ascontiguousarray(np.clip(sv2, 0.0, None))
    if "abs_eig_L" in want:
        out["abs_eig_L"] = -np.sort(-np.abs(np.linalg.eigvals(X)), axis=1)
    return out

"""Spectra of all heads of one layer at once, through one batched Gram computation.

For a query head ``h`` with key head ``g`` the stacked matrix is
``M = [W_K[g]; W_Q[h]]`` (2n x N) and its Gram matrix ``G = M M^T`` (2n x 2n) is
made of three n x n blocks, ``K K^T`` (shared by the query heads of a key group),
``Q Q^T`` and ``K Q^T``; all are computed for the whole layer by batched matrix
products (THEORY §7.2, Lemma 10). Nothing of size N x N is ever formed.

The exact reduction (THEORY §7.2) is then read off a triangular factor of ``G``.
If ``G = F F^T`` with ``F`` lower triangular (Cholesky), then
``U = M^T F^{-T}`` (N x 2n) has orthonormal columns spanning
``im W_K^T + im W_Q^T`` and ``M = F U^T``; hence ``K_red = W_K U`` and
``Q_red = W_Q U`` are the first and last n rows of ``F`` and
``L_red = U^T L U = K_red^T Q_red`` is an exact orthogonal representative of
``L = W_K^T W_Q``. This is the same ``F`` as the transposed ``R`` of the QR
factorization ``M^T = U R`` used by :func:`qkforms.reduce_heads` (up to column
signs), at a fraction of the cost when key heads are shared. Because the first n
rows of ``F`` vanish beyond column n, only the first n rows of ``L_red`` are nonzero.

Heads whose Gram matrix is ill-conditioned (smallest Cholesky pivot below
:data:`PIVOT_LIMIT` times the largest diagonal entry, or no Cholesky factor at all)
are redone through a QR factorization of ``M^T``, after the core's rank test
(:meth:`qkforms.Head.is_surjective`) has decided whether the stacked map is onto;
heads with a non-surjective stacked map, or with non-finite weights, are reported as
failed with a reason.

Examples
--------
>>> import numpy as np
>>> from qkforms.survey.spectra import layer_spectra
>>> rng = np.random.default_rng(0)
>>> W_Q, W_K = rng.standard_normal((2, 4, 16)), rng.standard_normal((1, 4, 16))
>>> sp = layer_spectra(W_Q, W_K, np.array([0, 0]))
>>> sp.eig_S.shape, bool(sp.ok.all())
((2, 8), True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from qkforms.errors import ShapeError

__all__ = ["PIVOT_LIMIT", "LayerSpectra", "layer_gram", "layer_spectra", "spectra_from_factor"]

#: Smallest Cholesky pivot, relative to the largest diagonal entry of ``G``, below
#: which a head is recomputed through QR (pivots bound the smallest eigenvalue of
#: ``G`` from above, so this catches every head with ``cond(G) > 1/PIVOT_LIMIT``).
PIVOT_LIMIT = 1e-8

#: width of each spectra field, in units of n (0 for one number per head)
_WIDTHS = {
    "eig_S": 2, "norm_sq": 0, "skew_sq": 0, "trace": 0, "sv_L_sq": 1, "sv_T": 1, "abs_eig_L": 1,
}


@dataclass
class LayerSpectra:
    """Everything the per-head statistics need, for the query heads of one layer.

    Rows of failed heads (``ok`` False) hold NaN and carry a reason in ``error``.

    Attributes
    ----------
    ok : ndarray of bool, shape (h,)
    error : list of (str or None)
    eig_S : ndarray, shape (h, 2n)
        Eigenvalues of the symmetric part of ``L_red``, decreasing (the nonzero
        spectrum of ``S`` on ``R^N``, plus zeros if ``M`` is not onto).
    norm_sq, skew_sq, trace : ndarray, shape (h,)
        ``|L|^2`` (sum of squared entries), ``|T|^2`` and ``tr L``.
    sv_L_sq : ndarray, shape (h, n)
        Squared singular values of ``L`` (its nonzero ones), decreasing.
    sv_T : ndarray, shape (h, n)
        The n distinct singular values of ``T`` (each occurs twice), decreasing.
    abs_eig_L : ndarray, shape (h, n)
        Moduli of the eigenvalues of the n x n matrix ``W_Q W_K^T`` (the nonzero
        eigenvalues of ``L``), decreasing.
    Q_red, K_red : ndarray, shape (h, n, 2n), or None
        Reduced factors with ``L_red = K_red^T Q_red`` (kept on request).
    """

    ok: NDArray[np.bool_]
    error: list[str | None]
    eig_S: NDArray[np.float64]
    norm_sq: NDArray[np.float64]
    skew_sq: NDArray[np.float64]
    trace: NDArray[np.float64]
    sv_L_sq: NDArray[np.float64]
    sv_T: NDArray[np.float64]
    abs_eig_L: NDArray[np.float64]
    Q_red: NDArray[np.float64] | None = None
    K_red: NDArray[np.float64] | None = None


def _check_layer(
    W_Q: NDArray[np.floating], W_K: NDArray[np.floating], kv_index: NDArray[np.integer]
) -> tuple[int, int, int, int]:
    if W_Q.ndim != 3 or W_K.ndim != 3:
        raise ShapeError(
            f"layer weights must be W_Q (n_q, n, N) and W_K (n_kv, n, N); "
            f"got shapes {W_Q.shape} and {W_K.shape}"
        )
    n_q, n, N = W_Q.shape
    n_kv = W_K.shape[0]
    if W_K.shape[1:] != (n, N):
        raise ShapeError(f"W_K heads have shape {W_K.shape[1:]}, W_Q heads {(n, N)}")
    if kv_index.shape != (n_q,):
        raise ShapeError(f"kv_index must have shape ({n_q},), got {kv_index.shape}")
    if n_q and (kv_index.min() < 0 or kv_index.max() >= n_kv):
        raise ShapeError(f"kv_index must lie in [0, {n_kv}), got {kv_index.tolist()}")
    return n_q, n_kv, n, N


def layer_gram(
    W_Q: NDArray[np.floating], W_K: NDArray[np.floating], kv_index: NDArray[np.integer]
) -> NDArray[np.float64]:
    """Gram matrices ``G_h = M_h M_h^T`` of the stacked maps ``M_h = [W_K[g]; W_Q[h]]``.

    Parameters
    ----------
    W_Q : ndarray, shape (n_q, n, N)
    W_K : ndarray, shape (n_kv, n, N)
    kv_index : ndarray of int, shape (n_q,)
        Key head of each query head.

    Returns
    -------
    ndarray, shape (n_q, 2n, 2n)

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.spectra import layer_gram
    >>> rng = np.random.default_rng(1)
    >>> Q, K = rng.standard_normal((3, 2, 5)), rng.standard_normal((1, 2, 5))
    >>> G = layer_gram(Q, K, np.zeros(3, dtype=int))
    >>> M = np.vstack([K[0], Q[2]])
    >>> bool(np.allclose(G[2], M @ M.T))
    True
    """
    kv_index = np.asarray(kv_index, dtype=np.int64)
    n_q, n_kv, n, N = _check_layer(W_Q, W_K, kv_index)
    dt = np.result_type(W_Q.dtype, np.float64)
    G = np.empty((n_q, 2 * n, 2 * n), dtype=dt)
    KK = np.matmul(W_K, np.swapaxes(W_K, 1, 2))  # (n_kv, n, n)
    QQ = np.matmul(W_Q, np.swapaxes(W_Q, 1, 2))  # (n_q, n, n)
    G[:, :n, :n] = KK[kv_index]
    G[:, n:, n:] = QQ
    for g in np.unique(kv_index):
        hs = np.flatnonzero(kv_index == g)
        if hs.size and np.all(np.diff(hs) == 1):
            block = W_Q[hs[0] : hs[-1] + 1]  # a view: no copy for the usual GQA layout
        else:
            block = W_Q[hs]
        QKt = (block.reshape(-1, N) @ W_K[g].T).reshape(hs.size, n, n)  # Q_h K_g^T
        G[hs, n:, :n] = QKt
        G[hs, :n, n:] = np.swapaxes(QKt, 1, 2)
    return G


def spectra_from_factor(F: NDArray[np.float64], n: int) -> dict[str, NDArray[np.float64]]:
    """Spectra of heads from lower factors ``F`` (``G = F F^T``, first n rows = keys).

    Works for any ``F`` whose first n rows are ``K_red`` and last n rows ``Q_red`` in
    one orthonormal basis (Cholesky factor, or ``R^T`` from a QR of ``M^T``).

    Parameters
    ----------
    F : ndarray, shape (h, 2n, 2n)
    n : int

    Returns
    -------
    dict
        ``eig_S``, ``norm_sq``, ``skew_sq``, ``trace``, ``sv_L_sq``, ``sv_T``,
        ``abs_eig_L`` as in :class:`LayerSpectra`.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.spectra import spectra_from_factor
    >>> F = np.eye(2)[None]                    # K_red = [1, 0], Q_red = [0, 1]
    >>> out = spectra_from_factor(F, 1)        # L_red = [[0, 1], [0, 0]]
    >>> out["eig_S"].tolist(), out["sv_T"].tolist(), out["norm_sq"].tolist()
    ([[0.5, -0.5]], [[0.5]], [1.0])
    """
    K_red = F[:, :n, :]
    Q_red = F[:, n:, :]
    L = np.matmul(np.swapaxes(K_red, 1, 2), Q_red)  # (h, 2n, 2n)
    S = 0.5 * (L + np.swapaxes(L, 1, 2))
    T = 0.5 * (L - np.swapaxes(L, 1, 2))
    eig_S = np.linalg.eigvalsh(S)[:, ::-1]
    # T is real skew: its singular values come in equal pairs; they are the square
    # roots of the eigenvalues of T^T T (keep one of each pair). Relative accuracy of a
    # value s is about eps * (s_max / s)^2 (1e-9 for the smallest ratio on SmolLM2,
    # 2e-4), at a third of the cost of an SVD.
    TtT = np.matmul(np.swapaxes(T, 1, 2), T)
    sv_T = np.sqrt(np.clip(np.linalg.eigvalsh(TtT)[:, ::-1][:, ::2][:, :n], 0.0, None))
    # nonzero singular values of L: rows n..2n of L vanish (K_red is zero beyond
    # column n), so they are the singular values of the n x 2n top block
    top = L[:, :n, :]
    sv_L_sq = np.linalg.eigvalsh(np.matmul(top, np.swapaxes(top, 1, 2)))[:, ::-1]
    sv_L_sq = np.clip(sv_L_sq, 0.0, None)
    # eigenvalues of W_Q W_K^T = Q_red K_red^T (n x n)
    QKt = np.matmul(Q_red, np.swapaxes(K_red, 1, 2))
    abs_eig_L = -np.sort(-np.abs(np.linalg.eigvals(QKt)), axis=1)
    return {
        "eig_S": np.ascontiguousarray(eig_S),
        "norm_sq": np.sum(L * L, axis=(1, 2)),
        "skew_sq": np.sum(T * T, axis=(1, 2)),
        "trace": np.trace(L, axis1=1, axis2=2),
        "sv_L_sq": sv_L_sq,
        "sv_T": np.ascontiguousarray(sv_T),
        "abs_eig_L": abs_eig_L,
    }


def _qr_factor(M: NDArray[np.float64]) -> NDArray[np.float64]:
    """``F = R^T`` from the QR factorization ``M^T = U R`` (M: 2n x N), padded to 2n x 2n."""
    R = np.linalg.qr(M.T, mode="r")  # (k, 2n), k = min(N, 2n)
    F = np.zeros((M.shape[0], M.shape[0]))
    F[:, : R.shape[0]] = R.T
    return F


def layer_spectra(
    W_Q: NDArray[np.floating],
    W_K: NDArray[np.floating],
    kv_index: NDArray[np.integer],
    *,
    keep_factors: bool = False,
) -> LayerSpectra:
    """Spectra of every query head of a layer (batched Gram route, THEORY §7.2-7.3).

    Parameters
    ----------
    W_Q : ndarray, shape (n_q, n, N)
    W_K : ndarray, shape (n_kv, n, N)
    kv_index : ndarray of int, shape (n_q,)
        Key/value head used by each query head (GQA).
    keep_factors : bool
        Also return ``Q_red`` and ``K_red`` (n x 2n per head) for RoPE relative forms.

    Returns
    -------
    LayerSpectra

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import gram_spectrum
    >>> from qkforms.survey.spectra import layer_spectra
    >>> rng = np.random.default_rng(3)
    >>> Q, K = rng.standard_normal((4, 3, 10)), rng.standard_normal((2, 3, 10))
    >>> kv = np.array([0, 0, 1, 1])
    >>> sp = layer_spectra(Q, K, kv)
    >>> bool(np.allclose(sp.eig_S, gram_spectrum(Q, K[kv])))
    True
    >>> Q[1, 0, 0] = np.nan
    >>> layer_spectra(Q, K, kv).error[1]
    'non-finite values (NaN or inf) in W_Q or W_K'
    """
    from qkforms.head import Head

    kv_index = np.asarray(kv_index, dtype=np.int64)
    n_q, _, n, _ = _check_layer(W_Q, W_K, kv_index)
    G = layer_gram(W_Q, W_K, kv_index)
    F = np.zeros_like(G, dtype=np.float64)
    ok = np.isfinite(G).all(axis=(1, 2))
    error: list[str | None] = [
        None if good else "non-finite values (NaN or inf) in W_Q or W_K" for good in ok
    ]
    fine = np.flatnonzero(ok)
    redo: list[int] = []
    if fine.size:
        try:
            F[fine] = np.linalg.cholesky(G[fine])
            chol_ok = np.ones(fine.size, dtype=bool)
        except np.linalg.LinAlgError:
            chol_ok = np.zeros(fine.size, dtype=bool)
            for j, h in enumerate(fine):
                try:
                    F[h] = np.linalg.cholesky(G[h])
                    chol_ok[j] = True
                except np.linalg.LinAlgError:
                    pass
        diag = np.diagonal(G[fine], axis1=1, axis2=2)
        piv = np.diagonal(F[fine], axis1=1, axis2=2) ** 2
        well = chol_ok & (piv.min(axis=1) > PIVOT_LIMIT * diag.max(axis=1))
        redo = [int(h) for h in fine[~well]]
    for h in redo:
        g = int(kv_index[h])
        head = Head(W_Q[h], W_K[g])
        if not head.is_surjective():
            M = np.vstack([W_K[g], W_Q[h]]).astype(np.float64)
            rank = int(np.linalg.matrix_rank(M))
            ok[h] = False
            error[h] = (
                f"stacked map [W_K; W_Q] is not surjective (rank {rank} < 2n = {2 * n}); "
                "Theorem 3 does not apply"
            )
        else:
            F[h] = _qr_factor(np.vstack([W_K[g], W_Q[h]]).astype(np.float64))
    good = np.flatnonzero(ok)
    part = spectra_from_factor(F[good], n) if good.size else None
    out: dict[str, NDArray[np.float64]] = {}
    for key, width in _WIDTHS.items():
        shape = (n_q,) if width == 0 else (n_q, width * n)
        arr = np.full(shape, np.nan)
        if part is not None:
            arr[good] = part[key]
        out[key] = arr
    nan = ~ok
    return LayerSpectra(
        ok=ok,
        error=error,
        Q_red=np.where(nan[:, None, None], np.nan, F[:, n:, :]) if keep_factors else None,
        K_red=np.where(nan[:, None, None], np.nan, F[:, :n, :]) if keep_factors else None,
        **out,
    )

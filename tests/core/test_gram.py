"""The Gram engine against dense N x N computations, claim by claim (qkforms.gram)."""

from __future__ import annotations

import numpy as np
import pytest

import qkforms as qk
from qkforms import gram
from qkforms.tolerances import PIVOT_LIMIT


def _dense(W_Q: np.ndarray, W_K: np.ndarray) -> dict[str, np.ndarray]:
    """Every quantity the engine computes, from the dense form L = W_K^T W_Q."""
    n = W_Q.shape[0]
    L = W_K.T @ W_Q
    S, T = qk.parts(L)
    eS = np.sort(np.linalg.eigvalsh(S))[::-1]
    N = L.shape[0]
    if N >= 2 * n:  # the nonzero spectrum: n largest and n smallest
        eig_S = np.r_[eS[:n], eS[-n:]]
    else:  # all N eigenvalues and 2n - N zeros
        eig_S = np.sort(np.r_[eS, np.zeros(2 * n - N)])[::-1]
    return {
        "eig_S": eig_S,
        "sv_T": np.r_[np.linalg.svd(T, compute_uv=False), np.zeros(2 * n)][: 2 * n : 2],
        "sv_L_sq": np.r_[np.linalg.svd(L, compute_uv=False), np.zeros(n)][:n] ** 2,
        "abs_eig_L": np.sort(np.abs(np.linalg.eigvals(W_Q @ W_K.T)))[::-1],
        "norm_sq": np.sum(L * L), "skew_sq": np.sum(T * T), "trace": np.trace(L),
    }


def _compare(sp: gram.LayerSpectra, h: int, ref: dict[str, np.ndarray]) -> None:
    scale = np.abs(ref["eig_S"]).max()
    np.testing.assert_allclose(sp.eig_S[h], ref["eig_S"], rtol=1e-9, atol=1e-12 * scale)
    # sv_T from the eigenvalues of T^T T: absolute error ~ eps * s_max^2 / s (documented)
    s_ref = ref["sv_T"]
    bound = np.maximum(1e-7 * s_ref, 100 * np.finfo(float).eps * s_ref[0] ** 2
                       / np.maximum(s_ref, 1e-300))
    assert np.all(np.abs(sp.sv_T[h] - s_ref) <= np.maximum(bound, 1e-12 * scale))
    np.testing.assert_allclose(sp.sv_L_sq[h], ref["sv_L_sq"], rtol=1e-9,
                               atol=1e-12 * ref["sv_L_sq"].max())
    np.testing.assert_allclose(sp.abs_eig_L[h], ref["abs_eig_L"], rtol=1e-9, atol=1e-12 * scale)
    for key in ("norm_sq", "skew_sq", "trace"):
        assert getattr(sp, key)[h] == pytest.approx(ref[key], rel=1e-10, abs=1e-10 * scale)


@pytest.mark.parametrize(("n", "N", "n_q", "n_kv"), [(3, 20, 4, 2), (4, 9, 2, 2), (2, 40, 6, 1)])
def test_layer_spectra_match_dense_with_gqa(n: int, N: int, n_q: int, n_kv: int) -> None:
    rng = np.random.default_rng(n * N)
    W_Q, W_K = rng.standard_normal((n_q, n, N)), rng.standard_normal((n_kv, n, N))
    W_Q[0] = W_K[0] + 0.2 * rng.standard_normal((n, N))  # a strongly symmetric head
    kv = np.arange(n_q) // (n_q // n_kv)
    sp = gram.layer_spectra(W_Q, W_K, kv, keep_factors=True)
    assert sp.ok.all()
    for h in range(n_q):
        _compare(sp, h, _dense(W_Q[h], W_K[kv[h]]))
        # Claim 1: the reduced factors are an orthogonal representative of L
        L_red = sp.K_red[h].T @ sp.Q_red[h]
        assert np.allclose(np.triu(sp.K_red[h][:, n:]), 0.0)  # K_red = [A, 0]
        assert qk.profile(L_red) == pytest.approx(tuple(qk.profile(W_K[kv[h]].T @ W_Q[h])),
                                                 abs=1e-12)


def test_block_formulas_of_claim_2() -> None:
    rng = np.random.default_rng(5)
    n, N = 3, 11
    Q, K = rng.standard_normal((2, n, N))
    M = gram.stack(Q, K)
    F = np.linalg.cholesky(M @ M.T)
    A, B, C = F[:n, :n], F[n:, :n], F[n:, n:]
    assert np.allclose(F[:n, n:], 0.0)
    X, Y = A.T @ B, A.T @ C
    L_red = F[:n].T @ F[n:]
    np.testing.assert_allclose(L_red, np.block([[X, Y], [np.zeros((n, 2 * n))]]), atol=1e-12)
    Jsym = np.block([[np.zeros((n, n)), np.eye(n)], [np.eye(n), np.zeros((n, n))]])
    Jskew = np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])
    np.testing.assert_allclose(F.T @ Jsym @ F, L_red + L_red.T, atol=1e-12)
    np.testing.assert_allclose(F.T @ Jskew @ F, L_red - L_red.T, atol=1e-12)
    np.testing.assert_allclose(X @ X.T + Y @ Y.T, A.T @ (Q @ Q.T) @ A, atol=1e-11)
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(X)),
                               np.sort_complex(np.linalg.eigvals(Q @ K.T)), atol=1e-10)
    out = gram.spectra_from_factor(F[None], n)
    _compare(gram.head_spectra(Q[None], K[None]), 0, _dense(Q, K))
    np.testing.assert_allclose(out["eig_S"][0], _dense(Q, K)["eig_S"], rtol=1e-9)


def test_energies_from_gram_blocks() -> None:
    rng = np.random.default_rng(6)
    Q, K = rng.standard_normal((2, 3, 4, 15))
    M = gram.stack(Q, K)
    e = gram.gram_energies(M @ np.swapaxes(M, -1, -2), 4)
    for i in range(3):
        ref = qk.energies(K[i].T @ Q[i])
        assert np.allclose([v[i] for v in e], ref, rtol=1e-12)


def test_want_computes_only_what_is_asked() -> None:
    rng = np.random.default_rng(7)
    Q, K = rng.standard_normal((2, 2, 3, 12))
    sp = gram.head_spectra(Q, K, want=("eig_S", "sv_L_sq"))
    assert np.isfinite(sp.eig_S).all() and np.isfinite(sp.sv_L_sq).all()
    assert np.isnan(sp.sv_T).all() and np.isnan(sp.abs_eig_L).all()
    with pytest.raises(ValueError, match="unknown spectra"):
        gram.spectra_from_factor(np.eye(2)[None], 1, want=("eig_T",))


def test_fallback_rule_qr_for_ill_conditioned_and_degenerate_heads() -> None:
    rng = np.random.default_rng(3)
    n, N = 3, 30
    K = rng.standard_normal((1, n, N))
    Q = rng.standard_normal((3, n, N))
    Q[0, 0] = K[0, 0] + 1e-6 * rng.standard_normal(N)  # onto, cond(G) ~ 1e12
    Q[1] = K[0]  # W_Q = W_K: rank n < 2n
    kv = np.zeros(3, dtype=int)
    G = gram.layer_gram(Q, K, kv)
    for h in (0, 1):  # both are sent to QR by the pivot rule
        with np.errstate(all="ignore"):
            try:
                piv = np.diagonal(np.linalg.cholesky(G[h])) ** 2
                assert piv.min() <= PIVOT_LIMIT * np.diagonal(G[h]).max()
            except np.linalg.LinAlgError:
                pass
    keep = gram.layer_spectra(Q, K, kv)
    assert keep.ok.tolist() == [True, True, True]  # degenerate heads are computed, not failed
    assert keep.err_rel[1] == 0.0 and keep.err_abs[1] > 0  # the QR error model
    for h in (0, 2):
        _compare(keep, h, _dense(Q[h], K[0]))
    ref = _dense(Q[1], K[0])  # W_Q = W_K: S = K^T K is PSD of rank n, T = 0
    np.testing.assert_allclose(keep.eig_S[1], ref["eig_S"], atol=1e-12 * ref["eig_S"][0])
    assert keep.sv_T[1].max() < 1e-12 * ref["eig_S"][0]


def test_fallback_uses_the_layers_kv_index_under_gqa() -> None:
    """The QR fallback and its rank test read the key head from ``kv_index``.

    Four query heads share two key heads in groups of two (``kv = [0, 0, 1, 1]``), so
    for heads 1 and 2 the key head differs from ``h % n_kv``; both are sent to the
    fallback: head 1 ill-conditioned but onto, head 2 degenerate (``W_Q = W_K[1]``).
    A permuted mapping checks the same with no arithmetic relation at all.
    """
    rng = np.random.default_rng(11)
    n, N = 3, 24
    K = rng.standard_normal((2, n, N))
    Q = rng.standard_normal((4, n, N))
    Q[1, 0] = K[0, 1] + 1e-6 * rng.standard_normal(N)  # onto, but pivot below the limit
    Q[2] = K[1]  # degenerate against its own key head, not against K[0]
    for kv in (np.array([0, 0, 1, 1]), np.array([1, 0, 1, 0])):
        if kv[1] != 0:  # the permuted mapping: rebuild heads 1 and 2 for their key heads
            Q[1, 0] = K[kv[1], 1] + 1e-6 * rng.standard_normal(N)
            Q[2] = K[kv[2]]
        G = gram.layer_gram(Q, K, kv)
        for h in (1, 2):
            with np.errstate(all="ignore"):
                try:
                    piv = np.diagonal(np.linalg.cholesky(G[h])) ** 2
                    assert piv.min() <= PIVOT_LIMIT * np.diagonal(G[h]).max()
                except np.linalg.LinAlgError:
                    pass
        keep = gram.layer_spectra(Q, K, kv, keep_factors=True)
        assert keep.ok.tolist() == [True, True, True, True], kv
        for h in range(4):
            _compare(keep, h, _dense(Q[h], K[kv[h]]))
        # the factors are those of the right key head: K_red^T Q_red is the reduced form
        L1 = K[kv[1]].T @ Q[1]
        red = keep.K_red[1].T @ keep.Q_red[1]
        np.testing.assert_allclose(np.sum(red**2), np.sum(L1**2), rtol=1e-9)


def test_N_below_2n_pads_with_zeros() -> None:
    rng = np.random.default_rng(8)
    Q, K = rng.standard_normal((2, 1, 4, 6))  # n = 4, N = 6 < 2n
    sp = gram.head_spectra(Q, K)
    assert sp.eig_S.shape == (1, 8)
    _compare(sp, 0, _dense(Q[0], K[0]))


def test_non_finite_heads_fail_in_the_layer_route_and_raise_in_the_core() -> None:
    rng = np.random.default_rng(9)
    Q, K = rng.standard_normal((2, 2, 2, 7))
    Q[1, 0, 0] = np.inf
    sp = gram.layer_spectra(Q, K, np.array([0, 1]))
    assert sp.ok.tolist() == [True, False] and np.isnan(sp.eig_S[1]).all()
    with pytest.raises(qk.NonFiniteError):
        gram.head_spectra(Q, K)


def test_layer_spectra_fields_derive_from_the_dataclass() -> None:
    widths = gram.LayerSpectra.widths()
    assert widths == {"eig_S": 2, "norm_sq": 0, "skew_sq": 0, "trace": 0, "sv_L_sq": 1,
                      "sv_T": 1, "abs_eig_L": 1, "n_live": 0, "err_rel": 0, "err_abs": 0}
    assert gram.LayerSpectra.factor_fields() == ("Q_red", "K_red")
    rng = np.random.default_rng(10)
    Q, K = rng.standard_normal((4, 2, 9)), rng.standard_normal((2, 2, 9))
    kv = np.array([0, 0, 1, 1])
    whole = gram.layer_spectra(Q, K, kv, keep_factors=True)
    parts = [gram.layer_spectra(Q[a:b], K, kv[a:b], keep_factors=True)
             for a, b in ((0, 1), (1, 4))]
    merged = gram.LayerSpectra.concat(parts)
    for name in (*widths, "Q_red", "K_red"):
        np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name))


@pytest.mark.parametrize("kv", [[0, 1, 2, 3], [0, 0, 1, 1], [0, 0, 1, 0], [2, 0, 2, 1]])
def test_layer_gram_is_the_gram_matrix_of_every_stacked_map(kv: list[int]) -> None:
    """Every block, both triangles (Cholesky reads one; the returned G must be whole)."""
    rng = np.random.default_rng(12)
    n, N = 2, 9
    Q = rng.standard_normal((4, n, N))
    K = rng.standard_normal((max(kv) + 1 if kv != [0, 1, 2, 3] else 4, n, N))
    G = gram.layer_gram(Q, K, np.array(kv))
    for h, g in enumerate(kv):
        M = np.vstack([K[g], Q[h]])
        np.testing.assert_allclose(G[h], M @ M.T, rtol=1e-13, atol=1e-13)


def test_qr_factor_and_reduce_heads_are_batched() -> None:
    rng = np.random.default_rng(13)
    Q, K = rng.standard_normal((2, 3, 2, 8))  # three heads, n = 2, N = 8
    U, F = gram.qr_factor(gram.stack(Q, K), basis=True)
    F_only = gram.qr_factor(gram.stack(Q, K))
    red = qk.reduce_heads(Q, K)
    for h in range(3):
        Uh, Fh = gram.qr_factor(gram.stack(Q[h], K[h]), basis=True)
        np.testing.assert_allclose(U[h], Uh, atol=1e-12)
        np.testing.assert_allclose(F[h], Fh, atol=1e-12)
        np.testing.assert_allclose(F_only[h], Fh, atol=1e-12)
        np.testing.assert_allclose(F[h] @ U[h].T, gram.stack(Q[h], K[h]), atol=1e-12)
        np.testing.assert_allclose(red.form[h], U[h].T @ (K[h].T @ Q[h]) @ U[h], atol=1e-12)


def test_small_weights_and_all_failed_layers() -> None:
    rng = np.random.default_rng(14)
    Q, K = 1e-3 * rng.standard_normal((2, 2, 3, 10))
    sp = gram.head_spectra(Q, K)
    for h in range(2):
        _compare(sp, h, _dense(Q[h], K[h]))
        ref = _dense(Q[h], K[h])["sv_L_sq"]
        np.testing.assert_allclose(sp.sv_L_sq[h], ref, rtol=1e-8)
        assert ref.max() < 1e-4  # values far below 1 (a clip at 1 would show)
    Q[:] = np.nan  # every head non-finite: all fail, none raises
    out = gram.layer_spectra(Q, K, np.arange(2))
    assert out.ok.tolist() == [False, False] and np.isnan(out.eig_S).all()


def test_factor_fields_only_when_asked_and_concat_of_one_part() -> None:
    rng = np.random.default_rng(15)
    Q, K = rng.standard_normal((2, 2, 2, 7))
    sp = gram.layer_spectra(Q, K, np.arange(2))
    assert sp.Q_red is None and sp.K_red is None
    assert gram.LayerSpectra.failed(2, 2, "x").Q_red is None
    kept = gram.layer_spectra(Q, K, np.arange(2), keep_factors=True)
    assert kept.Q_red is not None and kept.Q_red.shape == (2, 2, 4)
    one = gram.LayerSpectra.concat([kept])
    np.testing.assert_array_equal(one.eig_S, kept.eig_S)
    assert one.Q_red is not None and one.error == kept.error


def test_layer_shapes_and_kv_index_are_checked() -> None:
    rng = np.random.default_rng(16)
    Q, K = rng.standard_normal((3, 2, 6)), rng.standard_normal((2, 2, 6))
    with pytest.raises(qk.ShapeError, match="layer weights must be"):
        gram.layer_spectra(Q, K[0], np.zeros(3, dtype=int))
    with pytest.raises(qk.ShapeError, match="layer weights must be"):
        gram.layer_spectra(Q[0], K, np.zeros(1, dtype=int))
    for bad in ([0, -1, 1], [0, 2, 1]):
        with pytest.raises(qk.ShapeError, match=r"kv_index must lie in \[0, 2\)"):
            gram.layer_spectra(Q, K, np.array(bad))
    with pytest.raises(qk.ShapeError, match="must both have shape"):
        gram.head_spectra(Q[:2], K[:1])


def test_pivot_rule_of_the_fallback() -> None:
    """The documented rule: Cholesky unless the smallest squared pivot is at most
    ``PIVOT_LIMIT * max diag(G)`` (or there is no Cholesky factor)."""
    from qkforms.gram_factor import _cholesky

    passes = np.diag([4.0, 1e3 * PIVOT_LIMIT])  # squared pivots 4 and 1e-5 > 4e-8
    falls = np.diag([4.0, PIVOT_LIMIT])  # 1e-8 <= 4e-8 (also below PIVOT_LIMIT / 4)
    indefinite = -np.eye(2)
    F, ok = _cholesky(np.stack([passes, falls, indefinite, np.eye(2)]))
    assert ok.tolist() == [True, False, False, True]
    np.testing.assert_allclose(F[3], np.eye(2))  # heads factored one by one keep theirs
    F0, ok0 = _cholesky(np.zeros((0, 2, 2)))
    assert F0.shape == (0, 2, 2) and ok0.shape == (0,)

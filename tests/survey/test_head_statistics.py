"""The batched survey statistics agree with the core's per-head functions.

Every reference value here is computed head by head from the dense N x N form
``L = W_K^T W_Q`` (or from the core's own reduction), independently of the batched
Gram/Cholesky route of :mod:`qkforms.gram`.
"""

from __future__ import annotations

import numpy as np
import pytest

import qkforms as qk
from qkforms.gram import layer_gram, layer_spectra
from qkforms.head import reduce_heads
from qkforms.pairing import lobe_departure
from qkforms.survey.head_statistics import head_columns


def _layer(seed: int, n_q: int = 6, n_kv: int = 2, n: int = 4, N: int = 40):
    rng = np.random.default_rng(seed)
    W_Q = rng.standard_normal((n_q, n, N))
    W_K = rng.standard_normal((n_kv, n, N))
    # give the heads some structure: a shared symmetric component in some of them
    if n_q == 6 and n_kv == 2:
        W_Q[1] = W_K[0] + 0.3 * rng.standard_normal((n, N))
        W_Q[4] = -W_K[1] + 0.5 * rng.standard_normal((n, N))
    kv = np.arange(n_q) // (n_q // n_kv)
    return W_Q, W_K, kv


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spectra_match_dense_forms(seed: int) -> None:
    W_Q, W_K, kv = _layer(seed)
    n, N = W_Q.shape[1:]
    sp = layer_spectra(W_Q, W_K, kv, keep_factors=True)
    assert sp.ok.all()
    for h in range(W_Q.shape[0]):
        L = W_K[kv[h]].T @ W_Q[h]
        S, T = qk.parts(L)
        dense_S = np.sort(np.linalg.eigvalsh(S))[::-1]
        # nonzero spectrum of S: n largest and n smallest of the dense spectrum
        np.testing.assert_allclose(sp.eig_S[h, :n], dense_S[:n], rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(sp.eig_S[h, n:], dense_S[-n:], rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(sp.eig_S[h], qk.gram_spectrum(W_Q[h], W_K[kv[h]]),
                                   rtol=1e-9, atol=1e-10)
        e = qk.energies(L)
        assert sp.norm_sq[h] == pytest.approx(e.norm_sq, rel=1e-12)
        assert sp.skew_sq[h] == pytest.approx(e.skew_sq, rel=1e-10)
        assert sp.trace[h] == pytest.approx(np.trace(L), rel=1e-10, abs=1e-10)
        sv_L = np.linalg.svd(L, compute_uv=False)[:n]
        np.testing.assert_allclose(np.sqrt(sp.sv_L_sq[h]), sv_L, rtol=1e-9)
        sv_T = np.linalg.svd(T, compute_uv=False)[: 2 * n : 2]
        np.testing.assert_allclose(sp.sv_T[h], sv_T, rtol=1e-7)
        eig_L = np.sort(np.abs(np.linalg.eigvals(W_Q[h] @ W_K[kv[h]].T)))[::-1]
        np.testing.assert_allclose(sp.abs_eig_L[h], eig_L, rtol=1e-9)
        # the reduced factors rebuild L exactly up to an orthogonal change of basis
        L_red = sp.K_red[h].T @ sp.Q_red[h]
        core = reduce_heads(W_Q[h], W_K[kv[h]]).form
        assert np.allclose(qk.profile(L_red), qk.profile(core), atol=1e-12)
        assert np.sum(L_red**2) == pytest.approx(e.norm_sq, rel=1e-12)


def test_gram_blocks_match_stacked_products() -> None:
    W_Q, W_K, kv = _layer(5, n_q=4, n_kv=4)
    kv = np.array([2, 0, 3, 1])  # not grouped: exercises the copying branch
    G = layer_gram(W_Q, W_K, kv)
    for h in range(4):
        M = np.vstack([W_K[kv[h]], W_Q[h]])
        np.testing.assert_allclose(G[h], M @ M.T, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 3])
def test_columns_match_core_per_head(seed: int) -> None:
    W_Q, W_K, kv = _layer(seed)
    n, N = W_Q.shape[1:]
    cols = head_columns(layer_spectra(W_Q, W_K, kv), N=N, n=n)
    for h in range(W_Q.shape[0]):
        head = qk.Head(W_Q[h], W_K[kv[h]])
        L = head.form()
        S, _ = qk.parts(L)
        lam = np.linalg.eigvalsh(S)
        p = qk.profile(L)
        sig = head.signature()
        assert (cols["n_pos"][h], cols["n_neg"][h], cols["n_zero"][h]) == tuple(sig)
        assert tuple(sig) == (n, n, N - 2 * n)
        assert cols["balance"][h] == 1.0
        for name, ref in zip("abcd", p, strict=True):
            assert cols[name][h] == pytest.approx(ref, abs=1e-12)
        bS, cS, dS = qk.symmetric_profile(p)
        assert (cols["b_S"][h], cols["c_S"][h], cols["d_S"][h]) == pytest.approx(
            (bS, cS, dS), abs=1e-12)
        assert cols["sym_energy"][h] == pytest.approx(1 - p.a, abs=1e-12)
        assert cols["pairing"][h] == pytest.approx(qk.pairing_score(lam), abs=1e-10)
        rho = qk.lobe_ratio(lam)
        assert cols["rho"][h] == pytest.approx(rho, rel=1e-10)
        assert cols["pairing_bound"][h] == pytest.approx(qk.pairing_bound(rho), abs=1e-10)
        assert cols["pairing_gap"][h] == pytest.approx(
            qk.pairing_bound(rho) - qk.pairing_score(lam), abs=1e-10)
        assert cols["pairing_gap"][h] >= -1e-12  # Lemma 2
        assert cols["lobe_departure"][h] == pytest.approx(lobe_departure(lam), abs=1e-9)
        assert cols["theta_dist"][h] == pytest.approx(qk.theta_distance(p), abs=1e-12)
        tl = np.array(qk.theta_L(rho))
        assert cols["theta_L_dist"][h] == pytest.approx(np.linalg.norm(np.array(p) - tl),
                                                        abs=1e-10)
        lim = np.array(qk.accumulation_limit(rho))[1:]
        assert cols["thm5_dist"][h] == pytest.approx(
            np.linalg.norm(np.array([bS, cS, dS]) - lim), abs=1e-10)
        nrm = np.sqrt(np.sum(L**2))
        assert cols["trace_ratio"][h] == pytest.approx(abs(np.trace(L)) / nrm, rel=1e-9)
        hsv = np.linalg.svd(L, compute_uv=False)
        assert cols["participation_ratio"][h] == pytest.approx(
            np.sum(hsv**2) ** 2 / np.sum(hsv**4), rel=1e-9)
        assert cols["stable_rank"][h] == pytest.approx(np.sum(hsv**2) / hsv[0] ** 2, rel=1e-9)
        assert cols["leading_share"][h] == pytest.approx(hsv[0] ** 2 / np.sum(hsv**2),
                                                         rel=1e-9)
        assert cols["a_over_b"][h] == pytest.approx(p.a / p.b, rel=1e-9)
        assert cols["b_minus_a"][h] == pytest.approx(p.b - p.a, abs=1e-12)
        assert cols["spectral_type"][h] == qk.spectral_type(p)
        assert cols["norm_sq"][h] == pytest.approx(nrm**2, rel=1e-12)


def test_rank_one_head_lands_on_theta() -> None:
    # n = 1: L = k q^T is rank one, so its profile lies on Theta (Proposition 4)
    rng = np.random.default_rng(7)
    W_Q, W_K = rng.standard_normal((1, 1, 9)), rng.standard_normal((1, 1, 9))
    cols = head_columns(layer_spectra(W_Q, W_K, np.array([0])), N=9, n=1)
    assert cols["theta_dist"][0] < 1e-12
    assert cols["participation_ratio"][0] == pytest.approx(1.0)
    assert cols["a"][0] == pytest.approx(cols["b"][0])


def test_failed_heads_nan_and_degenerate_heads_measured() -> None:
    W_Q, W_K, kv = _layer(11)
    W_Q[0, 1, 3] = np.nan
    W_Q[2] = W_K[kv[2]]  # W_Q = W_K: the stacked map has rank n < 2n
    W_Q[3, :, :] = 0.0  # zero query map: L = 0
    sp = layer_spectra(W_Q, W_K, kv)
    assert sp.ok.tolist() == [False, True, True, True, True, True]  # only NaN fails
    assert "non-finite" in sp.error[0]
    assert np.isnan(sp.eig_S[0]).all() and np.isfinite(sp.eig_S[1:]).all()
    cols = head_columns(sp, N=40, n=4)
    assert cols["status"].tolist() == ["failed", "ok", "ok", "zero_form", "ok", "ok"]
    assert cols["valid"].tolist() == [False, True, True, False, True, True]
    assert np.isnan(cols["a"][0]) and cols["spectral_type"][0] is None
    # W_Q = W_K: S = K^T K is PSD of rank 4; float cannot decide the 4 zero eigenvalues
    L = W_K[kv[2]].T @ W_Q[2]
    assert cols["a"][2] == pytest.approx(0.0, abs=1e-12)
    assert cols["c"][2] == pytest.approx(1.0) and np.isnan(cols["n_pos"][2])
    assert cols["n_uncertain"][2] == 4 and cols["signature_by"][2] is None
    np.testing.assert_allclose(cols["theta_dist"][2], qk.theta_distance(qk.profile(L)),
                               atol=1e-12)
    # the zero form: signature (0, 0, N) and no live dimension, profile null
    assert (cols["n_pos"][3], cols["n_neg"][3], cols["n_zero"][3]) == (0, 0, 40)
    assert cols["n_live"][3] == 0 and np.isnan(cols["a"][3])
    assert sp.error[3].startswith("L = W_K^T W_Q is zero")
    # the other heads are unaffected by their neighbours
    clean = layer_spectra(*_layer(11)[:2], kv)
    np.testing.assert_allclose(sp.eig_S[[1, 4, 5]], clean.eig_S[[1, 4, 5]], rtol=1e-12)
    assert [cols["prediction"][h] for h in (1, 4, 5)] == ["thm3"] * 3
    assert all(cols["prediction_met"][h] is True for h in (1, 4, 5))


def test_ill_conditioned_head_uses_qr_route() -> None:
    # surjective but with cond(G) ~ 1e12: Cholesky pivots are below the limit, and the
    # QR route must still give the nonzero spectrum of S accurately
    rng = np.random.default_rng(3)
    n, N = 3, 30
    W_K = rng.standard_normal((1, n, N))
    W_Q = rng.standard_normal((1, n, N))
    W_Q[0, 0] = W_K[0, 0] + 1e-6 * rng.standard_normal(N)
    sp = layer_spectra(W_Q, W_K, np.array([0]))
    assert sp.ok[0]
    ref = qk.gram_spectrum(W_Q[0], W_K[0])  # the core also switches to QR here
    scale = np.abs(ref).max()
    np.testing.assert_allclose(sp.eig_S[0], ref, rtol=0, atol=1e-13 * scale)
    L = W_K[0].T @ W_Q[0]
    dense = np.sort(np.linalg.eigvalsh(0.5 * (L + L.T)))[::-1]
    np.testing.assert_allclose(sp.eig_S[0], np.r_[dense[:n], dense[-n:]], rtol=0,
                               atol=1e-13 * scale)
    # the Cholesky pivots of G are below the limit, so this head took the QR route
    G = layer_gram(W_Q, W_K, np.array([0]))[0]
    piv = np.diagonal(np.linalg.cholesky(G)) ** 2
    assert piv.min() < 1e-8 * np.diagonal(G).max()


def test_exact_with_folded_gains() -> None:
    """Nonzero gains keep the exact signature (Sylvester); zero gains can break it."""
    from types import SimpleNamespace

    from qkforms.exact import head_signature
    from qkforms.survey.layer import LayerInputs, LayerOptions, process_layer

    rng = np.random.default_rng(8)
    n, N = 3, 10
    lw = SimpleNamespace(layer=0, W_Q=rng.standard_normal((1, n, N)),
                         W_K=rng.standard_normal((1, n, N)), kv_index=np.array([0]))
    info = SimpleNamespace(N=N, n=n)
    gamma = rng.uniform(0.5, 2.0, N)
    res = process_layer(lw, info, LayerInputs("t", gamma=gamma), LayerOptions(exact=True))
    assert res.heads.column("signature_by").to_pylist() == ["exact"]
    assert res.heads.column("prediction_met").to_pylist() == [True]
    assert res.heads.column("n_pos").to_pylist() == [n]
    # five zero gains: the folded stacked map has rank <= 5 < 2n = 6
    gamma[:5] = 0.0
    sig = head_signature(lw.W_Q[0] * gamma, lw.W_K[0] * gamma)
    assert tuple(sig) != (n, n, N - 2 * n)
    res = process_layer(lw, info, LayerInputs("t", gamma=gamma), LayerOptions(exact=True))
    t = res.heads.to_pylist()[0]
    assert t["status"] == "ok" and t["signature_by"] == "exact"  # measured, not failed
    assert (t["n_pos"], t["n_neg"], t["n_zero"]) == tuple(sig)
    assert t["surjective"] is False and t["prediction"] == "none"
    assert t["stacked_rank"] == t["live_rank"] == 5

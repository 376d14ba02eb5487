"""Storage-precision bands: known sensitivities, sampled perturbations, and the signature.

* a rank-one head (n = 1): the first-order bands of ``a`` and ``c`` equal the closed
  forms from ``a = (1 - t^2)/2``, ``c = t_+^2`` (Proposition 4), and the distance to Θ
  stays 0 under every perturbation (a perturbed rank-one head is rank one);
* a head with a tiny norm gain on one input coordinate (N = 2n): a gain that the storage
  could hold as 0 makes the signature unstable (the zero-gain head is degenerate,
  checked), a gain stored to float32 precision leaves it stable;
* sampled weights in the box (uniform, random corners, and the corners that maximize the
  linearization): every value lies in the rigorous bands; the first-order bands' coverage
  is measured (uniform samples: all covered; the adversarial corners exceed them only by
  second-order terms, bounded here);
* kinds: the rigorous band is reported while it is useful, the first-order one beyond.
"""

from __future__ import annotations

import numpy as np
import pytest

from qkforms.bands import BAND_STATS, layer_bands, precision_band, stat_gradients
from qkforms.errors import NonFiniteError, ParameterError, ShapeError, ZeroFormError
from qkforms.gram import head_spectra
from qkforms.models.precision import folded_half_widths
from qkforms.survey.head_statistics import head_statistics


def _stats(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    n, N = Q.shape
    sp = head_spectra(Q[None], K[None])
    st = head_statistics(sp.eig_S, sp.norm_sq, sp.skew_sq, sp.trace, sp.sv_L_sq, N=N, n=n)
    return np.array([float(st[s][0]) for s in BAND_STATS])


def _gradients(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Central differences of every band statistic: shape (stats, 2, n, N)."""
    G = np.zeros((len(BAND_STATS), 2) + Q.shape)
    for w in (0, 1):
        for idx in np.ndindex(*Q.shape):
            M = (Q, K)[w]
            e = np.zeros_like(M)
            e[idx] = 1e-7 * max(abs(M[idx]), 1.0)
            plus = _stats(Q + e, K) if w == 0 else _stats(Q, K + e)
            minus = _stats(Q - e, K) if w == 0 else _stats(Q, K - e)
            G[(slice(None), w) + idx] = (plus - minus) / (2 * e[idx])
    return G


def _inside(iv, v: float) -> bool:  # type: ignore[no-untyped-def]
    return bool(iv.lo <= v <= iv.hi)


# ------------------------------------------------------------------ known sensitivities


def test_rank_one_head_first_order_bands_are_the_closed_forms() -> None:
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 1, 7))
    q[0, 0] = abs(q[0, 0]) + 2.0
    k[0, 0] = abs(k[0, 0]) + 2.0  # t > 0: c = t^2, d = 0
    H_q, H_k = np.abs(q) * 2.0**-9, np.abs(k) * 2.0**-9
    band = precision_band(q, k, H_q, H_k)
    nq, nk = np.linalg.norm(q), np.linalg.norm(k)
    t = float(q[0] @ k[0]) / (nq * nk)
    dt_dq = k[0] / (nq * nk) - t * q[0] / nq**2
    dt_dk = q[0] / (nq * nk) - t * k[0] / nk**2
    spread = np.abs(dt_dq) @ H_q[0] + np.abs(dt_dk) @ H_k[0]   # first-order move of t
    a0, c0 = (1 - t * t) / 2, t * t
    fo = band.first_order
    assert fo["a"].lo == pytest.approx(a0 - abs(t) * spread, rel=1e-9)
    assert fo["a"].hi == pytest.approx(a0 + abs(t) * spread, rel=1e-9)
    assert fo["c"].hi - fo["c"].lo == pytest.approx(2 * 2 * abs(t) * spread, rel=1e-8)
    assert (fo["c"].lo + fo["c"].hi) / 2 == pytest.approx(c0, rel=1e-12)
    assert fo["d"].hi < 1e-12
    # Θ: every perturbed head is rank one, so its distance to Θ is 0
    assert fo["theta_dist"].hi < 1e-7 and band.rigorous["theta_dist"].lo == 0.0
    for _ in range(50):
        dq = rng.uniform(-1, 1, q.shape) * H_q
        dk = rng.uniform(-1, 1, k.shape) * H_k
        v = _stats(q + dq, k + dk)
        assert v[BAND_STATS.index("theta_dist")] < 1e-7
        for s, x in zip(BAND_STATS, v, strict=True):
            assert _inside(band.rigorous[s], x)


def _tiny_gain_head(eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    Q0, K0 = rng.standard_normal((2, 2, 4))   # n = 2, N = 2n = 4: no zero eigenvalue
    gamma = np.array([1.0, 0.8, 1.2, eps])
    return Q0, K0, gamma


def test_tiny_gain_that_could_be_zero_makes_the_signature_unstable() -> None:
    """Both maps see the gain, so the tiny eigenvalue is about eps^2 (det G ~ eps^2)."""
    eps = 1e-2
    Q0, K0, gamma = _tiny_gain_head(eps)
    Q, K = Q0 * gamma, K0 * gamma

    def sym_eigs(g: np.ndarray) -> np.ndarray:
        A, B = Q0 * g, K0 * g
        return np.linalg.eigvalsh(0.5 * (B.T @ A + A.T @ B))

    lam = sym_eigs(gamma)
    small = float(np.min(np.abs(lam)) / np.max(np.abs(lam)))
    assert small < 10 * eps**2
    lam_half = sym_eigs(gamma * np.array([1.0, 1.0, 1.0, 0.5]))
    assert np.min(np.abs(lam_half)) == pytest.approx(np.min(np.abs(lam)) / 4, rel=0.05)
    # the weights are exact, the gain is known to float32 precision: stable
    zero = np.zeros_like(Q0)
    f32 = gamma * 2.0**-24
    band = precision_band(Q, K, folded_half_widths(Q0, zero, gamma, f32),
                          folded_half_widths(K0, zero, gamma, f32))
    assert band.kind == "rigorous-float"
    assert band.signature_stable and band.rigorous_signature[0]
    assert band.signature_margin == pytest.approx(small, rel=1e-2)  # minus R/max|lam|
    # the last gain could be 0 (a half-width of eps): unstable by either bound
    h = np.array([0.0, 0.0, 0.0, eps])
    band = precision_band(Q, K, folded_half_widths(Q0, zero, gamma, h),
                          folded_half_widths(K0, zero, gamma, h))
    assert not band.signature_stable
    assert not band.rigorous_signature[0] and not band.first_order_signature[0]
    # first order: eps^2 moves by at least 2 eps^2 when eps moves by eps
    assert band.first_order_signature[1] <= -0.9 * small
    # ... and indeed: the head with that gain 0 is degenerate (a zero eigenvalue)
    lam0 = sym_eigs(gamma * np.array([1.0, 1.0, 1.0, 0.0]))
    assert np.min(np.abs(lam0)) < 1e-12 * np.max(np.abs(lam0))


# ------------------------------------------------------------------ sampled perturbations


@pytest.mark.parametrize("rel,excess", [(2.0**-9, 0.05), (2.0**-5, 0.25)])
def test_sampled_weights_lie_in_the_rigorous_bands(rel: float, excess: float) -> None:
    """Uniform samples, random corners and the linearization's extreme corners."""
    rng = np.random.default_rng(2)
    n, N = 2, 10
    covered = total = 0
    worst = 0.0
    for _ in range(6):
        Q, K = rng.standard_normal((2, n, N))
        H_Q, H_K = np.abs(Q) * rel, np.abs(K) * rel
        band = precision_band(Q, K, H_Q, H_K)
        G = _gradients(Q, K)
        widest = max(iv.width for iv in band.first_order.values() if iv is not None)
        samples = []
        for _ in range(20):
            samples.append((rng.uniform(-1, 1, Q.shape), rng.uniform(-1, 1, K.shape)))
            samples.append((rng.choice([-1.0, 1.0], Q.shape), rng.choice([-1.0, 1.0], K.shape)))
        for j in range(len(BAND_STATS)):
            for sign in (1.0, -1.0):
                samples.append((sign * np.sign(G[j, 0]), sign * np.sign(G[j, 1])))
        for k, (uq, uk) in enumerate(samples):
            v = _stats(Q + uq * H_Q, K + uk * H_K)
            for s, x in zip(BAND_STATS, v, strict=True):
                assert _inside(band.rigorous[s], x), (s, x, band.rigorous[s])
                fo = band.first_order[s]
                if k < 40 and k % 2 == 0:  # uniform samples
                    covered += _inside(fo, x)
                    total += 1
                worst = max(worst, (x - fo.hi) / widest, (fo.lo - x) / widest)
    assert covered == total  # uniform samples: first-order bands cover all of them
    # the extreme corners leave the first-order bands by second-order terms only
    assert worst < excess


def test_certified_centre_gives_rigorous_kind_and_contains_samples() -> None:
    from qkforms.exact import enclose

    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((2, 3, 12))
    H_Q, H_K = np.abs(Q) * 2.0**-9, np.abs(K) * 2.0**-9
    plain = precision_band(Q, K, H_Q, H_K)
    proved = precision_band(Q, K, H_Q, H_K, enclosure=enclose(Q, K))
    assert (plain.kind, proved.kind) == ("rigorous-float", "rigorous")
    assert proved.radius < plain.radius  # a proof instead of the 1e-9 allowance
    for _ in range(30):
        v = _stats(Q + rng.uniform(-1, 1, Q.shape) * H_Q, K + rng.uniform(-1, 1, K.shape) * H_K)
        for s, x in zip(BAND_STATS, v, strict=True):
            assert _inside(proved.interval(s), x)


def test_closed_form_gradients_equal_finite_differences() -> None:
    """The gradients behind the first-order bands, against central differences."""
    rng = np.random.default_rng(6)
    Q, K = rng.standard_normal((2, 3, 11))
    Q = Q * 1e-3  # unequal scales: the gradients are returned in the weights' own units
    G = _gradients(Q, K)
    closed = stat_gradients(Q, K)
    for j, s in enumerate(BAND_STATS):
        dq, dk = closed[s]
        scale = np.abs(G[j]).max()
        assert np.allclose(dq, G[j, 0], atol=1e-6 * scale), s
        assert np.allclose(dk, G[j, 1], atol=1e-6 * scale), s


# ------------------------------------------------------------------ kinds and errors


def test_kind_follows_usefulness() -> None:
    rng = np.random.default_rng(4)
    Q, K = rng.standard_normal((2, 4, 20))
    assert precision_band(Q, K, Q * 0, K * 0).kind == "rigorous-float"  # below the floor
    assert precision_band(Q, K, np.abs(Q) * 2**-9, np.abs(K) * 2**-9).kind == "rigorous-float"
    wide = precision_band(Q, K, np.abs(Q) * 0.15, np.abs(K) * 0.15)  # 4-bit-like steps
    assert wide.kind == "first-order"
    assert (max(iv.width for iv in wide.rigorous.values() if iv is not None)
            > 10 * max(iv.width for iv in wide.first_order.values() if iv is not None))
    for s in BAND_STATS:  # the reported band is the first-order one, inside its range
        assert wide.interval(s) == wide.first_order[s]


def test_gqa_layer_matches_single_heads() -> None:
    rng = np.random.default_rng(5)
    Q, K = rng.standard_normal((4, 2, 9)), rng.standard_normal((2, 2, 9))
    HQ, HK = np.abs(Q) * 1e-3, np.abs(K) * 1e-3
    kv = [0, 0, 1, 1]
    bands = layer_bands(Q, K, HQ, HK, kv, valid=[True, False, True, True])
    assert bands[1] is None
    for h in (0, 2, 3):
        one = precision_band(Q[h], K[kv[h]], HQ[h], HK[kv[h]])
        band = bands[h]
        assert band is not None
        for s in BAND_STATS:
            assert band.interval(s) == one.interval(s)


def test_bad_input_is_refused() -> None:
    Q = np.ones((1, 2, 5))
    with pytest.raises(ParameterError, match="nonnegative"):
        layer_bands(Q, Q, -Q, Q)
    with pytest.raises(ShapeError, match="shapes of the weights"):
        layer_bands(Q, Q, Q[:, :1], Q)
    with pytest.raises(NonFiniteError, match="H_K"):
        layer_bands(Q, Q, Q, Q * np.nan)
    with pytest.raises(ShapeError, match="kv_index"):
        layer_bands(Q, Q, Q, Q, [1])
    with pytest.raises(ZeroFormError):
        precision_band(np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3)))
    with pytest.raises(ParameterError, match="unknown statistic"):
        precision_band(np.eye(1, 3), np.eye(1, 3, 1), np.zeros((1, 3)),
                       np.zeros((1, 3))).interval("x")

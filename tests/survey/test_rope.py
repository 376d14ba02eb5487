"""RoPE relative forms (docs/theory.md §12.4) against an independent rotary implementation."""

from __future__ import annotations

import numpy as np
import pytest

from qkforms.errors import UnsupportedArchitectureError
from qkforms.survey.rope import relative_form, rope_settings


def _hf_rotary(x: np.ndarray, pos: int, base: float, r: int, factor: float = 1.0,
               interleaved: bool = False) -> np.ndarray:
    """Rotary embedding of a vector at position ``pos``, written as in HF / GPT-J.

    Split-half: ``x * cos + rotate_half(x) * sin`` with ``rotate_half([x1, x2]) =
    [-x2, x1]`` on the first r coordinates; interleaved: pairs (2i, 2i+1).
    """
    inv_freq = 1.0 / (base ** (np.arange(0, r, 2, dtype=np.float64) / r)) / factor
    ang = pos * inv_freq
    out = x.copy()
    if interleaved:
        a, b = x[0:r:2], x[1:r:2]
        out[0:r:2] = a * np.cos(ang) - b * np.sin(ang)
        out[1:r:2] = b * np.cos(ang) + a * np.sin(ang)
        return out
    emb = np.concatenate([ang, ang])
    rot = np.concatenate([-x[r // 2 : r], x[: r // 2]])
    out[:r] = x[:r] * np.cos(emb) + rot * np.sin(emb)
    return out


@pytest.mark.parametrize(("fraction", "factor", "interleaved"),
                         [(1.0, 1.0, False), (0.25, 1.0, False), (0.5, 4.0, False),
                          (1.0, 1.0, True)])
def test_scores_match_rotary_embedding(fraction: float, factor: float, interleaved: bool) -> None:
    rng = np.random.default_rng(0)
    n, N, base = 16, 40, 10000.0
    W_Q, W_K = rng.standard_normal((2, n, N))
    info = {"rope_base": base, "rotary_fraction": fraction,
            "rope_scaling": {"type": "linear", "factor": factor} if factor != 1.0 else None,
            "rope_layout": "interleaved" if interleaved else "split-half"}
    r = int(n * fraction)
    x_q, x_k = rng.standard_normal((2, N))
    for m_q, m_k in [(0, 0), (5, 2), (17, 17), (130, 3)]:
        q = _hf_rotary(W_Q @ x_q, m_q, base, r, factor, interleaved)
        k = _hf_rotary(W_K @ x_k, m_k, base, r, factor, interleaved)
        L_d = relative_form(W_Q, W_K, m_q - m_k, info)
        # score of query token x_q on key token x_k: L(x_k, x_q) = x_k^T L x_q
        assert x_k @ L_d @ x_q == pytest.approx(q @ k, rel=1e-10, abs=1e-10)


def test_d0_is_the_survey_form_and_reduced_factors_work() -> None:
    from qkforms.gram import layer_spectra

    rng = np.random.default_rng(1)
    n, N = 4, 24
    W_Q, W_K = rng.standard_normal((1, n, N)), rng.standard_normal((1, n, N))
    info = {"rope_base": 100.0}
    np.testing.assert_allclose(relative_form(W_Q[0], W_K[0], 0, info), W_K[0].T @ W_Q[0])
    sp = layer_spectra(W_Q, W_K, np.array([0]), keep_factors=True)
    Q_red, K_red = sp.Q_red[0], sp.K_red[0]
    # the reduced forms are orthogonal representatives: same spectra at every d
    for d in (0, 1, 7):
        full = relative_form(W_Q[0], W_K[0], d, info)
        red = relative_form(Q_red, K_red, d, info)
        np.testing.assert_allclose(np.linalg.svd(red, compute_uv=False),
                                   np.linalg.svd(full, compute_uv=False)[: 2 * n],
                                   rtol=1e-9, atol=1e-9)
        s_red = np.linalg.eigvalsh(red + red.T)
        s_full = np.sort(np.linalg.eigvalsh(full + full.T))
        np.testing.assert_allclose(s_red[:n], s_full[:n], rtol=1e-9)
        np.testing.assert_allclose(s_red[-n:], s_full[-n:], rtol=1e-9)


def test_proposition1_T_d_is_power_of_T_1() -> None:
    # nondegenerate example: square invertible factors on the head space (N = n)
    rng = np.random.default_rng(2)
    n = 6
    Q, K = rng.standard_normal((2, n, n))
    info = {"rope_base": 50.0, "rotary_fraction": 2 / 3}
    L0 = relative_form(Q, K, 0, info)
    T1 = np.linalg.solve(L0, relative_form(Q, K, 1, info))
    for d in range(6):
        Td = np.linalg.solve(L0, relative_form(Q, K, d, info))
        np.testing.assert_allclose(Td, np.linalg.matrix_power(T1, d), rtol=1e-8, atol=1e-9)
    # and T_{d+e} = T_d T_e (RoPE-like, Definition 3)
    T2 = np.linalg.solve(L0, relative_form(Q, K, 2, info))
    T3 = np.linalg.solve(L0, relative_form(Q, K, 3, info))
    T5 = np.linalg.solve(L0, relative_form(Q, K, 5, info))
    np.testing.assert_allclose(T5, T2 @ T3, rtol=1e-8, atol=1e-9)


def test_unrotated_dimensions_and_settings() -> None:
    s = rope_settings({"rope_base": 1e4, "rotary_fraction": 0.25})
    assert s.rotary_fraction == 0.25 and s.layout == "split-half"
    # with fraction 0.5 of n = 4 only coordinates 0, 1 rotate: a query living on
    # coordinates 2, 3 gives the same form at every displacement
    Q = np.zeros((4, 4))
    Q[2, 0], Q[3, 1] = 1.0, 2.0
    K = np.eye(4)
    info = {"rope_base": 10.0, "rotary_fraction": 0.5}
    np.testing.assert_allclose(relative_form(Q, K, 9, info), relative_form(Q, K, 0, info))
    with pytest.raises(UnsupportedArchitectureError):
        rope_settings({"rope_base": 1e4, "rope_scaling": {"rope_type": "yarn", "factor": 4}})
    with pytest.raises(UnsupportedArchitectureError):
        rope_settings({"rotary_fraction": 1.0})

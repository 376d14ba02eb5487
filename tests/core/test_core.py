"""Unit tests of the float64 core against independent computations and known values."""

from __future__ import annotations

import numpy as np
import pytest

import qkforms as qk
from qkforms.faces import spectral_type_imbalance

RNG = np.random.default_rng(12345)


def dense_profile(L: np.ndarray) -> np.ndarray:
    """Definition 6 written out directly (independent of qkforms.profile)."""
    S = (L + L.T) / 2
    T = (L - L.T) / 2
    lam = np.linalg.eigvalsh(S)
    pos = sorted((x for x in lam if x > 0), reverse=True)
    neg = sorted((-x for x in lam if x < 0), reverse=True)
    k = max(len(pos), len(neg))
    alpha = np.array(pos + [0.0] * (k - len(pos)))
    beta = np.array(neg + [0.0] * (k - len(neg)))
    nsq = float(np.sum(L**2))
    return np.array(
        [
            np.sum(T**2) / nsq,
            2 * alpha @ beta / nsq,
            np.sum(np.clip(alpha - beta, 0, None) ** 2) / nsq,
            np.sum(np.clip(beta - alpha, 0, None) ** 2) / nsq,
        ]
    )


# --- parts and energies (Lemma 5) -------------------------------------------------


def test_parts_reassemble_and_are_orthogonal() -> None:
    L = RNG.standard_normal((6, 6))
    S, T = qk.parts(L)
    np.testing.assert_allclose(S + T, L)
    np.testing.assert_allclose(S, S.T)
    np.testing.assert_allclose(T, -T.T)
    assert abs(np.sum(S * T)) < 1e-12


def test_energies_lemma5_identities() -> None:
    L = RNG.standard_normal((7, 7))
    e = qk.energies(L)
    assert e.norm_sq == pytest.approx(np.linalg.norm(L) ** 2)
    assert e.trace_sq == pytest.approx(np.trace(L @ L))
    assert e.sym_sq == pytest.approx(0.5 * e.norm_sq + 0.5 * e.trace_sq)
    assert e.skew_sq == pytest.approx(0.5 * e.norm_sq - 0.5 * e.trace_sq)
    assert e.sym_sq + e.skew_sq == pytest.approx(e.norm_sq)


def test_energies_batched() -> None:
    Ls = RNG.standard_normal((3, 4, 4))
    e = qk.energies(Ls)
    assert e.norm_sq.shape == (3,)
    assert e.trace_sq[1] == pytest.approx(np.trace(Ls[1] @ Ls[1]))


@pytest.mark.parametrize("bad", [np.zeros((2, 3)), np.zeros((0, 0)), np.zeros(3)])
def test_non_square_rejected(bad: np.ndarray) -> None:
    with pytest.raises(qk.ShapeError):
        qk.parts(bad)


def test_nan_rejected_with_index() -> None:
    L = np.eye(3)
    L[1, 2] = np.nan
    with pytest.raises(qk.NonFiniteError, match=r"\(1, 2\)"):
        qk.profile(L)


# --- signature -------------------------------------------------------------------


def test_count_signs_threshold_is_relative() -> None:
    assert qk.count_signs([1e6, -1e-2, 0.0], tol=1e-9) == (1, 1, 1)
    assert qk.count_signs([1e6, -1e-2, 0.0], tol=1e-7) == (1, 0, 2)
    assert qk.count_signs([0.0, 0.0]) == (0, 0, 2)


@pytest.mark.parametrize(("n", "N"), [(1, 2), (2, 9), (4, 20), (8, 64), (3, 6)])
def test_theorem3_random_heads(n: int, N: int) -> None:
    Q, K = RNG.standard_normal((2, n, N))
    h = qk.Head(Q, K)
    assert h.is_surjective()
    assert h.signature() == (n, n, N - 2 * n)
    assert qk.signature(h.form()) == (n, n, N - 2 * n)
    assert h.expected_signature() == (n, n, N - 2 * n)


def test_degenerate_heads_break_theorem3() -> None:
    Q = RNG.standard_normal((4, 20))
    same = qk.Head(Q, Q)  # S = Q^T Q is PSD of rank 4
    assert not same.is_surjective()
    assert same.signature() == (4, 0, 16)
    with pytest.raises(qk.DegenerateHeadError, match="rank 4 < 2n = 8"):
        same.expected_signature()
    # exactly rank 2 (rows 2, 3 are exact multiples of rows 0, 1): Lemma 3 caps at (2, 2)
    B = RNG.standard_normal((2, 20))
    low = qk.Head(np.vstack([B, 2.0 * B[:1], -B[1:]]), Q)
    assert not low.signature_decision().decided
    assert low.signature() == qk.exact.head_signature(low.W_Q, low.W_K) == (2, 2, 16)
    assert low.signature(method="exact") == qk.signature(low.form()) == (2, 2, 16)
    with pytest.raises(qk.UndecidedSignatureError, match="within their error bound"):
        low.signature(method="float")


def test_float_products_are_exactly_full_rank() -> None:
    # A @ B is rank 2 in exact arithmetic of the factors, but its rounded entries are not:
    # the stored matrix has full rank, and the exact signature is about the stored weights
    Q = RNG.standard_normal((4, 20))
    low = qk.Head(RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 20)), Q)
    d = low.signature_decision()
    assert not d.decided and d.n_uncertain == 4  # the rounding-sized eigenvalues
    assert low.signature() == (4, 4, 12)          # exact, of the stored floats
    assert qk.signature(low.form()) == (2, 2, 16)  # a threshold reads the model's rank


def test_head_with_N_below_2n() -> None:
    Q, K = RNG.standard_normal((2, 5, 7))
    h = qk.Head(Q, K)
    assert not h.is_surjective()
    assert h.signature() == qk.signature(h.form())
    assert sum(h.signature()) == 7


# --- Gram route vs dense (Lemma 10) ----------------------------------------------


def test_gram_spectrum_matches_dense_nonzero_spectrum() -> None:
    Q, K = RNG.standard_normal((2, 6, 40))
    lam = qk.gram_spectrum(Q, K)
    dense = np.sort(np.linalg.eigvalsh(qk.parts(K.T @ Q)[0]))[::-1]
    np.testing.assert_allclose(lam[:6], dense[:6], rtol=1e-10)
    np.testing.assert_allclose(lam[6:], dense[-6:], rtol=1e-10)
    np.testing.assert_allclose(dense[6:-6], 0.0, atol=1e-10)


def test_gram_spectrum_batched_equals_per_head() -> None:
    Q, K = RNG.standard_normal((2, 3, 4, 30))
    lam = qk.gram_spectrum(Q, K)
    for i in range(3):
        np.testing.assert_allclose(lam[i], qk.Head(Q[i], K[i]).spectrum(), rtol=1e-12)


def test_gram_spectrum_qr_fallback_for_ill_conditioned_batch() -> None:
    Q, K = RNG.standard_normal((2, 2, 3, 12))
    K[1] = Q[1]  # second head degenerate: falls back to the QR route
    lam = qk.gram_spectrum(Q, K)
    dense = np.sort(np.linalg.eigvalsh(qk.parts(K[1].T @ Q[1])[0]))[::-1][:6]
    np.testing.assert_allclose(lam[1][:3], dense[:3], rtol=1e-10)
    assert np.max(np.abs(lam[1][3:])) < 1e-12 * lam[1][0]


def test_reduced_form_is_exact_representative() -> None:
    Q, K = RNG.standard_normal((2, 3, 25))
    h = qk.Head(Q, K)
    red = h.reduced()
    L = h.form()
    np.testing.assert_allclose(red.basis.T @ red.basis, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(red.form, red.basis.T @ L @ red.basis, atol=1e-10)
    np.testing.assert_allclose(red.basis @ red.form @ red.basis.T, L, atol=1e-10)
    np.testing.assert_allclose(qk.profile(red.form), qk.profile(L), atol=1e-12)


def test_head_energies_from_gram_blocks() -> None:
    Q, K = RNG.standard_normal((2, 4, 15))
    np.testing.assert_allclose(qk.head_energies(Q, K), qk.energies(K.T @ Q), rtol=1e-12)


def test_homogenized_form_reproduces_biaffine_score() -> None:
    Q, K = RNG.standard_normal((2, 3, 5))
    bq, bk = RNG.standard_normal((2, 3))
    h = qk.Head(Q, K, b_Q=bq, b_K=bk)
    x_key, x_query = RNG.standard_normal((2, 5))
    score = (Q @ x_query + bq) @ (K @ x_key + bk)
    Lhat = h.homogenized_form()
    assert np.append(x_key, 1) @ Lhat @ np.append(x_query, 1) == pytest.approx(score)


def test_head_shape_errors() -> None:
    with pytest.raises(qk.ShapeError, match="same shape"):
        qk.Head(np.ones((2, 5)), np.ones((3, 5)))
    with pytest.raises(qk.ShapeError, match="one head"):
        qk.Head(np.ones((2, 2, 5)), np.ones((2, 2, 5)))
    with pytest.raises(qk.ZeroFormError):
        qk.Head(np.zeros((2, 5)), np.ones((2, 5))).profile()


def test_heads_need_a_row_and_a_column_and_one_by_one_is_a_head() -> None:
    """A head has ``n >= 1`` and ``N >= 1``: an empty dimension is a ShapeError (also in a
    batch), and the smallest head ``n = N = 1`` works: ``L = (6)`` is PSD, profile
    ``(0, 0, 1, 0)``, spectrum ``(6, 0)`` on the reduced 2n = 2 values."""
    for shape in ((0, 5), (2, 0), (3, 2, 0), (3, 0, 4)):
        with pytest.raises(qk.ShapeError, match="n >= 1 and N >= 1"):
            qk.gram_spectrum(np.ones(shape), np.ones(shape))
    with pytest.raises(qk.ShapeError, match="n >= 1 and N >= 1"):
        qk.Head(np.ones((0, 5)), np.ones((0, 5)))
    h = qk.Head([[2.0]], [[3.0]])
    assert tuple(h.profile()) == pytest.approx((0.0, 0.0, 1.0, 0.0))
    assert qk.gram_spectrum([[2.0]], [[3.0]]).tolist() == pytest.approx([6.0, 0.0])
    np.testing.assert_allclose(qk.gram_spectrum(np.full((2, 1, 1), 2.0),
                                                np.full((2, 1, 1), 3.0)), [[6.0, 0.0]] * 2)


def test_square_input_is_checked_on_the_last_two_axes() -> None:
    """A batch of non-square matrices is refused like a single one (ShapeError)."""
    for bad in (np.ones((3, 2, 3)), np.ones((2, 2, 2, 3))):
        with pytest.raises(qk.ShapeError, match="square"):
            qk.profile(bad)
    assert np.asarray(qk.profile(np.stack([np.eye(2), -np.eye(2)])).c).tolist() == [1.0, 0.0]


def test_empty_matrices_are_refused_in_any_batch_shape() -> None:
    """0 x 0 matrices are refused whether alone or in a batch of any depth (the emptiness
    test reads the matrix axes, not a batch axis)."""
    for bad in (np.ones((0, 0)), np.ones((3, 0, 0)), np.ones((2, 3, 0, 0))):
        with pytest.raises(qk.ShapeError, match="non-empty square"):
            qk.profile(bad)


def test_head_energies_are_those_of_the_dense_form_at_unequal_weight_scales() -> None:
    """``Head.energies()`` are the Lemma 5 energies of ``K^T Q`` themselves, not only
    their ratios: W_Q and W_K of very different magnitudes (rescaled internally by
    different powers of two) give ``|L|^2``, ``|S|^2``, ``|T|^2``, ``tr L`` of the
    dense form; and a single head's energies are Python floats."""
    rng = np.random.default_rng(8)
    Q, K = 1e3 * rng.standard_normal((3, 7)), 3e-5 * rng.standard_normal((3, 7))
    got = qk.Head(Q, K).energies()
    want = qk.energies(K.T @ Q)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-10)
    assert all(type(v) is float for v in qk.head_energies(Q, K))
    assert "np.float64" not in repr(qk.head_energies(Q, K))


def test_float_ratio_or_inf_is_silent_and_infinite_on_zero_denominators() -> None:
    """``FLOAT64.ratio_or_inf``: ``num/den`` where ``den > 0``, ``+inf`` where ``den = 0``
    (also for ``0/0``), with no RuntimeWarning for the lanes it discards."""
    import warnings

    from qkforms.arithmetic import FLOAT64

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = FLOAT64.ratio_or_inf(np.array([0.0, 3.0, 1.0]), np.array([0.0, 0.0, 4.0]))
    assert out.tolist() == [np.inf, np.inf, 0.25]


# --- profile (Definition 6, Lemma 4) -----------------------------------------------


@pytest.mark.parametrize("N", [2, 3, 5, 9])
def test_profile_matches_direct_definition(N: int) -> None:
    for _ in range(5):
        L = RNG.standard_normal((N, N))
        np.testing.assert_allclose(qk.profile(L), dense_profile(L), atol=1e-12)


def test_profile_vertices() -> None:
    A = RNG.standard_normal((4, 4))
    assert qk.profile(A - A.T) == pytest.approx((1, 0, 0, 0))
    assert qk.profile(np.diag([1.0, -1.0])) == pytest.approx((0, 1, 0, 0))
    assert qk.profile(A @ A.T) == pytest.approx((0, 0, 1, 0))
    assert qk.profile(-A @ A.T) == pytest.approx((0, 0, 0, 1))


def test_profile_invariances() -> None:
    L = RNG.standard_normal((5, 5))
    p = np.array(qk.profile(L))
    U, _ = np.linalg.qr(RNG.standard_normal((5, 5)))
    np.testing.assert_allclose(qk.profile(3.7 * L), p, atol=1e-12)
    np.testing.assert_allclose(qk.profile(L.T), p, atol=1e-12)
    np.testing.assert_allclose(qk.profile(U.T @ L @ U), p, atol=1e-12)
    np.testing.assert_allclose(qk.profile(-L), p[[0, 1, 3, 2]], atol=1e-12)


def test_profile_padding_and_zero_eigenvalues_change_nothing() -> None:
    p = qk.profile_from_eigenvalues([3.0, -1.0], 20.0)
    q = qk.profile_from_eigenvalues([3.0, 0.0, 0.0, -1.0, 0.0], 20.0)
    assert p == q
    assert p == pytest.approx((0.5, 0.3, 0.2, 0.0))


def test_profile_of_zero_raises() -> None:
    with pytest.raises(qk.ZeroFormError, match="undefined"):
        qk.profile(np.zeros((3, 3)))


def test_lemma4_symmetric_profile_is_profile_of_S() -> None:
    L = RNG.standard_normal((6, 6))
    S, _ = qk.parts(L)
    p = qk.profile(L)
    pS = qk.profile(S)
    assert pS.a == pytest.approx(0.0, abs=1e-14)
    np.testing.assert_allclose(qk.symmetric_profile(p), pS[1:], atol=1e-12)
    np.testing.assert_allclose(np.array(p[1:]), (1 - p.a) * np.array(pS[1:]), atol=1e-12)


def test_pairing_score_relation_to_profile() -> None:
    L = RNG.standard_normal((6, 6))
    S, _ = qk.parts(L)
    lam = np.linalg.eigvalsh(S)
    p = qk.profile(L)
    assert qk.pairing_score(lam) == pytest.approx(1 - np.sqrt(1 - p.b / (1 - p.a)))


# --- pairing (Lemma 2) ---------------------------------------------------------------


def test_lemma2_bound_and_equality_case() -> None:
    alpha = np.array([5.0, 3.0, 1.0])
    prop = np.concatenate([alpha, -0.4 * alpha])
    assert qk.lobe_ratio(prop) == pytest.approx(0.4)
    assert qk.pairing_score(prop) == pytest.approx(qk.pairing_bound(0.4))
    assert qk.pairing_gap(prop) == pytest.approx(0.0, abs=1e-14)
    skew = np.array([5.0, 3.0, 1.0, -1.0, -2.0, -0.1])
    assert qk.pairing_gap(skew) > 1e-3
    assert qk.lobe_departure(skew) > 0.1


def test_pairing_bound_symmetry_and_limits() -> None:
    for r in [0.1, 0.5, 3.0]:
        assert qk.pairing_bound(r) == pytest.approx(qk.pairing_bound(1 / r))
    assert qk.pairing_bound(np.inf) == 0.0
    assert qk.pairing_bound(0.0) == pytest.approx(0.0)


# --- Theta (Proposition 4), Theorem 5 limit --------------------------------------------


@pytest.mark.parametrize("N", [2, 3, 6])
def test_rank_one_profiles_are_theta(N: int) -> None:
    for _ in range(10):
        u, v = RNG.standard_normal((2, N))
        L = np.outer(u, v)
        t = np.trace(L) / np.linalg.norm(L)
        np.testing.assert_allclose(qk.profile(L), qk.theta(t), atol=1e-12)
        assert qk.theta_distance(qk.profile(L)) < 1e-7


def test_theta_round_trip_and_parametrizations() -> None:
    for t in np.linspace(-1, 1, 21):
        q, t_back = qk.theta_projection(qk.theta(t))
        assert float(t_back) == pytest.approx(t, abs=1e-9)
    for rho in [0.0, 0.25, 0.5, 1.0, 2.0]:
        np.testing.assert_allclose(
            qk.theta_p(rho), qk.theta((1 - rho) / np.sqrt(1 + rho**2)), atol=1e-12
        )
        np.testing.assert_allclose(qk.theta_L(rho), qk.theta((1 - rho) / (1 + rho)), atol=1e-12)
    assert qk.theta_p(np.inf) == (0.0, 0.0, 0.0, 1.0)


def test_theta_L_is_profile_of_proportional_lobes_with_a_equal_b() -> None:
    # S = diag(alpha, -rho alpha) with a skew block making a = b: built from a rank-one L
    rho = 0.5
    t = (1 - rho) / (1 + rho)
    L = np.outer([1.0, 0.0], [t, np.sqrt(1 - t**2)])
    S, _ = qk.parts(L)
    lam = np.linalg.eigvalsh(S)
    assert qk.lobe_ratio(lam) == pytest.approx(rho)
    np.testing.assert_allclose(qk.profile(L), qk.theta_L(rho), atol=1e-12)


@pytest.mark.parametrize(
    ("rho", "bcd"),
    [
        (0.5, (0.8, 0.2, 0.0)),
        (1.0, (1.0, 0.0, 0.0)),
        (0.9, (0.99448, 0.00552, 0.0)),
        (0.75, (0.96, 0.04, 0.0)),
        (0.25, (0.470588, 0.529412, 0.0)),
        (2.0, (0.8, 0.0, 0.2)),
    ],
)
def test_accumulation_limit_worked_examples(rho: float, bcd: tuple[float, ...]) -> None:
    lim = qk.accumulation_limit(rho)
    assert lim.a == 0.0
    np.testing.assert_allclose(lim[1:], bcd, atol=5e-6)
    # the limit lies in p(Theta)
    q = qk.theta_p(rho)
    np.testing.assert_allclose((0.0, q.a + q.b, q.c, q.d), lim, atol=1e-12)


def test_theta_distance_closed_form_vs_dense_sampling() -> None:
    ts = np.linspace(-1, 1, 200001)
    curve = np.stack(qk.theta(ts), axis=-1)
    for _ in range(5):
        x = RNG.dirichlet(np.ones(4))
        brute = np.min(np.linalg.norm(curve - x, axis=1))
        assert qk.theta_distance(x) == pytest.approx(brute, abs=1e-5)
        assert qk.theta_distance(x) <= brute + 1e-12


# --- faces (Theorem 4) and spectral types ----------------------------------------------


def test_classify_profile_vertices_and_empty_edge() -> None:
    assert qk.classify_profile((1, 0, 0, 0)).vertex == "a"
    info = qk.classify_profile((0, 0, 0.3, 0.7))
    assert not info.attainable and info.dimension == 1
    assert qk.classify_profile((0.2, 0.3, 0.5, 0.0)).zero == ("d",)
    with pytest.raises(ValueError, match="not a point"):
        qk.classify_profile((0.5, 0.5, 0.5, 0.0))


def test_empty_edge_never_attained_by_random_forms() -> None:
    for _ in range(200):
        L = RNG.standard_normal((4, 4))
        p = qk.profile(L)
        assert qk.classify_profile(p).attainable


def test_b_zero_profiles_are_attained_except_on_the_open_c_d_edge() -> None:
    """Theorem 4: b = 0 is attained exactly when cd = 0 (vertices, closed a-c / a-d edges).

    Random forms almost never have b = 0; these are the forms that do: I, -I, rank-one
    PSD, antisymmetric, and semidefinite plus skew.
    """
    skew = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 2.0], [0.0, -2.0, 0.0]])
    psd = np.diag([3.0, 1.0, 0.0])
    forms = {
        "I": np.eye(3), "-I": -np.eye(3), "rank-one PSD": np.outer([1.0, 2, 2], [1.0, 2, 2]),
        "antisymmetric": skew, "PSD + skew": psd + skew, "NSD + skew": -psd + 0.5 * skew,
    }
    expected_zero = {"I": ("a", "b", "d"), "-I": ("a", "b", "c"),
                     "rank-one PSD": ("a", "b", "d"), "antisymmetric": ("b", "c", "d"),
                     "PSD + skew": ("b", "d"), "NSD + skew": ("b", "c")}
    for name, L in forms.items():
        # exact zeros where the spectrum is exact; rounding noise (rank one) needs a tol
        info = qk.classify_profile(qk.profile(L), tol=1e-12 if "rank" in name else 0.0)
        assert info.zero == expected_zero[name], name
        assert info.attainable, name
    # exact points: the vertices and the closed a-c / a-d edges are attained ...
    for point in [(1, 0, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (0.5, 0, 0.5, 0),
                  (0.25, 0, 0, 0.75)]:
        assert qk.classify_profile(point).attainable, point
    # ... the open c-d edge and the open face {b = 0; a, c, d > 0} are not (also with tol)
    for point in [(0, 0, 0.5, 0.5), (0.2, 0, 0.4, 0.4)]:
        assert not qk.classify_profile(point).attainable, point
        assert not qk.classify_profile(point, tol=1e-9).attainable, point
    assert qk.classify_profile((0.0, 1e-12, 0.5, 0.5 - 1e-12), tol=1e-9).attainable is False
    assert qk.classify_profile((0.5, 0, 0.5 - 1e-12, 1e-12), tol=1e-9).attainable


def test_spectral_type_radius_rule() -> None:
    assert qk.spectral_type((0.5, 0.495, 0.005, 0.0)) == "II"
    assert qk.spectral_type((0.5, 0.3, 0.1, 0.1)) == "I-"  # tie goes to I-
    assert qk.spectral_type((0.5, 0.3, 0.15, 0.05), radius=0.5) == "II"
    assert spectral_type_imbalance((0.5, 0.3, 0.1, 0.1)) == "II"


@pytest.mark.parametrize("scale", [1e-200, 1e-150, 1e150])
def test_profile_and_head_are_safe_at_extreme_scales(scale: float) -> None:
    L = RNG.standard_normal((4, 4))
    np.testing.assert_allclose(qk.profile(scale * L), qk.profile(L), atol=1e-12)
    Q, K = RNG.standard_normal((2, 2, 6))
    h, tiny = qk.Head(Q, K), qk.Head(scale * Q, K)
    np.testing.assert_allclose(tiny.profile(), h.profile(), atol=1e-12)
    assert tiny.signature() == h.signature() == (2, 2, 2)
    np.testing.assert_allclose(tiny.spectrum(), scale * h.spectrum(), rtol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_gaussian_heads_baseline(seed: int) -> None:
    """Random Gaussian (768, 64) heads: P ~ 0.98-0.99, profile ~ (1/2, 1/2, 0, 0)."""
    rng = np.random.default_rng(seed)
    head = qk.Head(rng.standard_normal((64, 768)), rng.standard_normal((64, 768)))
    P = qk.pairing_score(head.spectrum())
    assert 0.975 <= P <= 0.995
    np.testing.assert_allclose(head.profile(), (0.5, 0.5, 0.0, 0.0), atol=5e-3)
    e = head.energies()
    assert abs(e.sym_sq / e.norm_sq - 769 / 1536) < 5e-3


# --- batches, boundaries and edge values (each kills a mutant the suite let through) ------


def test_batched_profile_matches_one_matrix_at_a_time() -> None:
    Ls = RNG.standard_normal((4, 3, 3))
    Ls[2] *= 1e-6  # a tiny form: the profile is scale invariant
    batch = qk.profile(Ls)
    assert all(np.shape(x) == (4,) for x in batch)
    for i, L in enumerate(Ls):
        np.testing.assert_allclose([x[i] for x in batch], dense_profile(L), atol=1e-12)
        single = qk.profile(L)
        assert all(type(x) is float for x in single)  # one matrix: Python floats
    np.testing.assert_allclose(qk.profile(1e-3 * Ls[0]), qk.profile(Ls[0]), atol=1e-14)


def test_zero_entries_of_a_batch_raise() -> None:
    Ls = RNG.standard_normal((3, 2, 2))
    Ls[1] = 0.0
    with pytest.raises(qk.ZeroFormError):
        qk.profile(Ls)
    eig = np.array([[1.0, -1.0], [2.0, 0.5]])
    with pytest.raises(qk.ZeroFormError):
        qk.profile_from_eigenvalues(eig, np.array([2.0, 0.0]))
    with pytest.raises(qk.ZeroFormError):
        qk.profile_from_eigenvalues([1.0, -1.0], 0.0)
    for f in (qk.pairing_score, qk.lobe_ratio, qk.lobe_departure):
        with pytest.raises(qk.ZeroFormError):
            f([0.0, 0.0])
        with pytest.raises(qk.ZeroFormError):
            f(np.array([[1.0, -1.0], [0.0, 0.0]]))
    with pytest.raises(qk.ZeroFormError):
        qk.symmetric_profile((1.0, 0.0, 0.0, 0.0))
    with pytest.raises(qk.ZeroFormError):
        qk.symmetric_profile(np.array([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]))
    with pytest.raises(qk.ParameterError):
        qk.pairing_bound(np.array([1.0, np.nan]))


def test_profile_from_eigenvalues_without_the_skew_energy() -> None:
    """Without ``skew_sq`` the a-coordinate is what the spectrum leaves of |L|^2."""
    L = RNG.standard_normal((5, 5))
    S = (L + L.T) / 2
    p = qk.profile_from_eigenvalues(np.linalg.eigvalsh(S), float(np.sum(L * L)))
    np.testing.assert_allclose(p, dense_profile(L), atol=1e-12)
    batch = qk.profile_from_eigenvalues(np.array([[2.0, -1.0], [1.0, 1.0]]),
                                        np.array([10.0, 4.0]))
    np.testing.assert_allclose(np.stack(batch, axis=-1),
                               [[0.5, 0.4, 0.1, 0.0], [0.5, 0.0, 0.5, 0.0]], atol=1e-15)


def test_symmetric_profile_divides_every_coordinate() -> None:
    assert qk.symmetric_profile((0.5, 0.1, 0.1, 0.3)) == pytest.approx((0.2, 0.2, 0.6))
    batch = qk.symmetric_profile(np.array([[0.5, 0.1, 0.1, 0.3], [0.0, 0.2, 0.3, 0.5]]))
    np.testing.assert_allclose(np.stack(batch, axis=-1), [[0.2, 0.2, 0.6], [0.2, 0.3, 0.5]])


def test_lobes_have_no_negative_zeros() -> None:
    alpha, beta = qk.lobes([-0.0, 2.0, -1.0, 0.0])
    assert not np.signbit(alpha).any() and not np.signbit(beta).any()


def test_lobe_departure_value_when_lobes_are_not_proportional() -> None:
    # alpha = (3, 1), beta = (1, 1): rho = sqrt(2)/sqrt(10); |beta - rho alpha| / |beta|
    lam = [3.0, 1.0, -1.0, -1.0]
    alpha, beta = np.array([3.0, 1.0]), np.array([1.0, 1.0])
    rho = np.linalg.norm(beta) / np.linalg.norm(alpha)
    want = np.linalg.norm(beta - rho * alpha) / np.linalg.norm(beta)
    assert qk.lobe_departure(lam) == pytest.approx(want, rel=1e-12)
    assert want > 0.3
    assert np.isnan(qk.lobe_departure([2.0, 1.0]))  # no negative eigenvalue


def test_count_signs_tolerance_zero_and_empty_spectra() -> None:
    assert tuple(qk.count_signs([1e-300, -1e-300, 0.0], tol=0.0)) == (1, 1, 1)
    assert tuple(qk.count_signs(np.zeros(0))) == (0, 0, 0)
    sig = qk.count_signs(np.zeros((2, 0)))
    assert sig.n_pos.tolist() == [0, 0] and sig.n_zero.tolist() == [0, 0]


def test_theta_family_values_beyond_rho_two_and_batches() -> None:
    # rho = 3: (rho - 1)^2 = 4 (rho = 2 cannot tell a square from a cube)
    np.testing.assert_allclose(qk.accumulation_limit(3.0), (0.0, 0.6, 0.0, 0.4), atol=1e-15)
    np.testing.assert_allclose(qk.theta_L(3.0), (6 / 16, 6 / 16, 0.0, 4 / 16), atol=1e-15)
    np.testing.assert_allclose(qk.theta_p(3.0), (0.3, 0.3, 0.0, 0.4), atol=1e-15)
    np.testing.assert_allclose(qk.theta_p(np.inf), (0.0, 0.0, 0.0, 1.0))
    for bad in (np.array([0.5, 2.0]), np.array([0.5, np.nan])):
        with pytest.raises(qk.ParameterError):
            qk.theta(bad)
    for bad in (np.array([1.0, -1.0]), np.array([1.0, np.nan])):
        for f in (qk.theta_p, qk.theta_L, qk.accumulation_limit):
            with pytest.raises(qk.ParameterError):
                f(bad)


def test_face_info_is_immutable_and_on_theta_needs_both_conditions() -> None:
    import dataclasses

    info = qk.classify_profile((0.25, 0.25, 0.0, 0.5))
    assert info.on_theta  # a = b, cd = 0 (the segment towards d = 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.attainable = False  # type: ignore[misc]
    assert not qk.classify_profile((0.5, 0.2, 0.3, 0.0)).on_theta  # cd = 0 but a != b
    assert not qk.classify_profile((0.3, 0.3, 0.2, 0.2)).on_theta  # a = b but cd > 0


def test_spectral_type_rules_off_the_face_a_0_and_at_their_boundaries() -> None:
    # radius rule on the symmetric profile: (c + d)/(1 - a), not c + d
    assert qk.spectral_type((0.5, 0.48, 0.012, 0.008)) == "I+"  # (c + d)/(1 - a) = 0.04
    assert qk.spectral_type((0.5, 0.49, 0.006, 0.004)) == "II"
    with pytest.raises(qk.ZeroFormError):
        qk.spectral_type((1.0, 0.0, 0.0, 0.0))  # S = 0: no symmetric profile
    with pytest.raises(qk.ZeroFormError):
        qk.spectral_type(np.array([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]))
    # imbalance rule: strict inequalities imb > 0.2 and c + d > 0.01 (docs/theory.md §12.5)
    assert spectral_type_imbalance((0.0, 0.375, 0.375, 0.25)) == "II"  # imb = 0.2 exactly
    assert spectral_type_imbalance((0.0, 0.375, 0.25, 0.375)) == "II"  # imb = -0.2
    assert spectral_type_imbalance((0.5, 0.48, 0.015, 0.005)) == "I+"
    assert spectral_type_imbalance((0.5, 0.49, 0.005, 0.02)) == "I-"
    assert spectral_type_imbalance((0.98, 0.0, 0.0078125, 0.0)) == "II"  # c + d < 0.01
    assert spectral_type_imbalance((0.0, 0.9921875, 0.0078125, 0.0), min_mass=0.0078125) == "II"


def test_small_spectra_and_norms_are_not_special() -> None:
    """Every score is scale invariant: tiny eigenvalues and |L|^2 < 1 change nothing."""
    lam = np.array([3.0, 1.0, -1.0, -1.0])
    for s in (1e-3, 0.1, 1.0):
        assert qk.lobe_departure(s * lam) == pytest.approx(qk.lobe_departure(lam), rel=1e-12)
        assert qk.pairing_score(s * lam) == pytest.approx(qk.pairing_score(lam), rel=1e-12)
        assert qk.lobe_ratio(s * lam) == pytest.approx(qk.lobe_ratio(lam), rel=1e-12)
        p = qk.profile_from_eigenvalues(s * lam, s * s * 20.0)
        np.testing.assert_allclose(p, qk.profile_from_eigenvalues(lam, 20.0), atol=1e-14)

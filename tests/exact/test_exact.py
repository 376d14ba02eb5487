"""Unit tests of the exact-arithmetic mirror ``qkforms.exact``.

Values are checked against independent computations (sympy's own characteristic
polynomials, hand-derived spectra, Fractions), never against the module itself.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import pytest
import sympy

import qkforms
from qkforms import exact
from qkforms.errors import (
    NonFiniteError,
    NotSymmetricError,
    QKFormsError,
    ShapeError,
    ZeroFormError,
)

F = Fraction


def sympy_signature(S: sympy.Matrix) -> tuple[int, int, int]:
    """Signature from sympy's characteristic polynomial and its exact real roots."""
    x = sympy.Symbol("x")
    roots = sympy.Poly(S.charpoly(x).as_expr(), x).real_roots()
    assert len(roots) == S.rows
    return (sum(1 for r in roots if r > 0), sum(1 for r in roots if r < 0),
            sum(1 for r in roots if r == 0))


# --------------------------------------------------------------------------- rational


def test_to_fraction_is_exact_for_floats() -> None:
    assert exact.to_fraction(0.1) == F(3602879701896397, 36028797018963968)
    assert exact.to_fraction(np.float32(0.1)) == F(13421773, 134217728)
    assert exact.to_fraction(-2.5e-310) == F(-2.5e-310)  # subnormal, exact
    assert exact.to_fraction(sympy.Rational(4, 6)) == F(2, 3)
    assert exact.to_fraction(flint.fmpq(-3, 9)) == F(-1, 3)


def test_to_fraction_rejects_non_rational() -> None:
    with pytest.raises(NonFiniteError):
        exact.to_fraction(float("nan"))
    with pytest.raises(NonFiniteError):
        exact.to_fraction(float("inf"))
    with pytest.raises(exact.NotRationalError):
        exact.to_fraction(sympy.sqrt(2))
    with pytest.raises(exact.NotRationalError):
        exact.to_fraction(1j)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scaled_integer_matrix_round_trip(dtype: type) -> None:
    rng = np.random.default_rng(0)
    A = (rng.standard_normal((5, 7)) * 0.03).astype(dtype).astype(np.float64)
    A[0, 0] = 0.0
    A[1, 2] = 5e-324  # smallest subnormal
    A[2, 3] = -1e30
    Z, scale = exact.scaled_integer_matrix(A)
    assert scale > 0
    for i in range(5):
        for j in range(7):
            assert F(int(Z[i, j])) * scale == F(float(A[i, j]))


def test_scaled_integer_matrix_rationals_and_modular_image() -> None:
    A = [[F(1, 2), F(-1, 3)], [F(0), F(5, 6)]]
    Z, scale = exact.scaled_integer_matrix(A)
    assert scale == F(1, 6) and Z.tolist() == [[3, -2], [0, 5]]
    rng = np.random.default_rng(1)
    B = rng.standard_normal((4, 6))
    p = 2147483629
    Zb, _ = exact.scaled_integer_matrix(B)
    assert exact.modular_image(B, p) == flint.nmod_mat(Zb, p)


# --------------------------------------------------------------------------- Descartes


def _coeffs(roots: list[int]) -> list[int]:
    poly = flint.fmpz_poly([1])
    for r in roots:
        poly *= flint.fmpz_poly([-r, 1])
    return [int(c) for c in poly.coeffs()]


@pytest.mark.parametrize(
    ("roots", "expected"),
    [
        ([1, 1, -2, -2, -2, 0, 0, 0, 0], (2, 3, 4)),
        ([0], (0, 0, 1)),
        ([5, 5, 5], (3, 0, 0)),
        ([-1, 2, -3, 4, 0], (2, 2, 1)),
        ([-7], (0, 1, 0)),
    ],
)
def test_descartes_on_real_rooted_polynomials(roots: list[int], expected: tuple) -> None:
    assert exact.descartes_counts(_coeffs(roots)) == expected


def test_descartes_detects_some_non_real_roots() -> None:
    with pytest.raises(QKFormsError, match="non-real"):
        exact.descartes_counts([1, 0, 1])  # x^2 + 1
    with pytest.raises(QKFormsError):
        exact.descartes_counts([0, 0])


def test_sign_changes() -> None:
    assert exact.sign_changes([1, -1, 1, -1]) == 3
    assert exact.sign_changes([0, 0, 2, 0, 3]) == 0
    assert exact.sign_changes([F(-1, 2), 0, F(1, 3)]) == 1


# --------------------------------------------------------------------------- signature


@pytest.mark.parametrize(
    ("S", "expected"),
    [
        ([[2, 0, 0], [0, -3, 0], [0, 0, 0]], (1, 1, 1)),
        ([[0, 1], [1, 0]], (1, 1, 0)),
        ([[0, 0], [0, 0]], (0, 0, 2)),
        ([[F(1, 3)]], (1, 0, 0)),
        ([[1, 2], [2, 4]], (1, 0, 1)),
        ([[1, 2], [2, 1]], (1, 1, 0)),
    ],
)
def test_signature_known(S: list, expected: tuple) -> None:
    assert tuple(exact.signature(S)) == expected
    assert tuple(exact.signature(sympy.Matrix(S))) == expected


def test_signature_accepts_object_arrays_of_fractions() -> None:
    S = np.array([[F(1, 3), F(1, 2)], [F(1, 2), F(3, 4)]], dtype=object)
    assert F(1, 3) * F(3, 4) - F(1, 2) ** 2 == 0  # det 0, trace > 0: eigenvalues 13/12, 0
    assert exact.signature(S) == (1, 0, 1)
    S[1, 1] = F(4, 5)  # det > 0: positive definite
    assert exact.signature(S) == (2, 0, 0)


def test_signature_is_exact_where_floats_round() -> None:
    S = np.array([[1e-300, 0.0], [0.0, -1.0]])
    assert exact.signature(S) == (1, 1, 0)
    assert qkforms.signature(S) == (0, 1, 1)  # float core: relative threshold
    S2 = np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-52]])  # det 2^-52 > 0: PD
    assert exact.signature(S2) == (2, 0, 0)


def test_signature_errors() -> None:
    with pytest.raises(NotSymmetricError, match=r"\(0, 1\)"):
        exact.signature([[1, 2], [3, 4]])
    with pytest.raises(ShapeError):
        exact.signature([[1, 2, 3], [2, 1, 0]])


def test_signature_matches_sympy_on_random_symmetric() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        A = rng.integers(-3, 4, size=(5, 5))
        B = rng.integers(-2, 3, size=(5, 2))
        S = A + A.T + B @ B.T
        assert tuple(exact.signature(S)) == sympy_signature(sympy.Matrix(S))


def test_charpoly_matches_sympy() -> None:
    A = [[F(1, 2), 3, 0], [1, F(-2, 3), 4], [0, 5, 1]]
    x = sympy.Symbol("x")
    expected = sympy.Matrix([[sympy.Rational(str(v)) for v in row] for row in A]).charpoly(x)
    got = exact.charpoly(A)
    assert [sympy.Rational(str(c)) for c in got.coeffs()] == expected.all_coeffs()[::-1]


def test_rank() -> None:
    assert exact.rank([[1, 2, 3], [2, 4, 6], [1, 0, 0]]) == 2
    assert exact.rank(np.array([[1.0, 0.0], [0.0, 1e-300]])) == 2
    assert exact.rank(np.zeros((3, 4))) == 0
    assert exact.rank([[1], [2], [3]]) == 1


# --------------------------------------------------------------------------- heads


def test_head_signature_integer_head_vs_sympy_dense() -> None:
    rng = np.random.default_rng(5)
    for kind in ("surjective", "equal", "shared_row", "repeated_row"):
        W_Q, W_K = exact.random_head(rng, 2, 6, kind)
        Q = exact.to_sympy_matrix(W_Q)
        K = exact.to_sympy_matrix(W_K)
        S = (K.T * Q + Q.T * K) / 2
        expected = sympy_signature(S)
        for method in ("auto", "congruence", "charpoly", "dense"):
            assert tuple(exact.head_signature(W_Q, W_K, method=method)) == expected, (kind, method)
        if kind == "surjective":
            assert expected == (2, 2, 2)


def test_head_signature_narrow_head() -> None:
    rng = np.random.default_rng(6)
    W_Q, W_K = exact.random_head(rng, 3, 4, "narrow")
    S = exact.symmetric_head_form(W_Q, W_K)
    expected = exact.signature(S)
    assert exact.head_signature(W_Q, W_K, method="charpoly") == expected
    assert exact.head_signature(W_Q, W_K) == expected
    assert not exact.stacked_is_surjective(W_Q, W_K)


def test_head_signature_float_weights_converted_exactly() -> None:
    # W_K = W_Q + 2^-40 e_0: exactly, the stack has rank 2 and Theorem 3 gives (1, 1, 3);
    # in float64 the negative eigenvalue is ~1e-25 relative and counts as zero.
    W_Q = np.array([[1.0, 0.5, -0.25, 0.75, 2.0]])
    W_K = W_Q.copy()
    W_K[0, 0] += 2.0**-40
    assert exact.stacked_is_surjective(W_Q, W_K)
    for method in ("auto", "charpoly", "dense"):
        assert exact.head_signature(W_Q, W_K, method=method) == (1, 1, 3)
    Q = sympy.Matrix([[sympy.Rational(F(v).numerator, F(v).denominator) for v in W_Q[0]]])
    K = sympy.Matrix([[sympy.Rational(F(v).numerator, F(v).denominator) for v in W_K[0]]])
    assert sympy_signature((K.T * Q + Q.T * K) / 2) == (1, 1, 3)
    assert qkforms.signature(W_K.T @ W_Q) != (1, 1, 3)


def test_head_signature_float_random_head_matches_theorem() -> None:
    rng = np.random.default_rng(7)
    W_Q = rng.standard_normal((8, 40)) * 0.02
    W_K = rng.standard_normal((8, 40)) * 0.02
    assert exact.head_signature(W_Q, W_K) == (8, 8, 24)
    assert exact.head_signature(W_Q, W_K, method="charpoly") == (8, 8, 24)
    assert exact.head_signature(W_Q, W_Q, method="charpoly") == (8, 0, 32)


def test_stacked_is_surjective_certificate_paths() -> None:
    rng = np.random.default_rng(13)
    W_Q, W_K = rng.standard_normal((8, 40)), rng.standard_normal((8, 40))
    assert exact.stacked_is_surjective(W_Q, W_K)  # column-subset certificate
    assert not exact.stacked_is_surjective(W_Q, 2.0 * W_Q)  # falls back to the exact rank
    # (3.0 * W_Q would round in float64, so it is *not* exactly proportional to W_Q)
    # surjective only through columns the subset misses: the full-matrix path decides
    M = np.zeros((16, 40))
    M[:, 24:40] = np.eye(16) * 0.5
    assert exact.stacked_is_surjective(M[8:], M[:8])
    assert exact.head_signature(M[8:], M[:8]) == (8, 8, 24)
    assert exact.head_signature(M[8:], M[:8], method="charpoly") == (8, 8, 24)
    M[15, 39] = 0.0  # now rank 15
    assert not exact.stacked_is_surjective(M[8:], M[:8])
    sig = exact.head_signature(M[8:], M[:8])
    assert sig == exact.head_signature(M[8:], M[:8], method="dense") and sig != (8, 8, 24)


def test_head_shapes_and_methods_validated() -> None:
    with pytest.raises(ShapeError):
        exact.head_signature([[1, 2]], [[1, 2, 3]])
    with pytest.raises(ValueError, match="unknown method"):
        exact.head_signature([[1, 0]], [[0, 1]], method="magic")  # type: ignore[arg-type]


def test_gram_operator_and_symmetric_form() -> None:
    W_Q = [[1, 2, 0], [0, 1, 1]]
    W_K = [[0, 1, 3], [1, 0, 0]]
    Q, K = sympy.Matrix(W_Q), sympy.Matrix(W_K)
    S = exact.symmetric_head_form(W_Q, W_K)
    assert exact.to_sympy_matrix(S) == (K.T * Q + Q.T * K) / 2
    M = K.col_join(Q)
    J = sympy.Matrix([[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]])
    assert exact.to_sympy_matrix(exact.gram_operator(W_Q, W_K)) == J * M * M.T / 2


# --------------------------------------------------------------------------- orthogonal


def test_cayley_orthogonal_is_exactly_orthogonal() -> None:
    rng = np.random.default_rng(8)
    for N in (1, 2, 3, 6):
        A = exact.random_skew(N, rng, 4)
        U = exact.cayley_orthogonal(A)
        Us = exact.to_sympy_matrix(U)
        assert Us.T * Us == sympy.eye(N)
        assert Us.det() == 1
        eye = sympy.eye(N)
        As = exact.to_sympy_matrix(A)
        assert Us == (eye - As) * (eye + As).inv()
    assert exact.cayley_orthogonal([[0, 1], [-1, 0]]).tolist() == [[0, -1], [1, 0]]


def test_cayley_rejects_non_skew() -> None:
    with pytest.raises(QKFormsError, match="skew"):
        exact.cayley_orthogonal([[1, 0], [0, 0]])
    with pytest.raises(ShapeError):
        exact.cayley_orthogonal([[0, 1]])


def test_random_orthogonal_reaches_det_minus_one() -> None:
    rng = np.random.default_rng(9)
    dets = {int(exact.to_sympy_matrix(exact.random_orthogonal(3, rng)).det()) for _ in range(12)}
    assert dets == {-1, 1}


def test_rational_spectrum_and_eigenbasis() -> None:
    rng = np.random.default_rng(10)
    lam = [F(3), F(3), F(-1, 2), F(0), F(-1, 2)]
    S = exact.symmetric_with_spectrum(lam, rng)
    assert exact.rational_spectrum(S) == sorted(lam, reverse=True)
    basis = exact.orthogonal_eigenbasis(S)
    assert [b[0] for b in basis] == sorted(lam, reverse=True)
    Ss = exact.to_sympy_matrix(S)
    vecs = [sympy.Matrix([sympy.Rational(x.numerator, x.denominator) for x in v])
            for _, v in basis]
    for (value, _), v in zip(basis, vecs, strict=True):
        assert Ss * v == sympy.Rational(value.numerator, value.denominator) * v
    for i in range(len(vecs)):
        for j in range(i):
            assert (vecs[i].T * vecs[j])[0] == 0
    with pytest.raises(exact.IrrationalSpectrumError):
        exact.rational_spectrum([[1, 1], [1, 0]])


# --------------------------------------------------------------------------- profiles


def test_exact_profile_known_values() -> None:
    assert exact.profile([[0, 1], [-1, 0]]) == (1, 0, 0, 0)
    assert exact.profile([[1, 0], [0, -1]]) == (0, 1, 0, 0)
    assert exact.profile([[2, 0], [0, 1]]) == (0, 0, 1, 0)
    assert exact.profile([[-2, 0], [0, 0]]) == (0, 0, 0, 1)
    # S = diag(3, -1), T = [[0, 1], [-1, 0]]: |L|^2 = 9 + 1 + 2 = 12
    L = [[3, 1], [-1, -1]]
    assert exact.profile(L) == (F(2, 12), F(6, 12), F(4, 12), 0)


def test_exact_profile_from_spectrum_radicals() -> None:
    s2 = sympy.sqrt(2)
    p = exact.profile_from_spectrum([s2, -1, 0], 5)
    assert sympy.simplify(p.b - 2 * s2 / 5) == 0
    assert sympy.simplify(p.c - (s2 - 1) ** 2 / 5) == 0
    assert p.d == 0
    assert sympy.simplify(p.a - 2 / sympy.Integer(5)) == 0
    assert sympy.simplify(sum(p) - 1) == 0


def test_exact_profile_rank_one_algebraic() -> None:
    # L = u v^T, u = (1, 2), v = (3, -1): t = tr/|L| = 1/sqrt(50): Prop. 4
    L = [[3, -1], [6, -2]]
    p = exact.profile(L, algebraic=True)
    t2 = F(1, 50)
    assert [sympy.nsimplify(x) for x in p] == [(1 - t2) / 2, (1 - t2) / 2, t2, 0]
    with pytest.raises(exact.IrrationalSpectrumError):
        exact.profile(L)


def test_exact_profile_errors_and_claimed_spectrum() -> None:
    with pytest.raises(ZeroFormError):
        exact.profile([[0, 0], [0, 0]])
    with pytest.raises(ZeroFormError):
        exact.profile_from_spectrum([], 0)
    assert exact.profile([[1, 2], [0, 1]], spectrum=[2, 0]) == (F(1, 3), 0, F(2, 3), 0)
    with pytest.raises(QKFormsError, match="not the spectrum"):
        exact.profile([[1, 2], [0, 1]], spectrum=[1, 1])


def test_exact_profile_agrees_with_float_core() -> None:
    rng = np.random.default_rng(11)
    for N in (2, 3, 5):
        L, _ = exact.random_form(rng, N)
        if exact.frob_sq(L) == 0:
            continue
        pe = exact.profile(L).to_float()
        pf = qkforms.profile(np.array([[float(x) for x in row] for row in
                                       exact.fraction_matrix(L)]))
        np.testing.assert_allclose(pf, pe, atol=1e-12)


def test_symmetric_profile_and_pairing_quantities() -> None:
    p = exact.profile([[3, 1], [-1, -1]])
    assert exact.symmetric_profile(p) == (F(6, 10), F(4, 10), 0)
    with pytest.raises(ZeroFormError):
        exact.symmetric_profile(exact.ExactProfile(F(1), 0, 0, 0))
    pq = exact.pairing_quantities([F(3), F(-1), F(1), F(-2)])
    assert (pq.plus_sq, pq.minus_sq, pq.cross, pq.diff_sq) == (10, 5, 7, 1)


# --------------------------------------------------------------------------- faces


def test_hp_decomposition_values() -> None:
    rng = np.random.default_rng(12)
    lam = [F(5), F(2), F(-3), F(-2), F(0)]
    S = exact.symmetric_with_spectrum(lam, rng)
    H, P = exact.hp_decomposition(S)
    assert S == H + P
    assert sorted(exact.rational_spectrum(H)) == [-3, -2, 0, 2, 3]
    assert sorted(exact.rational_spectrum(P)) == [0, 0, 0, 0, 2]
    assert exact.commute(H, P) and exact.commute(H, S)
    with pytest.raises(QKFormsError, match="face"):
        exact.hp_decomposition(S, sign=-1)
    H2, P2 = exact.hp_decomposition(-S, sign=-1)
    assert -S == H2 - P2 and exact.is_psd(P2)


def test_semidefinite_helpers() -> None:
    assert exact.is_psd([[2, 1], [1, 1]]) and not exact.is_nsd([[2, 1], [1, 1]])
    assert exact.is_semidefinite([[0, 0], [0, 0]])
    assert not exact.is_semidefinite([[1, 3], [3, 1]])
    assert exact.has_symmetric_spectrum([[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    assert not exact.has_symmetric_spectrum([[1, 0], [0, -2]])


# --- generators, predicates and edge cases (survivors of the mutation campaign) ----------


def test_random_spectrum_counts_and_defaults() -> None:
    rng = np.random.default_rng(0)
    lam = exact.random_spectrum(rng, 3, n_pos=2, n_neg=1)  # no zero left: allowed
    assert sum(v > 0 for v in lam) == 2 and sum(v < 0 for v in lam) == 1
    with pytest.raises(qkforms.ParameterError):
        exact.random_spectrum(rng, 3, n_pos=2, n_neg=2)
    counts = [exact.random_spectrum(np.random.default_rng(s), 4) for s in range(60)]
    n_pos = [sum(v > 0 for v in c) for c in counts]
    n_neg = [sum(v < 0 for v in c) for c in counts]
    assert 0 in n_pos and 0 in n_neg  # semidefinite spectra are drawn too (edge cases)


def test_random_form_and_head_kinds() -> None:
    rng = np.random.default_rng(1)
    L, _ = exact.random_form(rng, 4)  # a skew part by default: not symmetric
    assert L != L.transpose()
    S, _ = exact.random_form(rng, 4, skew=False)
    assert S == S.transpose()
    W_Q, W_K = exact.random_head(rng, 2, 5, "equal")
    assert W_Q == W_K
    W_Q, W_K = exact.random_head(rng, 2, 5, "proportional")
    assert W_K == W_Q * flint.fmpq(-2)


def test_exact_predicates_on_small_cases() -> None:
    assert exact.is_semidefinite([[2, 0], [0, 0]]) and exact.is_semidefinite([[-1, 0], [0, 0]])
    assert not exact.is_semidefinite([[1, 0], [0, -1]])
    assert exact.has_symmetric_spectrum([[1, 0, 0], [0, -1, 0], [0, 0, 0]])
    assert not exact.has_symmetric_spectrum([[1, 0], [0, 2]])
    assert not exact.has_symmetric_spectrum([[2, 0, 0], [0, -1, 0], [0, 0, 0]])
    assert not exact.is_orthogonal([[1, 0, 0], [0, 1, 0]])  # not square
    assert tuple(exact.signature([])) == (0, 0, 0)
    assert exact.rank(np.zeros((0, 3))) == 0 and exact.rank(np.zeros((3, 0))) == 0


def test_conversions_keep_exact_values() -> None:
    from qkforms.exact.form_parts import as_fraction
    from qkforms.exact.rational import matrix_shape

    assert as_fraction(Fraction(1, 3)) == Fraction(1, 3)
    assert isinstance(as_fraction(3), Fraction) and as_fraction(3) == 3
    assert matrix_shape([]) == (0, 0)
    # a sympy Float equal to a double is that double; a finer one is its decimal value
    assert exact.to_fraction(sympy.Float(0.1)) == Fraction(0.1)
    assert exact.to_fraction(sympy.Float("0.1", 30)) == Fraction(1, 10)


def test_head_signature_of_mixed_inputs() -> None:
    W_Q = np.array([[1, 0, 2, 0, 1], [0, 1, 0, 3, 0]])
    W_K = [[0, 0, 1, 0, 0], [1, 0, 0, 0, 1]]
    want = exact.head_signature(W_Q, np.array(W_K))
    assert exact.head_signature(W_Q, W_K) == want
    assert exact.head_signature(W_Q.tolist(), np.array(W_K)) == want


def test_random_heads_have_the_rank_their_kind_promises() -> None:
    for seed in range(25):
        rng = np.random.default_rng(seed)
        n, N = int(rng.integers(1, 4)), 8
        W_Q, W_K = exact.random_head(rng, n, N, "surjective")
        assert exact.stacked_is_surjective(W_Q, W_K), seed
        for kind in ("equal", "proportional", "repeated_row", "shared_row"):
            W_Q, W_K = exact.random_head(rng, n, N, kind)
            assert not exact.stacked_is_surjective(W_Q, W_K), (seed, kind)
    with pytest.raises(qkforms.ParameterError):
        exact.random_head(np.random.default_rng(0), 3, 5)  # N < 2n cannot be onto


def test_head_with_rational_spectrum_refuses_nonpositive_values() -> None:
    from qkforms.exact.constructions import head_with_rational_spectrum

    for t in ([2, -1], [0, 1], [-1, -2], []):
        with pytest.raises(qkforms.ParameterError):
            head_with_rational_spectrum(t, 6, np.random.default_rng(0))


# --- what the generators build (second campaign: each checks a documented property) ----


def test_random_spectrum_draws_exactly_the_documented_values() -> None:
    """Nonzero eigenvalues are ``+-k/d`` with ``1 <= k <= height`` and ``d`` in 1, 2, 3,
    and every such value occurs in both lobes (the source of ties and repeats)."""
    height = 2
    want = {Fraction(k, d) for k in range(1, height + 1) for d in (1, 2, 3)}
    pos, neg = set(), set()
    for s in range(150):
        lam = exact.random_spectrum(np.random.default_rng(s), 4, n_pos=2, n_neg=2,
                                    height=height)
        pos |= {v for v in lam if v > 0}
        neg |= {-v for v in lam if v < 0}
    assert pos == want and neg == want


def test_random_skew_reaches_every_entry_value() -> None:
    """``random_skew``: skew, zero diagonal, and every entry above the diagonal takes every
    integer in ``[-height, height]`` over seeds (and nothing else)."""
    h, N = 2, 3
    seen: dict[tuple[int, int], set[int]] = {(i, j): set() for i in range(N)
                                             for j in range(i + 1, N)}
    for s in range(120):
        A = np.array(exact.random_skew(N, np.random.default_rng(s), h).tolist(), dtype=object)
        assert (A == -A.T).all() and all(A[i, i] == 0 for i in range(N))
        for (i, j), vals in seen.items():
            vals.add(int(A[i, j]))
    assert all(vals == set(range(-h, h + 1)) for vals in seen.values())


def _stacked(W_Q: flint.fmpq_mat, W_K: flint.fmpq_mat) -> np.ndarray:
    """``M = [W_K; W_Q]`` as an integer array."""
    return np.array([[int(v) for v in row] for row in W_K.tolist() + W_Q.tolist()])


def _has_unit_lower_triangular_block(M: np.ndarray) -> bool:
    """Whether some ordered choice of ``rows(M)`` columns is unit lower triangular."""
    import itertools

    r = M.shape[0]
    return any(all(M[i, c[i]] == 1 and all(M[i, c[j]] == 0 for j in range(i + 1, r))
                   for i in range(r))
               for c in itertools.permutations(range(M.shape[1]), r))


def test_surjective_heads_are_built_as_documented() -> None:
    """``random_head(kind="surjective")``: ``M = [W_K; W_Q]`` has a unit lower-triangular
    ``2n x 2n`` block in some columns (the docstring's construction), integer entries in
    ``[-height, height]`` with every value drawn, and entries centred at zero apart from
    the block's unit diagonal (mean ``2n/(2n N) = 1/N`` over many heads)."""
    n, N, h = 2, 5, 3
    Ms = [_stacked(*exact.random_head(np.random.default_rng(s), n, N, "surjective", h))
          for s in range(150)]
    assert all(_has_unit_lower_triangular_block(M) for M in Ms[:40])
    values = np.concatenate([M.ravel() for M in Ms])
    assert set(values.tolist()) == set(range(-h, h + 1))
    assert abs(values.mean() - 1 / N) < 0.1  # standard error ~0.03


def test_degenerate_head_kinds_repeat_or_share_a_row() -> None:
    """``repeated_row``: the last row of ``W_K`` is its first row (zero when ``n = 1``);
    ``shared_row``: ``W_K`` and ``W_Q`` have the same first row; the other rows are those
    of a surjective-style head (so the stacked rank is exactly ``2n - 1``)."""
    for n in (1, 2, 3):
        for seed in range(5):
            W_Q, W_K = exact.random_head(np.random.default_rng(seed), n, 2 * n + 1,
                                         "repeated_row")
            K = W_K.tolist()
            assert K[-1] == (K[0] if n > 1 else [0] * (2 * n + 1))
            assert exact.rank(_stacked(W_Q, W_K)) == 2 * n - 1
            W_Q, W_K = exact.random_head(np.random.default_rng(seed), n, 2 * n + 1,
                                         "shared_row")
            assert W_K.tolist()[0] == W_Q.tolist()[0]
            assert exact.rank(_stacked(W_Q, W_K)) == 2 * n - 1


def test_rational_spectrum_head_mixes_rows_by_a_random_unit_triangular_matrix() -> None:
    """``head_with_rational_spectrum`` mixes rows by a random unimodular ``A`` (unit lower
    triangular, entries in ``[-height, height]``): ``W_K = A [I 0] P`` with ``P``
    orthogonal, so ``W_K W_K^T = A A^T``, whose unique LU factorisation returns ``A``;
    over seeds every value of ``[-height, height]`` occurs below its diagonal."""
    height, below = 2, set()
    for s in range(40):
        W_Q, W_K, _ = exact.head_with_rational_spectrum(["2", "1/3", "3"], 7,
                                                        np.random.default_rng(s),
                                                        height=height)
        G = sympy.Matrix((W_K * W_K.transpose()).tolist())
        A, U, perm = G.LUdecomposition()
        assert perm == [] and U == A.T  # G = A A^T, A unit lower triangular
        assert all(A[i, i] == 1 and A[i, j].is_integer for i in range(3) for j in range(3))
        below |= {int(A[i, j]) for i in range(3) for j in range(i)}
    assert below == set(range(-height, height + 1))

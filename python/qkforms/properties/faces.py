"""Properties of Theorem 4 (``thm4.simplex``, ``thm4.a_face``, ``thm4.b_face``,
``thm4.d_face``, ``thm4.c_face``, ``thm4.empty_edge``).

Symmetric parts are built as ``A + A^T``, PSD ones as ``A A^T`` or ``u v^T + v u^T``-free
``B B^T``, skew parts as ``A - A^T``; exact spectra as ``U^T diag U`` with the lobe
structure of each face constructed directly (``alpha = beta + increments``).
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
from hypothesis import strategies as st

import qkforms
from qkforms import exact
from qkforms.properties import prop
from qkforms.properties.strategies import (
    dominated_spectrum,
    dyadic_square,
    nonnegative_rationals,
    positive_rationals,
    with_spectrum,
)

F = Fraction
pos_fracs = positive_rationals()
nonneg_fracs = nonnegative_rationals()


@prop(st.integers(1, 5).flatmap(dyadic_square))
def thm4_simplex_float(L: np.ndarray) -> None:
    if not np.any(L):
        L[0, 0] = 1.0
    p = np.array(qkforms.profile(L))
    assert np.all(p >= -1e-12)
    assert abs(p.sum() - 1) < 1e-12


@prop(st.integers(1, 4).flatmap(lambda N: st.lists(
    st.builds(F, st.integers(-6, 6), st.sampled_from([1, 2, 3])), min_size=N, max_size=N))
    .flatmap(with_spectrum))
def thm4_simplex_exact(L: flint.fmpq_mat) -> None:
    if all(v == 0 for v in L.entries()):
        L[0, 0] = 1
    p = exact.profile(L)
    assert min(p) >= 0 and sum(p) == 1


@prop(st.integers(2, 5).flatmap(dyadic_square))
def thm4_a_face_float(A: np.ndarray) -> None:
    A[0, 1] += 1.0  # repair: A - A^T != 0
    p_sym = qkforms.profile(A + A.T + np.eye(len(A)))
    assert p_sym.a == 0.0
    p_skew = qkforms.profile(A - A.T)
    assert (p_skew.a, p_skew.b, p_skew.c, p_skew.d) == (1.0, 0.0, 0.0, 0.0)


@prop(st.integers(2, 4).flatmap(lambda N: st.lists(
    st.builds(F, st.integers(-6, 6), st.sampled_from([1, 2])), min_size=N, max_size=N))
    .flatmap(with_spectrum))
def thm4_a_face_exact(L: flint.fmpq_mat) -> None:
    if all(v == 0 for v in L.entries()):  # repair: L != 0 (keeps S)
        L[0, 1] += 1
        L[1, 0] -= 1
    p = exact.profile(L)
    assert (p.a == 0) == (L == L.transpose())
    assert (p.a == 1) == (L == -L.transpose())


@prop(st.integers(1, 5).flatmap(lambda N: st.tuples(dyadic_square(N), dyadic_square(N))))
def thm4_b_face_float_semidefinite(AB: tuple) -> None:
    A, B = AB
    A[0, 0] = abs(A[0, 0]) + 1.0  # repair: A A^T != 0
    P = A @ A.T
    T = B - B.T
    for L in (P + T, -P + T):
        assert qkforms.profile(L).b <= 1e-12


@prop(st.lists(pos_fracs, min_size=1, max_size=3).flatmap(
    lambda half: st.tuples(with_spectrum(half + [-x for x in half], add_skew=False),
                           with_spectrum(half + [-x for x in half], add_skew=True),
                           st.just(half))))
def thm4_b_face_exact_vertex(arg: tuple) -> None:
    S, L, half = arg
    assert exact.profile(S) == (0, 1, 0, 0)
    p = exact.profile(L)
    assert (p.b == 1) == (L == L.transpose())
    assert exact.is_semidefinite(exact.parts(L)[0]) is False and p.b > 0


@prop(dominated_spectrum().flatmap(lambda lam: st.tuples(with_spectrum(lam), st.just(lam))))
def thm4_d_face_exact(arg: tuple) -> None:
    L, lam = arg
    p = exact.profile(L)
    assert p.d == 0
    S, _ = exact.parts(L)
    H, P = exact.hp_decomposition(S)
    assert S == H + P
    assert exact.has_symmetric_spectrum(H) and exact.is_psd(P)
    assert exact.commute(H, P) and exact.commute(H, S)
    assert exact.frobenius_inner(P, P) == p.c * exact.frob_sq(L)
    # the mirror face for -L
    q = exact.profile(-L)
    assert q.c == 0
    H2, P2 = exact.hp_decomposition(-S, sign=-1)
    assert -S == H2 - P2 and exact.frobenius_inner(P2, P2) == q.d * exact.frob_sq(L)


@prop(st.integers(1, 5).flatmap(lambda N: st.tuples(dyadic_square(N), dyadic_square(N))))
def thm4_d_face_float_vertex_and_weyl(AB: tuple) -> None:
    A, B = AB
    A[0, 0] = abs(A[0, 0]) + 1.0  # repair: A A^T != 0
    P = A @ A.T
    p = qkforms.profile(-P)
    assert abs(float(p.d) - 1) < 1e-12
    # H + P with H spectrum-symmetric (H = [[0, C], [C^T, 0]]) and P PSD: d = 0 (up to rounding)
    N = len(A)
    H = np.block([[np.zeros((N, N)), B], [B.T, np.zeros((N, N))]])
    Pbig = np.block([[P, np.zeros((N, N))], [np.zeros((N, N)), np.zeros((N, N))]])
    assert qkforms.profile(H + Pbig).d <= 1e-9
    assert qkforms.profile(H - Pbig).c <= 1e-9


@prop(st.integers(1, 5).flatmap(lambda N: st.tuples(dyadic_square(N), dyadic_square(N))))
def thm4_c_face_float_vertex(AB: tuple) -> None:
    A, B = AB
    A[0, 0] = abs(A[0, 0]) + 1.0  # repair: A A^T != 0
    P = A @ A.T
    assert abs(float(qkforms.profile(P).c) - 1) < 1e-12
    p = qkforms.profile(P + (B - B.T))
    assert p.d <= 1e-12


@prop(dominated_spectrum().flatmap(lambda lam: with_spectrum([-x for x in lam])))
def thm4_c_face_exact(L: flint.fmpq_mat) -> None:
    p = exact.profile(L)
    assert p.c == 0
    S, _ = exact.parts(L)
    H, P = exact.hp_decomposition(S, sign=-1)
    assert S == H - P and exact.is_psd(P) and exact.has_symmetric_spectrum(H)
    assert exact.frobenius_inner(P, P) == p.d * exact.frob_sq(L)


@prop(st.integers(1, 5).flatmap(lambda N: st.tuples(dyadic_square(N), dyadic_square(N))),
       st.booleans())
def thm4_empty_edge_float(AB: tuple, negate: bool) -> None:
    A, B = AB
    A[0, 0] = abs(A[0, 0]) + 1.0  # repair: A A^T != 0
    S = -(A @ A.T) if negate else A @ A.T
    p = qkforms.profile(S + (B - B.T))
    assert p.b <= 1e-12 and p.c * p.d <= 1e-12


@prop(st.integers(1, 4).flatmap(lambda N: st.tuples(
    st.lists(nonneg_fracs, min_size=N, max_size=N), st.booleans())).flatmap(
        lambda arg: with_spectrum([-x for x in arg[0]] if arg[1] else arg[0], add_skew=True)))
def thm4_empty_edge_exact(L: flint.fmpq_mat) -> None:
    if all(v == 0 for v in L.entries()):
        L[0, 0] = 1
    p = exact.profile(L)
    assert p.b == 0
    assert p.c * p.d == 0

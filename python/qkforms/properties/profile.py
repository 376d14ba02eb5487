"""Properties of Definition 6, Lemma 4 and Proposition 4 (``def6``, ``lemma4``, ``prop4``).

Exact forms are built as ``U^T diag(lambda) U + T`` (``U`` rational orthogonal from
the Cayley transform of a drawn skew matrix times drawn signs, ``T = A - A^T``);
float forms from drawn entries. Nothing is filtered: a zero draw is repaired
constructively.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import sympy
from hypothesis import strategies as st

import qkforms
from qkforms import exact
from qkforms.checks.profile import nonzero_outer_product
from qkforms.properties import prop
from qkforms.properties.strategies import (
    float_matrices,
    forms,
    rank_one_factors,
    rational_orthogonal,
    to_float,
)

F = Fraction


@prop(forms())
def def6_float_profile_matches_exact(arg: tuple) -> None:
    L, lam = arg
    pe = exact.profile(L)
    assert pe == exact.profile_from_spectrum(lam, exact.frob_sq(L))
    np.testing.assert_allclose(np.array(qkforms.profile(to_float(L))), np.array(pe.to_float()),
                               atol=1e-12)


@prop(forms(), st.integers(1, 9), st.integers(1, 9), st.data())
def def6_invariances_exact(arg: tuple, p: int, q: int, data: st.DataObject) -> None:
    L, _ = arg
    N = L.nrows()
    pr = exact.profile(L)
    assert all(x >= 0 for x in pr) and sum(pr) == 1
    assert exact.profile(L * flint.fmpq(p, q)) == pr
    m = exact.profile(-L)
    assert (m.a, m.b, m.c, m.d) == (pr.a, pr.b, pr.d, pr.c)
    assert exact.profile(L.transpose()) == pr
    V = data.draw(rational_orthogonal(N))
    assert exact.profile(V.transpose() * L * V) == pr


@prop(float_matrices(), st.floats(0.01, 100), st.integers(0, 2**16))
def def6_invariances_float(L: np.ndarray, s: float, seed: int) -> None:
    p = np.array(qkforms.profile(L))
    np.testing.assert_allclose(np.array(qkforms.profile(s * L)), p, atol=1e-10)
    np.testing.assert_allclose(np.array(qkforms.profile(-L)), p[[0, 1, 3, 2]], atol=1e-10)
    np.testing.assert_allclose(np.array(qkforms.profile(L.T)), p, atol=1e-10)
    rng = np.random.default_rng(seed)
    V, _ = np.linalg.qr(rng.standard_normal(L.shape))
    np.testing.assert_allclose(np.array(qkforms.profile(V.T @ L @ V)), p, atol=1e-9)


@prop(st.integers(1, 3), st.integers(0, 3), st.integers(0, 2**16))
def def6_reduced_head_profile_matches_dense(n: int, extra: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    N = 2 * n + extra
    W_Q, W_K = rng.standard_normal((n, N)), rng.standard_normal((n, N))
    head = qkforms.Head(W_Q, W_K)
    dense = qkforms.profile(W_K.T @ W_Q)
    np.testing.assert_allclose(np.array(head.profile()), np.array(dense), atol=1e-10)
    np.testing.assert_allclose(np.array(qkforms.profile(head.reduced().form)), np.array(dense),
                               atol=1e-10)


@prop(forms())
def lemma4_profile_scale_exact(arg: tuple) -> None:
    L, _ = arg
    S, _ = exact.parts(L)
    p = exact.profile(L)
    if all(v == 0 for v in S.entries()):
        assert p.a == 1
        return
    ps = exact.profile(S)
    assert ps.a == 0
    assert (p.b, p.c, p.d) == tuple((1 - p.a) * x for x in ps[1:])
    assert exact.symmetric_profile(p) == tuple(ps[1:])


@prop(float_matrices())
def lemma4_profile_scale_float(L: np.ndarray) -> None:
    S = (L + L.T) / 2
    if not np.any(S):
        return  # antisymmetric: symmetric profile undefined (checked exactly elsewhere)
    p = qkforms.profile(L)
    np.testing.assert_allclose(np.array(qkforms.symmetric_profile(p)),
                               np.array(qkforms.profile(S))[1:], atol=1e-9)


@prop(rank_one_factors())
def prop4_rank_one_float(uv: tuple[np.ndarray, np.ndarray]) -> None:
    u, v = uv
    L = np.outer(u, v)
    t = np.trace(L) / np.linalg.norm(L)
    np.testing.assert_allclose(np.array(qkforms.profile(L)), np.array(qkforms.theta(t)),
                               atol=1e-10)
    assert qkforms.theta_distance(qkforms.profile(L)) < 1e-7


@prop(st.integers(2, 4).flatmap(lambda N: st.tuples(
    st.lists(st.integers(-4, 4), min_size=N, max_size=N),
    st.lists(st.integers(-4, 4), min_size=N, max_size=N))), max_examples=25)
def prop4_rank_one_exact(uv: tuple) -> None:
    u, v = list(uv[0]), list(uv[1])
    u[0] = u[0] or 1
    v[1] = v[1] or -2
    L = [[a * b for b in v] for a in u]
    p = exact.profile(L, algebraic=True)
    tr = sum(a * b for a, b in zip(u, v, strict=True))
    t2 = F(tr * tr, sum(a * a for a in u) * sum(b * b for b in v))
    expected = [(1 - t2) / 2, (1 - t2) / 2, t2 if tr > 0 else 0, t2 if tr < 0 else 0]
    for x, y in zip(p, expected, strict=True):
        assert sympy.simplify(sympy.sympify(x) - sympy.Rational(F(y).numerator,
                                                                  F(y).denominator)) == 0


@prop(st.floats(-1, 1))
def prop4_theta_round_trip(t: float) -> None:
    a, b, c, d = (float(x) for x in qkforms.theta(t))
    assert abs(a - b) < 1e-15 and c * d == 0
    assert abs(a + b + c + d - 1) < 1e-12
    assert abs(np.sqrt(c) - np.sqrt(d) - t) < 1e-12


@prop(st.integers(1, 4).flatmap(lambda N: st.tuples(
    *(st.lists(st.integers(-3, 3), min_size=N, max_size=N) for _ in range(4)))),
      st.integers(0, 1))
def prop4_rank_one_iff_nonzero_outer_product(vecs: tuple, c: int) -> None:
    """``rank L = 1`` iff ``L`` is a nonzero outer product, on ``L = u v^T + c u' v'^T``."""
    u, v, u2, v2 = vecs
    k = len(u)
    L = flint.fmpq_mat(k, k, [u[i] * v[j] + c * u2[i] * v2[j] for i in range(k)
                              for j in range(k)])
    outer = nonzero_outer_product(L)
    assert (exact.rank(L) == 1) == (outer is not None)
    if outer is not None:
        uu, vv = outer
        assert all(exact.as_fraction(L[i, j]) == uu[i] * vv[j] for i in range(k)
                   for j in range(k))

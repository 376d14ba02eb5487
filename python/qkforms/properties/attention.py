"""Properties of Lemma 1, Proposition 1 and Proposition 3 (``lemma1``, ``prop1``,
``prop3``), exactly on drawn rationals and against the float core's homogenized form.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
from hypothesis import strategies as st

import qkforms
from qkforms import exact
from qkforms.checks.attention import _QKV
from qkforms.properties import prop
from qkforms.properties.strategies import rationals

F = Fraction
fracs = rationals()


def vec(data: st.DataObject, k: int) -> list[Fraction]:
    return data.draw(st.lists(fracs, min_size=k, max_size=k))


@prop(st.integers(1, 4), st.data())
def lemma1_biaffine_decomposition(k: int, data: st.DataObject) -> None:
    C = [vec(data, k + 1) for _ in range(k + 1)]  # coefficients of (1, u) x (1, v)

    def P(u: list[Fraction], v: list[Fraction]) -> Fraction:
        uu, vv = [F(1), *u], [F(1), *v]
        return sum((C[i][j] * uu[i] * vv[j] for i in range(k + 1) for j in range(k + 1)), F(0))

    zero = [F(0)] * k
    D = P(zero, zero)

    def ell(u: list[Fraction]) -> Fraction:
        return P(u, zero) - D

    def r(v: list[Fraction]) -> Fraction:
        return P(zero, v) - D

    def B(u: list[Fraction], v: list[Fraction]) -> Fraction:
        return P(u, v) - P(u, zero) - P(zero, v) + D

    u1, u2, v1, v2 = (vec(data, k) for _ in range(4))
    s = data.draw(fracs)
    add = [a + s * b for a, b in zip(u1, u2, strict=True)]
    addv = [a + s * b for a, b in zip(v1, v2, strict=True)]
    assert P(u1, v1) == B(u1, v1) + ell(u1) + r(v1) + D
    assert B(add, v1) == B(u1, v1) + s * B(u2, v1)  # linear in u
    assert B(u1, addv) == B(u1, v1) + s * B(u1, v2)  # linear in v
    assert ell(add) == ell(u1) + s * ell(u2) and r(addv) == r(v1) + s * r(v2)
    # uniqueness: the parts are the coefficient blocks of P
    assert D == C[0][0]
    assert ell(u1) == sum(C[i + 1][0] * u1[i] for i in range(k))
    assert r(v1) == sum(C[0][j + 1] * v1[j] for j in range(k))
    assert B(u1, v1) == sum(C[i + 1][j + 1] * u1[i] * v1[j] for i in range(k) for j in range(k))


@prop(st.integers(1, 3), st.integers(2, 5), st.data())
def prop1_rope_like_iff_powers(n: int, k: int, data: st.DataObject) -> None:
    skew_entries = data.draw(st.lists(st.integers(-3, 3), min_size=n * n, max_size=n * n))
    A = np.triu(np.array(skew_entries).reshape(n, n), 1)
    U = exact.cayley_orthogonal((A - A.T).tolist())
    diag = data.draw(st.lists(st.sampled_from([F(1), F(-2), F(1, 3), F(3)]), min_size=n,
                              max_size=n))
    L0 = U * exact.diagonal(diag)
    S = flint.fmpq_mat(n, n, data.draw(st.lists(st.integers(-2, 2), min_size=n * n,
                                                  max_size=n * n)))
    eye = flint.fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])
    powers = [eye]
    for _ in range(1, k):
        powers.append(powers[-1] * S)
    L = [L0 * Pw for Pw in powers]
    T = [L0.inv() * Ld for Ld in L]
    assert all(T[d + e] == T[d] * T[e] for d in range(k) for e in range(k) if d + e < k)
    assert T[1] == S
    if k >= 3:  # perturb L_2: no longer RoPE-like, and T_2 != T_1^2
        E = flint.fmpq_mat(n, n)
        E[0, n - 1] = 1
        T2 = L0.inv() * (L[2] + L0 * E)
        assert T2 != T[1] * T[1]


@prop(st.integers(1, 3), st.integers(1, 3), st.data())
def prop3_homogenized_scores_exact(N: int, ell: int, data: st.DataObject) -> None:
    n = 4
    Q = [vec(data, N) for _ in range(n)]
    K = [vec(data, N) for _ in range(n)]
    pos = [vec(data, N) for _ in range(ell)]
    bQ, bK = vec(data, n), vec(data, n)
    xs = [vec(data, N) for _ in range(ell)]
    for biases in (False, True):
        head = _QKV(Q, K, pos, bQ if biases else None, bK if biases else None, F(2))
        for k in range(ell):
            for j in range(k + 1):
                assert head.hat(j, k, xs[j], F(1), xs[k], F(1)) == head.score(j, k, xs[j], xs[k])
                a, b = data.draw(fracs), data.draw(fracs)
                if not biases:
                    xj = [x + (a - 1) * p for x, p in zip(xs[j], pos[j], strict=True)]
                    xk = [x + (b - 1) * p for x, p in zip(xs[k], pos[k], strict=True)]
                    assert head.hat(j, k, xs[j], a, xs[k], b) == head.score(j, k, xj, xk)


@prop(st.integers(1, 3), st.integers(1, 6), st.integers(0, 2**16))
def prop3_float_homogenized_form(n: int, N: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    W_Q, W_K = rng.standard_normal((n, N)), rng.standard_normal((n, N))
    b_Q, b_K = rng.standard_normal(n), rng.standard_normal(n)
    Lhat = qkforms.Head(W_Q, W_K, b_Q=b_Q, b_K=b_K).homogenized_form()
    x_key, x_query = rng.standard_normal(N), rng.standard_normal(N)
    score = (W_Q @ x_query + b_Q) @ (W_K @ x_key + b_K)
    hom = np.append(x_key, 1.0) @ Lhat @ np.append(x_query, 1.0)
    assert abs(score - hom) <= 1e-10 * max(1.0, float(abs(score)))
    np.testing.assert_allclose(Lhat[:N, :N], W_K.T @ W_Q, atol=1e-12)

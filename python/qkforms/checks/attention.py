"""Checks of the attention-function results: Lemma 1, Proposition 1, Proposition 3.

Examples
--------
>>> check_prop1().passed
True
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from qkforms import exact
from qkforms.checks._tools import nonzero_fraction, rand_fraction
from qkforms.checks.result import CheckResult, Recorder
from qkforms.errors import ParameterError

__all__ = ["check_lemma1", "check_prop1", "check_prop3"]


def _bidegree_ok(expr, us, vs, du: int, dv: int) -> bool:  # noqa: ANN001
    """Every monomial has degree exactly ``du`` in ``us`` and ``dv`` in ``vs``."""
    import sympy

    poly = sympy.Poly(sympy.expand(expr), *us, *vs)
    k = len(us)
    return all(sum(m[:k]) == du and sum(m[k:]) == dv for m in poly.monoms()) or expr == 0


def check_lemma1(seed: int = 0, *, N: int = 3, trials: int = 4) -> CheckResult:
    """Lemma 1: unique biaffine decomposition ``P = B + l + r + D``, checked symbolically.

    For ``N' = 1..N``: a *generic* bidegree-(1,1) polynomial (one symbol per allowed
    monomial) and random rational ones; the four explicit parts
    ``D = P(0,0)``, ``l = P(u,0) - D``, ``r = P(0,v) - D``, ``B = P - P(u,0) - P(0,v) + D``
    have the claimed types (homogeneous of bidegree (1,1), (1,0), (0,1), (0,0)) and
    sum to ``P``; uniqueness: applied to a generic decomposition
    ``B' + l' + r' + D'`` (symbolic coefficients) the formulas return its parts.

    Examples
    --------
    >>> check_lemma1(N=2).passed
    True
    """
    import sympy

    rng = np.random.default_rng(seed)
    rec = Recorder("lemma1", "exact")
    for k in range(1, N + 1):
        us = sympy.symbols(f"u0:{k}")
        vs = sympy.symbols(f"v0:{k}")
        zero_u = dict.fromkeys(us, 0)
        zero_v = dict.fromkeys(vs, 0)
        Bc = sympy.Matrix(k, k, lambda i, j: sympy.Symbol(f"B{i}{j}"))
        lc = sympy.symbols(f"l0:{k}")
        rc = sympy.symbols(f"r0:{k}")
        Dc = sympy.Symbol("D")
        u, v = sympy.Matrix(us), sympy.Matrix(vs)
        Bp = (u.T * Bc * v)[0]
        lp = sum(a * b for a, b in zip(lc, us, strict=True))
        rp = sum(a * b for a, b in zip(rc, vs, strict=True))
        generic = Bp + lp + rp + Dc
        polys = [("generic", generic)]
        for _ in range(trials):
            coef = [[sympy.Rational(str(rand_fraction(rng))) for _ in range(k + 1)]
                    for _ in range(k + 1)]
            uu, vv = [sympy.Integer(1), *us], [sympy.Integer(1), *vs]
            polys.append(("random", sum(coef[i][j] * uu[i] * vv[j]
                                        for i in range(k + 1) for j in range(k + 1))))
        for name, P in polys:
            rec.instance()
            D = P.subs({**zero_u, **zero_v})
            l_part = sympy.expand(P.subs(zero_v) - D)
            r_part = sympy.expand(P.subs(zero_u) - D)
            B = sympy.expand(P - P.subs(zero_v) - P.subs(zero_u) + D)
            tag = f"{name} N={k}"
            rec.require(sympy.expand(B + l_part + r_part + D - P) == 0, f"{tag}: parts do not sum")
            rec.require(_bidegree_ok(B, us, vs, 1, 1), f"{tag}: B not bilinear")
            rec.require(_bidegree_ok(l_part, us, vs, 1, 0), f"{tag}: l not linear in u")
            rec.require(_bidegree_ok(r_part, us, vs, 0, 1), f"{tag}: r not linear in v")
            rec.require(not (set(D.free_symbols) & set(us + vs)), f"{tag}: D not constant")
            if name == "generic":
                rec.require(sympy.expand(B - Bp) == 0 and sympy.expand(l_part - lp) == 0
                            and sympy.expand(r_part - rp) == 0 and D == Dc,
                            f"{tag}: formulas do not recover a generic decomposition")
    return rec.result()


def _powers(S: flint.fmpq_mat, k: int) -> list[flint.fmpq_mat]:
    n = S.nrows()
    out = [flint.fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])]
    for _ in range(1, k):
        out.append(out[-1] * S)
    return out


def _rope_like(T: list[flint.fmpq_mat]) -> bool:
    k = len(T)
    return all(T[d + e] == T[d] * T[e] for d in range(k) for e in range(k) if d + e < k)


def check_prop1(seed: int = 0, *, n: int = 3, k: int = 5, trials: int = 4) -> CheckResult:
    """Proposition 1 exactly: RoPE-like iff ``T_d = S^d``, with ``S = L_0^-1 L_1``.

    Instances (rational, ``B_0`` nondegenerate by construction ``L_0 = U D`` with
    ``U`` orthogonal, ``D`` diagonal nonzero): forms ``L_d = L_0 S^d`` (RoPE-like: the
    identity ``T_{d+e} = T_d T_e`` holds and ``T_1`` recovers ``S``); rotary forms
    ``L_d = R^d`` with a rational rotation ``R`` (Cayley); and perturbed families
    (``L_2`` changed), which must fail both the identity and ``T_d = T_1^d``.

    Examples
    --------
    >>> check_prop1(seed=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("prop1", "exact")
    for _ in range(trials):
        U = exact.random_orthogonal(n, rng)
        D = exact.diagonal([nonzero_fraction(rng) for _ in range(n)])
        L0 = U * D
        S = exact.integer_matrix(rng, n, n, 2)
        L = [L0 * P for P in _powers(S, k)]
        inv0 = L0.inv()
        T = [inv0 * Ld for Ld in L]
        rec.instance()
        rec.require(_rope_like(T), "L_d = L_0 S^d is not RoPE-like")
        rec.require(T[1] == S and T == _powers(T[1], k), "T_d != T_1^d or T_1 != S")
        Lbad = list(L)
        E = flint.fmpq_mat(n, n)
        E[0, n - 1] = 1
        Lbad[2] = L[2] + L0 * E
        Tb = [inv0 * Ld for Ld in Lbad]
        rec.instance()
        rec.require(not _rope_like(Tb), "perturbed family reported RoPE-like")
        rec.require(Tb != _powers(Tb[1], k), "perturbed family has T_d = T_1^d")
    rec.instance()
    R = exact.cayley_orthogonal(exact.random_skew(n, rng))
    T = _powers(R, k)  # L_d = R^d with L_0 = I
    rec.require(_rope_like(T) and T == _powers(T[1], k), "rotary forms are not RoPE-like")
    return rec.result()


def _mat(rng: np.random.Generator, r: int, c: int) -> list[list[Fraction]]:
    return [[rand_fraction(rng, 3) for _ in range(c)] for _ in range(r)]


def _mv(A: list[list[Fraction]], x: list[Fraction]) -> list[Fraction]:
    return [sum((a * b for a, b in zip(row, x, strict=True)), Fraction(0)) for row in A]


def _dot(x: list[Fraction], y: list[Fraction]) -> Fraction:
    return sum((a * b for a, b in zip(x, y, strict=True)), Fraction(0))


def _add(x: list[Fraction], y: list[Fraction], s: Fraction = Fraction(1)) -> list[Fraction]:
    return [a + s * b for a, b in zip(x, y, strict=True)]


class _QKV:
    """QKV scores with position vectors and optional biases, and their homogenization."""

    def __init__(self, Q: list[list[Fraction]], K: list[list[Fraction]],
                 pos: list[list[Fraction]], bQ: list[Fraction] | None,
                 bK: list[Fraction] | None, root_n: Fraction) -> None:
        self.Q, self.K, self.pos, self.bQ, self.bK, self.root_n = Q, K, pos, bQ, bK, root_n

    def qoff(self, k: int) -> list[Fraction]:
        q = _mv(self.Q, self.pos[k])
        return q if self.bQ is None else _add(q, self.bQ)

    def koff(self, j: int) -> list[Fraction]:
        kk = _mv(self.K, self.pos[j])
        return kk if self.bK is None else _add(kk, self.bK)

    def score(self, j: int, k: int, xj: list[Fraction], xk: list[Fraction]) -> Fraction:
        """QKV score of key ``x_j`` (position j) for query ``x_k`` (position k)."""
        qk = _add(_mv(self.Q, xk), self.qoff(k))
        kj = _add(_mv(self.K, xj), self.koff(j))
        return _dot(qk, kj) / self.root_n

    def hat(self, j: int, k: int, u: list[Fraction], a: Fraction, v: list[Fraction],
            b: Fraction) -> Fraction:
        """The four-term bilinear form ``B̂(u + a e, v + b e)``."""
        Qv, Ku = _mv(self.Q, v), _mv(self.K, u)
        return (_dot(Qv, Ku) + a * _dot(Qv, self.koff(j)) + b * _dot(self.qoff(k), Ku)
                + a * b * _dot(self.qoff(k), self.koff(j))) / self.root_n


def _weights(scores: list[Fraction]) -> list[Fraction]:
    """Simplex-valued weights from scores (exact): ``w_j ∝ 1 + s_j^2``."""
    w = [1 + s * s for s in scores]
    tot = sum(w, Fraction(0))
    return [x / tot for x in w]


def _mlp(y: list[Fraction]) -> list[Fraction]:
    return [t * t for t in y]


def check_prop3(seed: int = 0, *, N: int = 3, n: int = 4, ell: int = 4,
                trials: int = 3) -> CheckResult:
    """Proposition 3 exactly: homogenization of QKV attention (positions and biases).

    For random rational ``Q, K`` (``n x N``; ``n = 4`` so ``sqrt(n) = 2`` is rational),
    position vectors ``p_j`` and biases ``b_Q, b_K``, tokens ``x_1..x_ell``:

    * ``B̂(ι x_j, ι x_k) = σ_j(x)`` for the four-term bilinear form on ``C ⊕ R e``
      (positional, then bias case with ``K p_j + b_K`` and ``Q p_k + b_Q``);
    * the subtle point: ``σ̂`` at ``(u_j + α_j e)`` equals the QKV score at
      ``u_j + (α_j - 1) p_j`` (random ``α_j``; positional case, query with ``α_k``);
    * the lifted transformer: with weights any simplex-valued function of the
      scores (here ``w_j ∝ 1 + σ_j^2``, exact), value map ``V``, and MLP
      ``M(y) = y ⊙ y`` (entrywise), ``T̂(ι x) = ι(T(x))`` exactly, where ``V̂``, ``M̂``
      act on the ``C``-component and return 0 in the ``e`` direction.

    Examples
    --------
    >>> check_prop3(seed=1, trials=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("prop3", "exact")
    root_n = Fraction(int(round(n ** 0.5)))
    if root_n * root_n != n:
        raise ParameterError(
            f"n must be a perfect square so that 1/sqrt(n) is rational, got n = {n}")
    one = Fraction(1)
    for _ in range(trials):
        Q, K, V = _mat(rng, n, N), _mat(rng, n, N), _mat(rng, N, N)
        pos = [[rand_fraction(rng) for _ in range(N)] for _ in range(ell)]
        bQ, bK = [rand_fraction(rng) for _ in range(n)], [rand_fraction(rng) for _ in range(n)]
        xs = [[rand_fraction(rng) for _ in range(N)] for _ in range(ell)]
        for case in ("positions", "biases"):
            rec.instance()
            head = _QKV(Q, K, pos, bQ if case == "biases" else None,
                        bK if case == "biases" else None, root_n)
            for k in range(ell):
                for j in range(k + 1):
                    rec.require(head.hat(j, k, xs[j], one, xs[k], one)
                                == head.score(j, k, xs[j], xs[k]),
                                f"{case}: B̂(ιx_{j}, ιx_{k}) != σ_{j}")
                    if case == "positions":
                        a, b = rand_fraction(rng), rand_fraction(rng)
                        xj = _add(xs[j], pos[j], a - 1)
                        xk = _add(xs[k], pos[k], b - 1)
                        rec.require(head.hat(j, k, xs[j], a, xs[k], b)
                                    == head.score(j, k, xj, xk),
                                    f"off-slice scores differ at ({j}, {k})")
            outs, outs_hat = [], []
            lifted = [x + [one] for x in xs]
            for k in range(ell):
                w = _weights([head.score(j, k, xs[j], xs[k]) for j in range(k + 1)])
                a_k = [sum((w[j] * xs[j][i] for j in range(k + 1)), Fraction(0))
                       for i in range(N)]
                y = _add(xs[k], _mv(V, a_k))
                outs.append(_add(y, _mlp(y)))
                wh = _weights([head.hat(j, k, lifted[j][:N], lifted[j][N], lifted[k][:N],
                                        lifted[k][N]) for j in range(k + 1)])
                ah = [sum((wh[j] * lifted[j][i] for j in range(k + 1)), Fraction(0))
                      for i in range(N + 1)]
                yh = _add(lifted[k], _mv(V, ah[:N]) + [Fraction(0)])
                outs_hat.append(_add(yh, _mlp(yh[:N]) + [Fraction(0)]))
            rec.require(all(oh == o + [one] for o, oh in zip(outs, outs_hat, strict=True)),
                        f"{case}: T̂(ιx) != ι(T(x))")
    return rec.result()

"""Checks of Definition 6 (profile properties), Lemma 4 and Proposition 4, exactly.

Examples
--------
>>> check_def6().passed
True
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import flint
import numpy as np

from qkforms import exact
from qkforms.checks._tools import nonzero_fraction, sqrt_fraction
from qkforms.checks.result import CheckResult, Recorder
from qkforms.checks.signature import gram_factor_case, gram_factor_failures
from qkforms.errors import ZeroFormError

__all__ = ["check_def6", "check_lemma4", "check_prop4", "nonzero_outer_product", "same",
           "theta_point"]


def same(x: Any, y: Any) -> bool:
    """Exact equality of Fractions and/or sympy numbers (radicals simplified).

    Examples
    --------
    >>> import sympy
    >>> same(Fraction(1, 2), Fraction(2, 4)), same(sympy.sqrt(8) / 2, sympy.sqrt(2))
    (True, True)
    """
    if isinstance(x, Fraction) and isinstance(y, Fraction):
        return x == y
    import sympy

    def conv(v: Any) -> Any:
        return sympy.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else v

    return sympy.simplify(conv(x) - conv(y)) == 0


def _same_profile(p: Any, q: Any) -> bool:
    return all(same(x, y) for x, y in zip(p, q, strict=True))


def _forms(rng: np.random.Generator, N: int, trials: int) -> list[tuple[Any, list[Fraction]]]:
    """Seeded forms with rational spectrum of S: generic, symmetric, skew, semidefinite."""
    out = []
    for t in range(trials):
        k = 1 + t % N
        kind = t % 4
        n_pos = int(rng.integers(0, k + 1))
        n_neg = int(rng.integers(0 if n_pos else 1, k - n_pos + 1))  # S != 0
        lam = exact.random_spectrum(rng, k, n_pos=n_pos, n_neg=n_neg)
        if kind == 0:
            out.append(exact.random_form(rng, k, spectrum=lam))
        elif kind == 1:
            out.append(exact.random_form(rng, k, spectrum=lam, skew=False))
        elif kind == 2:
            lam = exact.random_spectrum(rng, k, n_pos=k, n_neg=0)
            out.append(exact.random_form(rng, k, spectrum=lam))
        else:
            L, lam = exact.random_form(rng, max(k, 2), spectrum=[0] * max(k, 2))
            if L[0, 1] == 0:  # repair: L = T != 0
                L[0, 1] = 1
                L[1, 0] = -1
            out.append((L, lam))
    return out


def check_def6(seed: int = 0, *, N: int = 4, trials: int = 8) -> CheckResult:
    """Definition 6 properties, exactly, on seeded rational forms ``U^T diag U + T``.

    For each ``L`` (the spectrum of ``S`` is recomputed by factoring its
    characteristic polynomial over ``Q``, not taken from the construction):
    coordinates ``>= 0`` summing to 1; agreement with the profile computed from the
    construction's spectrum; positive scaling; ``pi(-L) = (a, b, d, c)``;
    transpose; orthogonal conjugation by a random rational orthogonal ``V``;
    reduction ``pi(R^T L' R) = pi(L')`` for ``L' = R L R^T`` with ``R`` having
    orthonormal rational columns in a larger space; the pairing relation
    ``(1 - P)^2 = 1 - b/(1 - a)`` when ``S != 0``; and ``pi(0)`` raises. The reduction
    from the Gram data (``QKForms.profile_transpose_mul_eq_of_gram_eq``): for heads with
    0-2 dead rows and three exact factors ``F`` of ``G = M M^T`` each
    (:func:`qkforms.checks.signature.gram_factor_case`), ``pi(W_K^T W_Q) = pi(K'^T Q')``
    exactly, with the energies that enter ``a``.

    Examples
    --------
    >>> check_def6(seed=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("def6", "exact")
    for L, lam in _forms(rng, N, trials):
        rec.instance()
        k = L.nrows()
        p = exact.profile(L)
        e = exact.energies(L)
        tag = f"N={k}"
        rec.require(all(x >= 0 for x in p) and sum(p) == 1, f"{tag}: not in the simplex {p}")
        rec.require(p == exact.profile_from_spectrum(lam, e.norm_sq), f"{tag}: spectrum mismatch")
        s = Fraction(int(rng.integers(1, 9)), int(rng.integers(1, 9)))
        rec.require(exact.profile(L * flint.fmpq(s.numerator, s.denominator)) == p,
                    f"{tag}: scaling by {s} changes the profile")
        q = exact.profile(-L)
        rec.require((q.a, q.b, q.c, q.d) == (p.a, p.b, p.d, p.c), f"{tag}: sign rule fails")
        rec.require(exact.profile(L.transpose()) == p, f"{tag}: transpose changes the profile")
        V = exact.random_orthogonal(k, rng)
        rec.require(exact.profile(V.transpose() * L * V) == p, f"{tag}: orthogonal conjugation")
        big = k + 1 + int(rng.integers(0, 2))
        W = exact.random_orthogonal(big, rng)
        R = flint.fmpq_mat(big, k, [W[i, j] for i in range(big) for j in range(k)])
        Lbig = R * L * R.transpose()
        rec.require(R.transpose() * Lbig * R == L, f"{tag}: R^T L' R != L")
        rec.require(exact.profile(Lbig) == p, f"{tag}: profile changes under embedding")
        if p.a != 1:
            pq = exact.pairing_quantities(lam)
            rec.require(pq.diff_sq / pq.S_sq == 1 - p.b / (1 - p.a),
                        f"{tag}: (1 - P)^2 != 1 - b/(1 - a)")
    for t in range(max(1, trials // 2)):
        case = gram_factor_case(rng, n_live=1 + t % 2, n_dead=t % 3, extra=1)
        rec.instance()
        for msg in gram_factor_failures(case, claims=("energies", "profile")):
            rec.require(False, f"reduction: {msg}")
    rec.instance()
    try:
        exact.profile(flint.fmpq_mat(3, 3))
        rec.require(False, "pi(0) did not raise")
    except ZeroFormError:
        pass
    rec.note("profiles from exact rational spectra (charpoly factored over Q)")
    return rec.result()


def check_lemma4(seed: int = 0, *, N: int = 4, trials: int = 8) -> CheckResult:
    """Lemma 4 exactly: ``(b, c, d) = (1 - a)(b_S, c_S, d_S)`` and ``pi(S)`` has ``a = 0``.

    Also ``1 - a = |S|^2/|L|^2``; for antisymmetric ``L`` (``S = 0``) the symmetric
    profile is undefined and raises.

    Examples
    --------
    >>> check_lemma4(seed=2).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma4", "exact")
    for t in range(trials):
        k = 1 + t % N
        n_pos = int(rng.integers(1, k + 1)) if t % 2 == 0 else 0
        n_neg = int(rng.integers(0 if n_pos else 1, k - n_pos + 1))
        lam = exact.random_spectrum(rng, k, n_pos=n_pos, n_neg=n_neg)
        L, _ = exact.random_form(rng, k, spectrum=lam)
        rec.instance()
        p = exact.profile(L)
        S, _ = exact.parts(L)
        pS = exact.profile(S)
        e = exact.energies(L)
        rec.require(pS.a == 0, f"N={k}: pi(S) has a = {pS.a}")
        rec.require((p.b, p.c, p.d) == tuple((1 - p.a) * x for x in (pS.b, pS.c, pS.d)),
                    f"N={k}: (b, c, d) != (1 - a) pi(S)")
        rec.require(1 - p.a == e.sym_sq / e.norm_sq, f"N={k}: 1 - a != |S|^2/|L|^2")
        rec.require(exact.symmetric_profile(p) == (pS.b, pS.c, pS.d), f"N={k}: symmetric_profile")
    rec.instance()
    A = exact.random_skew(3, rng)
    A[0, 1], A[1, 0] = 1, -1  # nonzero antisymmetric
    try:
        exact.symmetric_profile(exact.profile(A))
        rec.require(False, "symmetric profile of skew L did not raise")
    except ZeroFormError:
        pass
    return rec.result()


def theta_point(t: Fraction) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """Exact ``theta(t) = ((1 - t^2)/2, (1 - t^2)/2, t_+^2, t_-^2)`` for rational ``t``.

    Examples
    --------
    >>> theta_point(Fraction(1, 2))
    (Fraction(3, 8), Fraction(3, 8), Fraction(1, 4), Fraction(0, 1))
    """
    half = (1 - t * t) / 2
    return (half, half, t * t if t > 0 else Fraction(0), t * t if t < 0 else Fraction(0))


def nonzero_outer_product(L: flint.fmpq_mat) -> tuple[list[Fraction], list[Fraction]] | None:
    """``(u, v)`` with ``L = u v^T`` if ``L`` is a nonzero outer product, else ``None``.

    The construction of the Lean proof (``QKForms.exists_eq_vecMulVec_of_rank_eq_one``):
    every column of a rank-one matrix is a multiple of one vector. With ``L[i0, j0]`` the
    first nonzero entry, ``u`` is column ``j0`` and ``v`` row ``i0`` divided by
    ``L[i0, j0]``; the candidate is compared with ``L`` exactly. No rank is computed.

    Examples
    --------
    >>> nonzero_outer_product(flint.fmpq_mat([[2, 4], [1, 2]]))
    ([Fraction(2, 1), Fraction(1, 1)], [Fraction(1, 1), Fraction(2, 1)])
    >>> nonzero_outer_product(flint.fmpq_mat([[1, 0], [0, 1]])) is None
    True
    """
    rows = [[exact.as_fraction(x) for x in row] for row in L.tolist()]
    hit = next(((i, j) for i, row in enumerate(rows) for j, x in enumerate(row) if x != 0),
               None)
    if hit is None:
        return None
    i0, j0 = hit
    u = [row[j0] for row in rows]
    v = [x / rows[i0][j0] for x in rows[i0]]
    ok = all(rows[i][j] == u[i] * v[j] for i in range(len(rows)) for j in range(len(v)))
    return (u, v) if ok else None


def check_prop4(seed: int = 0, *, N: int = 4, trials: int = 8) -> CheckResult:
    """Proposition 4 exactly: rank-one profiles and the family Θ.

    * Rank one ``L = u v^T`` (random rational ``u, v != 0``, ``N = 2..N``): the exact
      profile (radicals: ``S`` has rank <= 2) equals
      ``((1 - t^2)/2, (1 - t^2)/2, t_+^2, t_-^2)`` with ``t^2 = tr(L)^2/|L|^2``; the point
      satisfies ``a = b``, ``cd = 0``, sum 1.
    * Parametrization round trip: for rational ``t`` in ``[-1, 1]``,
      ``t = sqrt(c) - sqrt(d)`` at ``theta(t)``.
    * Converse inclusion (needs ``N >= 2``): for Pythagorean
      ``t = +-(1 - s^2)/(1 + s^2)``, ``L = e_1 (t e_1 + sqrt(1 - t^2) e_2)^T`` has
      profile ``theta(t)`` (exact rational).
    * ``N = 1``: only the vertices ``c = 1``, ``d = 1`` occur.
    * Rank one as ``Matrix.rank L = 1`` (``QKForms.rank_eq_one_iff``): on integer
      products ``A B`` through ``R^r``, ``r = 0, 1, 2``, the exact rank is 1 exactly when
      :func:`nonzero_outer_product` finds ``L = u v^T``, ``L != 0``.

    Examples
    --------
    >>> check_prop4(seed=3).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("prop4", "exact")
    for t in range(trials):
        k = 2 + t % max(1, N - 1)
        u = [nonzero_fraction(rng) if i == 0 else Fraction(int(rng.integers(-3, 4)))
             for i in range(k)]
        v = [nonzero_fraction(rng) if i == t % k else Fraction(int(rng.integers(-3, 4)))
             for i in range(k)]
        if t % 5 == 4:
            v = [2 * x for x in u]  # u = +-v: a vertex
        L = flint.fmpq_mat(k, k, [flint.fmpq(a.numerator, a.denominator) *
                                  flint.fmpq(b.numerator, b.denominator) for a in u for b in v])
        rec.instance()
        p = exact.profile(L, algebraic=True)
        e = exact.energies(L)
        tr = exact.trace(L)
        t2 = tr * tr / e.norm_sq
        expected = ((1 - t2) / 2, (1 - t2) / 2, t2 if tr > 0 else Fraction(0),
                    t2 if tr < 0 else Fraction(0))
        rec.require(_same_profile(p, expected), f"N={k}: rank-one profile {p} != {expected}")
        rec.require(same(p.a, p.b) and same(p.c * p.d, Fraction(0)), f"N={k}: not on Theta")
    for _ in range(trials):
        rec.instance()
        den = int(rng.integers(1, 9))
        tt = Fraction(int(rng.integers(-den, den + 1)), den)
        pt = theta_point(tt)
        rc, rd = sqrt_fraction(pt[2]), sqrt_fraction(pt[3])
        rec.require(rc is not None and rd is not None and rc - rd == tt, f"t = {tt}: round trip")
        rec.require(pt[0] == pt[1] and pt[2] * pt[3] == 0 and sum(pt) == 1, f"t = {tt}: Theta")
        s = Fraction(int(rng.integers(0, 6)), int(rng.integers(1, 6)))
        sign = int(rng.choice([-1, 1]))
        tp = sign * (1 - s * s) / (1 + s * s)
        r = 2 * s / (1 + s * s)  # sqrt(1 - tp^2), rational
        k = 2 + int(rng.integers(0, max(1, N - 1)))
        L = flint.fmpq_mat(k, k)
        L[0, 0] = flint.fmpq(tp.numerator, tp.denominator)
        L[0, 1] = flint.fmpq(r.numerator, r.denominator)
        rec.require(exact.profile(L) == theta_point(tp), f"t = {tp}: e1 (t e1 + r e2)^T")
    for x in (Fraction(3), Fraction(-1, 2)):
        rec.instance()
        p = exact.profile([[x]])
        vertex = (0, 0, 1, 0) if x > 0 else (0, 0, 0, 1)
        rec.require(tuple(p) == vertex, f"N = 1: profile of [{x}] is {tuple(p)}")
    ones = 0
    for t in range(3 * trials):
        size, inner = 1 + t % N, t % 3
        L = (exact.integer_matrix(rng, size, inner) * exact.integer_matrix(rng, inner, size)
             if inner else flint.fmpq_mat(size, size))
        rec.instance()
        rk = exact.rank(L)
        outer = nonzero_outer_product(L)
        rec.require((rk == 1) == (outer is not None),
                    f"N={size}, r={inner}: rank {rk} but outer product {outer is not None}")
        ones += rk == 1
    rec.note(f"rank link: {ones} of {3 * trials} products have rank 1")
    return rec.result()

"""Checks of Theorem 4 (faces of the profile map), exactly.

Instances are built constructively with rational spectra of ``S`` (``U^T diag U``
with ``U`` rational orthogonal) plus rational skew parts, and cover both truth
values of every equivalence (on and off each face).

Examples
--------
>>> check_thm4_simplex().passed
True
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import flint
import numpy as np

from qkforms import exact
from qkforms.checks.result import CheckResult, Recorder
from qkforms.errors import QKFormsError

__all__ = [
    "check_thm4_simplex",
    "check_thm4_a_face",
    "check_thm4_b_face",
    "check_thm4_d_face",
    "check_thm4_c_face",
    "check_thm4_empty_edge",
]


def _spectrum(rng: np.random.Generator, k: int, kind: str) -> list[Fraction]:
    """Spectra of a chosen shape (all constructive)."""
    r = exact.random_spectrum
    if kind == "psd":
        return r(rng, k, n_pos=int(rng.integers(1, k + 1)), n_neg=0)
    if kind == "nsd":
        return r(rng, k, n_pos=0, n_neg=int(rng.integers(1, k + 1)))
    if kind == "zero":
        return [Fraction(0)] * k
    if kind == "mirror":  # alpha = beta
        half = r(rng, k // 2, n_pos=k // 2, n_neg=0)
        return half + [-x for x in half] + [Fraction(0)] * (k - 2 * (k // 2))
    if kind == "dominant_pos":  # alpha_j >= beta_j
        beta = sorted(r(rng, k // 2, n_pos=k // 2, n_neg=0), reverse=True)
        alpha = [b + Fraction(int(rng.integers(0, 3)), 2) for b in beta]
        extra = [Fraction(int(rng.integers(0, 4)), 3)] * (k - 2 * len(beta))
        return alpha + [-b for b in beta] + extra
    if kind == "dominant_neg":
        return [-x for x in _spectrum(rng, k, "dominant_pos")]
    if kind == "crossing" and k >= 4:  # alpha_1 > beta_1 but alpha_2 < beta_2
        b1, b2 = sorted(r(rng, 2, n_pos=2, n_neg=0), reverse=True)
        return [b1 + Fraction(1, 2), b2 / 2, -b1, -b2] + [Fraction(0)] * (k - 4)
    # "generic": both signs, no structure
    n_pos = int(rng.integers(1, k))
    return r(rng, k, n_pos=n_pos, n_neg=int(rng.integers(1, k - n_pos + 1)))


_KINDS = ("psd", "nsd", "zero", "mirror", "dominant_pos", "dominant_neg", "crossing", "generic")


def _nonzero_skew(rng: np.random.Generator, k: int) -> flint.fmpq_mat:
    A = exact.random_skew(k, rng)
    if A[0, 1] == 0:  # repair: nonzero
        A[0, 1] = 1
        A[1, 0] = -1
    return A


def _instances(rng: np.random.Generator, N: int, trials: int) -> list[tuple[str, Any, list]]:
    """(description, L, spectrum of S) with N >= 2; symmetric and non-symmetric.

    Every kind of spectrum occurs with and without a skew part (16 coverage
    instances, whatever ``trials`` is), then ``trials`` more of random kinds.
    """
    plan = [(kind, with_skew) for kind in _KINDS for with_skew in (False, True)]
    plan += [(_KINDS[int(rng.integers(0, len(_KINDS)))], bool(rng.integers(0, 2)))
             for _ in range(trials)]
    out = []
    for t, (kind, with_skew) in enumerate(plan):
        k = 2 + t % max(1, N - 1) if kind != "crossing" else max(4, N)
        lam = _spectrum(rng, k, kind)
        S = exact.symmetric_with_spectrum(lam, rng)
        with_skew = with_skew or kind == "zero"
        L = S + _nonzero_skew(rng, k) if with_skew else S
        out.append((f"{kind}{'+skew' if with_skew else ''} N={k}", L, lam))
    return out


def _lobes(lam: list[Fraction]) -> tuple[list[Fraction], list[Fraction]]:
    alpha, beta = exact.exact_lobes(lam)
    return alpha, beta


def check_thm4_simplex(seed: int = 0, *, N: int = 5, trials: int = 8) -> CheckResult:
    """Theorem 4: coordinates nonnegative and summing to 1, exactly.

    ``a`` is computed from ``|T|^2`` and ``b, c, d`` from the spectrum, so the sum is a
    real check of Lemma 5 plus the per-index identity
    ``alpha_j^2 + beta_j^2 = 2 alpha_j beta_j + (alpha_j - beta_j)_+^2 + (alpha_j - beta_j)_-^2``,
    which is checked too.

    Examples
    --------
    >>> check_thm4_simplex(seed=4).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("thm4.simplex", "exact")
    for desc, L, lam in _instances(rng, N, trials):
        rec.instance()
        p = exact.profile(L)
        rec.require(min(p) >= 0, f"{desc}: negative coordinate in {p}")
        rec.require(sum(p) == 1, f"{desc}: coordinates sum to {sum(p)}")
        alpha, beta = _lobes(lam)
        for x, y in zip(alpha, beta, strict=True):
            pos, neg = max(x - y, Fraction(0)), max(y - x, Fraction(0))
            rec.require(x * x + y * y == 2 * x * y + pos * pos + neg * neg, f"{desc}: identity")
    return rec.result()


def check_thm4_a_face(seed: int = 0, *, N: int = 5, trials: int = 8) -> CheckResult:
    """Theorem 4 (1): ``a = 0`` iff ``L`` symmetric; ``a = 1`` iff ``L`` antisymmetric.

    Both sides of each equivalence are evaluated independently on symmetric,
    antisymmetric and mixed instances (each truth value occurs).

    Examples
    --------
    >>> check_thm4_a_face(seed=5).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("thm4.a_face", "exact")
    seen = set()
    for desc, L, _ in _instances(rng, N, trials):
        rec.instance()
        p = exact.profile(L)
        sym = L == L.transpose()
        skew = L == -L.transpose()
        seen |= {("sym", sym), ("skew", skew)}
        rec.require((p.a == 0) == sym, f"{desc}: a = {p.a} but symmetric = {sym}")
        rec.require((p.a == 1) == skew, f"{desc}: a = {p.a} but antisymmetric = {skew}")
    rec.require(len(seen) == 4, f"instances do not cover both truth values: {sorted(seen)}")
    return rec.result()


def check_thm4_b_face(seed: int = 0, *, N: int = 5, trials: int = 8) -> CheckResult:
    """Theorem 4 (2): ``b = 0`` iff S semidefinite; ``b = 1`` iff symmetric, ``alpha = beta``.

    Semidefiniteness is decided by the exact signature of ``S`` (independent of
    the profile); ``alpha = beta`` from the exact spectrum.

    Examples
    --------
    >>> check_thm4_b_face(seed=6).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("thm4.b_face", "exact")
    seen = set()
    for desc, L, lam in _instances(rng, N, trials):
        rec.instance()
        p = exact.profile(L)
        S, _ = exact.parts(L)
        semi = exact.is_semidefinite(S)
        alpha, beta = _lobes(lam)
        vertex = L == L.transpose() and alpha == beta
        seen |= {("semi", semi), ("vertex", vertex)}
        rec.require((p.b == 0) == semi, f"{desc}: b = {p.b} but semidefinite = {semi}")
        rec.require((p.b == 1) == vertex, f"{desc}: b = {p.b} but (symmetric, alpha = beta) "
                    f"= {vertex}")
    rec.require(len(seen) == 4, f"instances do not cover both truth values: {sorted(seen)}")
    return rec.result()


def _face_check(result_id: str, sign: int, seed: int, N: int, trials: int,
                grid: int) -> CheckResult:
    rng = np.random.default_rng(seed)
    rec = Recorder(result_id, "exact")
    seen = set()
    other = "d" if sign == 1 else "c"
    vertex_name = "c" if sign == 1 else "d"
    for desc, L, lam in _instances(rng, N, trials):
        rec.instance()
        p = exact.profile(L)
        e = exact.energies(L)
        S, _ = exact.parts(L)
        alpha, beta = _lobes(lam)
        if sign == -1:
            alpha, beta = beta, alpha
        zero_coord = (p.d if sign == 1 else p.c) == 0
        lobes_ok = all(x >= y for x, y in zip(alpha, beta, strict=True))
        try:
            H, P = exact.hp_decomposition(S, sign=sign)
            split = True
        except QKFormsError:
            split = False
        seen.add(zero_coord)
        rec.require(zero_coord == lobes_ok == split,
                    f"{desc}: {other} = 0 is {zero_coord}, lobe inequality {lobes_ok}, "
                    f"H {'+' if sign == 1 else '-'} P exists {split}")
        if split:
            rec.require(S == H + P * sign, f"{desc}: S != H {'+-'[sign == -1]} P")
            rec.require(exact.has_symmetric_spectrum(H), f"{desc}: spectrum of H not symmetric")
            rec.require(exact.is_psd(P), f"{desc}: P not PSD")
            rec.require(exact.commute(H, P) and exact.commute(H, S) and exact.commute(P, S),
                        f"{desc}: H, P, S do not commute")
            coord = p.c if sign == 1 else p.d
            rec.require(exact.frobenius_inner(P, P) == coord * e.norm_sq,
                        f"{desc}: |P|^2 != {vertex_name}|L|^2")
        vertex = (p.c if sign == 1 else p.d) == 1
        semi = exact.is_psd(S) if sign == 1 else exact.is_nsd(S)
        rec.require(vertex == (L == L.transpose() and semi),
                    f"{desc}: {vertex_name} = 1 is {vertex} but symmetric "
                    f"{'PSD' if sign == 1 else 'NSD'} is {L == L.transpose() and semi}")
    # converse direction on non-commuting decompositions S = H + sign P
    eye = None
    for _ in range(max(2, trials // 3)):
        k = 2 + int(rng.integers(0, max(1, N - 1)))
        half = exact.random_spectrum(rng, k // 2, n_pos=k // 2, n_neg=0)
        H = exact.symmetric_with_spectrum(half + [-x for x in half] + [0] * (k % 2), rng)
        B = exact.integer_matrix(rng, k, int(rng.integers(1, k + 1)))
        P = B * B.transpose()
        S = H + P * sign
        eye = flint.fmpq_mat(k, k, [int(i == j) for i in range(k) for j in range(k)])
        rec.instance()
        for j in range(1, grid + 1):
            tt = flint.fmpq(j, 2)
            n_below = exact.signature(S * sign + eye * tt).n_neg  # #{sign*lam < -t}
            n_above = exact.signature(S * sign - eye * tt).n_pos  # #{sign*lam > t}
            rec.require(n_below <= n_above, f"non-commuting H {'+-'[sign == -1]} P: "
                        f"counts at t = {tt}: {n_below} > {n_above}")
    rec.require(seen == {True, False}, f"instances do not cover both truth values: {seen}")
    rec.note(f"converse spot-checked on non-commuting H {'+-'[sign == -1]} P at t = 1/2..{grid}/2")
    return rec.result()


def check_thm4_d_face(seed: int = 0, *, N: int = 5, trials: int = 8, grid: int = 8
                      ) -> CheckResult:
    """Theorem 4 (3): ``d = 0`` iff ``alpha >= beta`` iff ``S = H + P``; ``d = 1`` iff NSD.

    The three conditions are evaluated independently: the profile coordinate,
    the lobe inequality from the exact spectrum, and the exact construction of
    ``H`` (spectrum symmetric about 0) and ``P`` (PSD), which must commute with each
    other and with ``S`` and satisfy ``|P|^2 = c |L|^2``. The converse (any
    decomposition forces the lobe inequality, by Weyl monotonicity) is
    spot-checked on non-commuting ``H + P`` (``P = B B^T``) via exact eigenvalue
    counts ``#{lam < -t} <= #{lam > t}`` on a grid of ``t``. The vertex ``d = 1`` is
    matched with "symmetric and negative semidefinite".

    Examples
    --------
    >>> check_thm4_d_face(seed=7).passed
    True
    """
    return _face_check("thm4.d_face", 1, seed, N, trials, grid)


def check_thm4_c_face(seed: int = 0, *, N: int = 5, trials: int = 8, grid: int = 8
                      ) -> CheckResult:
    """Theorem 4 (4): ``c = 0`` iff ``beta >= alpha`` iff ``S = H - P``; ``c = 1`` iff PSD.

    Mirror of :func:`check_thm4_d_face` (``|P|^2 = d |L|^2``).

    Examples
    --------
    >>> check_thm4_c_face(seed=8).passed
    True
    """
    return _face_check("thm4.c_face", -1, seed, N, trials, grid)


def check_thm4_empty_edge(seed: int = 0, *, N: int = 5, trials: int = 8) -> CheckResult:
    """Theorem 4: no ``L`` has ``b = 0`` with ``c > 0`` and ``d > 0``.

    On every instance: ``b = 0`` implies ``alpha_1 beta_1 = 0`` (one lobe vanishes)
    and ``c d = 0``. Instances with ``b = 0`` (semidefinite ``S`` plus skew parts,
    ``S = 0``) are included, as are instances with ``c, d > 0`` (which must have
    ``b > 0``).

    Examples
    --------
    >>> check_thm4_empty_edge(seed=9).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("thm4.empty_edge", "exact")
    counts = {"b=0": 0, "c,d>0": 0}
    for desc, L, lam in _instances(rng, N, trials):
        rec.instance()
        p = exact.profile(L)
        alpha, beta = _lobes(lam)
        if p.b == 0:
            counts["b=0"] += 1
            rec.require(alpha[0] * beta[0] == 0, f"{desc}: b = 0 but alpha_1 beta_1 != 0")
            rec.require(p.c * p.d == 0, f"{desc}: b = 0 with c = {p.c}, d = {p.d}")
        if p.c > 0 and p.d > 0:
            counts["c,d>0"] += 1
            rec.require(p.b > 0, f"{desc}: c, d > 0 with b = 0")
    rec.require(all(v > 0 for v in counts.values()), f"coverage: {counts}")
    rec.note(f"instances with b = 0: {counts['b=0']}; with c, d > 0: {counts['c,d>0']}")
    return rec.result()

"""Checks of Lemma 6 (proportional lobes) and Theorem 5 (accumulation on Θ).

Both are almost-sure limit statements, checked by seeded Monte Carlo with
tolerances from the sampling variance, together with exact checks of their
deterministic ingredients.

Monte Carlo design: each run draws one sample path (the largest size) and the
smaller sizes use its prefixes (nested samples, as in the a.s. statement). For
sizes ``n1 < n2`` the per-run paired difference ``D = f(n1) - f(n2)`` must have a
mean larger than 5 standard errors of that mean (``mean(D) > 5 sd(D)/sqrt(runs)``):
the quantity decreases, with a false-alarm probability of about 3e-7 under the
normal approximation (the seed is fixed, so runs are reproducible).

Examples
--------
>>> check_lemma6().passed
True
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from qkforms import accumulation_limit, profile_from_eigenvalues
from qkforms.checks._tools import abs_sqrt_minus_le
from qkforms.checks.result import CheckResult, Recorder

__all__ = ["check_lemma6", "check_thm5", "layer_cake_inner", "limit_point"]

_Z = 5.0


def _decreases(v1: np.ndarray, v2: np.ndarray) -> tuple[bool, str]:
    d = v1 - v2
    se = float(np.std(d, ddof=1) / np.sqrt(d.size))
    m = float(np.mean(d))
    return m > _Z * se, f"mean drop {m:.4g} = {m / se:.1f} SE (need > {_Z:g})"


def layer_cake_inner(y: list[Fraction], yp: list[Fraction]) -> Fraction:
    """``∫∫ min(#{i: y_i > s}, #{j: y'_j > t}) ds dt`` over ``s, t >= 0``, exactly.

    Both count functions are step functions, so the integral is a finite sum.
    For decreasing nonnegative ``y, y'`` of equal length it equals ``<y, y'>``.

    Examples
    --------
    >>> F = Fraction
    >>> layer_cake_inner([F(3), F(1)], [F(2), F(2)])
    Fraction(8, 1)
    """
    def steps(v: list[Fraction]) -> list[tuple[Fraction, Fraction, int]]:
        pts = sorted({Fraction(0), *v})
        return [(a, b, sum(1 for x in v if x > a)) for a, b in itertools.pairwise(pts)]

    total = Fraction(0)
    for s0, s1, cs in steps(y):
        for t0, t1, ct in steps(yp):
            total += (s1 - s0) * (t1 - t0) * min(cs, ct)
    return total


def check_lemma6(seed: int = 0, *, sizes: tuple[int, ...] = (64, 1024, 4096), runs: int = 40,
                 shape: float = 2.0, rho: float = 0.5) -> CheckResult:
    """Lemma 6: ``|β_n - ρ α_n|/|α_n| → 0`` a.s. (Monte Carlo), plus exact ingredients.

    Monte Carlo: ``X ~ Gamma(shape)``, ``v = 1``, ``u = ρ``; for each run the
    departure ``δ_n`` at every size in ``sizes`` (nested prefixes); consecutive
    sizes must show a drop of more than 5 standard errors (see the module
    docstring).

    Exact (Fractions): the layer-cake identity ``<y, y'> = ∫∫ min(N_y(s), N_y'(t))``
    for sorted samples; the rearrangement inequality (the sorted pairing
    maximizes ``<y, σ y'>`` over all permutations ``σ``, ``n <= 5``); the reduction
    ``β - ρα = u (Y' - Y)`` to ``u = v = 1``.

    Examples
    --------
    >>> check_lemma6(seed=1, runs=20).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma6", "exact+monte-carlo")
    sizes = tuple(sorted(sizes))
    X = rng.gamma(shape, size=(runs, sizes[-1]))
    Xp = rng.gamma(shape, size=(runs, sizes[-1]))
    deltas = []
    for n in sizes:
        alpha = -np.sort(-X[:, :n], axis=1)
        beta = -np.sort(-rho * Xp[:, :n], axis=1)
        deltas.append(np.linalg.norm(beta - rho * alpha, axis=1) / np.linalg.norm(alpha, axis=1))
    for i in range(len(sizes) - 1):
        rec.instance()
        ok, msg = _decreases(deltas[i], deltas[i + 1])
        rec.require(ok, f"δ from n={sizes[i]} to n={sizes[i + 1]}: {msg}")
        rec.note(f"δ, n={sizes[i]} -> {sizes[i + 1]}: {msg}")
    means = ", ".join(f"n={n}: {d.mean():.4f}" for n, d in zip(sizes, deltas, strict=True))
    rec.note(f"Monte Carlo Gamma({shape:g}), ρ = {rho:g}, {runs} runs, mean δ_n {means}")
    for _ in range(4):
        rec.instance()
        k = int(rng.integers(1, 6))
        y = sorted((Fraction(float(v)) for v in rng.gamma(shape, size=k)), reverse=True)
        yp = sorted((Fraction(float(v)) for v in rng.gamma(shape, size=k)), reverse=True)
        inner = sum((a * b for a, b in zip(y, yp, strict=True)), Fraction(0))
        rec.require(layer_cake_inner(y, yp) == inner, f"layer cake fails for k={k}")
        best = max(sum((a * yp[j] for a, j in zip(y, perm, strict=True)), Fraction(0))
                   for perm in itertools.permutations(range(k)))
        rec.require(best == inner, f"sorted pairing not maximal for k={k}")
        u, v = Fraction(int(rng.integers(1, 5)), 3), Fraction(int(rng.integers(1, 5)), 2)
        r = u / v
        alpha_q, beta_q = [v * a for a in y], [u * b for b in yp]
        rec.require([b - r * a for a, b in zip(alpha_q, beta_q, strict=True)]
                    == [u * (b - a) for a, b in zip(y, yp, strict=True)], "reduction to u = v = 1")
    rec.note("tolerance: 5 standard errors of the paired per-run drop")
    return rec.result()


def limit_point(rho: Fraction) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """Exact Theorem 5 limit ``(0, 2ρ, (1-ρ)_+^2, (ρ-1)_+^2)/(1 + ρ^2)``.

    Examples
    --------
    >>> limit_point(Fraction(1, 2))
    (Fraction(0, 1), Fraction(4, 5), Fraction(1, 5), Fraction(0, 1))
    """
    den = 1 + rho * rho
    return (Fraction(0), 2 * rho / den, max(1 - rho, Fraction(0)) ** 2 / den,
            max(rho - 1, Fraction(0)) ** 2 / den)


def _estimates_hold(alpha: list[Fraction], beta: list[Fraction], rho: Fraction
                    ) -> list[str]:
    """The four deterministic estimates of Theorem 5's proof, checked exactly."""
    a2 = sum((a * a for a in alpha), Fraction(0))
    d2 = sum(((b - rho * a) ** 2 for a, b in zip(alpha, beta, strict=True)), Fraction(0)) / a2
    bad = []
    x = sum((a * b for a, b in zip(alpha, beta, strict=True)), Fraction(0)) / a2 - rho
    if x * x > d2:
        bad.append("|<α,β>/|α|^2 - ρ| <= δ")
    y = abs(sum((b * b for b in beta), Fraction(0)) / a2 - rho * rho) - d2
    if y > 0 and y * y > 4 * rho * rho * d2:
        bad.append("| |β|^2/|α|^2 - ρ^2 | <= δ^2 + 2ρδ")
    cpos = sum((max(a - b, Fraction(0)) ** 2 for a, b in zip(alpha, beta, strict=True)),
               Fraction(0)) / a2
    dpos = sum((max(b - a, Fraction(0)) ** 2 for a, b in zip(alpha, beta, strict=True)),
               Fraction(0)) / a2
    if not abs_sqrt_minus_le(cpos, max(1 - rho, Fraction(0)), d2):
        bad.append("| |(α-β)_+|/|α| - (1-ρ)_+ | <= δ")
    if not abs_sqrt_minus_le(dpos, max(rho - 1, Fraction(0)), d2):
        bad.append("| |(β-α)_+|/|α| - (ρ-1)_+ | <= δ")
    return bad


def check_thm5(seed: int = 0, *, sizes: tuple[int, ...] = (64, 1024), runs: int = 120,
               shape: float = 2.0) -> CheckResult:
    """Theorem 5: accumulation of ``π(S_n)`` at ``(0, 2ρ, (1-ρ)_+^2, (ρ-1)_+^2)/(1+ρ^2)``.

    Exact part: limit values at ``ρ = 1/2, 1, 2`` against the spec's worked example
    ``(b, c, d) = (0.8, 0.2, 0), (1, 0, 0), (0.8, 0, 0.2)`` (and 0.9, 0.75, 0.25 to
    the printed 5-6 digits); the limit lies in ``p(Θ)`` (``t = (1-ρ)/sqrt(1+ρ^2)``,
    via ``1 - t^2 = 2ρ/(1+ρ^2)``), on the edge ``d = 0`` (``ρ <= 1``) or ``c = 0``
    (``ρ >= 1``), with ``b(ρ)`` strictly monotone on a rational grid; the endpoints
    (``QKForms/AccumulationEndpoints.lean``): the limit at ``ρ = 1`` is the vertex
    ``b = 1``, and for ``ρ = 10^-k`` (``10^k``), ``k = 1..6``, it lies within ``2ρ``
    (``2/ρ``) of the vertex ``c = 1`` (``d = 1``) in every coordinate, exactly (since
    ``1 - c = b = 2ρ/(1+ρ^2)`` for ``ρ <= 1``, mirrored for ``ρ >= 1``); the four
    deterministic estimates of the proof hold exactly on rational samples (gamma
    draws converted exactly) for ``ρ`` in ``{1/2, 1, 2}``; the float core's
    ``accumulation_limit`` agrees with the exact values.

    Monte Carlo part (``ρ = 1/2``, ``X ~ Gamma(shape)``, eigenvalues ``X_i``,
    ``-X'_i/2`` and ``N - 2n = 7`` zeros): the distance of ``π(S_n)`` to the limit
    drops between consecutive sizes by more than 5 standard errors, and in every
    run ``|b - b*| <= [2δ(1+ρ^2) + 2ρ(δ^2 + 2ρδ)]/(1+ρ^2)`` (from the estimates).

    Examples
    --------
    >>> check_thm5(seed=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("thm5", "exact+monte-carlo")
    _limit_values(rec)
    _limit_edges_and_endpoints(rec)
    for rho in (Fraction(1, 2), Fraction(1), Fraction(2)):
        for _ in range(2):
            rec.instance()
            n = int(rng.integers(4, 17))
            xs = sorted((Fraction(float(v)) for v in rng.gamma(shape, size=n)), reverse=True)
            xps = sorted((Fraction(float(v)) for v in rng.gamma(shape, size=n)), reverse=True)
            vv = Fraction(int(rng.integers(1, 4)))
            alpha, beta = [vv * x for x in xs], [rho * vv * x for x in xps]
            bad = _estimates_hold(alpha, beta, rho)
            rec.require(not bad, f"ρ = {rho}, n = {n}: estimates fail: {bad}")
    _accumulation_monte_carlo(rec, rng, sizes, runs, shape)
    return rec.result()


def _limit_values(rec: Recorder) -> None:
    """The limit point against the spec's worked examples, ``p(Θ)``, its edge, and the
    float core's :func:`~qkforms.accumulation_limit`."""
    F = Fraction
    worked = {F(1, 2): (0.8, 0.2, 0.0), F(1): (1.0, 0.0, 0.0), F(2): (0.8, 0.0, 0.2),
              F(9, 10): (0.99448, 0.00552, 0.0), F(3, 4): (0.96, 0.04, 0.0),
              F(1, 4): (0.470588, 0.529412, 0.0)}
    for rho, bcd in worked.items():
        rec.instance()
        lim = limit_point(rho)
        tol = 0.0 if rho in (F(1, 2), F(1), F(2)) else 5e-6
        rec.require(all(abs(float(x) - y) <= tol for x, y in zip(lim[1:], bcd, strict=True)),
                    f"ρ = {rho}: limit {lim} vs worked example {bcd}")
        if tol == 0.0:
            rec.require(lim[1:] == tuple(F(y).limit_denominator(10) for y in bcd),
                        f"ρ = {rho}: exact limit {lim}")
        t2 = (1 - rho) ** 2 / (1 + rho * rho)
        p_theta = (F(0), 1 - t2, t2 if rho < 1 else F(0), t2 if rho > 1 else F(0))
        rec.require(p_theta == lim, f"ρ = {rho}: limit not p(θ(t))")
        rec.require(sum(lim) == 1 and (lim[3] == 0 if rho <= 1 else lim[2] == 0),
                    f"ρ = {rho}: not on the edge")
        fl = accumulation_limit(float(rho))
        rec.require(all(abs(float(x) - float(y)) <= 1e-12 for x, y in zip(lim, fl, strict=True)),
                    f"ρ = {rho}: float core accumulation_limit {tuple(fl)}")


def _limit_edges_and_endpoints(rec: Recorder) -> None:
    """``b(ρ)`` strictly monotone on a rational grid; the vertices at ``ρ = 1`` and as
    ``ρ -> 0``, ``ρ -> ∞`` (``QKForms/AccumulationEndpoints.lean``)."""
    F = Fraction
    rec.instance()
    grid = [F(k, 8) for k in range(1, 9)]
    bs = [limit_point(r)[1] for r in grid]
    rec.require(all(x < y for x, y in itertools.pairwise(bs)) and bs[-1] == 1,
                "b(ρ) not strictly increasing on (0, 1]")
    bs = [limit_point(1 / r)[1] for r in grid[::-1]]
    rec.require(all(x > y for x, y in itertools.pairwise(bs)), "b(ρ) not decreasing on [1, ∞)")
    rec.instance()
    rec.require(limit_point(F(1)) == (0, 1, 0, 0), "ρ = 1: the limit is not the vertex b = 1")
    for k in range(1, 7):
        rec.instance()
        small, large = F(1, 10**k), F(10**k)
        near_c = max(abs(x - y) for x, y in zip(limit_point(small), (0, 0, 1, 0), strict=True))
        near_d = max(abs(x - y) for x, y in zip(limit_point(large), (0, 0, 0, 1), strict=True))
        rec.require(near_c <= 2 * small, f"ρ = {small}: distance {near_c} to the vertex c = 1")
        rec.require(near_d <= 2 / large, f"ρ = {large}: distance {near_d} to the vertex d = 1")


def _accumulation_monte_carlo(rec: Recorder, rng: np.random.Generator,
                              sizes: tuple[int, ...], runs: int, shape: float) -> None:
    """At ``ρ = 1/2``: the distance to the limit drops between sizes (5 standard errors),
    and ``|b - b*|`` stays within the deterministic bound in every run."""
    r_mc = 0.5
    lim_mc = np.array([float(x) for x in limit_point(Fraction(1, 2))])
    X = rng.gamma(shape, size=(runs, sizes[-1]))
    Xp = rng.gamma(shape, size=(runs, sizes[-1]))
    dists = []
    for n in sizes:
        eig = np.concatenate([X[:, :n], -r_mc * Xp[:, :n], np.zeros((runs, 7))], axis=1)
        p = profile_from_eigenvalues(eig, np.sum(eig * eig, axis=1))
        pts = np.stack([p.a, p.b, p.c, p.d], axis=1)
        dists.append(np.linalg.norm(pts - lim_mc, axis=1))
        a_mc = -np.sort(-X[:, :n], axis=1)
        b_mc = -np.sort(-r_mc * Xp[:, :n], axis=1)
        delta = np.linalg.norm(b_mc - r_mc * a_mc, axis=1) / np.linalg.norm(a_mc, axis=1)
        bound = (2 * delta * (1 + r_mc**2) + 2 * r_mc * (delta**2 + 2 * r_mc * delta)) / (
            1 + r_mc**2)
        rec.instance()
        rec.require(bool(np.all(np.abs(p.b - lim_mc[1]) <= bound + 1e-12)),
                    f"n = {n}: |b - b*| exceeds the deterministic bound in some run")
    for i in range(len(sizes) - 1):
        rec.instance()
        ok, msg = _decreases(dists[i], dists[i + 1])
        rec.require(ok, f"distance to the limit from n={sizes[i]} to n={sizes[i + 1]}: {msg}")
        rec.note(f"distance, n={sizes[i]} -> {sizes[i + 1]}: {msg}")
    means = ", ".join(f"n={n}: {d.mean():.4f}" for n, d in zip(sizes, dists, strict=True))
    rec.note(f"Monte Carlo ρ = 1/2, Gamma({shape:g}), {runs} runs, mean distance {means}")
    rec.note("tolerance: 5 standard errors of the paired per-run drop")

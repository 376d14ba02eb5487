"""Checks of the energy identities and the random baselines.

Lemma 5 (exact), Corollary 1 and Corollary 2 (exact expectations by enumerating
every sign pattern of small random matrices with two-point laws, plus Monte Carlo
for Gaussian entries), Proposition 5 (Monte Carlo, plus exact enumerations of
laws with the same symmetries).

Monte Carlo tolerance: a sample mean ``m`` of ``R`` iid values with sample standard
deviation ``s`` passes if ``|m - target| <= 5 s / sqrt(R)`` (5 standard errors;
a false alarm has probability about 6e-7 per comparison under the normal
approximation; the seed is fixed, so a run is deterministic).

Examples
--------
>>> check_lemma5().passed
True
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from qkforms import exact
from qkforms.checks._tools import rand_fraction
from qkforms.checks.result import CheckResult, Recorder
from qkforms.exact.rational import MatrixLike

__all__ = ["check_lemma5", "check_cor1", "check_cor2", "check_prop5", "mc_mean_ok"]

_Z = 5.0  # standard errors allowed in Monte Carlo comparisons


def mc_mean_ok(samples: np.ndarray, target: float, z: float | None = None) -> tuple[bool, str]:
    """Whether the sample mean is within ``z`` standard errors of ``target``.

    Examples
    --------
    >>> ok, msg = mc_mean_ok(np.array([0.9, 1.1, 1.0, 1.0]), 1.0)
    >>> ok
    True
    """
    z = _Z if z is None else z
    m = float(np.mean(samples))
    se = float(np.std(samples, ddof=1) / np.sqrt(samples.size))
    ok = abs(m - target) <= z * se + 1e-12 * max(1.0, abs(target))
    return ok, f"mean {m:.6g} vs {target:.6g} (SE {se:.2g}, |diff|/SE {abs(m - target) / se:.2f})"


def check_lemma5(seed: int = 0, *, N: int = 5, trials: int = 12) -> CheckResult:
    """Lemma 5 exactly: ``|L|^2 = |S|^2 + |T|^2``, ``|S|^2 = (|L|^2 + tr L^2)/2``, ...

    Instances: random rational ``L`` of sizes 1..N, a symmetric, an antisymmetric
    and the zero matrix, and random heads (``tr L = <W_K, W_Q>_F = tr S``).

    Examples
    --------
    >>> check_lemma5(seed=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma5", "exact")
    mats: list[MatrixLike] = []  # Fraction lists and flint matrices alike
    for t in range(trials):
        k = 1 + t % N
        mats.append([[rand_fraction(rng) for _ in range(k)] for _ in range(k)])
    A = exact.integer_matrix(rng, N, N)
    mats += [A + A.transpose(), A - A.transpose(), exact.integer_matrix(rng, N, N) * 0]
    for L in mats:
        rec.instance()
        e = exact.energies(L)
        S, T = exact.parts(L)
        rec.require(e.norm_sq == e.sym_sq + e.skew_sq, f"|L|^2 != |S|^2 + |T|^2 for {L}")
        rec.require(2 * e.sym_sq == e.norm_sq + e.trace_sq, "|S|^2 != (|L|^2 + tr L^2)/2")
        rec.require(2 * e.skew_sq == e.norm_sq - e.trace_sq, "|T|^2 != (|L|^2 - tr L^2)/2")
        rec.require(exact.frobenius_inner(S, T) == 0, "<S, T>_F != 0")
        if e.norm_sq != 0:
            ratio = e.trace_sq / (2 * e.norm_sq)
            rec.require(e.sym_sq / e.norm_sq == Fraction(1, 2) + ratio, "S-ratio identity")
            rec.require(e.skew_sq / e.norm_sq == Fraction(1, 2) - ratio, "T-ratio identity")
    for _ in range(3):
        rec.instance()
        n, Nh = int(rng.integers(1, 4)), int(rng.integers(1, N + 2))
        W_Q, W_K = exact.integer_matrix(rng, n, Nh), exact.integer_matrix(rng, n, Nh)
        L = W_K.transpose() * W_Q
        S, _ = exact.parts(L)
        trL = exact.trace(L)
        rec.require(trL == exact.frobenius_inner(W_K, W_Q), "tr L != <W_K, W_Q>_F")
        rec.require(trL == exact.trace(S), "tr S != tr L")
    rec.note("exact rational arithmetic (Fractions / flint fmpq)")
    return rec.result()


def _moments_by_enumeration(
    N: int, law: Sequence[tuple[Fraction, Fraction]]
) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """Exact ``E|L|^2, E|S|^2, E|T|^2, E[|S|^2/|L|^2 ; L != 0]`` for iid entries of ``law``.

    ``law`` lists ``(value, probability)``; the last moment is the expectation of
    the ratio over ``L != 0`` (with the probability of ``L = 0`` excluded).
    """
    eL = eS = eT = eR = Fraction(0)
    for pattern in itertools.product(range(len(law)), repeat=N * N):
        prob = Fraction(1)
        for idx in pattern:
            prob *= law[idx][1]
        vals = [law[idx][0] for idx in pattern]
        nsq = sum((v * v for v in vals), Fraction(0))
        tr2 = sum((vals[i * N + j] * vals[j * N + i] for i in range(N) for j in range(N)),
                  Fraction(0))
        s_sq, t_sq = (nsq + tr2) / 2, (nsq - tr2) / 2
        eL += prob * nsq
        eS += prob * s_sq
        eT += prob * t_sq
        if nsq != 0:
            eR += prob * s_sq / nsq
    return eL, eS, eT, eR


def check_cor1(seed: int = 0, *, N: int = 3, samples: int = 4000) -> CheckResult:
    """Corollary 1: exact moments for two-point centred laws; Gaussian ratio by Monte Carlo.

    Exact part: for every ``N' <= min(N, 3)`` all ``2^(N'^2)`` sign patterns of a
    Rademacher matrix (variance 1) and of the *asymmetric* centred law
    ``P(-1) = 2/3, P(2) = 1/3`` (variance 2) are enumerated, giving
    ``E|L|^2 = N^2 s^2``, ``E|S|^2 = N(N+1)s^2/2``, ``E|T|^2 = N(N-1)s^2/2`` exactly (the
    theorem holds for any centred square-integrable law). For the Rademacher law,
    whose sign symmetry the Gaussian proof uses, also ``E[|S|^2/|L|^2] = (N+1)/(2N)``.

    Monte Carlo part: Gaussian entries (``sigma = 1.7``), ``samples`` draws of
    ``|S|^2/|L|^2``; its mean must be within 5 standard errors of ``(N+1)/(2N)``.

    Examples
    --------
    >>> check_cor1(samples=500).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("cor1", "exact+monte-carlo")
    rademacher = [(Fraction(-1), Fraction(1, 2)), (Fraction(1), Fraction(1, 2))]
    skewed = [(Fraction(-1), Fraction(2, 3)), (Fraction(2), Fraction(1, 3))]
    for k in range(1, min(N, 3) + 1):
        for name, law, var in (("rademacher", rademacher, 1), ("skewed", skewed, 2)):
            rec.instance()
            eL, eS, eT, eR = _moments_by_enumeration(k, law)
            rec.require(eL == k * k * var, f"{name} N={k}: E|L|^2 = {eL} != {k * k * var}")
            rec.require(eS == Fraction(k * (k + 1) * var, 2), f"{name} N={k}: E|S|^2 = {eS}")
            rec.require(eT == Fraction(k * (k - 1) * var, 2), f"{name} N={k}: E|T|^2 = {eT}")
            rec.require(eS / eL == Fraction(k + 1, 2 * k), f"{name} N={k}: ratio of expectations")
            if name == "rademacher":
                rec.require(eR == Fraction(k + 1, 2 * k),
                            f"rademacher N={k}: E[|S|^2/|L|^2] = {eR}")
            else:
                rec.note(f"skewed law N={k}: E[|S|^2/|L|^2] = {eR} "
                         f"(vs (N+1)/(2N) = {Fraction(k + 1, 2 * k)}; not claimed)")
    for k in sorted({2, N}):
        rec.instance()
        L = rng.normal(0.0, 1.7, size=(samples, k, k))
        nsq = np.sum(L * L, axis=(1, 2))
        tr2 = np.einsum("rij,rji->r", L, L)
        ratio = (nsq + tr2) / (2 * nsq)
        ok, msg = mc_mean_ok(ratio, (k + 1) / (2 * k))
        rec.require(ok, f"Gaussian N={k}: {msg}")
        rec.note(f"Gaussian N={k}, {samples} draws: {msg}")
    rec.note("Monte Carlo tolerance: 5 standard errors of the sample mean")
    return rec.result()


def _qk_moments_by_enumeration(
    n: int, N: int, law_K: Sequence[tuple[Fraction, Fraction]],
    law_Q: Sequence[tuple[Fraction, Fraction]],
) -> tuple[Fraction, Fraction, Fraction, Fraction, Fraction]:
    """Exact ``E|L|^2, E|S|^2, E|T|^2``, ``P(L != 0)``, ``E[|S|^2/|L|^2 ; L != 0]``."""
    eL = eS = eT = pnz = eR = Fraction(0)
    kpats = list(itertools.product(range(len(law_K)), repeat=n * N))
    qpats = list(itertools.product(range(len(law_Q)), repeat=n * N))
    for kp in kpats:
        pk = Fraction(1)
        for i in kp:
            pk *= law_K[i][1]
        K = [law_K[i][0] for i in kp]
        for qp in qpats:
            prob = pk
            for i in qp:
                prob *= law_Q[i][1]
            Q = [law_Q[i][0] for i in qp]
            L = [[sum((K[r * N + a] * Q[r * N + b] for r in range(n)), Fraction(0))
                  for b in range(N)] for a in range(N)]
            nsq = sum((v * v for row in L for v in row), Fraction(0))
            tr2 = sum((L[a][b] * L[b][a] for a in range(N) for b in range(N)), Fraction(0))
            s_sq, t_sq = (nsq + tr2) / 2, (nsq - tr2) / 2
            eL += prob * nsq
            eS += prob * s_sq
            eT += prob * t_sq
            if nsq != 0:
                pnz += prob
                eR += prob * s_sq / nsq
    return eL, eS, eT, pnz, eR


def check_cor2(seed: int = 0, *, n: int = 2, N: int = 2, samples: int = 4000) -> CheckResult:
    """Corollary 2: exact moments of ``L = W_K^T W_Q`` by enumeration; Gaussian Monte Carlo.

    Exact part: ``W_K`` entries ``+-1`` or the asymmetric centred law
    ``P(-1) = 2/3, P(2) = 1/3`` (variance 2), ``W_Q`` entries ``+-2`` (variance 4),
    shapes ``(n', N')`` with ``n' <= min(n, 2)``, ``N' <= min(N, 3)`` (at most
    ``2^12`` patterns): ``E|L|^2 = n N^2 vK vQ``, ``E|S|^2 = n N (N+1) vK vQ/2``,
    ``E|T|^2 = n N (N-1) vK vQ/2``.

    Monte Carlo part: Gaussian ``W_K, W_Q`` with standard deviations 0.7 and 1.3;
    the sample means of ``|L|^2`` and ``tr(L^2)`` must be within 5 standard errors of
    ``n N^2 vK vQ`` and ``n N vK vQ``.

    Examples
    --------
    >>> check_cor2(samples=500).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("cor2", "exact+monte-carlo")
    rad = [(Fraction(-1), Fraction(1, 2)), (Fraction(1), Fraction(1, 2))]
    skewed = [(Fraction(-1), Fraction(2, 3)), (Fraction(2), Fraction(1, 3))]
    rad2 = [(Fraction(-2), Fraction(1, 2)), (Fraction(2), Fraction(1, 2))]
    for nn in range(1, min(n, 2) + 1):
        for NN in range(1, min(N, 3) + 1):
            if 2 * nn * NN > 12:
                continue
            for name, law_K, vK in (("rademacher", rad, 1), ("skewed", skewed, 2)):
                rec.instance()
                eL, eS, eT, _, _ = _qk_moments_by_enumeration(nn, NN, law_K, rad2)
                v = vK * 4
                tag = f"{name} (n, N) = ({nn}, {NN})"
                rec.require(eL == nn * NN * NN * v, f"{tag}: E|L|^2 = {eL}")
                rec.require(eS == Fraction(nn * NN * (NN + 1) * v, 2), f"{tag}: E|S|^2 = {eS}")
                rec.require(eT == Fraction(nn * NN * (NN - 1) * v, 2), f"{tag}: E|T|^2 = {eT}")
                rec.require(eS / eL == Fraction(NN + 1, 2 * NN), f"{tag}: ratio")
    rec.instance()
    sK, sQ = 0.7, 1.3
    WK = rng.normal(0.0, sK, size=(samples, n, N))
    WQ = rng.normal(0.0, sQ, size=(samples, n, N))
    L = np.einsum("sra,srb->sab", WK, WQ)
    nsq = np.sum(L * L, axis=(1, 2))
    tr2 = np.einsum("sij,sji->s", L, L)
    v_g = sK**2 * sQ**2
    ok1, m1 = mc_mean_ok(nsq, n * N * N * v_g)
    ok2, m2 = mc_mean_ok(tr2, n * N * v_g)
    rec.require(ok1, f"Gaussian E|L|^2: {m1}")
    rec.require(ok2, f"Gaussian E tr(L^2): {m2}")
    rec.note(f"Gaussian (n, N) = ({n}, {N}), {samples} draws: E|L|^2 {m1}; E tr L^2 {m2}")
    rec.note("Monte Carlo tolerance: 5 standard errors of the sample mean")
    return rec.result()


def check_prop5(seed: int = 0, *, N: int = 4, samples: int = 3000) -> CheckResult:
    """Proposition 5: ``E[|S|^2/|L|^2] = (N+1)/(2N)`` for Gaussian heads, for every n.

    Monte Carlo: for ``n`` in ``{1, 2, N}`` (``n <= N``), ``W_K, W_Q`` Gaussian with
    different variances (0.5^2 and 2^2), ``samples`` draws; the mean ratio must be
    within 5 standard errors of ``(N+1)/(2N)`` (independently of ``n``).

    Exact part (the symmetries the proof uses, with a two-point law): Rademacher
    ``W_K, W_Q`` — sign flips of columns of ``W_K`` and column permutations preserve
    the law — give ``E[|S|^2/|L|^2 | L != 0] = (N'+1)/(2N')`` exactly, enumerated for
    ``(n', N') = (1, 2), (1, 3), (2, 2)``.

    Examples
    --------
    >>> check_prop5(samples=500).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("prop5", "exact+monte-carlo")
    rad = [(Fraction(-1), Fraction(1, 2)), (Fraction(1), Fraction(1, 2))]
    for nn, NN in ((1, 2), (1, 3), (2, 2)):
        rec.instance()
        _, _, _, pnz, eR = _qk_moments_by_enumeration(nn, NN, rad, rad)
        cond = eR / pnz
        rec.require(cond == Fraction(NN + 1, 2 * NN),
                    f"Rademacher (n, N) = ({nn}, {NN}): E[ratio | L != 0] = {cond}")
        rec.note(f"Rademacher ({nn}, {NN}): P(L != 0) = {pnz}, E[ratio | L != 0] = {cond}")
    for n in sorted({1, min(2, N), N}):
        rec.instance()
        WK = rng.normal(0.0, 0.5, size=(samples, n, N))
        WQ = rng.normal(0.0, 2.0, size=(samples, n, N))
        L = np.einsum("sra,srb->sab", WK, WQ)
        nsq = np.sum(L * L, axis=(1, 2))
        tr2 = np.einsum("sij,sji->s", L, L)
        ok, msg = mc_mean_ok((nsq + tr2) / (2 * nsq), (N + 1) / (2 * N))
        rec.require(ok, f"Gaussian (n, N) = ({n}, {N}): {msg}")
        rec.note(f"Gaussian (n, N) = ({n}, {N}), {samples} draws: {msg}")
    rec.note("Monte Carlo tolerance: 5 standard errors of the sample mean")
    return rec.result()

"""Checks of the pairing results: Lemma 2 and the bimodal Lemmas 7, 8, 9, exactly.

Square roots are never evaluated: each statement involving ``sqrt`` is checked in
an equivalent squared (rational) form, stated in the docstrings.

Examples
--------
>>> check_lemma2().passed
True
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from qkforms import exact
from qkforms.checks._tools import balanced_unit_spectrum, involution, rational_unit_vector
from qkforms.checks.result import CheckResult, Recorder

__all__ = ["check_lemma2", "check_lemma7", "check_lemma8", "check_lemma9"]


def _proportional(alpha: list[Fraction], beta: list[Fraction]) -> bool:
    """``beta`` is a nonnegative multiple of ``alpha`` (2 x k minors vanish; alpha != 0)."""
    k = len(alpha)
    return all(alpha[i] * beta[j] == alpha[j] * beta[i] for i in range(k) for j in range(k))


def check_lemma2(seed: int = 0, *, N: int = 6, trials: int = 12) -> CheckResult:
    """Lemma 2: closed form of the pairing score, the bound, and its equality case.

    With ``P = 1 - |alpha - beta|/|S|``, ``rho = |beta|/|alpha|``:

    * closed form ``P = 1 - sqrt(1 - 2<alpha,beta>/|S|^2)``: checked as
      ``|alpha - beta|^2 = |S|^2 - 2<alpha, beta>`` (both sides of the square root);
    * bound ``P <= 1 - |1 - rho|/sqrt(1 + rho^2)``: equivalent (``|S|^2 = (1+rho^2)|alpha|^2``)
      to ``<alpha,beta>^2 <= |alpha|^2 |beta|^2``, checked exactly;
    * equality iff ``beta = rho alpha``: equality of the squared form is compared
      with proportionality (vanishing 2x2 minors) on instances with constructed
      proportional lobes and on generic ones;
    * invariance of the bound under ``rho -> 1/rho`` (squared form).

    Examples
    --------
    >>> check_lemma2(seed=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma2", "exact")
    n_eq = 0
    for t in range(trials):
        m = 1 + t % max(1, N // 2) if t % 3 == 0 else 2 + t % max(1, N // 2 - 1)
        alpha = sorted(exact.random_spectrum(rng, m, n_pos=m, n_neg=0), reverse=True)
        if t % 3 == 0:  # proportional by construction
            rho = Fraction(int(rng.integers(0, 7)), int(rng.integers(1, 4)))
            beta = [rho * a for a in alpha]
        elif t % 3 == 1:  # not proportional by construction (m >= 2)
            beta = [alpha[0]] + [a / 2 for a in alpha[1:]]
        else:  # unstructured
            beta = exact.random_spectrum(rng, m, n_pos=int(rng.integers(0, m + 1)), n_neg=0)
        lam = alpha + [-b for b in beta]
        S = exact.symmetric_with_spectrum(lam, rng)
        spec = exact.rational_spectrum(S)  # recomputed from S
        pq = exact.pairing_quantities(spec)
        A, B = exact.exact_lobes(spec)
        rec.instance()
        tag = f"spectrum {[str(x) for x in spec]}"
        rec.require(pq.diff_sq == pq.S_sq - 2 * pq.cross, f"{tag}: closed form")
        bound_ok = pq.cross * pq.cross <= pq.plus_sq * pq.minus_sq and pq.cross >= 0
        rec.require(bound_ok, f"{tag}: bound violated")
        equal = pq.cross * pq.cross == pq.plus_sq * pq.minus_sq
        rec.require(equal == _proportional(A, B), f"{tag}: equality {equal} but proportional "
                    f"{_proportional(A, B)}")
        n_eq += equal
        if pq.minus_sq != 0:
            r2 = pq.minus_sq / pq.plus_sq  # rho^2; squared bound terms (1-rho)^2/(1+rho^2)
            # (1 - rho)^2/(1 + rho^2) = 1 - 2 rho/(1 + rho^2): compare 2rho/(1+rho^2) under
            # rho -> 1/rho: 2(1/rho)/(1 + 1/rho^2) = 2 rho/(rho^2 + 1), squared form:
            rec.require((4 * r2 / (1 + r2) ** 2) == (4 / r2) / (1 + 1 / r2) ** 2,
                        f"{tag}: bound not invariant under rho -> 1/rho")
    rec.note(f"{n_eq} of {trials} instances attain equality (a third are constructed "
             "proportional, a third constructed non-proportional)")
    return rec.result()


def check_lemma7(seed: int = 0, *, m: int = 3, trials: int = 10) -> CheckResult:
    """Lemma 7 on rational points of ``Λ_m`` (inverse stereographic projection).

    ``|λ_+|^2 = (1 + I)/2``, ``|λ_-|^2 = (1 - I)/2``, ``(2|λ_+||λ_-|)^2 = 1 - I^2``,
    ``|λ_+ - λ_-|^2 = 1 - 2C``, ``(1 - P)^2 = 1 - 2C`` with ``1 - P >= 0``,
    ``sum_j ((λ_+)_j + i(λ_-)_j)^2 = I + 2iC`` (real and imaginary parts), and
    ``0 <= 2C <= 1``, ``0 <= P <= 1`` (the latter as ``0 <= 1 - 2C <= 1``).

    Examples
    --------
    >>> check_lemma7(seed=2).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma7", "exact")
    for t in range(trials):
        mm = 1 + t % m
        lam = balanced_unit_spectrum(rng, mm)
        rec.instance()
        tag = f"m={mm}"
        rec.require(sum(x * x for x in lam) == 1 and lam == sorted(lam)
                    and all(x < 0 for x in lam[:mm]) and all(x > 0 for x in lam[mm:]),
                    f"{tag}: not in Λ_m")
        plus = lam[mm:][::-1]
        minus = [-x for x in lam[:mm]]
        p2 = sum(x * x for x in plus)
        n2 = sum(x * x for x in minus)
        imb = p2 - n2
        C = sum(x * y for x, y in zip(plus, minus, strict=True))
        d2 = sum((x - y) ** 2 for x, y in zip(plus, minus, strict=True))
        rec.require(p2 == (1 + imb) / 2 and n2 == (1 - imb) / 2, f"{tag}: lobe norms")
        rec.require(4 * p2 * n2 == 1 - imb * imb, f"{tag}: 2|λ+||λ-| identity")
        rec.require(d2 == 1 - 2 * C, f"{tag}: |λ+ - λ-|^2 != 1 - 2C (so P != 1 - sqrt(1-2C))")
        re = sum(x * x - y * y for x, y in zip(plus, minus, strict=True))
        im = sum(2 * x * y for x, y in zip(plus, minus, strict=True))
        rec.require(re == imb and im == 2 * C, f"{tag}: complex square identity")
        rec.require(0 <= 2 * C <= 1, f"{tag}: 2C = {2 * C} outside [0, 1]")
    return rec.result()


def _symmetric_unit_spectrum(rng: np.random.Generator, m: int) -> list[Fraction]:
    """A rational point of ``Λ_m`` fixed by ι (``m`` even): ``(-μ reversed, μ)``."""
    w = rational_unit_vector(rng, m // 2)
    mu = sorted([abs(x) / 2 for x in w] * 2)  # sum of squares 1/2
    return [-x for x in reversed(mu)] + mu


def check_lemma8(seed: int = 0, *, m: int = 4, trials: int = 10) -> CheckResult:
    """Lemma 8: the involution ι, exactly.

    ι is a signed permutation matrix that is orthogonal, symmetric and squares to
    ``I``; ``ιλ`` lies in ``Λ_m`` with the lobes exchanged; ``I∘ι = -I``,
    ``C∘ι = C``, ``P∘ι = P`` (as ``|λ_+ - λ_-|^2``); ``|λ - ιλ|^2 = 2|λ_+ - λ_-|^2`` (so
    ``P = 1 - |λ - ιλ|/sqrt 2``); ``P = 1`` iff ``ιλ = λ`` (instances fixed by ι, for
    even ``m``, always including one with ``m = 2``, and generic ones).

    Examples
    --------
    >>> check_lemma8(seed=3).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma8", "exact")
    fixed_seen = 0
    plan = [(2, True)] + [(1 + t % m, t % 3 == 2 and (1 + t % m) % 2 == 0)
                          for t in range(trials)]
    for mm, fixed in plan:
        lam = _symmetric_unit_spectrum(rng, mm) if fixed else balanced_unit_spectrum(rng, mm)
        k = 2 * mm
        iota = flint.fmpq_mat(k, k, [-int(j == k - 1 - i) for i in range(k) for j in range(k)])
        eye = flint.fmpq_mat(k, k, [int(i == j) for i in range(k) for j in range(k)])
        rec.instance()
        tag = f"m={mm}"
        rec.require(iota.transpose() * iota == eye and iota == iota.transpose()
                    and iota * iota == eye, f"{tag}: ι not an orthogonal symmetric involution")
        v = flint.fmpq_mat(k, 1, [flint.fmpq(x.numerator, x.denominator) for x in lam])
        il = involution(lam)
        rec.require([exact.as_fraction(x) for x in (iota * v).entries()] == il,
                    f"{tag}: matrix ι disagrees with reverse-and-negate")
        rec.require(il == sorted(il) and sum(x * x for x in il) == 1
                    and all(x < 0 for x in il[:mm]) and all(x > 0 for x in il[mm:]),
                    f"{tag}: ιλ not in Λ_m")
        plus, minus = lam[mm:][::-1], [-x for x in lam[:mm]]
        iplus, iminus = il[mm:][::-1], [-x for x in il[:mm]]
        rec.require(iplus == minus and iminus == plus, f"{tag}: lobes not exchanged")

        def stats(p: list[Fraction], q: list[Fraction]) -> tuple[Fraction, Fraction, Fraction]:
            zero = Fraction(0)
            return (sum((x * x for x in p), zero) - sum((y * y for y in q), zero),
                    sum((x * y for x, y in zip(p, q, strict=True)), zero),
                    sum(((x - y) ** 2 for x, y in zip(p, q, strict=True)), zero))

        I0, C0, D0 = stats(plus, minus)
        I1, C1, D1 = stats(iplus, iminus)
        rec.require(I1 == -I0 and C1 == C0 and D1 == D0, f"{tag}: invariance under ι")
        dist = sum((x - y) ** 2 for x, y in zip(lam, il, strict=True))
        rec.require(dist == 2 * D0, f"{tag}: |λ - ιλ|^2 != 2|λ+ - λ-|^2")
        rec.require((D0 == 0) == (il == lam), f"{tag}: P = 1 iff ιλ = λ fails")
        fixed_seen += il == lam
    rec.require(fixed_seen > 0, "no ι-fixed instance")
    rec.note(f"{fixed_seen} ι-fixed instances")
    return rec.result()


def check_lemma9(seed: int = 0, *, m: int = 2, trials: int = 6, terms: int = 6) -> CheckResult:
    """Lemma 9 exactly on rational points of ``Λ_m``.

    ``|λ_i| < 1``; ``O = (R - R∘ι)/2``, ``2m + E = (R + R∘ι)/2``, ``O∘ι = -O``,
    ``E∘ι = E``; the series: ``O - sum_{r<K} sum_i λ_i^(2r+1) = sum_i λ_i^(2K+1)/(1-λ_i^2)``
    and the same for ``E`` (exact remainders, which tend to 0 since ``|λ_i| < 1``);
    trace forms for ``A = U^T diag(λ) U`` (``U`` rational orthogonal):
    ``tr A(I - A^2)^-1 = O``, ``tr A^2(I - A^2)^-1 = E``, ``tr (I - A)^-1 = R``.

    Examples
    --------
    >>> check_lemma9(seed=4).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma9", "exact")

    def O_(v: list[Fraction]) -> Fraction:
        return sum((x / (1 - x * x) for x in v), Fraction(0))

    def E_(v: list[Fraction]) -> Fraction:
        return sum((x * x / (1 - x * x) for x in v), Fraction(0))

    def R_(v: list[Fraction]) -> Fraction:
        return sum((1 / (1 - x) for x in v), Fraction(0))

    for t in range(trials):
        mm = 1 + t % m
        lam = balanced_unit_spectrum(rng, mm)
        il = involution(lam)
        k = 2 * mm
        rec.instance()
        tag = f"m={mm}"
        rec.require(all(abs(x) < 1 for x in lam), f"{tag}: some |λ_i| >= 1")
        O, E, R = O_(lam), E_(lam), R_(lam)  # noqa: E741 (the paper's names)
        rec.require(O == (R - R_(il)) / 2, f"{tag}: O != (R - R∘ι)/2")
        rec.require(k + E == (R + R_(il)) / 2, f"{tag}: k + E != (R + R∘ι)/2")
        rec.require(O_(il) == -O and E_(il) == E, f"{tag}: parity under ι")
        part_o = sum((x ** (2 * r + 1) for r in range(terms) for x in lam), Fraction(0))
        part_e = sum((x ** (2 * r + 2) for r in range(terms) for x in lam), Fraction(0))
        tail_o = sum((x ** (2 * terms + 1) / (1 - x * x) for x in lam), Fraction(0))
        tail_e = sum((x ** (2 * terms + 2) / (1 - x * x) for x in lam), Fraction(0))
        rec.require(O - part_o == tail_o and E - part_e == tail_e, f"{tag}: series remainders")
        q = max(x * x for x in lam)
        rec.require(abs(tail_o) <= k * q ** terms / (1 - q), f"{tag}: remainder bound")
        A = exact.symmetric_with_spectrum(lam, rng)
        eye = flint.fmpq_mat(k, k, [int(i == j) for i in range(k) for j in range(k)])
        inv = (eye - A * A).inv()
        rec.require(exact.trace(A * inv) == O, f"{tag}: tr A(I-A^2)^-1 != O")
        rec.require(exact.trace(A * A * inv) == E, f"{tag}: tr A^2(I-A^2)^-1 != E")
        rec.require(exact.trace((eye - A).inv()) == R, f"{tag}: tr (I-A)^-1 != R")
    return rec.result()

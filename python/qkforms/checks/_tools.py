"""Exact helpers shared by the checks: random rationals, square-root comparisons, Λ_m.

Examples
--------
>>> from fractions import Fraction as F
>>> sqrt_fraction(F(9, 4))
Fraction(3, 2)
>>> sqrt_diff_le(F(4), F(1), F(1))        # sqrt(4) - sqrt(1) <= 1
True
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from qkforms.errors import ParameterError

__all__ = [
    "rand_fraction",
    "nonzero_fraction",
    "sqrt_fraction",
    "sqrt_diff_le",
    "abs_sqrt_minus_le",
    "rational_unit_vector",
    "balanced_unit_spectrum",
    "involution",
]


def rand_fraction(rng: np.random.Generator, height: int = 5) -> Fraction:
    """A random rational ``p/q`` with ``|p| <= height``, ``1 <= q <= 4``.

    Examples
    --------
    >>> abs(rand_fraction(np.random.default_rng(0))) <= 5
    True
    """
    return Fraction(int(rng.integers(-height, height + 1)), int(rng.integers(1, 5)))


def nonzero_fraction(rng: np.random.Generator, height: int = 5) -> Fraction:
    """A random nonzero rational (constructive: the numerator is drawn from a nonzero set).

    Examples
    --------
    >>> nonzero_fraction(np.random.default_rng(0)) != 0
    True
    """
    p = int(rng.integers(1, height + 1)) * int(rng.choice([-1, 1]))
    return Fraction(p, int(rng.integers(1, 5)))


def sqrt_fraction(x: Fraction) -> Fraction | None:
    """The rational square root of ``x >= 0`` if it exists, else ``None``.

    Examples
    --------
    >>> sqrt_fraction(Fraction(4, 9)), sqrt_fraction(Fraction(2))
    (Fraction(2, 3), None)
    """
    if x < 0:
        return None
    p, q = x.numerator, x.denominator
    rp, rq = math.isqrt(p), math.isqrt(q)
    if rp * rp == p and rq * rq == q:
        return Fraction(rp, rq)
    return None


def sqrt_diff_le(A: Fraction, D: Fraction, c: Fraction) -> bool:
    """Exact test of ``sqrt(A) - sqrt(D) <= c`` for rationals ``A, D >= 0``.

    Examples
    --------
    >>> sqrt_diff_le(Fraction(2), Fraction(1), Fraction(1, 2))   # 0.414 <= 0.5
    True
    >>> sqrt_diff_le(Fraction(1), Fraction(2), Fraction(-1, 2))  # -0.414 <= -0.5
    False
    """
    if A < 0 or D < 0:
        raise ParameterError(f"square roots of negative numbers: A = {A}, D = {D}")
    if c >= 0:
        if A <= D:
            return True
        lhs = A + D - c * c  # s^2 <= c^2  <=>  A + D - c^2 <= 2 sqrt(AD)
        return lhs <= 0 or lhs * lhs <= 4 * A * D
    # c < 0: need sqrt(D) - sqrt(A) >= -c > 0
    if D <= A:
        return False
    lhs = A + D - c * c  # (sqrt D - sqrt A)^2 >= c^2  <=>  A + D - c^2 >= 2 sqrt(AD)
    return lhs >= 0 and lhs * lhs >= 4 * A * D


def abs_sqrt_minus_le(A: Fraction, c: Fraction, D: Fraction) -> bool:
    """Exact test of ``|sqrt(A) - c| <= sqrt(D)`` for rationals ``A, D >= 0``, ``c``.

    Examples
    --------
    >>> abs_sqrt_minus_le(Fraction(2), Fraction(1), Fraction(1, 4))  # |1.414-1| <= 0.5
    True
    """
    # sqrt(A) - sqrt(D) <= c   and   c - sqrt(A) <= sqrt(D) <=> sqrt(A) + sqrt(D) >= c
    if not sqrt_diff_le(A, D, c):
        return False
    if c <= 0:
        return True
    # sqrt(A) + sqrt(D) >= c > 0  <=>  A + D - c^2 >= -2 sqrt(AD)
    lhs = A + D - c * c
    return lhs >= 0 or lhs * lhs <= 4 * A * D


def rational_unit_vector(rng: np.random.Generator, k: int) -> list[Fraction]:
    """A rational unit vector in ``R^k`` with all entries nonzero (inverse stereographic).

    ``t`` in ``Q^(k-1)`` with nonzero entries maps to
    ``(2t, |t|^2 - 1)/(|t|^2 + 1)``; if ``|t|^2 = 1`` the last entry would vanish, so
    ``t`` is then doubled (a deterministic repair, not a rejection).

    Examples
    --------
    >>> w = rational_unit_vector(np.random.default_rng(0), 4)
    >>> sum(x * x for x in w), all(x != 0 for x in w)
    (Fraction(1, 1), True)
    """
    if k == 1:
        return [Fraction(int(rng.choice([-1, 1])))]
    t = [nonzero_fraction(rng, 4) for _ in range(k - 1)]
    s = sum((x * x for x in t), Fraction(0))
    if s == 1:
        t = [2 * x for x in t]
        s = 4 * s
    return [2 * x / (s + 1) for x in t] + [(s - 1) / (s + 1)]


def balanced_unit_spectrum(rng: np.random.Generator, m: int) -> list[Fraction]:
    """A rational point of ``Λ_m``: unit, increasing, ``m`` negative then ``m`` positive.

    Examples
    --------
    >>> lam = balanced_unit_spectrum(np.random.default_rng(0), 2)
    >>> [x < 0 for x in lam], sum(x * x for x in lam)
    ([True, True, False, False], Fraction(1, 1))
    """
    w = rational_unit_vector(rng, 2 * m)
    mags = [abs(x) for x in w]
    return sorted([-x for x in mags[:m]] + mags[m:])


def involution(lam: list[Fraction]) -> list[Fraction]:
    """``(ι λ)_i = -λ_{2m+1-i}`` (reverse and negate).

    Examples
    --------
    >>> involution([Fraction(-2), Fraction(-1), Fraction(3), Fraction(4)])
    [Fraction(-4, 1), Fraction(-3, 1), Fraction(1, 1), Fraction(2, 1)]
    """
    return [-x for x in reversed(lam)]

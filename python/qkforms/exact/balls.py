"""Arb balls for the shared formulas, and float intervals rounded outward from them.

:data:`BALLS` is the :class:`qkforms.arithmetic.Arithmetic` backend on numpy object
arrays of ``flint.arb`` balls. Arb (Johansson, "Arb: efficient arbitrary-precision
midpoint-radius interval arithmetic", IEEE Trans. Computers 66, 2017) guarantees for
every operation that the output ball contains the exact result for every choice of
inputs in the input balls; numpy only applies the operations elementwise (object
arrays call the balls' own ``+ - * /``). The extra operations are:

* ``pos(x)``: Arb's ``nonnegative_part`` (a ball containing ``max(t, 0)`` for every
  ``t`` in ``x``);
* ``square(x)``: ``x * x``. (Not ``x ** 2``: Arb's power of a ball that contains 0 is
  not finite.) For a ball ``x`` that contains 0 this also contains a few negative
  numbers; it still contains every ``t^2``, which is all that is claimed;
* ``sqrt(x)``: square root of ``nonnegative_part(x)``; only used on quantities that are
  nonnegative in exact arithmetic (sums of squares), so discarding the negative part
  of the ball loses nothing;
* ``minimum``, ``clip``: Arb's ``min``/``max`` (balls containing the min/max of every pair);
* ``ratio_or_inf``: plain division (a ball containing 0 in the denominator gives a
  non-finite ball, which :func:`to_interval` turns into the whole known range).

:func:`to_interval` rounds a ball outward to a float64 :class:`Interval`, intersected
with a range known to contain the true value (e.g. ``[0, 1]`` for a profile
coordinate, by Definition 6); both steps keep the true value inside.

Examples
--------
>>> import flint
>>> from qkforms.exact.balls import to_interval
>>> third = to_interval(flint.arb(flint.fmpq(1, 3)))
>>> third.lo < 1 / 3 < third.hi or third.lo <= 1 / 3 <= third.hi
True
>>> third.width < 1e-15
True
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, NamedTuple

import flint
import numpy as np

from qkforms.errors import NonFiniteError, ParameterError

__all__ = [
    "BALLS",
    "PREC",
    "BallArithmetic",
    "Interval",
    "ball",
    "ball_array",
    "exact_fraction",
    "to_interval",
    "working_precision",
]

#: Working precision (bits) of the ball computations.
PREC = 128


@contextmanager
def working_precision(prec: int = PREC) -> Iterator[None]:
    """Run the enclosed Arb computations at ``prec`` bits (restores the old precision).

    Examples
    --------
    >>> import flint
    >>> from qkforms.exact.balls import working_precision
    >>> with working_precision(200):
    ...     flint.ctx.prec
    200
    """
    with flint.ctx.workprec(prec):
        yield


class Interval(NamedTuple):
    """A closed interval ``[lo, hi]`` of float64 numbers claimed to contain a real value.

    Examples
    --------
    >>> from fractions import Fraction
    >>> iv = Interval(0.25, 0.5)
    >>> iv.contains(Fraction(1, 3)), iv.contains(0.6), iv.width
    (True, False, 0.25)
    """

    lo: float
    hi: float

    @property
    def width(self) -> float:
        """``hi - lo`` (rounded up)."""
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            return math.inf
        return _round_up(Fraction(self.hi) - Fraction(self.lo))

    @property
    def mid(self) -> float:
        """Midpoint (a float inside the interval)."""
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            return self.lo if math.isfinite(self.lo) else self.hi
        return min(max(self.lo + (self.hi - self.lo) / 2, self.lo), self.hi)

    def contains(self, value: Any) -> bool:
        """Whether ``lo <= value <= hi``, compared exactly (Fractions, floats, mpmath).

        mpmath numbers are compared through their exact binary value.
        """
        v = exact_fraction(value)
        lo_ok = self.lo == -math.inf or Fraction(self.lo) <= v
        hi_ok = self.hi == math.inf or v <= Fraction(self.hi)
        return bool(lo_ok and hi_ok)


def exact_fraction(value: Any) -> Fraction:
    """The exact rational value of an int, float, Fraction, fmpq, arb midpoint or mpmath mpf.

    Examples
    --------
    >>> exact_fraction(0.5), exact_fraction(flint.fmpq(2, 6))
    (Fraction(1, 2), Fraction(1, 3))
    >>> import mpmath
    >>> exact_fraction(mpmath.mpf(-0.75))
    Fraction(-3, 4)
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, (float, np.floating)):
        return Fraction(float(value))
    if isinstance(value, flint.fmpq):
        return Fraction(int(value.p), int(value.q))
    if isinstance(value, flint.fmpz):
        return Fraction(int(value))
    if isinstance(value, flint.arb):
        if value.rad() != 0:
            raise ParameterError(f"{value} is a ball, not an exact number")
        man, exp = value.mid().man_exp()
        return Fraction(int(man)) * Fraction(2) ** int(exp)
    mpf = getattr(value, "_mpf_", None)  # mpmath mpf: (sign, mantissa, exponent, bits)
    if mpf is not None:
        sign, man, exp, _ = mpf
        if not man and mpf != (0, 0, 0, 0):
            raise NonFiniteError(f"{value} is not a finite number")
        return (-1) ** int(sign) * Fraction(int(man)) * Fraction(2) ** int(exp)
    return Fraction(value)


def _round_down(x: Fraction) -> float:
    f = float(x)  # correctly rounded to nearest
    if Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def _round_up(x: Fraction) -> float:
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def to_interval(b: Any, lo: float = -math.inf, hi: float = math.inf) -> Interval:
    """Round a ball outward to a float64 interval, intersected with ``[lo, hi]``.

    ``[lo, hi]`` must be a range known (by a theorem) to contain the true value; a
    non-finite ball gives that whole range.

    Examples
    --------
    >>> import flint
    >>> to_interval(flint.arb(2.5))
    Interval(lo=2.5, hi=2.5)
    >>> iv = to_interval(flint.arb(2.5, 0.5))       # Arb rounds radii up slightly
    >>> iv.lo <= 2.0 and iv.hi >= 3.0 and iv.width < 1.000001
    True
    >>> to_interval(flint.arb(0.0, 1.0), 0.0, 1.0)
    Interval(lo=0.0, hi=1.0)
    >>> to_interval(flint.arb(1.0) / flint.arb(0.0), 0.0, math.inf)
    Interval(lo=0.0, hi=inf)
    """
    b = ball(b)
    if not b.is_finite():
        return Interval(lo, hi)
    blo = _round_down(exact_fraction(b.lower()))
    bhi = _round_up(exact_fraction(b.upper()))
    return Interval(max(blo, lo), min(bhi, hi))


def ball(x: Any) -> flint.arb:
    """A ball containing ``x`` exactly (ints, floats, Fractions, fmpz/fmpq, balls).

    Examples
    --------
    >>> from fractions import Fraction
    >>> ball(Fraction(1, 4)), ball(3)
    (0.250000000000000, 3.00000000000000)
    """
    if isinstance(x, flint.arb):
        return x
    if isinstance(x, Fraction):
        return flint.arb(flint.fmpq(x.numerator, x.denominator))
    if isinstance(x, (np.integer, np.floating)):
        x = x.item()
    return flint.arb(x)


def ball_array(values: Any) -> np.ndarray:
    """An object array of balls (see :func:`ball`), same shape.

    Examples
    --------
    >>> ball_array([0.5, 1]).shape
    (2,)
    """
    arr = np.asarray(values, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = ball(v)
    return out


_pos = np.frompyfunc(lambda x: ball(x).nonnegative_part(), 1, 1)
_sqrt = np.frompyfunc(lambda x: ball(x).nonnegative_part().sqrt(), 1, 1)
_min = np.frompyfunc(lambda x, y: ball(x).min(ball(y)), 2, 1)
_max = np.frompyfunc(lambda x, y: ball(x).max(ball(y)), 2, 1)


def _scalar_or_array(x: Any) -> Any:
    arr = np.asarray(x, dtype=object)
    return arr[()] if arr.ndim == 0 else arr


class BallArithmetic:
    """:class:`qkforms.arithmetic.Arithmetic` on object arrays of Arb balls (rigorous).

    Examples
    --------
    >>> from qkforms.exact.balls import BALLS, ball_array
    >>> x = ball_array([-1.0, 4.0])
    >>> [str(v) for v in BALLS.sqrt(BALLS.pos(x))]
    ['0', '2.00000000000000']
    """

    name = "arb"

    def pos(self, x: Any) -> Any:
        return _scalar_or_array(_pos(x))

    def square(self, x: Any) -> Any:
        return x * x

    def sqrt(self, x: Any) -> Any:
        return _scalar_or_array(_sqrt(x))

    def total(self, x: Any) -> Any:
        arr = np.asarray(x, dtype=object)
        out = np.empty(arr.shape[:-1], dtype=object)
        for idx in np.ndindex(*arr.shape[:-1]):
            acc = flint.arb(0)
            for v in arr[idx]:
                acc = acc + v
            out[idx] = acc
        return _scalar_or_array(out)

    def minimum(self, x: Any, y: Any) -> Any:
        return _scalar_or_array(_min(x, y))

    def clip(self, x: Any, lo: float, hi: float) -> Any:
        return _scalar_or_array(_min(_max(x, lo), hi))

    def ratio_or_inf(self, num: Any, den: Any) -> Any:
        return num / den


#: The ball backend (use inside :func:`working_precision`).
BALLS = BallArithmetic()

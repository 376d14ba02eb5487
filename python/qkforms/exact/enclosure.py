"""Certified enclosures of a head's profile, energies, pairing score, ``rho`` and distance to Θ.

:func:`enclose` returns, for one head ``(W_Q, W_K)`` taken exactly as stored (float
weights are exact dyadic rationals), float64 intervals guaranteed to contain

* the profile ``a, b, c, d`` of ``L = W_K^T W_Q`` (Definition 6),
* the symmetric energy ``1 - a = |S|^2/|L|^2``,
* the pairing score ``P = 1 - |alpha - beta|/|S|`` and the lobe ratio
  ``rho = |beta|/|alpha|`` (docs/theory.md §4),
* the Euclidean distance of the profile to Θ (Proposition 4),

together with the exact energies (Lemma 5, rationals from exact Gram blocks) and
enclosures of the sorted nonzero spectrum of ``S``
(:mod:`qkforms.exact.verified_spectrum`). The statistics are *not* written again
here: the formulas of :mod:`qkforms.profile_map`, :mod:`qkforms.pairing` and
:mod:`qkforms.theta_family` (``lobes_from_sorted``, ``profile_from_lobes``,
``pairing_from_lobes``, ``lobe_ratio_from_lobes``, ``theta_distance_of_point``) are
evaluated on Arb balls (:data:`qkforms.exact.balls.BALLS`). By the inclusion property of
ball arithmetic, a ball computed from balls that contain the true sorted eigenvalues
and the true energies contains the true statistic; each ball is then rounded outward
to float64 and intersected with a range that the statistic is known to lie in
(``[0, 1]`` for ``a, b, c, d, 1 - a, P`` by Definition 6 and Lemma 2, ``[0, inf]`` for
``rho`` and the distance). The method and its references are in docs/certified.md.

Examples
--------
>>> import numpy as np
>>> from qkforms import Head
>>> from qkforms.exact import enclose
>>> rng = np.random.default_rng(0)
>>> head = Head(rng.standard_normal((4, 24)), rng.standard_normal((4, 24)))
>>> enc = enclose(head)
>>> p = head.profile()
>>> all(getattr(enc, s).lo - 1e-12 <= v <= getattr(enc, s).hi + 1e-12 for s, v in zip("abcd", p))
True
>>> enc.max_width() < 1e-12
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms.errors import ParameterError, ZeroFormError, format_value
from qkforms.exact.balls import BALLS, PREC, Interval, ball, to_interval, working_precision
from qkforms.exact.verified_spectrum import (
    ExactGram,
    SpectrumEnclosure,
    gram_spectrum_enclosure,
    layer_exact_grams,
)
from qkforms.form_parts import Energies
from qkforms.pairing import lobe_ratio_from_lobes, pairing_from_lobes
from qkforms.profile_map import lobes_from_sorted, profile_from_lobes
from qkforms.theta_family import theta_distance_of_point

__all__ = [
    "CERTIFIED_STATS",
    "STAT_RANGES",
    "Enclosure",
    "decide",
    "enclose",
    "enclose_gram",
    "enclose_layer",
]

#: The certified statistics, in column order (``<stat>_lo``, ``<stat>_hi``).
CERTIFIED_STATS: tuple[str, ...] = (
    "a", "b", "c", "d", "sym_energy", "pairing", "rho", "theta_dist",
)
#: Ranges known to contain each statistic (Definition 6, Lemma 2, definitions).
STAT_RANGES: dict[str, tuple[float, float]] = {
    "a": (0.0, 1.0), "b": (0.0, 1.0), "c": (0.0, 1.0), "d": (0.0, 1.0),
    "sym_energy": (0.0, 1.0), "pairing": (0.0, 1.0), "rho": (0.0, math.inf),
    "theta_dist": (0.0, math.inf),
}


@dataclass(frozen=True)
class Enclosure:
    """Certified intervals for one head (see the module docstring).

    Attributes
    ----------
    a, b, c, d, sym_energy, pairing, rho, theta_dist : Interval or None
        ``pairing`` and ``rho`` are None when ``S = 0`` (undefined there).
    spectrum : SpectrumEnclosure
        Balls of the sorted eigenvalues of ``J G / 2`` and how they were certified
        (see the properties ``eigenvalues``, ``method``, ``beta``, ``eps``,
        ``full_rank``).
    energies : Energies
        Exact ``|L|^2, |S|^2, |T|^2, tr L^2`` (Fractions).
    """

    a: Interval
    b: Interval
    c: Interval
    d: Interval
    sym_energy: Interval
    pairing: Interval | None
    rho: Interval | None
    theta_dist: Interval
    spectrum: SpectrumEnclosure
    energies: Energies[Fraction]

    @property
    def method(self) -> str:
        """How the eigenvalues were enclosed: ``"rump"`` or ``"charpoly"``."""
        return self.spectrum.method

    @property
    def beta(self) -> float | None:
        """``||X^T G X - I||_2`` bound of the "rump" certificate (None for "charpoly")."""
        return self.spectrum.beta

    @property
    def eps(self) -> float | None:
        """``||A^ - D||_2`` bound of the "rump" certificate (None for "charpoly")."""
        return self.spectrum.eps

    @property
    def full_rank(self) -> bool | None:
        """True when the certificate also proves ``rank [W_K; W_Q] = 2n``."""
        return self.spectrum.full_rank

    @property
    def eigenvalues(self) -> tuple[Interval, ...]:
        """The ``2n`` eigenvalues of ``J G / 2``, decreasing, in the units of the weights.

        By Lemma 10 these are the nonzero eigenvalues of ``S`` (plus zeros for a
        degenerate head).
        """
        return tuple(self.spectrum.intervals())

    def interval(self, stat: str) -> Interval | None:
        """The interval of one of :data:`CERTIFIED_STATS`.

        Examples
        --------
        >>> from qkforms.exact import enclose
        >>> iv = enclose([[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]).interval("b")
        >>> iv.contains(0.5), iv.width < 1e-15
        (True, True)
        """
        if stat not in CERTIFIED_STATS:
            raise ParameterError(f"unknown statistic {format_value(stat)}; certified: "
                                 f"{', '.join(CERTIFIED_STATS)}")
        return getattr(self, stat)

    def columns(self) -> dict[str, float]:
        """``{"<stat>_lo": ..., "<stat>_hi": ...}`` for every certified statistic.

        Undefined statistics (``pairing`` and ``rho`` when ``S = 0``) give NaN.

        Examples
        --------
        >>> from qkforms.exact import enclose
        >>> cols = enclose([[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]).columns()
        >>> cols["a_lo"] <= 0.5 <= cols["a_hi"], len(cols)
        (True, 16)
        """
        out: dict[str, float] = {}
        for stat in CERTIFIED_STATS:
            iv = getattr(self, stat)
            out[f"{stat}_lo"] = math.nan if iv is None else iv.lo
            out[f"{stat}_hi"] = math.nan if iv is None else iv.hi
        return out

    def max_width(self) -> float:
        """Largest width among the defined statistics' intervals.

        Examples
        --------
        >>> from qkforms.exact import enclose
        >>> enclose([[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]).max_width() < 1e-14
        True
        """
        return max(getattr(self, s).width for s in CERTIFIED_STATS if getattr(self, s) is not None)


def enclose_gram(gram: ExactGram, *, method: str = "auto", prec: int = PREC) -> Enclosure:
    """Certified statistics from exact Gram data (:func:`layer_exact_grams`).

    Raises
    ------
    ZeroFormError
        If ``L = 0``.

    Examples
    --------
    >>> from qkforms.exact.enclosure import enclose_gram
    >>> from qkforms.exact.verified_spectrum import exact_gram
    >>> enclose_gram(exact_gram([[1, 0, 0]], [[0, 1, 0]])).pairing.contains(1)
    True
    """
    e = gram.energies()
    if e.norm_sq == 0:
        raise ZeroFormError("this head's form L = W_K^T W_Q is zero: no profile")
    spec: SpectrumEnclosure = gram_spectrum_enclosure(gram, method=method, prec=prec)
    with working_precision(prec):
        units = spec.scale**2  # energies are in units^2 of the eigenvalues' units
        lam = np.empty(len(spec.balls), dtype=object)
        lam[:] = list(spec.balls)
        alpha, beta = lobes_from_sorted(lam, BALLS)
        p = profile_from_lobes(alpha, beta, ball(e.norm_sq / units), ball(e.skew_sq / units),
                               BALLS)
        point = np.empty(4, dtype=object)
        point[:] = list(p)
        balls: dict[str, Any] = {
            "a": p.a, "b": p.b, "c": p.c, "d": p.d, "sym_energy": 1 - p.a,
            "theta_dist": theta_distance_of_point(point, BALLS),
        }
        if e.sym_sq != 0:
            balls["pairing"] = pairing_from_lobes(alpha, beta, BALLS)
            balls["rho"] = lobe_ratio_from_lobes(alpha, beta, BALLS)
        ivs = {s: to_interval(balls[s], *STAT_RANGES[s]) for s in CERTIFIED_STATS if s in balls}
    return Enclosure(a=ivs["a"], b=ivs["b"], c=ivs["c"], d=ivs["d"],
                     sym_energy=ivs["sym_energy"], pairing=ivs.get("pairing"),
                     rho=ivs.get("rho"), theta_dist=ivs["theta_dist"], spectrum=spec,
                     energies=e)


def enclose(head: Any, W_K: Any = None, *, method: str = "auto", prec: int = PREC) -> Enclosure:
    """Certified intervals of a head's profile, ``1 - a``, pairing, ``rho`` and distance to Θ.

    Parameters
    ----------
    head : Head, or W_Q
        A :class:`qkforms.Head` (its float64 weights; any object with arrays ``W_Q``
        and ``W_K`` is taken the same way), or ``W_Q`` (``n x N``: floats, ints,
        Fractions, sympy Rationals or flint matrices, all taken exactly) with ``W_K`` as
        the second argument.
    W_K : matrix, optional
        Key weights when ``head`` is ``W_Q``.
    method : {"auto", "rump", "charpoly"}
        Eigenvalue certificate (:func:`qkforms.exact.verified_spectrum.gram_spectrum_enclosure`).
    prec : int
        Arb working precision (bits).

    Returns
    -------
    Enclosure

    Raises
    ------
    ZeroFormError
        If ``L = 0``.
    ShapeError, NonFiniteError
        For malformed weights.

    See Also
    --------
    qkforms.Head.enclose : the same enclosures, asked of a float head.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from qkforms.exact import enclose
    >>> enc = enclose([[1, 0, 0]], [[1, 1, 0]])        # L = [[1, 0, 0], [1, 0, 0], [0]*3]
    >>> [enc.interval(s).contains(v) for s, v in
    ...  zip("abcd", (Fraction(1, 4), Fraction(1, 4), Fraction(1, 2), 0))]
    [True, True, True, True]
    """
    if _is_float_head(head):
        if W_K is not None:
            raise ParameterError("enclose(head) takes a Head, or enclose(W_Q, W_K)")
        W_Q, W_K = head.W_Q, head.W_K
    else:
        if W_K is None:
            raise ParameterError("enclose(W_Q, W_K) needs both weight matrices")
        W_Q = head
    return enclose_layer(W_Q, W_K, [0], method=method, prec=prec)[0]


def _is_float_head(obj: Any) -> bool:
    """Whether ``obj`` is a head of the float core (:class:`qkforms.Head`): an object that
    carries its weights as arrays ``W_Q``, ``W_K``. Recognised by its shape, not by
    importing the core's class (``qkforms.Head.enclose`` calls this module)."""
    return all(isinstance(getattr(obj, name, None), np.ndarray) for name in ("W_Q", "W_K"))


def enclose_layer(
    W_Q: Any, W_K: Any, kv_index: Sequence[int] | NDArray[np.integer[Any]] | None = None, *,
    method: str = "auto",
    prec: int = PREC,
) -> list[Enclosure]:
    """Certified intervals for every query head of a layer (GQA: key heads shared).

    Parameters
    ----------
    W_Q, W_K : ndarray
        Shapes ``(n_q, n, N)`` and ``(n_kv, n, N)``.
    kv_index : sequence of int, optional
        Key head of each query head.

    Raises
    ------
    ZeroFormError
        If some head's ``L`` is zero.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.exact import enclose_layer
    >>> rng = np.random.default_rng(1)
    >>> encs = enclose_layer(rng.standard_normal((2, 2, 9)), rng.standard_normal((1, 2, 9)),
    ...                      [0, 0])
    >>> [e.method for e in encs], all(e.max_width() < 1e-12 for e in encs)
    (['rump', 'rump'], True)
    """
    return [enclose_gram(g, method=method, prec=prec)
            for g in layer_exact_grams(W_Q, W_K, kv_index)]


def decide(rule: Callable[..., Any], lows: Sequence[Any], highs: Sequence[Any]) -> np.ndarray:
    """Decide a rule on boxes of intervals: its common value at every corner, else None.

    ``rule(x_1, ..., x_k)`` is a (vectorized) float rule, e.g. ``lambda d: d <= 0.05``
    or :func:`qkforms.spectral_type` of a profile point; ``lows[i]``, ``highs[i]`` are
    the interval endpoints of the i-th argument (arrays over heads). The result, per
    head, is the rule's value if it is the same at all ``2^k`` corners of the box, and
    ``None`` (undecided) otherwise or when an endpoint is NaN.

    This decides the rule for every point of the box (in particular the true one) when
    each value set of the rule is an intersection of sets ``{f <= t}`` / ``{f > t}``
    with ``f`` monotone in each coordinate on the box: such a set contains the box iff
    it contains the corners where ``f`` is extreme. Thresholds of one statistic, and
    the spectral types (``c_S + d_S = (c + d)/(b + c + d)`` and ``c - d`` are monotone in
    each of ``b, c, d >= 0``), are of this kind (docs/certified.md).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.exact.enclosure import decide
    >>> lo, hi = np.array([0.01, 0.049, 0.2]), np.array([0.02, 0.051, 0.3])
    >>> decide(lambda x: x <= 0.05, [lo], [hi]).tolist()
    [True, None, False]
    """
    lows = [np.asarray(v, dtype=np.float64) for v in lows]
    highs = [np.asarray(v, dtype=np.float64) for v in highs]
    k = len(lows)
    values = []
    for corner in itertools.product((False, True), repeat=k):
        args = [highs[i] if up else lows[i] for i, up in enumerate(corner)]
        values.append(np.asarray(rule(*args), dtype=object))
    stacked = np.stack(values)
    agree = np.all(stacked == stacked[0], axis=0)
    for lo, hi in zip(lows, highs, strict=True):
        agree &= ~(np.isnan(lo) | np.isnan(hi))
    out = np.empty(stacked.shape[1:], dtype=object)
    out[...] = None
    out[agree] = stacked[0][agree]
    return out

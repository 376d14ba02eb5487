"""Exact profiles (Definition 6) of rational forms and of given exact spectra.

For a rational ``L`` whose symmetric part has a rational spectrum (for example
``L = U^T diag(lambda) U + T`` with ``U`` a rational orthogonal matrix from
:func:`qkforms.exact.cayley_orthogonal` and ``T`` rational skew), the profile
``(a, b, c, d)`` is a 4-tuple of ``Fraction``\\ s. The spectrum is obtained by
factoring the characteristic polynomial of ``S`` over ``Q`` (never from the
construction), so invariance checks are not circular. For spectra with radicals,
:func:`profile_from_spectrum` works with sympy numbers.

Examples
--------
>>> profile([[1, 0], [0, -1]])
ExactProfile(a=Fraction(0, 1), b=Fraction(1, 1), c=Fraction(0, 1), d=Fraction(0, 1))
>>> profile([[2, 1], [-1, 0]])          # S = diag(2, 0), T = [[0, 1], [-1, 0]]
ExactProfile(a=Fraction(1, 3), b=Fraction(0, 1), c=Fraction(2, 3), d=Fraction(0, 1))
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, NamedTuple

import flint

from qkforms.errors import QKFormsError, ZeroFormError
from qkforms.exact.form_parts import energies, parts
from qkforms.exact.form_signature import charpoly
from qkforms.exact.orthogonal import IrrationalSpectrumError, rational_spectrum
from qkforms.exact.rational import MatrixLike, to_fraction
from qkforms.profile_map import Profile

__all__ = [
    "ExactProfile",
    "exact_lobes",
    "profile_from_spectrum",
    "profile",
    "quadratic_spectrum",
    "symmetric_profile",
    "pairing_quantities",
    "PairingQuantities",
]


class ExactProfile(NamedTuple):
    """A profile ``(a, b, c, d)`` with exact (Fraction or sympy) coordinates.

    Examples
    --------
    >>> p = ExactProfile(Fraction(1, 2), Fraction(1, 2), Fraction(0), Fraction(0))
    >>> sum(p)
    Fraction(1, 1)
    """

    a: Any
    b: Any
    c: Any
    d: Any

    def to_float(self) -> Profile:
        """The float64 :class:`qkforms.profile_map.Profile` (rounded once per coordinate).

        Examples
        --------
        >>> ExactProfile(Fraction(1, 4), Fraction(1, 4), Fraction(1, 2), Fraction(0)).to_float()
        Profile(a=0.25, b=0.25, c=0.5, d=0.0)
        """
        return Profile(*(float(x) for x in self))


def _is_exact_rational(x: Any) -> bool:
    return isinstance(x, (int, Fraction, flint.fmpz, flint.fmpq)) or getattr(
        x, "is_Rational", False
    )


def _coerce(values: Sequence[Any]) -> tuple[list[Any], bool]:
    """Fractions if every value is rational, else sympy numbers."""
    if all(_is_exact_rational(v) for v in values):
        return [to_fraction(v) for v in values], True
    import sympy

    out = [sympy.sympify(v) if not isinstance(v, Fraction) else
           sympy.Rational(v.numerator, v.denominator) for v in values]
    for v in out:
        if v.is_real is not True:
            raise QKFormsError(f"eigenvalue {v} is not known to be real")
    return out, False


def _pos(x: Any) -> Any:
    return x if x > 0 else 0 * x


def exact_lobes(eigs: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Padded lobes ``(alpha, beta)``: decreasing sorts of ``max(l, 0)``, ``max(-l, 0)``.

    Both have the length of ``eigs`` (the Lean convention; any padding is harmless).

    Examples
    --------
    >>> a, b = exact_lobes([Fraction(-1), Fraction(3), Fraction(-2)])
    >>> [str(x) for x in a], [str(x) for x in b]
    (['3', '0', '0'], ['2', '1', '0'])
    """
    vals, _ = _coerce(list(eigs))
    alpha = sorted((_pos(v) for v in vals), reverse=True)
    beta = sorted((_pos(-v) for v in vals), reverse=True)
    return alpha, beta


def profile_from_spectrum(
    eigs_S: Sequence[Any], norm_sq: Any, skew_sq: Any | None = None
) -> ExactProfile:
    """Exact profile from the spectrum of ``S`` and ``|L|^2`` (Definition 6).

    Parameters
    ----------
    eigs_S
        Eigenvalues of ``S`` with multiplicity, any order: Fractions/ints (then the
        result is Fractions) or real sympy numbers such as ``sqrt(2)`` (then the
        result is simplified sympy numbers).
    norm_sq
        ``|L|^2 > 0``.
    skew_sq
        ``|T|^2``; by default ``|L|^2 - sum(l^2)`` (Lemma 5).

    Raises
    ------
    ZeroFormError
        If ``norm_sq`` is 0.

    Examples
    --------
    >>> import sympy
    >>> p = profile_from_spectrum([sympy.sqrt(2), -1], 3)
    >>> p.b, p.d
    (2*sqrt(2)/3, 0)
    >>> sympy.simplify(p.c - (sympy.sqrt(2) - 1) ** 2 / 3)
    0
    >>> profile_from_spectrum([Fraction(2), Fraction(-1)], Fraction(10))
    ExactProfile(a=Fraction(1, 2), b=Fraction(2, 5), c=Fraction(1, 10), d=Fraction(0, 1))
    """
    vals, rational = _coerce(list(eigs_S) + [norm_sq] + ([] if skew_sq is None else [skew_sq]))
    lam = vals[: len(eigs_S)]
    nsq = vals[len(eigs_S)]
    if nsq == 0:
        raise ZeroFormError("the profile of the zero form is undefined (|L|^2 = 0)")
    alpha, beta = exact_lobes(lam)
    b_num = 2 * sum((x * y for x, y in zip(alpha, beta, strict=True)), 0 * nsq)
    c_num = sum((_pos(x - y) ** 2 for x, y in zip(alpha, beta, strict=True)), 0 * nsq)
    d_num = sum((_pos(y - x) ** 2 for x, y in zip(alpha, beta, strict=True)), 0 * nsq)
    if skew_sq is None:
        a_num = nsq - sum((v * v for v in lam), 0 * nsq)
    else:
        a_num = vals[-1]
    coords = [a_num / nsq, b_num / nsq, c_num / nsq, d_num / nsq]
    if not rational:
        import sympy

        coords = [sympy.simplify(x) for x in coords]
    return ExactProfile(*coords)


def _verify_spectrum(S: flint.fmpq_mat, spectrum: Sequence[Any]) -> list[Fraction]:
    lam = [to_fraction(v) for v in spectrum]
    if len(lam) != S.nrows():
        raise QKFormsError(f"spectrum has {len(lam)} values, S is {S.nrows()} x {S.nrows()}")
    expected = flint.fmpq_poly([1])
    for v in lam:
        expected *= flint.fmpq_poly([flint.fmpq(-v.numerator, v.denominator), 1])
    if charpoly(S) != expected:
        raise QKFormsError("the given spectrum is not the spectrum of S (charpoly differs)")
    return lam


def quadratic_spectrum(S: MatrixLike) -> list[Any]:
    """Exact spectrum when the characteristic polynomial has factors of degree <= 2 only.

    Rational roots are Fractions, roots of irreducible quadratic factors are sympy
    radicals ``(-b +- sqrt(b^2 - 4ac))/(2a)``.

    Raises
    ------
    IrrationalSpectrumError
        If an irreducible factor has degree 3 or more.

    Examples
    --------
    >>> quadratic_spectrum([[1, 1], [1, 0]])
    [1/2 - sqrt(5)/2, 1/2 + sqrt(5)/2]
    """
    import sympy

    _, factors = charpoly(S).factor()
    out: list[Any] = []
    for f, mult in factors:
        cs = [Fraction(int(c.p), int(c.q)) for c in f.coeffs()]
        if len(cs) == 2:
            out += [-cs[0] / cs[1]] * int(mult)
        elif len(cs) == 3:
            c0, c1, c2 = (sympy.Rational(v.numerator, v.denominator) for v in cs)
            root = sympy.sqrt(c1 * c1 - 4 * c2 * c0)
            out += [(-c1 - root) / (2 * c2), (-c1 + root) / (2 * c2)] * int(mult)
        else:
            raise IrrationalSpectrumError(
                f"irreducible factor {f} of degree {len(cs) - 1} > 2 in the characteristic "
                "polynomial: no radical spectrum implemented"
            )
    return out


def profile(
    L: MatrixLike, *, spectrum: Sequence[Any] | None = None, algebraic: bool = False
) -> ExactProfile:
    """Exact profile of a nonzero rational square matrix whose ``S`` has rational spectrum.

    ``a`` is computed from ``|T|^2`` directly (not through Lemma 5), ``b, c, d`` from
    the exact spectrum of ``S`` (factorization of its characteristic polynomial over
    ``Q``, or a claimed ``spectrum`` which is verified against it). With
    ``algebraic=True`` irreducible quadratic factors are allowed and the result is in
    sympy radicals (e.g. for rank-one forms, whose ``S`` has rank <= 2).

    Raises
    ------
    ZeroFormError
        If ``L = 0``.
    IrrationalSpectrumError
        If ``S`` has irrational eigenvalues (use :func:`profile_from_spectrum`).

    Examples
    --------
    >>> profile([[0, 1], [-1, 0]])
    ExactProfile(a=Fraction(1, 1), b=Fraction(0, 1), c=Fraction(0, 1), d=Fraction(0, 1))
    >>> profile([[1, 2], [0, 1]], spectrum=[2, 0])
    ExactProfile(a=Fraction(1, 3), b=Fraction(0, 1), c=Fraction(2, 3), d=Fraction(0, 1))
    """
    e = energies(L)
    if e.norm_sq == 0:
        raise ZeroFormError("the profile of the zero matrix is undefined (L = 0)")
    S, _ = parts(L)
    if spectrum is not None:
        lam: list[Any] = _verify_spectrum(S, spectrum)
    elif algebraic:
        lam = quadratic_spectrum(S)
    else:
        lam = rational_spectrum(S)
    return profile_from_spectrum(lam, e.norm_sq, e.skew_sq)


def symmetric_profile(p: ExactProfile) -> tuple[Any, Any, Any]:
    """``(b_S, c_S, d_S) = (b, c, d)/(1 - a)`` (Lemma 4), exactly.

    Raises
    ------
    ZeroFormError
        If ``a = 1`` (``S = 0``).

    Examples
    --------
    >>> symmetric_profile(ExactProfile(Fraction(1, 2), Fraction(2, 5), Fraction(1, 10), 0))
    (Fraction(4, 5), Fraction(1, 5), Fraction(0, 1))
    """
    rest = 1 - p.a
    if rest == 0:
        raise ZeroFormError("S = 0: the symmetric profile is undefined")
    return (p.b / rest, p.c / rest, p.d / rest)


class PairingQuantities(NamedTuple):
    """Exact squared-norm data of a symmetric spectrum (all Fractions).

    ``plus_sq = |alpha|^2``, ``minus_sq = |beta|^2``, ``cross = <alpha, beta>``,
    ``diff_sq = |alpha - beta|^2``; ``S_sq = plus_sq + minus_sq = |S|^2``.
    """

    plus_sq: Fraction
    minus_sq: Fraction
    cross: Fraction
    diff_sq: Fraction
    S_sq: Fraction


def pairing_quantities(eigs_S: Sequence[Any]) -> PairingQuantities:
    """Squared norms of the lobes of a rational spectrum, their cross term and difference.

    The pairing score is ``1 - sqrt(diff_sq / S_sq)`` and ``rho^2 = minus_sq / plus_sq``.

    Examples
    --------
    >>> [str(x) for x in pairing_quantities([3, -1, 1, -2])]
    ['10', '5', '7', '1', '15']
    """
    alpha, beta = exact_lobes([to_fraction(v) for v in eigs_S])
    zero = Fraction(0)
    plus_sq = sum((x * x for x in alpha), zero)
    minus_sq = sum((y * y for y in beta), zero)
    cross = sum((x * y for x, y in zip(alpha, beta, strict=True)), zero)
    diff_sq = sum(((x - y) ** 2 for x, y in zip(alpha, beta, strict=True)), zero)
    return PairingQuantities(plus_sq, minus_sq, cross, diff_sq, plus_sq + minus_sq)

"""Sign counts of the roots of real-rooted polynomials (Descartes' rule of signs).

For a polynomial whose roots are all real (e.g. the characteristic polynomial of a
real symmetric matrix), Descartes' rule of signs is *exact*: the number of positive
roots (with multiplicity) equals the number of sign changes in its coefficient
sequence, and the number of negative roots equals the number of sign changes of
``p(-x)``. The multiplicity of the root 0 is the index of the lowest nonzero
coefficient. With integer or rational coefficients this gives the inertia of a
symmetric matrix with no floating point at all.

*Why exact.* Write ``p = x^z q`` with ``q(0) != 0``, ``deg q = m``. Descartes gives
``V(q) >= #pos`` and ``V(q(-x)) >= #neg`` with differences even, and
``V(q) + V(q(-x)) <= m`` (a coefficient sequence of length ``m + 1`` with nonzero
ends has at most ``m`` changes between ``q`` and ``q(-x)`` together). When all roots
are real, ``#pos + #neg = m``, so both inequalities are equalities.

Examples
--------
>>> descartes_counts([-6, 11, -6, 1])        # (x-1)(x-2)(x-3)
(3, 0, 0)
>>> descartes_counts([0, 0, -1, 0, 1])       # x^2 (x-1)(x+1)
(1, 1, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from qkforms.errors import QKFormsError

__all__ = ["sign_changes", "descartes_counts"]


def _sign(v: Any) -> int:
    return (v > 0) - (v < 0)


def sign_changes(coeffs: Sequence[Any]) -> int:
    """Number of sign changes in a coefficient sequence, zeros skipped.

    Parameters
    ----------
    coeffs
        Exact numbers (int, Fraction, flint ``fmpz``/``fmpq``), any order.

    Examples
    --------
    >>> sign_changes([1, 0, -2, 3, 0, 0, 4])
    2
    """
    changes = 0
    last = 0
    for c in coeffs:
        s = _sign(c)
        if s == 0:
            continue
        if last != 0 and s != last:
            changes += 1
        last = s
    return changes


def descartes_counts(coeffs: Sequence[Any]) -> tuple[int, int, int]:
    """Positive, negative and zero root counts of a real-rooted polynomial.

    Parameters
    ----------
    coeffs
        Coefficients in increasing degree order (``coeffs[k]`` multiplies ``x^k``),
        exact numbers; a flint ``fmpz_poly``/``fmpq_poly`` is accepted too.

    Returns
    -------
    (n_pos, n_neg, n_zero)
        Counted with multiplicity. Exact when all roots are real (the caller's
        responsibility; e.g. a characteristic polynomial of a symmetric matrix, or
        of a matrix similar to one).

    Raises
    ------
    QKFormsError
        If the polynomial is zero, or if the counts do not add up to the degree,
        which proves that it has non-real roots.

    Examples
    --------
    >>> descartes_counts([4, 0, -5, 0, 1])       # (x-1)(x+1)(x-2)(x+2)
    (2, 2, 0)
    >>> descartes_counts([0, 1, 2, 1])            # x (x+1)^2
    (0, 2, 1)
    """
    if hasattr(coeffs, "coeffs") and callable(coeffs.coeffs):
        coeffs = coeffs.coeffs()
    cs = [c if isinstance(c, (int, Fraction)) else Fraction(str(c)) for c in coeffs]
    while cs and cs[-1] == 0:
        cs.pop()
    if not cs:
        raise QKFormsError("the zero polynomial has no root counts")
    degree = len(cs) - 1
    n_zero = 0
    while cs[n_zero] == 0:
        n_zero += 1
    q = cs[n_zero:]
    n_pos = sign_changes(q)
    n_neg = sign_changes([c if k % 2 == 0 else -c for k, c in enumerate(q)])
    if n_pos + n_neg + n_zero != degree:
        raise QKFormsError(
            f"Descartes counts ({n_pos}, {n_neg}, {n_zero}) do not add up to the degree "
            f"{degree}: the polynomial has non-real roots, so the counts are not exact"
        )
    return n_pos, n_neg, n_zero

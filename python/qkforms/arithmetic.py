"""Number backends for the formulas of the profile, the pairing score and Θ.

The formulas of Definition 6 (profile), docs/theory.md §4 (pairing score, lobe ratio) and
Proposition 4 (distance to Θ) are written once, in :mod:`qkforms.profile_map`,
:mod:`qkforms.pairing` and :mod:`qkforms.theta_family`, against the small interface
:class:`Arithmetic`: ordinary operators (``+ - * /``) on arrays plus the few
operations below. :data:`FLOAT64` evaluates them on float64 numpy arrays (the survey's
numbers); the ball backend :data:`qkforms.exact.balls.BALLS` evaluates the *same*
expressions on numpy object arrays of Arb balls, which gives rigorous enclosures
(docs/certified.md). Each operation of a backend must be an *inclusion-monotone
extension* of the real operation: for balls, the result contains the real result for
every choice of real inputs in the input balls. For the float backend the operations
are the plain numpy ones, so the float results are those of the original formulas.

Examples
--------
>>> import numpy as np
>>> from qkforms.arithmetic import FLOAT64
>>> FLOAT64.pos(np.array([-1.0, 2.0])).tolist(), float(FLOAT64.total(np.ones(3)))
([0.0, 2.0], 3.0)
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

__all__ = ["FLOAT64", "Arithmetic", "Float64Arithmetic"]


class Arithmetic(Protocol):
    """The operations, besides ``+ - * /``, that the shared formulas use.

    Every operation acts elementwise on arrays (``total`` reduces the last axis).
    """

    name: str

    def pos(self, x: Any) -> Any:
        """``max(x, 0)``."""

    def square(self, x: Any) -> Any:
        """``x * x``."""

    def sqrt(self, x: Any) -> Any:
        """Square root of a quantity that is nonnegative in exact arithmetic."""

    def total(self, x: Any) -> Any:
        """Sum over the last axis."""

    def minimum(self, x: Any, y: Any) -> Any:
        """``min(x, y)``."""

    def clip(self, x: Any, lo: float, hi: float) -> Any:
        """``min(max(x, lo), hi)``."""

    def ratio_or_inf(self, num: Any, den: Any) -> Any:
        """``num / den`` for ``den > 0`` and ``+inf`` for ``den == 0`` (``den >= 0``)."""


class Float64Arithmetic:
    """:class:`Arithmetic` on float64 numpy arrays (round to nearest, no guarantee).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.arithmetic import FLOAT64
    >>> FLOAT64.ratio_or_inf(np.array([1.0, 1.0]), np.array([2.0, 0.0])).tolist()
    [0.5, inf]
    """

    name = "float64"

    def pos(self, x: Any) -> Any:
        return np.maximum(x, 0.0)

    def square(self, x: Any) -> Any:
        return np.square(x)

    def sqrt(self, x: Any) -> Any:
        return np.sqrt(x)

    def total(self, x: Any) -> Any:
        return np.sum(x, axis=-1)

    def minimum(self, x: Any, y: Any) -> Any:
        return np.minimum(x, y)

    def clip(self, x: Any, lo: float, hi: float) -> Any:
        return np.clip(x, lo, hi)

    def ratio_or_inf(self, num: Any, den: Any) -> Any:
        den = np.asarray(den, dtype=np.float64)
        with np.errstate(divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)


#: The float64 backend used by every float function of the core.
FLOAT64 = Float64Arithmetic()

"""The exact facts of one head: the exact twin of :class:`qkforms.Head`.

:class:`ExactHead` answers, in exact rational arithmetic on the head's weights (floats
are taken as the dyadic rationals they are), what :class:`qkforms.Head` answers in
floating point: the signature of ``S`` on ``R^N`` (``docs/theory.md`` §3.3), the live
dimensions, the certified ranks of the stacked map and of the live pair, and what
Theorem 3 predicts. It holds no new mathematics: every answer is
:func:`qkforms.exact.head_inertia` (computed once) or
:func:`qkforms.exact.head_signature`. :meth:`qkforms.Head.exact` makes one;
:meth:`qkforms.Head.enclose` gives the certified enclosures of the float statistics.

Examples
--------
>>> import numpy as np
>>> from qkforms.exact.head import ExactHead
>>> Q = np.eye(2, 6)
>>> facts = ExactHead(Q, Q)                  # W_K = W_Q: S is positive semidefinite
>>> facts.signature(), facts.stacked_rank, facts.is_surjective()
(Signature(n_pos=2, n_neg=0, n_zero=4), 2, False)
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from qkforms.exact.form_signature import Signature, head_signature
from qkforms.exact.inertia import HeadInertia, head_inertia
from qkforms.exact.rational import MatrixLike, matrix_shape

__all__ = ["ExactHead"]


class ExactHead:
    """Exact signature, ranks and Theorem 3 prediction of the head ``L = W_K^T W_Q``.

    Parameters
    ----------
    W_Q, W_K : matrix, shape (n, N)
        Query and key weights: floats, ints, Fractions, sympy Rationals or flint
        matrices, all taken exactly.

    See Also
    --------
    qkforms.Head.exact : the exact facts of a float head (this object).
    qkforms.Head.enclose : certified enclosures of its profile and statistics.
    qkforms.exact.head_inertia : the computation behind every answer.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.exact.head import ExactHead
    >>> Q, K = np.eye(2, 6), np.eye(2, 6, 2)
    >>> facts = ExactHead(Q, K)
    >>> facts.signature(), facts.prediction, facts.n_live
    (Signature(n_pos=2, n_neg=2, n_zero=2), 'thm3', 2)
    """

    def __init__(self, W_Q: MatrixLike, W_K: MatrixLike) -> None:
        self.W_Q: Any = W_Q
        self.W_K: Any = W_K

    def __repr__(self) -> str:
        return f"ExactHead({self.inertia!r})"

    @cached_property
    def inertia(self) -> HeadInertia:
        """Every exact fact at once (:func:`qkforms.exact.head_inertia`, computed once)."""
        return head_inertia(self.W_Q, self.W_K)

    def signature(self, *, method: Literal["auto", "congruence", "charpoly", "dense"] = "auto"
                  ) -> Signature:
        """Exact signature ``(n_+, n_-, n_0)`` of ``S`` on ``R^N``.

        ``method`` is that of :func:`qkforms.exact.head_signature`; ``"auto"`` and
        ``"congruence"`` read it off :attr:`inertia`.

        Examples
        --------
        >>> from qkforms.exact.head import ExactHead
        >>> facts = ExactHead([[1, 0, 0]], [[0, 1, 0]])
        >>> facts.signature() == facts.signature(method="charpoly")
        True
        """
        if method in ("auto", "congruence"):
            return self.inertia.signature
        return head_signature(self.W_Q, self.W_K, method=method)

    @property
    def n_live(self) -> int:
        """Live head dimensions ``n'`` (``q_i != 0`` and ``k_i != 0``)."""
        return self.inertia.n_live

    @property
    def stacked_rank(self) -> int:
        """Certified rank of ``M = [W_K; W_Q]``."""
        return self.inertia.stacked_rank

    @property
    def live_rank(self) -> int:
        """Certified rank of the live pair ``[K'; Q']``."""
        return self.inertia.live_rank

    @property
    def prediction(self) -> str:
        """``"thm3"``, ``"thm3-live"`` or ``"none"`` (:class:`~qkforms.exact.HeadInertia`)."""
        return self.inertia.prediction

    @property
    def zero_form(self) -> bool:
        """``L = 0`` exactly."""
        return self.inertia.zero_form

    def is_surjective(self) -> bool:
        """Whether ``x -> (W_Q x, W_K x)`` is onto ``R^{2n}``, exactly (rank ``M = 2n``).

        Examples
        --------
        >>> from qkforms.exact.head import ExactHead
        >>> ExactHead([[1, 0]], [[0, 1]]).is_surjective()
        True
        """
        return self.inertia.stacked_rank == 2 * matrix_shape(self.W_Q)[0]

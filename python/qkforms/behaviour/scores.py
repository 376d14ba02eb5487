"""Head scores computed from attention patterns (``docs/behaviour.md``).

An attention pattern ``A`` of one head on one sequence is an ``S x S`` matrix whose row
``i`` is the softmax distribution of query position ``i`` over the key positions ``j``.
Every score below is a mean over the query positions of a probe that the score concerns
(and then over the probe's sequences); the positions are given by a :class:`ProbeLayout`:
a sequence is ``prefix (p tokens) + body + suffix``, the framing the model's tokenizer
adds around text (for instance ``[CLS] ... [SEP]`` for BERT, nothing for SmolLM2).

=================  ========  ======================================================
score              probe     mean over its query positions ``i`` of
=================  ========  ======================================================
previous_token     random    ``A[i, i-1]``                 (previous-token head: 1)
sink               random    ``A[i, 0]``                   (attention-sink head: 1)
mean_distance      random    ``sum_j A[i, j] |i - j|``     (in tokens)
entropy            random    ``-sum_j A[i, j] ln A[i, j]`` (nats; one-hot: 0)
entropy_norm       random    entropy / ``ln m_i``, ``m_i`` keys visible to ``i``
induction          repeated  ``A[i, i - T + 1]``           (induction head: 1)
duplicate_token    repeated  ``A[i, i - T]``               (duplicate-token head: 1)
=================  ========  ======================================================

On the random probe the query positions are the body positions ``i >= 1``; on the
repeated probe (body = ``r + r``, ``r`` of ``T`` distinct random tokens) they are the
``T`` positions of the second copy, whose earlier occurrence sits ``T`` positions back
and is followed by the token the induction rule predicts.

The functions are batched: ``A`` has shape ``(..., S, S)`` and each returns the mean over
the query positions, of shape ``A.shape[:-2]``.

Examples
--------
>>> import numpy as np
>>> from qkforms.behaviour.scores import ProbeLayout, previous_token, sink
>>> S = 6
>>> A = np.zeros((S, S)); A[0, 0] = 1.0
>>> A[np.arange(1, S), np.arange(S - 1)] = 1.0      # every query attends to i - 1
>>> lay = ProbeLayout(length=S, body_start=0, body_length=S)
>>> float(previous_token(A, lay)), float(sink(A, lay))
(1.0, 0.2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.errors import ParameterError, ShapeError, format_value

__all__ = [
    "CLASS_SCORES",
    "CLASS_THRESHOLD",
    "SCORES",
    "ProbeLayout",
    "Score",
    "duplicate_token",
    "entropy",
    "entropy_norm",
    "induction",
    "mean_distance",
    "previous_token",
    "sink",
]


@dataclass(frozen=True)
class ProbeLayout:
    """Where the parts of a probe sequence sit.

    Attributes
    ----------
    length : int
        ``S``, tokens per sequence (prefix + body + suffix).
    body_start : int
        ``p``, tokens of the tokenizer's prefix (BOS, ``[CLS]``, ...).
    body_length : int
        Tokens of the body (the random tokens; ``2T`` for the repeated probe).
    repeat : int or None
        ``T`` for the repeated probe (body = two copies of ``T`` tokens), else None.
    causal : bool
        Whether query ``i`` sees only keys ``j <= i`` (decoders) or all keys (encoders).

    Examples
    --------
    >>> ProbeLayout(length=130, body_start=1, body_length=128, repeat=64).second_copy()[:3]
    array([65, 66, 67])
    """

    length: int
    body_start: int
    body_length: int
    repeat: int | None = None
    causal: bool = True

    def __post_init__(self) -> None:
        p, L, S = self.body_start, self.body_length, self.length
        if p < 0 or L < 2 or p + L > S:
            raise ParameterError(
                f"probe layout: body [{format_value(p)}, {format_value(p + L)}) must hold at "
                f"least 2 tokens inside a sequence of {format_value(S)}")
        if self.repeat is not None and (self.repeat < 2 or 2 * self.repeat != L):
            raise ParameterError(f"probe layout: a repeated body of {format_value(L)} tokens "
                                 f"is not two copies of {format_value(self.repeat)} (>= 2)")

    def queries(self) -> NDArray[np.intp]:
        """The random probe's query positions: body positions ``i >= 1``."""
        start = max(self.body_start, 1)
        return np.arange(start, self.body_start + self.body_length)

    def second_copy(self) -> NDArray[np.intp]:
        """The repeated probe's query positions: the ``T`` positions of the second copy."""
        if self.repeat is None:
            raise ParameterError("this probe layout is not a repeated probe (repeat is None)")
        return self.body_start + self.repeat + np.arange(self.repeat)

    def visible_keys(self, queries: NDArray[np.intp]) -> NDArray[np.int64]:
        """``m_i``: how many keys each query may attend to (``i + 1`` causal, else S)."""
        if self.causal:
            return np.asarray(queries, dtype=np.int64) + 1
        return np.full(len(queries), self.length, dtype=np.int64)


def _pattern(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    P = np.asarray(A, dtype=np.float64)
    if P.ndim < 2 or P.shape[-2:] != (layout.length, layout.length):
        raise ShapeError(f"attention patterns must have shape (..., {layout.length}, "
                         f"{layout.length}) for this probe; got {P.shape}")
    return P


def _target_mass(A: ArrayLike, layout: ProbeLayout, queries: NDArray[np.intp],
                 keys: NDArray[np.intp]) -> NDArray[np.float64]:
    P = _pattern(A, layout)
    return np.asarray(P[..., queries, keys].mean(axis=-1))


def previous_token(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    """Previous-token score: mean of ``A[i, i-1]`` over the random probe's queries.

    Examples
    --------
    >>> import numpy as np
    >>> lay = ProbeLayout(length=4, body_start=0, body_length=4, causal=False)
    >>> float(previous_token(np.full((4, 4), 0.25), lay))
    0.25
    """
    q = layout.queries()
    return _target_mass(A, layout, q, q - 1)


def sink(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    """Attention-sink share: mean of ``A[i, 0]`` (the first token) over the random probe's
    queries.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.zeros((5, 5)); A[:, 0] = 1.0
    >>> float(sink(A, ProbeLayout(length=5, body_start=0, body_length=5)))
    1.0
    """
    q = layout.queries()
    return _target_mass(A, layout, q, np.zeros_like(q))


def mean_distance(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    """Mean attention distance ``sum_j A[i, j] |i - j|`` (tokens), mean over the queries.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.zeros((5, 5)); A[:, 0] = 1.0       # queries 1..4 look 1, 2, 3, 4 back
    >>> float(mean_distance(A, ProbeLayout(length=5, body_start=0, body_length=5)))
    2.5
    """
    P = _pattern(A, layout)
    q = layout.queries()
    dist = np.abs(q[:, None] - np.arange(layout.length)[None, :]).astype(np.float64)
    return np.asarray((P[..., q, :] * dist).sum(axis=-1).mean(axis=-1))


def _row_entropy(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    P = _pattern(A, layout)[..., layout.queries(), :]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
    return np.asarray(-terms.sum(axis=-1))


def entropy(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    """Entropy ``-sum_j A[i, j] ln A[i, j]`` in nats (``0 ln 0 = 0``), mean over the
    random probe's queries.

    Examples
    --------
    >>> import numpy as np
    >>> lay = ProbeLayout(length=4, body_start=0, body_length=4, causal=False)
    >>> round(float(entropy(np.full((4, 4), 0.25), lay)), 6) == round(float(np.log(4)), 6)
    True
    """
    return np.asarray(_row_entropy(A, layout).mean(axis=-1))


def entropy_norm(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    """Entropy divided by ``ln m_i`` (``m_i`` keys visible to query ``i``): 0 for a one-hot
    row, 1 for uniform attention over the visible keys; mean over the queries.

    Examples
    --------
    >>> import numpy as np
    >>> S = 5
    >>> U = np.tril(np.ones((S, S))) / np.arange(1, S + 1)[:, None]   # causal uniform
    >>> float(np.round(entropy_norm(U, ProbeLayout(length=S, body_start=0, body_length=S)), 12))
    1.0
    """
    m = layout.visible_keys(layout.queries())
    return np.asarray((_row_entropy(A, layout) / np.log(m)).mean(axis=-1))


def induction(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    """Induction score: mean of ``A[i, i - T + 1]`` over the second copy of the repeated
    probe (the token after the earlier occurrence of the current token).

    Examples
    --------
    >>> import numpy as np
    >>> lay = ProbeLayout(length=8, body_start=0, body_length=8, repeat=4)
    >>> A = np.eye(8); q = lay.second_copy()
    >>> A[q] = 0.0; A[q, q - 3] = 1.0
    >>> float(induction(A, lay))
    1.0
    """
    q = layout.second_copy()  # raises unless the layout is a repeated probe
    return _target_mass(A, layout, q, q - int(layout.repeat or 0) + 1)


def duplicate_token(A: ArrayLike, layout: ProbeLayout) -> NDArray[np.float64]:
    """Duplicate-token score: mean of ``A[i, i - T]`` (the earlier occurrence of the same
    token) over the second copy of the repeated probe.

    Examples
    --------
    >>> import numpy as np
    >>> lay = ProbeLayout(length=9, body_start=1, body_length=8, repeat=4)
    >>> A = np.eye(9); q = lay.second_copy()
    >>> A[q] = 0.0; A[q, q - 4] = 0.5; A[q, 0] = 0.5
    >>> float(duplicate_token(A, lay))
    0.5
    """
    q = layout.second_copy()
    return _target_mass(A, layout, q, q - int(layout.repeat or 0))


@dataclass(frozen=True)
class Score:
    """One behaviour score: its probe, function, displacement and meaning.

    Attributes
    ----------
    name : str
        Column of ``behaviour.parquet``.
    probe : str
        ``"random"`` or ``"repeated"``.
    compute : callable
        ``(patterns, layout) -> per-sequence scores``.
    displacement : str or None
        Which relative form ``L(d)`` of a RoPE head the score concerns: ``"1"``
        (previous token), ``"T-1"`` (induction), ``"T"`` (duplicate token), or None
        (no single displacement).
    meaning : str
        One line for the docs' column table.
    """

    name: str
    probe: str
    compute: Callable[[ArrayLike, ProbeLayout], NDArray[np.float64]]
    displacement: str | None
    meaning: str

    def displacement_for(self, repeat: int) -> int | None:
        """The displacement ``d`` this score concerns for a repeated probe of ``T`` tokens.

        Examples
        --------
        >>> SCORES["induction"].displacement_for(64), SCORES["sink"].displacement_for(64)
        (63, None)
        """
        if self.displacement is None:
            return None
        return {"1": 1, "T-1": repeat - 1, "T": repeat}[self.displacement]


#: every behaviour score, in the column order of ``behaviour.parquet``
SCORES: dict[str, Score] = {s.name: s for s in (
    Score("previous_token", "random", previous_token, "1",
          "mean attention from position `i` to `i − 1` (random probe)"),
    Score("induction", "repeated", induction, "T-1",
          "mean attention from the second copy to the token after the earlier occurrence, "
          "`i − T + 1` (repeated probe)"),
    Score("duplicate_token", "repeated", duplicate_token, "T",
          "mean attention from the second copy to the earlier occurrence of the same token, "
          "`i − T` (repeated probe)"),
    Score("sink", "random", sink, None,
          "attention-sink share: mean attention to the first token, position 0 (random "
          "probe)"),
    Score("mean_distance", "random", mean_distance, None,
          "mean attention distance `Σ_j A_ij · abs(i − j)` in tokens (random probe)"),
    Score("entropy", "random", entropy, None,
          "entropy of the pattern `−Σ_j A_ij ln A_ij` in nats (random probe)"),
    Score("entropy_norm", "random", entropy_norm, None,
          "entropy over `ln m_i`, `m_i` keys visible to query `i` (0 one-hot, 1 uniform)"),
)}

#: the scores that define behaviour classes (a share of attention on one target)
CLASS_SCORES: tuple[str, ...] = ("previous_token", "induction", "duplicate_token", "sink")
#: a head is in the class of such a score when at least this share of its attention goes
#: to the score's target (a majority)
CLASS_THRESHOLD = 0.5

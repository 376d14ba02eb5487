"""Pre-softmax scores of a layer's heads, rebuilt from the survey's maps (``docs/behaviour.md``).

With ``x`` the vectors entering a layer's attention (the input of its query/key
projections, captured while the model runs) and the survey's per-head maps
``W_Q[h], W_K[g], b_Q[h], b_K[g]`` (:class:`qkforms.models.LayerWeights`, keyed like
``heads.parquet``), the score of query position ``i`` on key position ``j`` is

    ``s_ij = c <Rot(j)(W_K x_j + b_K), Rot(i)(W_Q x_i + b_Q)>``,

``c`` the model's scale (``1/sqrt(n)`` unless the model says otherwise) and ``Rot`` the
rotary embedding of RoPE models (:func:`qkforms.survey.rope.rotate_positions`; the
identity otherwise). Its bilinear part is ``b_ij = c x_j^T L x_i`` with
``L = W_K^T W_Q`` (the survey's form; for RoPE models ``L(0)``). The softmax of ``s``
over the keys a query may see is compared with the model's own attention pattern
(:func:`pattern_deviation`), which checks the maps, their head indices and these
conventions together; :class:`ShareSums` accumulates how much of the variance of ``s``
the bilinear part explains.

Examples
--------
>>> import numpy as np
>>> from qkforms.behaviour.reconstruct import layer_scores, softmax_pattern
>>> from qkforms.models.records import LayerWeights
>>> rng = np.random.default_rng(0)
>>> lw = LayerWeights(0, rng.standard_normal((2, 3, 5)), rng.standard_normal((1, 3, 5)),
...                   None, None, np.array([0, 0]))
>>> x = rng.standard_normal((1, 4, 5))
>>> s, b = layer_scores(x, lw, rope=None, scale=1.0)
>>> bool(np.allclose(s, b)), s.shape                    # no bias, no RoPE: s is bilinear
(True, (1, 2, 4, 4))
>>> bool(np.allclose(softmax_pattern(s, causal=True).sum(-1), 1.0))
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.behaviour.scores import ProbeLayout
from qkforms.errors import ShapeError
from qkforms.models.records import LayerWeights
from qkforms.survey.rope import rotate_positions

__all__ = [
    "ShareSums",
    "allowed_pairs",
    "layer_scores",
    "pattern_deviation",
    "softmax_pattern",
]


def allowed_pairs(S: int, causal: bool) -> NDArray[np.bool_]:
    """``(S, S)`` mask of the (query, key) pairs a query may attend to.

    Examples
    --------
    >>> allowed_pairs(3, True).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    if causal:
        return np.tril(np.ones((S, S), dtype=bool))
    return np.ones((S, S), dtype=bool)


def layer_scores(
    x: ArrayLike, layer: LayerWeights, *, rope: Any, scale: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Full scores ``s`` and bilinear parts ``b`` of every query head of a layer.

    Parameters
    ----------
    x : array_like, shape (B, S, N)
        The vectors entering the layer's attention, one sequence per row.
    layer : LayerWeights
        The layer's maps (``W_Q (n_q, n, N)``, ``W_K (n_kv, n, N)``, biases, kv_index).
    rope : ModelInfo, mapping, RopeSettings or None
        RoPE settings (positions ``0 .. S-1``), None for models without rotary
        embeddings.
    scale : float
        The factor ``c`` of the score.

    Returns
    -------
    (s, b) : ndarrays, shape (B, n_q, S, S)
        Row ``i`` (query), column ``j`` (key); no mask applied.
    """
    X = np.asarray(x, dtype=np.float64)
    n_q, n, N = layer.W_Q.shape
    if X.ndim != 3 or X.shape[-1] != N:
        raise ShapeError(f"x must have shape (B, S, {N}) for this layer; got {X.shape}")
    B, S, _ = X.shape
    q0 = (X @ layer.W_Q.reshape(n_q * n, N).T).reshape(B, S, n_q, n).transpose(0, 2, 1, 3)
    n_kv = layer.W_K.shape[0]
    k0 = (X @ layer.W_K.reshape(n_kv * n, N).T).reshape(B, S, n_kv, n).transpose(0, 2, 1, 3)
    k0 = k0[:, np.asarray(layer.kv_index)]
    b = scale * (q0 @ np.swapaxes(k0, -1, -2))
    q, k = q0, k0
    if layer.b_Q is not None:
        q = q + np.asarray(layer.b_Q)[None, :, None, :]
    if layer.b_K is not None:
        k = k + np.asarray(layer.b_K)[np.asarray(layer.kv_index)][None, :, None, :]
    if rope is not None:
        pos = np.arange(S)
        q, k = rotate_positions(q, pos, rope), rotate_positions(k, pos, rope)
    s = scale * (q @ np.swapaxes(k, -1, -2))
    return s, b


def softmax_pattern(s: ArrayLike, *, causal: bool) -> NDArray[np.float64]:
    """The attention pattern of scores ``s`` (..., S, S): a softmax over the visible keys.

    Examples
    --------
    >>> import numpy as np
    >>> softmax_pattern(np.zeros((2, 2)), causal=True).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    z = np.array(s, dtype=np.float64, copy=True)
    S = z.shape[-1]
    z[..., ~allowed_pairs(S, causal)] = -np.inf
    z -= z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=-1, keepdims=True))


def pattern_deviation(rebuilt: ArrayLike, model: ArrayLike) -> NDArray[np.float64]:
    """Largest ``|rebuilt - model|`` per head over the batch: ``(B, H, S, S) -> (H,)``.

    Examples
    --------
    >>> import numpy as np
    >>> pattern_deviation(np.zeros((1, 2, 2, 2)), np.full((1, 2, 2, 2), 0.5)).tolist()
    [0.5, 0.5]
    """
    d = np.abs(np.asarray(rebuilt, dtype=np.float64) - np.asarray(model, dtype=np.float64))
    return np.asarray(d.max(axis=(0, 2, 3)))


@dataclass
class ShareSums:
    """Running sums for the share of the score variance explained by the bilinear part.

    Over the (query, key) pairs of the random probe -- each query position of
    :meth:`ProbeLayout.queries` with every key it may attend to -- of every sequence:

    * ``bilinear_share = 1 - sum (s - b)^2 / sum (s - mean s)^2`` (all pairs of the head);
    * ``bilinear_share_row``: the same after subtracting, in every query's row, the row
      mean of ``s`` and of ``b`` -- the part of the score that changes the softmax
      (terms that depend on the query alone, such as ``x_i^T W_Q^T b_K`` and
      ``b_Q^T b_K``, cancel there).

    Both are 1 exactly when ``s = b`` (up to per-row constants for the second) and can
    be negative when ``b`` is further from ``s`` than ``s``'s own mean.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.behaviour.scores import ProbeLayout
    >>> lay = ProbeLayout(length=3, body_start=0, body_length=3)
    >>> sums = ShareSums(heads=1)
    >>> s = np.arange(9.0).reshape(1, 1, 3, 3)
    >>> sums.add(s, s + 5.0, lay)                 # b = s + constant
    >>> full, row = sums.shares()
    >>> float(row[0]), bool(full[0] < 0)
    (1.0, True)
    """

    heads: int
    count: float = 0.0
    mean: NDArray[np.float64] = field(init=False)  # running mean of s (per head)
    ss: NDArray[np.float64] = field(init=False)  # sum of squared deviations from it
    resid: NDArray[np.float64] = field(init=False)
    row_ss: NDArray[np.float64] = field(init=False)
    row_resid: NDArray[np.float64] = field(init=False)

    def __post_init__(self) -> None:
        for name in ("mean", "ss", "resid", "row_ss", "row_resid"):
            setattr(self, name, np.zeros(self.heads))

    def add(self, s: ArrayLike, b: ArrayLike, layout: ProbeLayout) -> None:
        """Add one batch ``(B, H, S, S)`` of scores and bilinear parts."""
        q = layout.queries()
        mask = allowed_pairs(layout.length, layout.causal)[q].astype(np.float64)
        S_ = np.asarray(s, dtype=np.float64)[..., q, :]
        B_ = np.asarray(b, dtype=np.float64)[..., q, :]
        axes = (0, 2, 3)
        c = float(mask.sum()) * S_.shape[0]
        m = (S_ * mask).sum(axis=axes) / c
        dev = S_ - m[None, :, None, None]
        ss = (dev * dev * mask).sum(axis=axes)
        total = self.count + c  # pairwise update of mean and sum of squares (Chan et al.)
        delta = m - self.mean
        self.ss += ss + delta * delta * self.count * c / total
        self.mean += delta * c / total
        self.count = total
        self.resid += ((S_ - B_) ** 2 * mask).sum(axis=axes)
        keys = mask.sum(axis=-1)[:, None]
        s_row = (S_ * mask).sum(axis=-1, keepdims=True) / keys
        b_row = (B_ * mask).sum(axis=-1, keepdims=True) / keys
        Sc, Bc = S_ - s_row, B_ - b_row
        self.row_ss += (Sc * Sc * mask).sum(axis=axes)
        self.row_resid += ((Sc - Bc) ** 2 * mask).sum(axis=axes)

    def shares(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(bilinear_share, bilinear_share_row)`` per head (NaN without variance)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            full = np.where(self.ss > 0, 1.0 - self.resid / self.ss, np.nan)
            row = np.where(self.row_ss > 0, 1.0 - self.row_resid / self.row_ss, np.nan)
        return np.asarray(full), np.asarray(row)

"""Relative-position forms ``L(d)`` of RoPE heads (``docs/theory.md`` §12.4, Proposition 1).

With the reduced factors ``Q_red, K_red`` (n x 2n, stored by the survey in
``factors/<model>.npz``) the form at displacement ``d`` is

    ``L(d) = K_red^T Rot(d) Q_red``,

where ``Rot(d)`` rotates the query by the angle ``d * theta_i`` in each rotary plane.

Conventions (fixed here; ``docs/theory.md`` §12.4 notes that the paper leaves the sign open):

* ``d`` is the query position minus the key position (``d >= 0`` for causal
  attention). Rotary embeddings rotate a query at position ``m`` by ``Rot(m)`` and a
  key at ``m'`` by ``Rot(m')``; their score ``<Rot(m') k, Rot(m) q>`` equals
  ``<k, Rot(m - m') q>``, so the query is rotated by ``+d``.
* Split-half planes (Hugging Face ``rotate_half``): coordinate ``i`` pairs with
  ``i + r/2`` for ``i < r/2``, where the rotary dimension ``r`` is
  ``n * rotary_fraction`` rounded down to even; coordinates ``>= r`` are not rotated.
  ``layout="interleaved"`` pairs ``2i`` with ``2i + 1`` instead (GPT-J / GGUF order).
* Frequencies ``theta_i = base^(-2i/r)``, ``i = 0 .. r/2 - 1``; linear scaling
  (``rope_scaling = {"type": "linear", "factor": s}``) divides them by ``s``.

``L(0) = W_K^T W_Q`` (reduced), and ``Rot(d) = Rot(1)^d``, so on a nondegenerate
head space ``T_d = L(0)^{-1} L(d) = T_1^d`` (Proposition 1).

Examples
--------
>>> import numpy as np
>>> from qkforms.survey.rope import relative_form
>>> rng = np.random.default_rng(0)
>>> Q, K = rng.standard_normal((2, 4, 8))
>>> info = {"rope_base": 10000.0}
>>> bool(np.allclose(relative_form(Q, K, 0, info), K.T @ Q))
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.errors import ShapeError, UnsupportedArchitectureError
from qkforms.models.config import config_float

__all__ = ["RopeSettings", "relative_form", "rope_frequencies", "rope_settings",
           "rotate_positions"]

_LAYOUTS = ("split-half", "interleaved")


@dataclass(frozen=True)
class RopeSettings:
    """The RoPE facts needed to rebuild ``L(d)``.

    Attributes
    ----------
    base : float
    rotary_fraction : float
        Fraction of the head dimension that is rotated (1.0: all of it).
    scaling_factor : float
        Linear scaling factor (frequencies are divided by it); 1.0 for none.
    layout : str
        ``"split-half"`` or ``"interleaved"``.
    """

    base: float
    rotary_fraction: float = 1.0
    scaling_factor: float = 1.0
    layout: str = "split-half"


def _get(info: Any, *names: str) -> Any:
    for name in names:
        if isinstance(info, Mapping):
            if info.get(name) is not None:
                return info[name]
        elif getattr(info, name, None) is not None:
            return getattr(info, name)
    return None


def rope_settings(rope_info: Any) -> RopeSettings:
    """Read RoPE settings from a ``ModelInfo``, a mapping, or a :class:`RopeSettings`.

    Recognized fields: ``rope_base`` (or ``base``), ``rotary_fraction``,
    ``rope_scaling`` (``None``, or a mapping with ``type``/``rope_type`` ``"linear"``
    or ``"default"`` and ``factor``), ``rope_layout`` (or ``layout``).

    Raises
    ------
    UnsupportedArchitectureError
        Missing base, or a scaling type other than linear (NTK/YaRN/Llama-3 scalings
        change frequencies non-uniformly and are not implemented).

    Examples
    --------
    >>> from qkforms.survey.rope import rope_settings
    >>> rope_settings({"rope_base": 1e4, "rotary_fraction": 0.25,
    ...                "rope_scaling": {"type": "linear", "factor": 2.0}})
    RopeSettings(base=10000.0, rotary_fraction=0.25, scaling_factor=2.0, layout='split-half')
    """
    if isinstance(rope_info, RopeSettings):
        return rope_info
    base = _get(rope_info, "rope_base", "base")
    if base is None:
        raise UnsupportedArchitectureError("RoPE settings need a frequency base (rope_base)")
    frac = _get(rope_info, "rotary_fraction")
    frac = 1.0 if frac is None else config_float(frac, "rotary_fraction", high=1.0)
    scaling = _get(rope_info, "rope_scaling")
    factor = 1.0
    if scaling:
        kind = scaling.get("type", scaling.get("rope_type", "linear"))
        if kind == "linear":
            factor = config_float(scaling.get("factor", 1.0), "rope_scaling factor")
        elif kind != "default":
            raise UnsupportedArchitectureError(
                f"RoPE scaling type {kind!r} is not supported by relative_form "
                "(only linear scaling is)"
            )
    layout = _get(rope_info, "rope_layout", "layout") or "split-half"
    if layout not in _LAYOUTS:
        raise UnsupportedArchitectureError(f"unknown RoPE layout {layout!r}; use {_LAYOUTS}")
    return RopeSettings(config_float(base, "rope_base"), frac, factor, str(layout))


def rope_frequencies(n: int, settings: RopeSettings) -> NDArray[np.float64]:
    """Angular frequencies ``theta_i`` of the ``r/2`` rotary planes of a head of dim n.

    Examples
    --------
    >>> from qkforms.survey.rope import RopeSettings, rope_frequencies
    >>> rope_frequencies(8, RopeSettings(base=10000.0, rotary_fraction=0.5)).tolist()
    [1.0, 0.01]
    """
    r = int(n * settings.rotary_fraction)
    r -= r % 2
    i = np.arange(r // 2, dtype=np.float64)
    return settings.base ** (-2.0 * i / r) / settings.scaling_factor if r else i


def _planes(n: int, s: RopeSettings) -> tuple[NDArray[np.float64], NDArray[np.intp],
                                               NDArray[np.intp]]:
    """Frequencies and the two coordinate indices of each rotary plane of a head of dim n."""
    freqs = rope_frequencies(n, s)
    half = freqs.size
    if s.layout == "split-half":
        return freqs, np.arange(half), np.arange(half) + half
    return freqs, 2 * np.arange(half), 2 * np.arange(half) + 1


def _rotate(Q: NDArray[np.float64], d: float, s: RopeSettings) -> NDArray[np.float64]:
    n = Q.shape[-2]
    freqs, i1, i2 = _planes(n, s)
    ang = d * freqs
    cos, sin = np.cos(ang)[:, None], np.sin(ang)[:, None]
    out = np.array(Q, dtype=np.float64, copy=True)
    x1, x2 = Q[..., i1, :], Q[..., i2, :]
    out[..., i1, :] = cos * x1 - sin * x2
    out[..., i2, :] = sin * x1 + cos * x2
    return out


def relative_form(
    Q_red: ArrayLike, K_red: ArrayLike, d: float, rope_info: Any
) -> NDArray[np.float64]:
    """The relative-position form ``L(d) = K_red^T Rot(d) Q_red`` (``docs/theory.md`` §12.4).

    Parameters
    ----------
    Q_red, K_red : array_like, shape (..., n, k)
        Query and key factors in one basis (the survey's reduced factors have
        ``k = 2n``; the raw ``W_Q, W_K`` with ``k = N`` also work).
    d : float
        Displacement, query position minus key position.
    rope_info : ModelInfo, mapping or RopeSettings
        See :func:`rope_settings`.

    Returns
    -------
    ndarray, shape (..., k, k)

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.rope import relative_form
    >>> Q = np.eye(2); K = np.eye(2)      # one rotary plane, theta_0 = 1
    >>> np.round(relative_form(Q, K, 1, {"rope_base": 10.0}), 6).tolist()
    [[0.540302, -0.841471], [0.841471, 0.540302]]
    """
    Q = np.asarray(Q_red, dtype=np.float64)
    K = np.asarray(K_red, dtype=np.float64)
    if Q.ndim < 2 or Q.shape != K.shape:
        raise ShapeError(f"Q_red and K_red must have equal shapes (..., n, k); got "
                         f"{Q.shape} and {K.shape}")
    s = rope_settings(rope_info)
    return np.matmul(np.swapaxes(K, -1, -2), _rotate(Q, float(d), s))


def rotate_positions(
    vectors: ArrayLike, positions: ArrayLike, rope_info: Any
) -> NDArray[np.float64]:
    """Rotate per-position head vectors as rotary embeddings do: ``v_m -> Rot(m) v_m``.

    The same planes, frequencies and sign as :func:`relative_form` (whose ``Rot(d)`` acts
    on the query factor), so that ``<Rot(j) k, Rot(i) q> = k^T Rot(i - j) q``: the score
    of a query at position ``i`` on a key at ``j`` is the relative form at ``d = i - j``.

    Parameters
    ----------
    vectors : array_like, shape (..., S, n)
        One head vector (last axis, the head's n coordinates) per position.
    positions : array_like, shape (S,)
        The position of each of the S vectors.
    rope_info : ModelInfo, mapping or RopeSettings
        See :func:`rope_settings`.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.rope import relative_form, rotate_positions
    >>> rng = np.random.default_rng(1)
    >>> q, k = rng.standard_normal((2, 5, 4))            # 5 positions, head dim 4
    >>> info = {"rope_base": 100.0}
    >>> rq, rk = rotate_positions(q, np.arange(5), info), rotate_positions(k, np.arange(5), info)
    >>> lhs = rk[1] @ rq[4]                               # query at 4, key at 1: d = 3
    >>> rhs = relative_form(q[4][:, None], k[1][:, None], 3, info)[0, 0]   # k^T Rot(3) q
    >>> bool(np.isclose(lhs, rhs))
    True
    """
    V = np.asarray(vectors, dtype=np.float64)
    pos = np.asarray(positions, dtype=np.float64)
    if V.ndim < 2 or pos.shape != (V.shape[-2],):
        raise ShapeError(f"vectors must have shape (..., S, n) and positions shape (S,); got "
                         f"{V.shape} and {pos.shape}")
    s = rope_settings(rope_info)
    freqs, i1, i2 = _planes(V.shape[-1], s)
    ang = pos[:, None] * freqs[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    out = np.array(V, dtype=np.float64, copy=True)
    x1, x2 = V[..., i1], V[..., i2]
    out[..., i1] = cos * x1 - sin * x2
    out[..., i2] = sin * x1 + cos * x2
    return out

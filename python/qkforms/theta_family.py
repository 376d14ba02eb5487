"""The rank-one family Theta (Proposition 4) and the Theorem 5 limit.

``Theta = {(a, b, c, d) in Delta_3 : a = b, cd = 0}`` is the set of profiles of
rank-one matrices (for N >= 2), parametrized by ``t = tr(L)/|L|`` in [-1, 1]:
``theta(t) = ((1 - t^2)/2, (1 - t^2)/2, t_+^2, t_-^2)``. Geometrically it is the union
of two segments, from the vertex ``c = 1`` to ``M = (1/2, 1/2, 0, 0)`` and from ``M`` to
the vertex ``d = 1``; :func:`theta_distance` projects onto them in closed form.

Two rho-parametrizations of Theta are used by the survey and are kept apart
(``docs/theory.md`` §7.1; the paper uses both): :func:`theta_p` (the point of Theta over
the Theorem 5 limit) and :func:`theta_L` (the exact profile of a form with ``a = b`` and
proportional lobes).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms._validate import as_float_array
from qkforms.arithmetic import FLOAT64, Arithmetic
from qkforms.errors import ParameterError, format_value
from qkforms.profile_map import Profile, profile_points

__all__ = [
    "THETA_SEGMENTS",
    "accumulation_limit",
    "theta",
    "theta_distance",
    "segment_projections",
    "theta_L",
    "theta_distance_of_point",
    "theta_p",
    "theta_sq_distance_of_point",
    "theta_projection",
]

_VC = np.array([0.0, 0.0, 1.0, 0.0])
_VD = np.array([0.0, 0.0, 0.0, 1.0])
_M = np.array([0.5, 0.5, 0.0, 0.0])
#: The two segments whose union is Theta, as (start, end) points of R^4.
THETA_SEGMENTS: tuple[tuple[NDArray[np.float64], NDArray[np.float64]], ...] = (
    (_VC, _M),
    (_M, _VD),
)


def _profile_of(arr: NDArray[np.float64]) -> Profile:
    if arr.ndim == 1:
        return Profile(*(float(v) for v in arr))
    return Profile(*(arr[..., i] for i in range(4)))


def theta(t: ArrayLike) -> Profile:
    """Return the point ``((1-t^2)/2, (1-t^2)/2, t_+^2, t_-^2)`` of Theta, ``t`` in [-1, 1].

    This is the profile of every rank-one ``L`` with ``tr(L)/|L| = t`` (Proposition 4);
    the map is a bijection from [-1, 1] onto Theta.

    Examples
    --------
    >>> from qkforms import theta
    >>> theta(0.0)
    Profile(a=0.5, b=0.5, c=0.0, d=0.0)
    >>> theta(1.0), theta(-1.0)
    (Profile(a=0.0, b=0.0, c=1.0, d=0.0), Profile(a=0.0, b=0.0, c=0.0, d=1.0))
    """
    tt = as_float_array(t, "t", finite=False)
    if np.any(np.abs(tt) > 1) or np.any(np.isnan(tt)):
        raise ParameterError(f"theta(t) needs -1 <= t <= 1, got t = {format_value(t)}")
    h = (1.0 - tt**2) / 2.0
    return _profile_of(np.stack([h, h, np.maximum(tt, 0.0) ** 2, np.maximum(-tt, 0.0) ** 2], -1))


def _rho_family(rho: ArrayLike, ab_weight: float, denom: str) -> Profile:
    r = as_float_array(rho, "rho", finite=False)
    if np.any(r < 0) or np.any(np.isnan(r)):
        raise ParameterError(
            f"rho must be >= 0 (rho = inf is allowed), got rho = {format_value(rho)}")
    inf = np.isinf(r)
    rr = np.where(inf, 0.0, r)
    den = 1.0 + rr**2 if denom == "p" else (1.0 + rr) ** 2
    pts = np.stack(
        [
            ab_weight * rr / den,
            ab_weight * rr / den,
            np.maximum(1.0 - rr, 0.0) ** 2 / den,
            np.maximum(rr - 1.0, 0.0) ** 2 / den,
        ],
        -1,
    )
    pts = np.where(inf[..., None], _VD, pts)
    return _profile_of(pts)


def theta_p(rho: ArrayLike) -> Profile:
    """Return ``(rho, rho, (1-rho)_+^2, (rho-1)_+^2)/(1+rho^2)``, a point of Theta.

    It is ``theta(t)`` at ``t = (1 - rho)/sqrt(1 + rho^2)``: the point of Theta whose
    image under ``p(a,b,c,d) = (0, a+b, c, d)`` is the Theorem 5 limit. ``rho = inf``
    gives the vertex ``d = 1``.

    Examples
    --------
    >>> from qkforms import theta_p
    >>> theta_p(1.0)
    Profile(a=0.5, b=0.5, c=0.0, d=0.0)
    >>> [round(x, 6) for x in theta_p(0.5)]
    [0.4, 0.4, 0.2, 0.0]
    """
    return _rho_family(rho, 1.0, "p")


def theta_L(rho: ArrayLike) -> Profile:  # noqa: N802 (the paper's name)
    """Return ``(2rho, 2rho, (1-rho)_+^2, (rho-1)_+^2)/(1+rho)^2``, a point of Theta.

    The exact profile of any ``L`` with ``a = b`` and proportional lobes
    ``beta = rho alpha`` (then ``|L|^2 = (1 + rho)^2 |alpha|^2``); a per-head
    diagnostic, not a conclusion of Theorem 5. It is ``theta(t)`` at
    ``t = (1 - rho)/(1 + rho)``.

    Examples
    --------
    >>> from qkforms import theta_L
    >>> [round(x, 6) for x in theta_L(0.5)]
    [0.444444, 0.444444, 0.111111, 0.0]
    """
    return _rho_family(rho, 2.0, "L")


def accumulation_limit(rho: ArrayLike) -> Profile:
    """Return the Theorem 5 limit ``(0, 2rho, (1-rho)_+^2, (rho-1)_+^2)/(1 + rho^2)``.

    The almost-sure limit of the profiles of symmetric matrices with proportional
    random lobes in ratio ``rho = u/v``; it lies on the edges b-c (rho <= 1) and
    b-d (rho >= 1) of the face ``a = 0``, i.e. in ``p(Theta)``.

    Examples
    --------
    >>> from qkforms import accumulation_limit
    >>> [round(x, 6) for x in accumulation_limit(0.5)]
    [0.0, 0.8, 0.2, 0.0]
    >>> [round(x, 6) for x in accumulation_limit(2.0)]
    [0.0, 0.8, 0.0, 0.2]
    """
    q = _rho_family(rho, 1.0, "p")
    return Profile(q.a * 0.0, q.a + q.b, q.c, q.d)


def _norm(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Euclidean norm over the last axis without overflow (``hypot``): a finite point
    far from the simplex has a finite distance, not ``inf``."""
    return np.hypot.reduce(v, axis=-1)


def segment_projections(x: Any, ops: Arithmetic = FLOAT64) -> list[tuple[Any, Any, Any]]:
    """Clamped orthogonal projections of points onto the two segments of Theta.

    For each segment ``[start, end]`` of :data:`THETA_SEGMENTS`, with
    ``v = end - start``: ``s = clip(<x - start, v>/<v, v>, 0, 1)`` (the parameter of the
    nearest point of the segment), ``q = start + s v`` and the squared distance
    ``|x - q|^2``. The one definition of the distance to Theta, generic over the
    number type (:mod:`qkforms.arithmetic`): float64 for :func:`theta_projection`,
    balls for the certified enclosures (every operation is an inclusion-monotone
    extension, so the ball result contains the distance of every point of the box).

    Parameters
    ----------
    x : array, shape (..., 4)
        Points (float64, or an object array of balls).

    Returns
    -------
    list of (s, q, squared distance), one per segment

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.theta_family import segment_projections
    >>> [round(float(d), 12) for _, _, d in segment_projections(np.array([0.0, 1.0, 0.0, 0.0]))]
    [0.5, 0.5]
    """
    out = []
    for start, end in THETA_SEGMENTS:
        v = end - start
        s = np.asarray(ops.clip(((x - start) @ v) / (v @ v), 0.0, 1.0))
        q = start + s[..., None] * v
        out.append((s, q, ops.total(ops.square(x - q))))
    return out


def theta_sq_distance_of_point(x: Any, ops: Arithmetic = FLOAT64) -> Any:
    """Squared distance from points ``x`` (last axis of length 4) to Theta; generic.

    ``min_k |x - q_k|^2`` over the two segment projections (:func:`segment_projections`);
    continuously differentiable in ``x`` (the squared distance to a closed convex set is),
    which the first-order storage-precision bands use (:mod:`qkforms.bands`).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.theta_family import theta_sq_distance_of_point
    >>> round(float(theta_sq_distance_of_point(np.array([0.0, 1.0, 0.0, 0.0]))), 12)
    0.5
    """
    (_, _, d0), (_, _, d1) = segment_projections(x, ops)
    return ops.minimum(d0, d1)


def theta_distance_of_point(x: Any, ops: Arithmetic = FLOAT64) -> Any:
    """Distance from points ``x`` (last axis of length 4) to Theta; generic, no validation.

    ``sqrt(min_k |x - q_k|^2)`` over the two segment projections
    (:func:`segment_projections`, :func:`theta_sq_distance_of_point`).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.theta_family import theta_distance_of_point
    >>> round(float(theta_distance_of_point(np.array([0.0, 1.0, 0.0, 0.0]))), 12)
    0.707106781187
    """
    return ops.sqrt(theta_sq_distance_of_point(x, ops))


def theta_projection(p: Profile | ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return the nearest point of Theta to ``p`` and its parameter ``t``.

    Parameters
    ----------
    p : Profile or array_like, shape (..., 4)
        Any point(s) of R^4 (not necessarily in the simplex).

    Returns
    -------
    nearest : ndarray, shape (..., 4)
    t : ndarray, shape (...)
        With ``theta(t) == nearest``.

    Examples
    --------
    >>> from qkforms.theta_family import theta_projection
    >>> q, t = theta_projection([0.4, 0.4, 0.2, 0.0])
    >>> q.round(12).tolist(), round(float(t), 12)
    ([0.4, 0.4, 0.2, 0.0], 0.4472135955)
    """
    x = profile_points(p)
    with np.errstate(over="ignore"):
        (s0, q0, _), (s1, q1, _) = segment_projections(x)
    d0, d1 = _norm(x - q0), _norm(x - q1)  # hypot: the squared distance overflows ~1e154
    # parameter: on segment 0, c = 1 - s (t = sqrt(c) >= 0); on segment 1, d = s
    # (t = -sqrt(d) <= 0); the first segment wins a tie
    take = d1 < d0
    best: NDArray[np.float64] = np.where(take[..., None], q1, q0)
    best_t: NDArray[np.float64] = np.where(take, -np.sqrt(s1), np.sqrt(1.0 - s0))
    return best, best_t


def theta_distance(p: Profile | ArrayLike) -> float | NDArray[np.float64]:
    """Return the Euclidean distance from a profile point to Theta (closed form).

    Theta is the union of two segments (see module docstring), so the distance is
    the smaller of two clamped orthogonal projections; no grid search.

    Parameters
    ----------
    p : Profile or array_like, shape (..., 4)

    Examples
    --------
    >>> from qkforms import theta, theta_distance
    >>> theta_distance(theta(0.3)) < 1e-15
    True
    >>> round(theta_distance([0.0, 1.0, 0.0, 0.0]), 12)  # vertex b = 1 to M
    0.707106781187
    """
    x = profile_points(p)
    with np.errstate(over="ignore"):
        dist = np.asarray(theta_distance_of_point(x), dtype=np.float64)
        over = ~np.isfinite(dist)
        if np.any(over):  # |x - q|^2 overflowed for a huge finite point: measure by hypot
            d0, d1 = (_norm(x - q) for _, q, _ in segment_projections(x))
            dist = np.where(over, np.minimum(d0, d1), dist)
    return float(dist) if np.ndim(dist) == 0 else dist

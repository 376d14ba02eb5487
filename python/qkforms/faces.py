"""Faces and vertices of the 3-simplex (Theorem 4) and the survey's spectral types.

Theorem 4 classifies the fibers of the profile map over the faces of Delta_3:

* ``a = 0``: L symmetric; ``a = 1``: L antisymmetric;
* ``b = 0``: S semidefinite; ``b = 1``: L symmetric with spectrum symmetric about 0;
* ``d = 0``: alpha >= beta, i.e. S = H + P (H with symmetric spectrum, P PSD);
  ``d = 1``: L symmetric negative semidefinite;
* ``c = 0``: beta >= alpha, i.e. S = H - P; ``c = 1``: L symmetric PSD.

Hence no profile has ``b = 0`` with ``c > 0`` and ``d > 0``: the open c-d edge (and
the open 2-face ``{b = 0; a, c, d > 0}``) has empty fiber.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.errors import ParameterError, ShapeError, ZeroFormError, format_value
from qkforms.profile_map import Profile, profile_points
from qkforms.tolerances import SPECTRAL_TYPE_RADIUS

__all__ = [
    "FaceInfo",
    "classify_profile",
    "spectral_type",
    "spectral_type_imbalance",
    "SPECTRAL_TYPE_RULES",
]

_NAMES = ("a", "b", "c", "d")
_ZERO_MEANING = {
    "a": "L is symmetric",
    "b": "S is semidefinite (positive or negative)",
    "c": "beta_j >= alpha_j for all j, i.e. S = H - P (H spectrum symmetric about 0, P PSD)",
    "d": "alpha_j >= beta_j for all j, i.e. S = H + P (H spectrum symmetric about 0, P PSD)",
}
_VERTEX_MEANING = {
    "a": "L is antisymmetric",
    "b": "L is symmetric and its spectrum is symmetric about 0 (alpha = beta)",
    "c": "L is symmetric positive semidefinite",
    "d": "L is symmetric negative semidefinite",
}

#: Names of the three spectral-type rules of docs/theory.md §12.5 (kept distinct).
SPECTRAL_TYPE_RULES = ("radius", "imbalance", "kmeans")


@dataclass(frozen=True)
class FaceInfo:
    """Where a profile point lies in the simplex, and what Theorem 4 says of its fiber.

    Attributes
    ----------
    zero : tuple of str
        Coordinates that vanish (within ``tol``): the faces containing the point.
    vertex : str or None
        ``"a"``, ``"b"``, ``"c"`` or ``"d"`` if the point is that vertex.
    dimension : int
        Dimension of the smallest face containing the point (0 = vertex, 3 = interior).
    attainable : bool
        False exactly on the empty fibers: ``b = 0`` with ``c > 0`` and ``d > 0``.
    facts : tuple of str
        The Theorem 4 characterizations that apply to every ``L`` in the fiber.
    on_theta : bool
        Whether the point lies on Theta (``a = b``, ``cd = 0``), within ``tol``.
    """

    zero: tuple[str, ...]
    vertex: str | None
    dimension: int
    attainable: bool
    facts: tuple[str, ...]
    on_theta: bool


def _coords(p: Profile | ArrayLike) -> NDArray[np.float64]:
    arr = profile_points(p)
    if arr.shape != (4,):
        raise ShapeError(f"classify_profile takes one point (4 coordinates), got shape "
                         f"{arr.shape}")
    return arr


def classify_profile(p: Profile | ArrayLike, *, tol: float = 0.0) -> FaceInfo:
    """Locate a profile point in the faces of Delta_3 and state its fiber (Theorem 4).

    Parameters
    ----------
    p : Profile or sequence of 4 floats
        A point of the simplex.
    tol : float
        Coordinates with ``|x| <= tol`` count as zero, ``|x - 1| <= tol`` as one.

    Examples
    --------
    >>> from qkforms import classify_profile
    >>> info = classify_profile((0.0, 0.0, 1.0, 0.0))
    >>> info.vertex, info.facts[-1]
    ('c', 'L is symmetric positive semidefinite')
    >>> classify_profile((0.0, 0.0, 0.5, 0.5)).attainable   # open c-d edge: empty fiber
    False
    >>> classify_profile((0.25, 0.25, 0.5, 0.0)).on_theta
    True
    """
    x = _coords(p)
    if np.any(x < -tol) or abs(float(x.sum()) - 1.0) > max(tol, 1e-12) * 4:
        raise ParameterError(f"{format_value(tuple(x))} is not a point of the 3-simplex "
                             f"(within tol={format_value(tol)})")
    zero = tuple(n for n, v in zip(_NAMES, x, strict=True) if abs(v) <= tol)
    vertex = next((n for n, v in zip(_NAMES, x, strict=True) if abs(v - 1.0) <= tol), None)
    facts = [_ZERO_MEANING[n] for n in zero]
    if vertex is not None:
        facts.append(_VERTEX_MEANING[vertex])
    b_zero = "b" in zero
    attainable = not (b_zero and x[2] > tol and x[3] > tol)
    on_theta = abs(x[0] - x[1]) <= tol and x[2] * x[3] <= tol
    return FaceInfo(
        zero=zero,
        vertex=vertex,
        dimension=3 - len(zero),
        attainable=bool(attainable),
        facts=tuple(facts),
        on_theta=bool(on_theta),
    )


def spectral_type(
    p: Profile | ArrayLike, *, radius: float = SPECTRAL_TYPE_RADIUS
) -> str | NDArray[np.str_]:
    """Spectral type by the ``radius`` rule of ``docs/theory.md`` §12.5.

    With the symmetric profile ``(b_S, c_S, d_S)``: Type ``"II"`` if
    ``c_S + d_S <= radius``; otherwise ``"I+"`` if ``c > d`` and ``"I-"`` if
    ``c <= d`` (ties go to I-). Only the parity (sign of ``c - d``) is canonical.

    Parameters
    ----------
    p : Profile or array_like, shape (..., 4)
    radius : float
        Neighbourhood ``{1 - b_S <= radius}`` of the vertex ``b = 1`` of Delta.

    Examples
    --------
    >>> from qkforms import spectral_type
    >>> spectral_type((0.5, 0.49, 0.01, 0.0)), spectral_type((0.5, 0.3, 0.15, 0.05))
    ('II', 'I+')
    >>> spectral_type([[0.5, 0.3, 0.05, 0.15], [0.0, 0.5, 0.25, 0.25]]).tolist()
    ['I-', 'I-']
    """
    arr = profile_points(p, finite=False)
    b, c, d = arr[..., 1], arr[..., 2], arr[..., 3]
    s = b + c + d
    if np.any(s <= 0):
        raise ZeroFormError("spectral type needs a nonzero symmetric part (a < 1)")
    out = np.where((c + d) / s <= radius, "II", np.where(c > d, "I+", "I-"))
    return str(out) if out.ndim == 0 else out


def spectral_type_imbalance(
    p: Profile | ArrayLike, *, threshold: float = 0.2, min_mass: float = 0.01
) -> str | NDArray[np.str_]:
    """Spectral type by the ``imbalance`` rule of ``docs/theory.md`` §12.5 (interactive plots).

    ``imb = (c - d)/(c + d)`` on the full profile: ``"I+"`` if ``imb > threshold`` and
    ``c + d > min_mass``; ``"I-"`` if ``imb < -threshold`` and ``c + d > min_mass``;
    otherwise ``"II"``.

    Examples
    --------
    >>> from qkforms.faces import spectral_type_imbalance
    >>> spectral_type_imbalance((0.5, 0.3, 0.15, 0.05)), spectral_type_imbalance((0.5, 0.5, 0, 0))
    ('I+', 'II')
    """
    arr = profile_points(p, finite=False)
    c, d = arr[..., 2], arr[..., 3]
    mass = c + d
    with np.errstate(divide="ignore", invalid="ignore"):
        imb = np.where(mass > 0, (c - d) / np.where(mass > 0, mass, 1.0), 0.0)
    big = mass > min_mass
    out = np.where(big & (imb > threshold), "I+", np.where(big & (imb < -threshold), "I-", "II"))
    return str(out) if out.ndim == 0 else out

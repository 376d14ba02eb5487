"""Drawing coordinates for the profile simplex Δ₃ and its face Δ = {a = 0}.

The 3-simplex is drawn as a regular tetrahedron with vertices ``A`` (a = 1,
antisymmetric), ``B`` (b = 1), ``C`` (c = 1, PSD), ``D`` (d = 1, NSD); a profile
``(a, b, c, d)`` goes to ``aA + bB + cC + dD``. Θ (Proposition 4) is the union of the
segments C–M and M–D, ``M = (½, ½, 0, 0)`` the midpoint of the edge A–B. The open edge
C–D (a = b = 0) has empty fiber (Theorem 4) and is drawn dashed.

Examples
--------
>>> import numpy as np
>>> from qkforms.report.geometry import VERTICES, to_xyz
>>> bool(np.allclose(to_xyz([[0.0, 0.0, 1.0, 0.0]]), VERTICES[2]))
True
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms import accumulation_limit, theta

__all__ = [
    "EDGES",
    "EMPTY_EDGE",
    "VERTEX_LABELS",
    "VERTICES",
    "limit_curve",
    "theta_polyline",
    "to_xyz",
]

#: vertices A, B, C, D of a regular tetrahedron (edge length 2 sqrt 2)
VERTICES: NDArray[np.float64] = np.array(
    [[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]]
)
VERTEX_LABELS: tuple[str, ...] = (
    "a = 1 (antisymmetric)",
    "b = 1 (α = β)",
    "c = 1 (PSD)",
    "d = 1 (NSD)",
)
#: the five attained edges (vertex index pairs) and the empty open edge c–d
EDGES: tuple[tuple[int, int], ...] = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3))
EMPTY_EDGE: tuple[int, int] = (2, 3)


def to_xyz(profiles: ArrayLike) -> NDArray[np.float64]:
    """3-D drawing coordinates of profiles ``(..., 4)``.

    Examples
    --------
    >>> from qkforms.report.geometry import to_xyz
    >>> to_xyz([0.25, 0.25, 0.25, 0.25]).tolist()
    [0.0, 0.0, 0.0]
    """
    p = np.asarray(profiles, dtype=np.float64)
    return p @ VERTICES


def theta_polyline(points_per_segment: int = 2) -> NDArray[np.float64]:
    """Profiles along Θ: C → M → D (rows of ``(a, b, c, d)``).

    Examples
    --------
    >>> from qkforms.report.geometry import theta_polyline
    >>> theta_polyline().tolist()
    [[0.0, 0.0, 1.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    """
    t = np.concatenate([np.linspace(1.0, 0.0, points_per_segment),
                        np.linspace(0.0, -1.0, points_per_segment)[1:]])
    p = theta(t)
    return np.stack([np.asarray(v, dtype=np.float64) for v in p], axis=-1)


def limit_curve(points: int = 201) -> NDArray[np.float64]:
    """Theorem 5 limit ``(b, c, d)`` for ρ from 0 to ∞ (rows), via the core.

    The curve runs along the edge d = 0 from c = 1 (ρ → 0) to b = 1 (ρ = 1), then along
    c = 0 to d = 1 (ρ → ∞).

    Examples
    --------
    >>> from qkforms.report.geometry import limit_curve
    >>> curve = limit_curve(5)
    >>> curve[0].tolist(), curve[2].round(12).tolist(), curve[-1].tolist()
    ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    """
    s = np.linspace(0.0, 1.0, points)
    with np.errstate(over="ignore"):
        rho = np.where(s < 1.0, np.tan(0.5 * np.pi * np.minimum(s, 1.0 - 1e-12)), np.inf)
    rho[0] = 0.0
    finite = np.isfinite(rho)
    out = np.zeros((points, 3))
    lim = accumulation_limit(rho[finite])
    out[finite] = np.stack([np.asarray(v, dtype=np.float64) for v in lim], axis=-1)[:, 1:]
    out[~finite] = [0.0, 0.0, 1.0]
    return out

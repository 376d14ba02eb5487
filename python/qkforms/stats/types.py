"""Spectral types I+ / II / I− by three distinct, named rules (``docs/theory.md`` §12.5).

* ``radius`` — on the symmetric profile: II if ``c_S + d_S <= r`` (default
  ``r = 0.02``), else I+ if ``c > d``, else I− (ties → I−); core
  :func:`qkforms.spectral_type`.
* ``imbalance`` — the interactive-plot rule on the full profile:
  ``imb = (c − d)/(c + d)``; I+ if ``imb > 0.2`` and ``c + d > 0.01``, I− if
  ``imb < −0.2`` and ``c + d > 0.01``, else II; core
  :func:`qkforms.faces.spectral_type_imbalance`.
* ``kmeans`` — the earlier paper's rule: the rows of the matrix of sorted,
  unit-normalized S-spectra (2n entries per head) are clustered by k-means with
  k = 3 (k-means++ initialization, seed 0, Lloyd iterations to convergence), and
  the clusters are relabelled by decreasing mean signed asymmetry
  ``Σλ₊² − Σλ₋²`` → I+, II, I−. :func:`best_k_silhouette` reports the k in 2..6 with
  the largest mean silhouette (the earlier paper's choice of k).

Only the parity (the sign of ``c − d``) is canonical.

Examples
--------
>>> import numpy as np
>>> from qkforms.stats.types import kmeans
>>> x = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
>>> labels, centers = kmeans(x, 2, seed=0)
>>> bool(labels[0] == labels[1] != labels[2] == labels[3])
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms import spectral_type
from qkforms.errors import ParameterError
from qkforms.faces import spectral_type_imbalance
from qkforms.tolerances import SPECTRAL_TYPE_RADIUS

__all__ = [
    "RADII",
    "RULES",
    "TYPES",
    "best_k_silhouette",
    "kmeans",
    "kmeans_types",
    "normalized_spectra",
    "radius_types",
    "imbalance_types",
    "silhouette",
]

TYPES: tuple[str, ...] = ("I+", "II", "I-")
RULES: tuple[str, ...] = ("radius", "imbalance", "kmeans")
RADII: tuple[float, ...] = (0.01, 0.02, 0.03, 0.05, 0.10)


def radius_types(profiles: ArrayLike, radius: float = SPECTRAL_TYPE_RADIUS) -> NDArray[np.str_]:
    """The ``radius`` rule on full profiles ``(..., 4)`` (core ``spectral_type``).

    Examples
    --------
    >>> from qkforms.stats.types import radius_types
    >>> radius_types([[0.5, 0.49, 0.01, 0.0], [0.5, 0.3, 0.05, 0.15]]).tolist()
    ['II', 'I-']
    """
    p = np.atleast_2d(np.asarray(profiles, dtype=np.float64))
    return np.asarray(spectral_type(p, radius=radius))


def imbalance_types(profiles: ArrayLike) -> NDArray[np.str_]:
    """The ``imbalance`` rule on full profiles ``(..., 4)`` (core).

    Examples
    --------
    >>> from qkforms.stats.types import imbalance_types
    >>> imbalance_types([[0.5, 0.3, 0.15, 0.05]]).tolist()
    ['I+']
    """
    p = np.atleast_2d(np.asarray(profiles, dtype=np.float64))
    return np.asarray(spectral_type_imbalance(p))


def normalized_spectra(eig_S: Sequence[Any]) -> NDArray[np.float64]:
    """Rows of decreasing S-spectra scaled to unit norm; ragged rows are padded with
    zeros between the positive and the negative eigenvalues.

    Examples
    --------
    >>> from qkforms.stats.types import normalized_spectra
    >>> normalized_spectra([[3.0, -4.0], [1.0, 0.0, -1.0]]).round(3).tolist()
    [[0.6, 0.0, -0.8], [0.707, 0.0, -0.707]]
    """
    rows = [np.sort(np.asarray(e, dtype=np.float64).ravel())[::-1] for e in eig_S]
    width = max((r.size for r in rows), default=0)
    out = np.zeros((len(rows), width))
    for i, r in enumerate(rows):
        pos = r[r > 0]
        neg = r[r < 0]
        out[i, : pos.size] = pos
        if neg.size:
            out[i, width - neg.size :] = neg
        norm = np.linalg.norm(r)
        if norm > 0:
            out[i] /= norm
    return out


def _sq_dist(x: NDArray[np.float64], c: NDArray[np.float64]) -> NDArray[np.float64]:
    d = (x * x).sum(1)[:, None] - 2.0 * x @ c.T + (c * c).sum(1)[None, :]
    return np.maximum(d, 0.0)


def kmeans(
    x: ArrayLike, k: int, *, seed: int = 0, max_iter: int = 300
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """k-means (Lloyd) with k-means++ initialization from ``numpy.random.default_rng(seed)``.

    Returns the labels and the centres. Deterministic for a given seed.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.types import kmeans
    >>> labels, _ = kmeans(np.array([[0.0], [0.2], [9.0], [9.4]]), 2)
    >>> labels.tolist() in ([0, 0, 1, 1], [1, 1, 0, 0])
    True
    """
    data = np.asarray(x, dtype=np.float64)
    m = data.shape[0]
    if m < k:
        raise ParameterError(f"k-means needs at least k = {k} rows, got {m}")
    rng = np.random.default_rng(seed)
    centers = np.empty((k, data.shape[1]))
    centers[0] = data[rng.integers(m)]
    closest = _sq_dist(data, centers[:1])[:, 0]
    for j in range(1, k):
        total = closest.sum()
        if total <= 0:
            idx = int(rng.integers(m))
        else:
            idx = int(np.searchsorted(np.cumsum(closest), rng.random() * total, side="right"))
            idx = min(idx, m - 1)
        centers[j] = data[idx]
        closest = np.minimum(closest, _sq_dist(data, centers[j : j + 1])[:, 0])
    labels = np.argmin(_sq_dist(data, centers), axis=1)
    for _ in range(max_iter):
        for j in range(k):
            members = data[labels == j]
            if len(members):
                centers[j] = members.mean(axis=0)
        new = np.argmin(_sq_dist(data, centers), axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
    return labels.astype(np.int64), centers


def _asymmetry(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Σλ₊² − Σλ₋²`` per row."""
    return np.sum(np.where(rows > 0, rows**2, 0.0), axis=1) - np.sum(
        np.where(rows < 0, rows**2, 0.0), axis=1
    )


def kmeans_types(eig_S: Sequence[Any], *, seed: int = 0) -> NDArray[np.str_]:
    """The ``kmeans`` rule: k = 3 clusters relabelled I+, II, I− by decreasing asymmetry.

    Examples
    --------
    >>> from qkforms.stats.types import kmeans_types
    >>> spectra = [[3, 1, -1], [3.1, 1, -1], [1, -1, -1.01], [1, -1.02, -1], [2, -2, 0],
    ...            [2, -2.01, 0]]
    >>> kmeans_types(spectra).tolist()
    ['I+', 'I+', 'I-', 'I-', 'II', 'II']
    """
    rows = normalized_spectra(eig_S)
    if rows.shape[0] < 3:
        return np.asarray(["II"] * rows.shape[0])
    labels, _ = kmeans(rows, 3, seed=seed)
    asym = _asymmetry(rows)
    means = np.asarray([asym[labels == j].mean() if np.any(labels == j) else -np.inf
                        for j in range(3)])
    order = np.argsort(-means, kind="stable")  # cluster ids by decreasing mean asymmetry
    names = np.empty(3, dtype=object)
    for rank, cluster in enumerate(order):
        names[cluster] = TYPES[rank]
    return np.asarray(names[labels].tolist())


def silhouette(x: ArrayLike, labels: ArrayLike) -> float:
    """Mean silhouette coefficient (Euclidean); singletons score 0.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.stats.types import silhouette
    >>> round(silhouette(np.array([[0.0], [1.0], [10.0], [11.0]]), [0, 0, 1, 1]), 4)
    0.8997
    """
    data = np.asarray(x, dtype=np.float64)
    lab = np.asarray(labels)
    dist = np.sqrt(_sq_dist(data, data))
    uniq = np.unique(lab)
    if uniq.size < 2:
        return float("nan")
    mean_to = np.stack([dist[:, lab == u].mean(axis=1) for u in uniq], axis=1)
    sizes = np.asarray([(lab == u).sum() for u in uniq])
    own = np.searchsorted(uniq, lab)
    own_size = sizes[own]
    a = np.where(own_size > 1, mean_to[np.arange(len(lab)), own] * own_size / np.maximum(
        own_size - 1, 1), 0.0)
    other = mean_to.copy()
    other[np.arange(len(lab)), own] = np.inf
    b = other.min(axis=1)
    s = np.where(own_size > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-300), 0.0)
    return float(s.mean())


def best_k_silhouette(eig_S: Sequence[Any], *, ks: Sequence[int] = (2, 3, 4, 5, 6),
                      seed: int = 0) -> int:
    """The k in ``ks`` with the largest mean silhouette of k-means (seed 0).

    Examples
    --------
    >>> from qkforms.stats.types import best_k_silhouette
    >>> best_k_silhouette([[3, -1], [3.1, -1], [1, -3], [1, -3.1]], ks=(2, 3))
    2
    """
    rows = normalized_spectra(eig_S)
    best, best_s = 0, -np.inf
    for k in ks:
        if rows.shape[0] <= k:
            continue
        labels, _ = kmeans(rows, k, seed=seed)
        s = silhouette(rows, labels)
        if np.isfinite(s) and s > best_s:
            best, best_s = k, s
    return best

"""Pairing score, lobe ratio and the Lemma 2 bound (THEORY §3, §7.3).

For symmetric ``S != 0`` with padded lobes ``alpha`` (positive eigenvalues) and
``beta`` (absolute values of the negative eigenvalues), the pairing score is
``P = 1 - |alpha - beta| / |S|``, the lobe ratio ``rho = |beta|/|alpha|``, and Lemma 2
bounds ``P <= 1 - |1 - rho|/sqrt(1 + rho^2)`` with equality iff ``beta = rho alpha``.
All functions take the eigenvalues of ``S`` (e.g. ``numpy.linalg.eigvalsh(S)``) and
accept stacks along leading axes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms._validate import as_float_array
from qkforms.errors import ZeroFormError
from qkforms.profile import lobes

__all__ = ["lobe_departure", "lobe_ratio", "pairing_bound", "pairing_gap", "pairing_score"]


def _scalar(x: NDArray[np.float64]) -> float | NDArray[np.float64]:
    return float(x) if np.ndim(x) == 0 else x


def _norms(eigvals: ArrayLike) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    alpha, beta = lobes(eigvals)
    na = np.sqrt(np.sum(alpha**2, axis=-1))
    nb = np.sqrt(np.sum(beta**2, axis=-1))
    return alpha, beta, na, nb


def pairing_score(eigvals: ArrayLike) -> float | NDArray[np.float64]:
    """Return ``P(S) = 1 - |alpha - beta|/|S|`` from the eigenvalues of ``S``.

    ``P`` lies in [0, 1] and equals 1 iff the spectrum is symmetric about 0.

    Raises
    ------
    ZeroFormError
        If ``S = 0``.

    Examples
    --------
    >>> from qkforms import pairing_score
    >>> pairing_score([2.0, -2.0, 1.0, -1.0])
    1.0
    >>> round(pairing_score([3.0, 4.0]), 12)  # PSD: P = 0
    0.0
    """
    alpha, beta, na, nb = _norms(eigvals)
    s = np.sqrt(na**2 + nb**2)
    if np.any(s == 0):
        raise ZeroFormError("pairing score of a zero symmetric part is undefined")
    return _scalar(1.0 - np.sqrt(np.sum((alpha - beta) ** 2, axis=-1)) / s)


def lobe_ratio(eigvals: ArrayLike) -> float | NDArray[np.float64]:
    """Return ``rho = |beta|/|alpha|`` (``inf`` when there is no positive eigenvalue).

    Raises
    ------
    ZeroFormError
        If ``S = 0``.

    Examples
    --------
    >>> from qkforms import lobe_ratio
    >>> lobe_ratio([2.0, -1.0])
    0.5
    >>> lobe_ratio([-1.0])
    inf
    """
    _, _, na, nb = _norms(eigvals)
    if np.any((na == 0) & (nb == 0)):
        raise ZeroFormError("lobe ratio of a zero symmetric part is undefined")
    with np.errstate(divide="ignore"):
        return _scalar(np.where(na > 0, nb / np.where(na > 0, na, 1.0), np.inf))


def pairing_bound(rho: ArrayLike) -> float | NDArray[np.float64]:
    """Return the Lemma 2 bound ``1 - |1 - rho|/sqrt(1 + rho^2)`` (``rho = inf`` gives 0).

    The bound is invariant under ``rho -> 1/rho`` and equals 1 only at ``rho = 1``.

    Examples
    --------
    >>> from qkforms import pairing_bound
    >>> pairing_bound(1.0), round(pairing_bound(0.5), 6), round(pairing_bound(2.0), 6)
    (1.0, 0.552786, 0.552786)
    """
    r = as_float_array(rho, "rho", finite=False)
    if np.any(r < 0) or np.any(np.isnan(r)):
        raise ValueError("rho must be >= 0")
    finite = np.isfinite(r)
    rr = np.where(finite, r, 0.0)
    val = np.where(finite, 1.0 - np.abs(1.0 - rr) / np.sqrt(1.0 + rr**2), 0.0)
    return _scalar(val)


def pairing_gap(eigvals: ArrayLike) -> float | NDArray[np.float64]:
    """Return ``pairing_bound(rho) - pairing_score`` (>= 0 by Lemma 2).

    Zero iff the lobes are proportional (``beta = rho alpha``).

    Examples
    --------
    >>> from qkforms.pairing import pairing_gap
    >>> round(pairing_gap([4.0, 2.0, -2.0, -1.0]), 12)   # beta = alpha/2
    0.0
    >>> pairing_gap([4.0, 2.0, -1.0, -2.0]) >= 0
    True
    """
    lam = as_float_array(eigvals, "eigvals", min_ndim=1)
    return _scalar(np.asarray(pairing_bound(lobe_ratio(lam))) - np.asarray(pairing_score(lam)))


def lobe_departure(eigvals: ArrayLike) -> float | NDArray[np.float64]:
    """Return ``|beta - rho alpha| / |beta|`` (0 iff proportional lobes; THEORY §7.3).

    Undefined (``nan``) when there is no negative eigenvalue.

    Examples
    --------
    >>> from qkforms.pairing import lobe_departure
    >>> lobe_departure([3.0, 1.0, -1.5, -0.5])
    0.0
    """
    alpha, beta, na, nb = _norms(eigvals)
    if np.any((na == 0) & (nb == 0)):
        raise ZeroFormError("lobe departure of a zero symmetric part is undefined")
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = nb / na
        dep = np.sqrt(np.sum((beta - rho[..., None] * alpha) ** 2, axis=-1)) / nb
        dep = np.where((na > 0) & (nb > 0), dep, np.nan)
    return _scalar(dep)

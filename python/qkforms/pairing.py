"""Pairing score, lobe ratio and the Lemma 2 bound (``docs/theory.md`` §4, §12.3).

For symmetric ``S != 0`` with padded lobes ``alpha`` (positive eigenvalues) and
``beta`` (absolute values of the negative eigenvalues), the pairing score is
``P = 1 - |alpha - beta| / |S|``, the lobe ratio ``rho = |beta|/|alpha|``, and Lemma 2
bounds ``P <= 1 - |1 - rho|/sqrt(1 + rho^2)`` with equality iff ``beta = rho alpha``.
The public float functions take the eigenvalues of ``S`` (e.g.
``numpy.linalg.eigvalsh(S)``) and accept stacks along leading axes; the formulas
themselves are written once on padded lobes (:func:`pairing_from_lobes`,
:func:`lobe_ratio_from_lobes`), generic over the number type
(:mod:`qkforms.arithmetic`), so that the certified enclosures of
:func:`qkforms.exact.enclose` evaluate the same expressions on balls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms._validate import as_float_array
from qkforms.arithmetic import FLOAT64, Arithmetic
from qkforms.errors import ParameterError, ZeroFormError, format_value
from qkforms.profile_map import lobes

__all__ = [
    "lobe_departure",
    "lobe_norms",
    "lobe_ratio",
    "lobe_ratio_from_lobes",
    "pairing_bound",
    "pairing_from_lobes",
    "pairing_gap",
    "pairing_score",
]


def _scalar(x: NDArray[np.float64]) -> float | NDArray[np.float64]:
    return float(x) if np.ndim(x) == 0 else x


def lobe_norms(alpha: Any, beta: Any, ops: Arithmetic = FLOAT64) -> tuple[Any, Any]:
    """``(|alpha|, |beta|)``, the Euclidean norms of the lobes; generic over the number type.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.pairing import lobe_norms
    >>> [float(v) for v in lobe_norms(np.array([3.0, 4.0]), np.array([0.0, 0.0]))]
    [5.0, 0.0]
    """
    return ops.sqrt(ops.total(ops.square(alpha))), ops.sqrt(ops.total(ops.square(beta)))


def pairing_from_lobes(alpha: Any, beta: Any, ops: Arithmetic = FLOAT64) -> Any:
    """``P = 1 - |alpha - beta| / |S|`` with ``|S|^2 = |alpha|^2 + |beta|^2``; generic.

    The one definition of the pairing score (:func:`pairing_score` for float64,
    :func:`qkforms.exact.enclose` for balls); no validation (``S != 0`` is the
    caller's business).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.pairing import pairing_from_lobes
    >>> float(pairing_from_lobes(np.array([2.0, 1.0]), np.array([2.0, 1.0])))
    1.0
    """
    na, nb = lobe_norms(alpha, beta, ops)
    s = ops.sqrt(ops.square(na) + ops.square(nb))
    return 1.0 - ops.sqrt(ops.total(ops.square(alpha - beta))) / s


def lobe_ratio_from_lobes(alpha: Any, beta: Any, ops: Arithmetic = FLOAT64) -> Any:
    """``rho = |beta| / |alpha|`` (``inf`` when ``alpha = 0``); generic over the number type.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.pairing import lobe_ratio_from_lobes
    >>> float(lobe_ratio_from_lobes(np.array([2.0, 0.0]), np.array([1.0, 0.0])))
    0.5
    """
    na, nb = lobe_norms(alpha, beta, ops)
    return ops.ratio_or_inf(nb, na)


def _norms(eigvals: ArrayLike) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    alpha, beta = lobes(eigvals)
    na, nb = lobe_norms(alpha, beta)
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
    if np.any(np.sqrt(na**2 + nb**2) == 0):
        raise ZeroFormError("pairing score of a zero symmetric part is undefined")
    return _scalar(pairing_from_lobes(alpha, beta))


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
    alpha, beta, na, nb = _norms(eigvals)
    if np.any((na == 0) & (nb == 0)):
        raise ZeroFormError("lobe ratio of a zero symmetric part is undefined")
    return _scalar(lobe_ratio_from_lobes(alpha, beta))


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
        raise ParameterError(f"rho must be >= 0, got rho = {format_value(rho)}")
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
    """Return ``|beta - rho alpha| / |beta|`` (0 iff proportional lobes; ``docs/theory.md`` §4).

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

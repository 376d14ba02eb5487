"""The profile map (Definition 6) and the symmetric profile (Lemma 4).

For ``L != 0`` with parts ``S, T``, let ``alpha`` be the positive eigenvalues of ``S``
and ``beta`` the absolute values of its negative eigenvalues, each sorted
decreasingly and zero-padded to a common length. Then

``a = |T|^2/|L|^2``, ``b = 2<alpha, beta>/|L|^2``,
``c = |(alpha - beta)_+|^2/|L|^2``, ``d = |(alpha - beta)_-|^2/|L|^2``,

a point of the 3-simplex. Pairing is index-wise after sorting; padding (any amount)
changes nothing; zero eigenvalues are in neither lobe. ``L = 0`` has no profile
(:class:`~qkforms.errors.ZeroFormError`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms._validate import as_float_array, as_square
from qkforms.arithmetic import FLOAT64, Arithmetic
from qkforms.errors import ShapeError, ZeroFormError
from qkforms.form_parts import parts

__all__ = [
    "Profile",
    "lobes",
    "lobes_from_sorted",
    "profile",
    "profile_from_eigenvalues",
    "profile_from_lobes",
    "symmetric_profile",
]


class Profile(NamedTuple):
    """A point ``(a, b, c, d)`` of the 3-simplex (floats, or arrays for a batch)."""

    a: float | NDArray[np.float64]
    b: float | NDArray[np.float64]
    c: float | NDArray[np.float64]
    d: float | NDArray[np.float64]


def lobes(eigvals: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return the padded lobes ``(alpha, beta)`` of a symmetric spectrum.

    ``alpha`` is the decreasing sort of ``max(lam, 0)`` and ``beta`` that of
    ``max(-lam, 0)`` over all given eigenvalues, so both have the length of the
    input (zero padding is automatic, as in the Lean encoding of ``docs/theory.md`` §5.1).

    Parameters
    ----------
    eigvals : array_like, shape (..., k)

    Examples
    --------
    >>> from qkforms import lobes
    >>> alpha, beta = lobes([-1.0, 3.0, -2.0, 0.5])
    >>> alpha.tolist(), beta.tolist()
    ([3.0, 0.5, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0])
    """
    lam = as_float_array(eigvals, "eigvals", min_ndim=1)
    alpha, beta = lobes_from_sorted(-np.sort(-lam, axis=-1))
    return alpha + 0.0, beta + 0.0  # + 0.0 turns -0.0 into 0.0


def lobes_from_sorted(lam_desc: Any, ops: Arithmetic = FLOAT64) -> tuple[Any, Any]:
    """Padded lobes from a spectrum already sorted decreasingly (last axis).

    ``alpha_k = max(lam_k, 0)`` and ``beta_k = max(-lam_{m+1-k}, 0)`` (``m`` the
    length): since ``max(., 0)`` is nondecreasing, these are the decreasing sorts of
    :func:`lobes`, with no sorting. Generic over the number type (``ops``, see
    :mod:`qkforms.arithmetic`): given enclosures of the *sorted* eigenvalues
    (``lam_k`` the k-th largest), the ball backend returns enclosures of the lobes.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.profile_map import lobes_from_sorted
    >>> alpha, beta = lobes_from_sorted(np.array([3.0, 0.5, -1.0, -2.0]))
    >>> alpha.tolist(), beta.tolist()
    ([3.0, 0.5, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0])
    """
    return ops.pos(lam_desc), ops.pos(-lam_desc[..., ::-1])


def profile_from_lobes(
    alpha: Any, beta: Any, norm_sq: Any, skew_sq: Any | None = None,
    ops: Arithmetic = FLOAT64,
) -> Profile:
    """Definition 6 from padded lobes, ``|L|^2`` and ``|T|^2``; generic over the number type.

    ``a = |T|^2/|L|^2``, ``b = 2<alpha, beta>/|L|^2``, ``c = |(alpha - beta)_+|^2/|L|^2``,
    ``d = |(alpha - beta)_-|^2/|L|^2``; without ``skew_sq``, ``|T|^2`` is taken as
    ``(|L|^2 - (b + c + d)|L|^2)_+`` (Lemma 5). This is the one definition of the
    profile: :func:`profile_from_eigenvalues` calls it with float64 arrays and
    :func:`qkforms.exact.enclose` with Arb balls (``ops``, :mod:`qkforms.arithmetic`).
    No validation here (``norm_sq > 0`` is the caller's business).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.profile_map import profile_from_lobes
    >>> [float(x) for x in profile_from_lobes(np.array([2.0]), np.array([1.0]), 10.0)]
    [0.5, 0.4, 0.1, 0.0]
    """
    diff = alpha - beta
    b_num = 2.0 * ops.total(alpha * beta)
    c_num = ops.total(ops.square(ops.pos(diff)))
    d_num = ops.total(ops.square(ops.pos(-diff)))
    a_num = ops.pos(norm_sq - (b_num + c_num + d_num)) if skew_sq is None else skew_sq
    return Profile(a_num / norm_sq, b_num / norm_sq, c_num / norm_sq, d_num / norm_sq)


def profile_from_eigenvalues(
    eigvals: ArrayLike, norm_sq: ArrayLike, skew_sq: ArrayLike | None = None
) -> Profile:
    """Profile from the spectrum of ``S`` and ``|L|^2`` (Definition 6).

    Parameters
    ----------
    eigvals : array_like, shape (..., k)
        Eigenvalues of the symmetric part ``S`` (any zero padding, any order).
    norm_sq : array_like, shape (...)
        ``|L|^2``, the sum of squared entries of ``L``.
    skew_sq : array_like, optional
        ``|T|^2``. By default ``|L|^2 - sum(lam^2)`` (Lemma 5), clipped at 0.

    Returns
    -------
    Profile
        Floats for one spectrum, arrays for a stack.

    Raises
    ------
    ZeroFormError
        If some ``norm_sq`` is 0 (the profile of the zero form is undefined).

    Examples
    --------
    >>> from qkforms import profile_from_eigenvalues
    >>> profile_from_eigenvalues([1.0, -1.0], 2.0)
    Profile(a=0.0, b=1.0, c=0.0, d=0.0)
    >>> profile_from_eigenvalues([2.0, -1.0], 10.0)
    Profile(a=0.5, b=0.4, c=0.1, d=0.0)
    """
    alpha, beta = lobes(eigvals)
    nsq = as_float_array(norm_sq, "norm_sq")
    if np.any(nsq <= 0):
        raise ZeroFormError(
            "the profile of the zero form is undefined (|L|^2 = 0); "
            "the paper's domain is M_N(R) minus {0}"
        )
    skew = None if skew_sq is None else as_float_array(skew_sq, "skew_sq")
    out = profile_from_lobes(alpha, beta, nsq, skew)
    if np.ndim(out[0]) == 0:
        return Profile(*(float(v) for v in out))
    return Profile(*out)


def profile(L: ArrayLike) -> Profile:
    """Return the profile ``(a, b, c, d)`` of a nonzero square matrix (Definition 6).

    Properties (``docs/theory.md`` §5): nonnegative with sum 1; invariant under positive
    scaling, transposition, orthogonal conjugation ``U^T L U`` and exact reduction;
    ``profile(-L)`` swaps ``c`` and ``d``.

    Parameters
    ----------
    L : array_like, shape (N, N)
        Nonzero; a stack (..., N, N) gives arrays.

    Raises
    ------
    ZeroFormError
        If ``L`` is zero.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import profile
    >>> profile(np.array([[0.0, 1.0], [-1.0, 0.0]]))  # antisymmetric: vertex a = 1
    Profile(a=1.0, b=0.0, c=0.0, d=0.0)
    >>> profile(np.diag([1.0, 1.0]))                 # PSD: vertex c = 1
    Profile(a=0.0, b=0.0, c=1.0, d=0.0)
    >>> p = profile(np.outer([1.0, 0.0], [0.6, 0.8]))  # rank one, tr = 0.6 (Prop. 4)
    >>> [round(x, 12) for x in p]
    [0.32, 0.32, 0.36, 0.0]
    """
    arr = as_square(L)
    # the profile is scale invariant: normalize first, so that tiny or huge entries
    # neither underflow nor overflow in the squared norms
    scale = np.max(np.abs(arr), axis=(-2, -1), keepdims=True)
    if np.any(scale == 0):
        raise ZeroFormError("the profile of the zero matrix is undefined (L = 0)")
    arr = arr / scale
    S, T = parts(arr)
    norm_sq = np.sum(arr * arr, axis=(-2, -1))
    return profile_from_eigenvalues(
        np.linalg.eigvalsh(S), norm_sq, np.sum(T * T, axis=(-2, -1))
    )


def profile_points(p: Profile | ArrayLike, name: str = "p", *,
                   finite: bool = True) -> NDArray[np.float64]:
    """Profile point(s) as a float64 array of shape ``(..., 4)`` (the one input rule).

    A :class:`Profile` (of floats or of arrays) is stacked along the last axis as it
    is (survey rows of failed heads carry NaN); anything else must be real numbers with
    last axis 4, and finite unless ``finite=False``.

    Raises
    ------
    ShapeError
        If the last axis is not 4.
    NotRealError, NonFiniteError
        For input that is not a finite real array (see ``qkforms._validate``).

    Examples
    --------
    >>> profile_points(Profile(0.5, 0.5, 0.0, 0.0)).tolist()
    [0.5, 0.5, 0.0, 0.0]
    >>> profile_points([[1, 0, 0, 0], [0, 1, 0, 0]]).shape
    (2, 4)
    """
    if isinstance(p, Profile):
        arr = np.stack([as_float_array(x, name, finite=False) for x in p], axis=-1)
    else:
        arr = as_float_array(p, name, min_ndim=1, finite=finite)
    if arr.ndim == 0 or arr.shape[-1] != 4:
        raise ShapeError(f"a profile point has 4 coordinates, got shape {arr.shape}")
    return arr


def symmetric_profile(p: Profile | ArrayLike) -> tuple[float, float, float]:
    """Return the symmetric profile ``(b_S, c_S, d_S) = (b, c, d)/(1 - a)`` (Lemma 4).

    By Lemma 4 this is the profile of ``S`` itself (whose ``a``-coordinate is 0).
    Computed as ``(b, c, d)/(b + c + d)``, equal to ``1 - a`` in exact arithmetic.

    Parameters
    ----------
    p : Profile or array_like of shape (..., 4)

    Raises
    ------
    ZeroFormError
        If ``b + c + d == 0`` (``S = 0``: ``L`` antisymmetric).

    Examples
    --------
    >>> from qkforms import Profile, symmetric_profile
    >>> symmetric_profile(Profile(0.5, 0.4, 0.1, 0.0))
    (0.8, 0.2, 0.0)
    """
    arr = profile_points(p)
    b, c, d = arr[..., 1], arr[..., 2], arr[..., 3]
    s = b + c + d
    if np.any(s <= 0):
        raise ZeroFormError("the symmetric part is zero (a = 1): no symmetric profile")
    out = (b / s, c / s, d / s)
    if np.ndim(out[0]) == 0:
        return tuple(float(v) for v in out)  # type: ignore[return-value]
    return out  # type: ignore[return-value]

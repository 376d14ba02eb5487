"""Signature ``(n_+, n_-, n_0)`` of a symmetric form: counted with a threshold, or decided.

Two rules, for two situations:

* **Counting with a relative zero threshold** (:func:`count_signs`, :func:`signature`;
  ``docs/theory.md`` §3.1): an eigenvalue ``lam`` counts as zero when
  ``|lam| <= tol * max|lam|``. For dense N x N spectra of arbitrary matrices, where no
  error model is known; the default is ``DENSE_TOL``.
* **Deciding a head's signature** (:func:`decide_signature`; :meth:`qkforms.Head.signature`,
  the survey): each computed eigenvalue of the reduced ``S`` carries the float error
  bound of the Gram engine (:mod:`qkforms.gram_factor`, Claim 3). The signature is *decided in
  float* when every eigenvalue clears its bound, except the zeros known from the
  structure (dead dimensions, ``N < 2n``); otherwise it is *undecided*, and the margin
  says by how much. No threshold can change a decided count. Exact arithmetic
  (:func:`qkforms.exact.head_signature`) decides every head.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from qkforms._validate import as_float_array
from qkforms.errors import ParameterError, format_value
from qkforms.form_parts import parts
from qkforms.tolerances import DENSE_TOL, REDUCED_TOL

__all__ = ["DENSE_TOL", "REDUCED_TOL", "Signature", "SignatureDecision", "count_signs",
           "decide_signature", "signature"]


class Signature(NamedTuple):
    """Numbers of positive, negative and zero eigenvalues, with multiplicity."""

    n_pos: int
    n_neg: int
    n_zero: int


class SignatureDecision(NamedTuple):
    """The float decision of a head's signature (:func:`decide_signature`).

    Attributes
    ----------
    signature : Signature
        The counts; meaningful only where ``decided`` (batched: integer arrays).
    decided : bool
        Every eigenvalue cleared its error bound (or is a known structural zero).
    margin : float
        The smallest ratio ``|lam| / err`` over the eigenvalues that are not known
        zeros (``inf`` when there are none): decided exactly when ``margin > 1``.
    n_uncertain : int
        Eigenvalues within their error bound beyond the known zeros: each could be zero
        or of either sign (0 when decided).
    """

    signature: Signature
    decided: Any
    margin: Any
    n_uncertain: Any


def count_signs(eigvals: ArrayLike, *, tol: float = DENSE_TOL) -> Signature:
    """Count positive, negative and zero values among eigenvalues.

    Parameters
    ----------
    eigvals : array_like, shape (..., k)
        Real eigenvalues (a stack of spectra along leading axes is allowed).
    tol : float
        Relative threshold: ``lam`` is zero when ``|lam| <= tol * max|lam|``
        (per spectrum). An all-zero spectrum counts as ``k`` zeros.

    Returns
    -------
    Signature
        Python ints for one spectrum; integer arrays for a stack.

    Examples
    --------
    >>> from qkforms import count_signs
    >>> count_signs([3.0, -2.0, 1e-12, 0.0])
    Signature(n_pos=1, n_neg=1, n_zero=2)
    >>> count_signs([[1.0, -1.0], [2.0, 2.0]]).n_pos
    array([1, 2])
    """
    lam = as_float_array(eigvals, "eigvals", min_ndim=1)
    if tol < 0:
        raise ParameterError(f"tol must be >= 0, got {format_value(tol)}")
    scale = np.max(np.abs(lam), axis=-1, keepdims=True) if lam.shape[-1] else np.zeros(1)
    cut = tol * scale
    pos = np.sum(lam > cut, axis=-1)
    neg = np.sum(lam < -cut, axis=-1)
    zero = lam.shape[-1] - pos - neg
    if lam.ndim == 1:
        return Signature(int(pos), int(neg), int(zero))
    return Signature(pos, neg, zero)


def signature(L: ArrayLike, *, tol: float = DENSE_TOL) -> Signature:
    """Return the signature of the symmetric part of a square matrix.

    For a symmetric ``L`` this is the signature of ``L`` itself. Uses a dense
    symmetric eigensolver (O(N^3)); for heads prefer :meth:`qkforms.Head.signature`,
    which never forms an N x N matrix.

    Parameters
    ----------
    L : array_like, shape (N, N)
    tol : float
        Relative zero threshold, see :func:`count_signs`.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms import signature
    >>> signature(np.diag([2.0, -1.0, 0.0]))
    Signature(n_pos=1, n_neg=1, n_zero=1)
    >>> signature(np.array([[0.0, 1.0], [0.0, 0.0]]))  # S = [[0, 1/2], [1/2, 0]]
    Signature(n_pos=1, n_neg=1, n_zero=0)
    """
    S, _ = parts(L)
    # the signature is scale invariant: a power-of-two scale (exact) keeps the
    # eigenvalues of entries near the float64 limit from overflowing
    with np.errstate(invalid="ignore"):
        m = np.max(np.abs(S), axis=(-2, -1), keepdims=True) if S.size else np.ones(1)
    _, e = np.frexp(np.where(m > 0, m, 1.0))
    return count_signs(np.linalg.eigvalsh(np.ldexp(S, -e)), tol=tol)


def decide_signature(
    eigvals: ArrayLike,
    err_rel: ArrayLike,
    err_abs: ArrayLike,
    *,
    N: ArrayLike,
    n_live: ArrayLike | None = None,
) -> SignatureDecision:
    """Decide the signature of heads from reduced spectra with error bounds; batched.

    Parameters
    ----------
    eigvals : array_like, shape (..., 2n)
        Computed eigenvalues of the reduced ``S`` (:class:`qkforms.gram.LayerSpectra`
        ``eig_S``: those of the live pair, padded with exact zeros).
    err_rel, err_abs : array_like, shape (...)
        The error model: each eigenvalue ``lam`` is within
        ``err_rel * |lam| + err_abs`` of an exact one (:mod:`qkforms.gram_factor`, Claim 3);
        a bound of 0 declares the values exact (then exact zeros are decided).
    N : int or array_like
        Ambient dimension.
    n_live : array_like, optional
        Live head dimensions ``n'`` (default ``n``): ``2n - min(2n', N)`` eigenvalues are
        known zeros (dead dimensions, and the rank bound ``N``).

    Returns
    -------
    SignatureDecision
        Python scalars for one spectrum, arrays for a stack.

    Examples
    --------
    >>> from qkforms.form_signature import decide_signature
    >>> d = decide_signature([3.0, 1e-13, -2.0, -1.0], 0.0, 1e-12, N=5)
    >>> d.decided, d.n_uncertain, round(d.margin, 3)
    (False, 1, 0.1)
    >>> d = decide_signature([3.0, 0.0, 0.0, -2.0], 0.0, 1e-12, N=5, n_live=1)
    >>> d.decided, d.signature              # one dead dimension: two known zeros
    (True, Signature(n_pos=1, n_neg=1, n_zero=3))
    """
    lam = as_float_array(eigvals, "eigvals", min_ndim=1)
    k = lam.shape[-1]
    rel = np.asarray(err_rel, dtype=np.float64)[..., None]
    absolute = np.asarray(err_abs, dtype=np.float64)[..., None]
    live = np.full(lam.shape[:-1], k // 2) if n_live is None else np.asarray(n_live)
    ambient = np.asarray(N, dtype=np.int64)
    known = np.clip(k - np.minimum(2 * live.astype(np.int64), ambient), 0, k)
    err = rel * np.abs(lam) + absolute
    with np.errstate(divide="ignore", invalid="ignore"):
        # an error bound of 0 means the value is exact: an exact zero is decided too
        ratio = np.where(lam == 0, np.where(err == 0, np.inf, 0.0), np.abs(lam) / err)
    ordered = np.concatenate([np.sort(ratio, axis=-1),
                              np.full(lam.shape[:-1] + (1,), np.inf)], axis=-1)
    margin = np.take_along_axis(ordered, np.asarray(known)[..., None], axis=-1)[..., 0]
    small = np.sum(ratio <= 1.0, axis=-1)
    pos = np.sum(lam > err, axis=-1)
    neg = np.sum(lam < -err, axis=-1)
    zero = ambient - pos - neg
    decided = margin > 1.0
    uncertain = np.maximum(small - known, 0)
    if lam.ndim == 1:
        return SignatureDecision(Signature(int(pos), int(neg), int(zero)), bool(decided),
                                 float(margin), int(uncertain))
    return SignatureDecision(Signature(pos, neg, zero), decided, margin, uncertain)

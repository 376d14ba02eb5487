"""Exact constructions for the faces of Theorem 4: the ``S = H +- P`` decompositions.

If the lobes satisfy ``alpha_j >= beta_j`` for every ``j`` (the face ``d = 0``), pair
the ``j``-th positive eigenvector of ``S`` with the ``j``-th negative one and put
``H = sum_j beta_j (P_j^+ - P_j^-)`` and ``P = S - H``, where ``P_j^+-`` are the
orthogonal projectors on those eigenvectors. Then ``H`` has a spectrum symmetric
about 0, ``P`` is positive semidefinite, ``H``, ``P`` and ``S`` commute, and
``|P|^2 = sum_j (alpha_j - beta_j)^2 = c |L|^2``. For the face ``c = 0`` apply this
to ``-S`` (``S = H - P``). With a rational spectrum, all of this is exact: the
eigenbasis is rational and orthogonal (not normalized) and the projectors
``v v^T / (v^T v)`` are rational.

Examples
--------
>>> H, P = hp_decomposition([[3, 0], [0, -1]])
>>> H.tolist(), P.tolist()
([[1, 0], [0, -1]], [[2, 0], [0, 0]])
"""

from __future__ import annotations

from fractions import Fraction

import flint

from qkforms.errors import ParameterError, QKFormsError, format_value
from qkforms.exact.form_signature import charpoly, signature
from qkforms.exact.orthogonal import line_projector, orthogonal_eigenbasis
from qkforms.exact.rational import MatrixLike, require_symmetric, to_fmpq_mat

__all__ = [
    "hp_decomposition",
    "is_psd",
    "is_nsd",
    "is_semidefinite",
    "has_symmetric_spectrum",
    "commute",
]


def is_psd(S: MatrixLike) -> bool:
    """Exact positive semidefiniteness of a symmetric rational matrix (no negative eigenvalue).

    Examples
    --------
    >>> is_psd([[1, 1], [1, 1]]), is_psd([[0, 1], [1, 0]])
    (True, False)
    """
    return signature(S).n_neg == 0


def is_nsd(S: MatrixLike) -> bool:
    """Exact negative semidefiniteness (no positive eigenvalue).

    Examples
    --------
    >>> is_nsd([[-1, 0], [0, 0]])
    True
    """
    return signature(S).n_pos == 0


def is_semidefinite(S: MatrixLike) -> bool:
    """PSD or NSD (including ``S = 0``), exactly.

    Examples
    --------
    >>> is_semidefinite([[0, 0], [0, 0]]), is_semidefinite([[1, 0], [0, -1]])
    (True, False)
    """
    sig = signature(S)
    return sig.n_pos == 0 or sig.n_neg == 0


def has_symmetric_spectrum(S: MatrixLike) -> bool:
    """Whether the spectrum of a symmetric matrix is symmetric about 0 (with multiplicity).

    Exactly: ``charpoly(-x) = (-1)^N charpoly(x)``, i.e. only coefficients of
    monomials of the parity of ``N`` are nonzero.

    Examples
    --------
    >>> has_symmetric_spectrum([[0, 2], [2, 0]]), has_symmetric_spectrum([[1, 0], [0, 0]])
    (True, False)
    """
    Sq = require_symmetric(S, "S")
    N = Sq.nrows()
    coeffs = charpoly(Sq).coeffs()
    return all(c == 0 for k, c in enumerate(coeffs) if (N - k) % 2 == 1)


def commute(A: MatrixLike, B: MatrixLike) -> bool:
    """Exact test ``AB = BA``.

    Examples
    --------
    >>> commute([[1, 0], [0, 2]], [[3, 0], [0, 4]]), commute([[0, 1], [0, 0]], [[1, 0], [0, 0]])
    (True, False)
    """
    Aq, Bq = to_fmpq_mat(A), to_fmpq_mat(B)
    return Aq * Bq == Bq * Aq


def hp_decomposition(S: MatrixLike, *, sign: int = 1) -> tuple[flint.fmpq_mat, flint.fmpq_mat]:
    """Exact ``S = H + sign * P`` with ``H`` spectrum-symmetric, ``P`` PSD, all commuting.

    Parameters
    ----------
    S
        Rational symmetric matrix with rational spectrum.
    sign
        ``+1``: needs ``alpha_j >= beta_j`` for all ``j`` (face ``d = 0``);
        ``-1``: needs ``beta_j >= alpha_j`` (face ``c = 0``), ``S = H - P``.

    Returns
    -------
    (H, P)
        ``fmpq_mat``; ``|P|^2 = sum_j ((alpha_j - beta_j)_{sign})^2``.

    Raises
    ------
    QKFormsError
        If the lobe inequality of the requested face fails.
    IrrationalSpectrumError
        If the spectrum is not rational.

    Examples
    --------
    >>> H, P = hp_decomposition([[-3, 0], [0, 1]], sign=-1)
    >>> H.tolist(), P.tolist()
    ([[-1, 0], [0, 1]], [[2, 0], [0, 0]])
    """
    if sign not in (1, -1):
        raise ParameterError(f"sign must be +1 or -1, got {format_value(sign)}")
    Sq = require_symmetric(S, "S")
    N = Sq.nrows()
    basis = orthogonal_eigenbasis(Sq * sign)
    pos = [(lam, v) for lam, v in basis if lam > 0]  # decreasing
    neg = sorted(((-lam, v) for lam, v in basis if lam < 0), key=lambda t: t[0], reverse=True)
    k = max(len(pos), len(neg))
    alpha = [p[0] for p in pos] + [Fraction(0)] * (k - len(pos))
    beta = [q[0] for q in neg] + [Fraction(0)] * (k - len(neg))
    bad = [j for j in range(k) if alpha[j] < beta[j]]
    if bad:
        j = bad[0]
        face = "d = 0 (alpha >= beta)" if sign == 1 else "c = 0 (beta >= alpha)"
        raise QKFormsError(
            f"not on the face {face}: lobe index {j} has "
            f"{'alpha' if sign == 1 else 'beta'} = {alpha[j]} < {beta[j]}"
        )
    H = flint.fmpq_mat(N, N)
    for j in range(min(len(pos), len(neg))):
        b = flint.fmpq(beta[j].numerator, beta[j].denominator)
        H += (line_projector(pos[j][1]) - line_projector(neg[j][1])) * b
    # in the sign-flipped frame: sign*S = H' + P'; so S = sign*H' + P' * sign
    H = H * sign
    P = (Sq - H) * sign
    return H, P

"""Seeded exact constructions: matrices and heads with known structure.

Everything is built *constructively* (never by rejection): symmetric matrices with
a prescribed rational spectrum ``U^T diag(lambda) U``, PSD matrices ``A A^T``, skew
matrices ``A - A^T``, rank-bounded products, and heads that are surjective by
construction (an invertible unit-triangular block placed in random columns) or
degenerate in a chosen way.

Examples
--------
>>> import numpy as np
>>> from qkforms.exact import rational_spectrum
>>> rng = np.random.default_rng(0)
>>> S = symmetric_with_spectrum([3, 1, -2], rng)
>>> [str(x) for x in rational_spectrum(S)]
['3', '1', '-2']
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import flint
import numpy as np

from qkforms.errors import ParameterError, format_value
from qkforms.exact.orthogonal import random_orthogonal, random_skew
from qkforms.exact.rational import to_fraction

__all__ = [
    "integer_matrix",
    "diagonal",
    "symmetric_with_spectrum",
    "random_spectrum",
    "random_form",
    "random_head",
    "head_with_rational_spectrum",
    "HeadKind",
]

HeadKind = Literal["surjective", "equal", "proportional", "repeated_row", "shared_row", "narrow"]


def integer_matrix(rng: np.random.Generator, rows: int, cols: int, height: int = 3
                   ) -> flint.fmpq_mat:
    """Random integer matrix with entries in ``[-height, height]`` (as ``fmpq_mat``).

    Examples
    --------
    >>> integer_matrix(np.random.default_rng(0), 2, 3).nrows()
    2
    """
    vals = rng.integers(-height, height + 1, size=(rows, cols))
    return flint.fmpq_mat(rows, cols, [int(v) for v in vals.ravel()])


def diagonal(values: Sequence[Any]) -> flint.fmpq_mat:
    """Rational diagonal matrix.

    Examples
    --------
    >>> diagonal([1, "1/2"]).tolist()
    [[1, 0], [0, 1/2]]
    """
    vals = [to_fraction(v) for v in values]
    n = len(vals)
    return flint.fmpq_mat(
        n, n,
        [flint.fmpq(vals[i].numerator, vals[i].denominator) if i == j else 0
         for i in range(n) for j in range(n)],
    )


def symmetric_with_spectrum(eigs: Sequence[Any], rng: np.random.Generator) -> flint.fmpq_mat:
    """``U^T diag(eigs) U`` with ``U`` a random rational orthogonal matrix.

    Examples
    --------
    >>> S = symmetric_with_spectrum([1, 1], np.random.default_rng(3))
    >>> S.tolist()
    [[1, 0], [0, 1]]
    """
    U = random_orthogonal(len(eigs), rng)
    return U.transpose() * diagonal(eigs) * U


def random_spectrum(rng: np.random.Generator, size: int, *, n_pos: int | None = None,
                    n_neg: int | None = None, height: int = 6) -> list[Fraction]:
    """Random rational spectrum with the requested numbers of positive/negative values.

    Values are ``k/2`` or ``k/3`` with ``1 <= k <= height``, so repeated eigenvalues
    and exact ties between lobes occur often; the rest of ``size`` is zeros.

    Examples
    --------
    >>> lam = random_spectrum(np.random.default_rng(0), 5, n_pos=2, n_neg=1)
    >>> sum(v > 0 for v in lam), sum(v < 0 for v in lam), sum(v == 0 for v in lam)
    (2, 1, 2)
    """
    if n_pos is None:
        n_pos = int(rng.integers(0, size + 1))
    if n_neg is None:
        n_neg = int(rng.integers(0, size - n_pos + 1))
    if n_pos + n_neg > size:
        raise ParameterError(f"n_pos + n_neg = {n_pos} + {n_neg} exceeds size = {size}")

    def draw() -> Fraction:
        return Fraction(int(rng.integers(1, height + 1)), int(rng.choice([1, 2, 3])))

    lam = [draw() for _ in range(n_pos)] + [-draw() for _ in range(n_neg)]
    lam += [Fraction(0)] * (size - n_pos - n_neg)
    return [lam[i] for i in rng.permutation(size)]


def random_form(rng: np.random.Generator, N: int, *, spectrum: Sequence[Any] | None = None,
                skew_height: int = 2, skew: bool = True) -> tuple[flint.fmpq_mat, list[Fraction]]:
    """Random rational ``L = U^T diag(lambda) U + T`` with known rational spectrum of ``S``.

    Returns ``(L, lambda)``; ``T`` is a random integer skew matrix (zero if
    ``skew=False``), so the symmetric part of ``L`` is exactly ``U^T diag U``.

    Examples
    --------
    >>> from qkforms.exact import parts, rational_spectrum
    >>> L, lam = random_form(np.random.default_rng(0), 3, spectrum=[2, 0, -1])
    >>> rational_spectrum(parts(L)[0]) == sorted(lam, reverse=True)
    True
    """
    lam = list(random_spectrum(rng, N) if spectrum is None else [to_fraction(v) for v in spectrum])
    L = symmetric_with_spectrum(lam, rng)
    if skew:
        L = L + random_skew(N, rng, skew_height)
    return L, lam


def random_head(rng: np.random.Generator, n: int, N: int, kind: HeadKind = "surjective",
                height: int = 3) -> tuple[flint.fmpq_mat, flint.fmpq_mat]:
    """Random integer head ``(W_Q, W_K)``, each ``n x N``, of a chosen kind.

    Kinds
    -----
    ``"surjective"``
        ``M = [W_K; W_Q]`` has a unit lower-triangular ``2n x 2n`` block in random
        columns (so ``rank M = 2n`` by construction; needs ``N >= 2n``).
    ``"equal"``
        ``W_K = W_Q`` (S = W^T W is PSD).
    ``"proportional"``
        ``W_K = -2 W_Q`` (S is NSD).
    ``"repeated_row"``
        surjective-style head, then the last row of ``W_K`` copies its first row
        (for ``n = 1`` it is set to zero).
    ``"shared_row"``
        surjective-style head, then the first row of ``W_K`` equals the first row
        of ``W_Q`` (the row spaces meet).
    ``"narrow"``
        random ``n x N`` with ``N < 2n`` allowed (no guarantee).

    Examples
    --------
    >>> W_Q, W_K = random_head(np.random.default_rng(0), 2, 5)
    >>> from qkforms.exact import stacked_is_surjective
    >>> stacked_is_surjective(W_Q, W_K)
    True
    """
    if kind == "narrow":
        return integer_matrix(rng, n, N, height), integer_matrix(rng, n, N, height)
    if kind in ("equal", "proportional"):
        W = integer_matrix(rng, n, N, height)
        return W, (W if kind == "equal" else W * flint.fmpq(-2))
    if N < 2 * n:
        raise ParameterError(f"a surjective head needs N >= 2n, got N = {N}, n = {n}")
    M = rng.integers(-height, height + 1, size=(2 * n, N))
    cols = rng.choice(N, size=2 * n, replace=False)
    block = np.tril(rng.integers(-height, height + 1, size=(2 * n, 2 * n)), -1)
    block += np.eye(2 * n, dtype=block.dtype)
    M[:, cols] = block
    if kind == "repeated_row":
        M[n - 1] = M[0] if n > 1 else 0
    elif kind == "shared_row":
        M[0] = M[n]
    elif kind != "surjective":
        raise ParameterError(f"unknown head kind {format_value(kind)}")
    W_K = flint.fmpq_mat(n, N, [int(v) for v in M[:n].ravel()])
    W_Q = flint.fmpq_mat(n, N, [int(v) for v in M[n:].ravel()])
    return W_Q, W_K


def head_with_rational_spectrum(
    t: Sequence[Any], N: int, rng: np.random.Generator, *, height: int = 2
) -> tuple[flint.fmpq_mat, flint.fmpq_mat, list[Fraction]]:
    """A rational head with surjective stacked map whose ``S`` has a known rational spectrum.

    For positive rationals ``t_1, ..., t_n`` (``n = len(t)``, ``N >= 2n``) the head has
    ``S = sym(W_K^T W_Q)`` with eigenvalues ``t_i/2`` and ``-1/(2 t_i)`` and ``N - 2n``
    zeros. Construction: with ``c_i = (t_i - 1/t_i)/2``, a random rational orthogonal
    ``U`` and skew ``T`` (``n x n``), ``C = U^T diag(c) U`` and ``W_K^0 = [I_n, 0]``,
    ``W_Q^0 = [C + T, I_n]`` give ``S^0 = [[C, I/2], [I/2, 0]]``, whose eigenvalues are
    those of ``[[c_i, 1/2], [1/2, 0]]``, i.e. ``(c_i +- sqrt(c_i^2 + 1))/2 = t_i/2,
    -1/(2 t_i)``; ``[W_K^0; W_Q^0]`` is unit triangular (rank ``2n``). The head is then
    padded to ``N`` columns, rotated by a random rational orthogonal ``P``
    (``W -> W P``: ``L -> P^T L P``) and its rows mixed by a random unimodular ``A``
    (``W_K -> A W_K``, ``W_Q -> A^{-T} W_Q``: ``L`` unchanged). Everything is exact.

    Returns
    -------
    (W_Q, W_K, spectrum)
        ``n x N`` rational matrices and the ``N`` eigenvalues of ``S``.

    Examples
    --------
    >>> from qkforms.exact import parts, rational_spectrum, stacked_is_surjective
    >>> W_Q, W_K, lam = head_with_rational_spectrum([2, "1/3"], 5, np.random.default_rng(0))
    >>> stacked_is_surjective(W_Q, W_K)
    True
    >>> rational_spectrum(parts(W_K.transpose() * W_Q)[0]) == sorted(lam, reverse=True)
    True
    """
    ts = [to_fraction(v) for v in t]
    n = len(ts)
    if n == 0 or any(v <= 0 for v in ts):
        raise ParameterError(f"t must be a nonempty list of positive rationals, got "
                             f"{format_value(ts)}")
    if N < 2 * n:
        raise ParameterError(f"a surjective head needs N >= 2n, got N = {N}, n = {n}")
    c = [(v - 1 / v) / 2 for v in ts]
    C = symmetric_with_spectrum(c, rng) + random_skew(n, rng, height)
    eye = diagonal([1] * n)
    W_Q = flint.fmpq_mat(n, N, [C[i, j] if j < n else (eye[i, j - n] if j < 2 * n else 0)
                                for i in range(n) for j in range(N)])
    W_K = flint.fmpq_mat(n, N, [1 if i == j else 0 for i in range(n) for j in range(N)])
    P = random_orthogonal(N, rng, height)
    low = np.tril(rng.integers(-height, height + 1, size=(n, n)), -1) + np.eye(n, dtype=int)
    A = flint.fmpq_mat(n, n, [int(v) for v in low.ravel()])
    W_K = A * W_K * P
    W_Q = A.inv().transpose() * W_Q * P
    lam = [v / 2 for v in ts] + [-1 / (2 * v) for v in ts] + [Fraction(0)] * (N - 2 * n)
    return W_Q, W_K, lam

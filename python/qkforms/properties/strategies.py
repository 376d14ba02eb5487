"""Hypothesis strategies shared by the property functions of :mod:`qkforms.properties`.

Everything is built constructively from drawn integers and rationals (nothing is
filtered): surjective heads get a unit-triangular ``2n x 2n`` block on drawn columns,
degenerate heads copy or scale rows, rational orthogonal matrices come from the Cayley
transform of a drawn skew matrix, forms with a known spectrum of their symmetric part
are ``U^T diag(lambda) U`` plus an optional skew part, rank-one forms are ``u v^T``.

Examples
--------
>>> from hypothesis import given, settings
>>> @settings(max_examples=5, database=None, derandomize=True)
... @given(heads(kind="equal"))
... def equal_rows(head):
...     W_Q, W_K = head
...     assert (W_Q == W_K).all()
>>> equal_rows()
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
from hypothesis import strategies as st

from qkforms import exact
from qkforms.errors import ParameterError, format_value

__all__ = [
    "HEAD_KINDS",
    "DEGENERATE_KINDS",
    "rationals",
    "positive_rationals",
    "nonnegative_rationals",
    "int_matrix",
    "heads",
    "rational_orthogonal",
    "skew_matrix",
    "with_spectrum",
    "forms",
    "dominated_spectrum",
    "dyadic_square",
    "floats",
    "float_matrices",
    "rank_one_factors",
    "unit_spectra",
    "centred_two_point",
    "to_float",
]

F = Fraction

#: the kinds of :func:`heads`: ``surjective``, then the degenerate constructions
HEAD_KINDS = ("surjective", "equal", "proportional", "shared_row", "repeated_row")
DEGENERATE_KINDS = HEAD_KINDS[1:]


def rationals(num: int = 6, dens: tuple[int, ...] = (1, 2, 3)) -> st.SearchStrategy[Fraction]:
    """Rationals ``k / d`` with ``|k| <= num`` and ``d`` in ``dens``."""
    return st.builds(F, st.integers(-num, num), st.sampled_from(list(dens)))


def positive_rationals(num: int = 6, dens: tuple[int, ...] = (1, 2, 3)
                       ) -> st.SearchStrategy[Fraction]:
    """Rationals ``k / d`` with ``1 <= k <= num``."""
    return st.builds(F, st.integers(1, num), st.sampled_from(list(dens)))


def nonnegative_rationals(num: int = 6, dens: tuple[int, ...] = (1, 2, 3)
                          ) -> st.SearchStrategy[Fraction]:
    """Rationals ``k / d`` with ``0 <= k <= num``."""
    return st.builds(F, st.integers(0, num), st.sampled_from(list(dens)))


@st.composite
def int_matrix(draw: st.DrawFn, rows: int, cols: int, bound: int = 3) -> np.ndarray:
    """An integer ``rows x cols`` matrix with entries in ``[-bound, bound]``."""
    vals = draw(st.lists(st.integers(-bound, bound), min_size=rows * cols,
                         max_size=rows * cols))
    return np.array(vals, dtype=np.int64).reshape(rows, cols)


@st.composite
def heads(draw: st.DrawFn, kind: str = "surjective", max_n: int = 3, extra: int = 4
          ) -> tuple[np.ndarray, np.ndarray]:
    """Integer heads ``(W_Q, W_K)``, each ``n x N`` with ``N >= 2n``.

    ``kind="surjective"``: the stacked matrix ``[W_K; W_Q]`` has a unit-triangular
    ``2n x 2n`` block on drawn columns, so it has rank ``2n``. The degenerate kinds
    make it rank-deficient: ``equal`` (``W_Q = W_K``), ``proportional``
    (``W_Q = -2 W_K``), ``shared_row`` (a row of ``W_K`` equal to a row of ``W_Q``),
    ``repeated_row`` (a repeated row of ``W_K``; a zero row when ``n = 1``).
    """
    if kind not in HEAD_KINDS:
        raise ParameterError(f"kind must be one of {format_value(HEAD_KINDS)}, "
                             f"not {format_value(kind)}")
    n = draw(st.integers(1, max_n))
    N = 2 * n + draw(st.integers(0, extra))
    M = draw(int_matrix(2 * n, N))
    if kind in ("surjective", "shared_row", "repeated_row"):
        cols = draw(st.permutations(range(N)))[: 2 * n]
        block = np.tril(draw(int_matrix(2 * n, 2 * n)), -1) + np.eye(2 * n, dtype=np.int64)
        M[:, cols] = block
    if kind == "equal":
        M[n:] = M[:n]
    elif kind == "proportional":
        M[n:] = -2 * M[:n]
    elif kind == "shared_row":
        M[0] = M[n]
    elif kind == "repeated_row":
        M[n - 1] = M[0] if n > 1 else 0
    return M[n:], M[:n]  # W_Q, W_K


@st.composite
def skew_matrix(draw: st.DrawFn, N: int) -> flint.fmpq_mat:
    """An integer antisymmetric ``N x N`` matrix ``A - A^T`` (entries of ``A`` in [-3, 3])."""
    A = np.triu(draw(int_matrix(N, N)), 1)
    return flint.fmpq_mat((A - A.T).tolist())


@st.composite
def rational_orthogonal(draw: st.DrawFn, N: int) -> flint.fmpq_mat:
    """A rational orthogonal matrix: the Cayley transform of a drawn skew matrix times signs."""
    A = np.triu(draw(int_matrix(N, N)), 1)
    U = exact.cayley_orthogonal((A - A.T).tolist())
    return U * exact.diagonal(draw(st.lists(st.sampled_from([-1, 1]), min_size=N, max_size=N)))


@st.composite
def with_spectrum(draw: st.DrawFn, lam: list[Fraction], add_skew: bool | None = None
                  ) -> flint.fmpq_mat:
    """A rational form ``U^T diag(lam) U (+ skew)`` whose symmetric part has spectrum ``lam``."""
    N = len(lam)
    U = draw(rational_orthogonal(N))
    L = U.transpose() * exact.diagonal(lam) * U
    if (draw(st.booleans()) if add_skew is None else add_skew) and N >= 2:
        L = L + draw(skew_matrix(N))
    return L


@st.composite
def forms(draw: st.DrawFn, max_N: int = 4, skew: bool | None = None
          ) -> tuple[flint.fmpq_mat, list[Fraction]]:
    """A nonzero rational form ``L`` with the known rational spectrum of its symmetric part."""
    N = draw(st.integers(1, max_N))
    lam = draw(st.lists(rationals(), min_size=N, max_size=N))
    L = draw(with_spectrum(lam, add_skew=skew))
    if all(v == 0 for v in L.entries()):  # repair: a zero spectrum and no skew part drawn
        lam[0] = F(1)
        L = draw(with_spectrum(lam, add_skew=False))
    return L, lam


@st.composite
def dominated_spectrum(draw: st.DrawFn) -> list[Fraction]:
    """A nonzero spectrum with ``alpha_j >= beta_j`` for all j (face d = 0), built directly."""
    beta = sorted(draw(st.lists(positive_rationals(), min_size=0, max_size=3)), reverse=True)
    incs = draw(st.lists(nonnegative_rationals(), min_size=len(beta), max_size=len(beta)))
    alpha = [b + i for b, i in zip(beta, incs, strict=True)]
    extra = draw(st.lists(positive_rationals(), min_size=0 if beta else 1, max_size=2))
    zeros = draw(st.integers(0, 2))
    return alpha + extra + [-b for b in beta] + [F(0)] * zeros


@st.composite
def dyadic_square(draw: st.DrawFn, N: int) -> np.ndarray:
    """A float ``N x N`` matrix with dyadic entries ``k/8``, ``|k| <= 24`` (exact in float64)."""
    vals = draw(st.lists(st.integers(-24, 24).map(lambda k: k / 8), min_size=N * N,
                         max_size=N * N))
    return np.array(vals).reshape(N, N)


#: floats of moderate size (squares neither underflow nor round to zero)
floats = st.integers(-40, 40).map(lambda k: k / 8) | st.floats(0.001, 5) | st.floats(-5, -0.001)


@st.composite
def float_matrices(draw: st.DrawFn, max_N: int = 5) -> np.ndarray:
    """A nonzero float ``N x N`` matrix (``N <= max_N``) of :data:`floats`."""
    N = draw(st.integers(1, max_N))
    L = np.array(draw(st.lists(floats, min_size=N * N, max_size=N * N))).reshape(N, N)
    if not np.any(L):  # repair
        L[0, 0] = 1.0
    return L


@st.composite
def rank_one_factors(draw: st.DrawFn, min_N: int = 2, max_N: int = 5
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Float vectors ``(u, v)`` with ``u[0]``, ``v[-1]`` at least 6 away from 0: ``u v^T`` is
    a rank-one form whose scale stays away from zero."""
    N = draw(st.integers(min_N, max_N))
    u = np.array(draw(st.lists(floats, min_size=N, max_size=N)))
    v = np.array(draw(st.lists(floats, min_size=N, max_size=N)))
    u[0] += 6.0 if u[0] >= 0 else -6.0
    v[-1] += 6.0 if v[-1] >= 0 else -6.0
    return u, v


@st.composite
def unit_spectra(draw: st.DrawFn, max_m: int = 3) -> list[Fraction]:
    """A rational point of ``Λ_m`` (unit norm, increasing, ``m`` negative then ``m``
    positive entries), from a drawn rational point by inverse stereographic projection."""
    m = draw(st.integers(1, max_m))
    k = 2 * m
    nonzero: st.SearchStrategy[Fraction] = st.one_of(
        positive_rationals(5), positive_rationals(5).map(Fraction.__neg__))
    t = draw(st.lists(nonzero, min_size=k - 1, max_size=k - 1))
    s = sum((x * x for x in t), F(0))
    if s == 1:  # repair: the last coordinate would vanish
        t = [2 * x for x in t]
        s = 4 * s
    w = [2 * x / (s + 1) for x in t] + [(s - 1) / (s + 1)]
    mags = [abs(x) for x in w]
    order = draw(st.permutations(range(k)))
    mags = [mags[i] for i in order]
    return sorted([-x for x in mags[:m]] + mags[m:])


@st.composite
def centred_two_point(draw: st.DrawFn) -> tuple[list[tuple[Fraction, Fraction]], Fraction]:
    """A law ``P(a) = b/(b - a)``, ``P(b) = -a/(b - a)`` with ``a < 0 < b`` (mean 0), and its
    variance."""
    a = -draw(positive_rationals(5))
    b = draw(positive_rationals(5))
    law = [(a, b / (b - a)), (b, -a / (b - a))]
    var = sum((p * v * v for v, p in law), F(0))
    return law, var


def to_float(L: flint.fmpq_mat) -> np.ndarray:
    """The float64 matrix of a rational matrix.

    Examples
    --------
    >>> to_float(flint.fmpq_mat([[1, 2]]) / 4).tolist()
    [[0.25, 0.5]]
    """
    return np.array([[float(x) for x in row] for row in exact.fraction_matrix(L)])

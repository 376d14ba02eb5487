"""Checks of rank balance (Lemma 3), the Gram route (Lemma 10) and Theorem 3, exactly.

Also the shared constructions of heads with dead rows (:func:`add_dead_rows`) and of
heads with several exact factors of their Gram matrix (:func:`gram_factor_case`, checked
by :func:`gram_factor_failures`), used by the Lemma 10, Definition 6 and Theorem 3 checks
and by the properties.

Examples
--------
>>> check_thm3().passed
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import flint
import numpy as np

from qkforms import exact
from qkforms.checks.result import CheckResult, Recorder
from qkforms.errors import ParameterError, format_value

__all__ = [
    "DEAD_KINDS",
    "GramFactorCase",
    "add_dead_rows",
    "check_lemma3",
    "check_lemma10",
    "check_thm3",
    "check_thm3_live",
    "gram_factor_case",
    "gram_factor_failures",
    "half_swap_form",
]

#: how a dead head coordinate is dead: ``q_i = 0``, ``k_i = 0``, or both rows zero
DEAD_KINDS = ("q", "k", "both")


def check_lemma3(seed: int = 0, *, N: int = 6, trials: int = 12) -> CheckResult:
    """Lemma 3: ``rank L <= n`` implies ``n_+(S) <= n`` and ``n_-(S) <= n``, exactly.

    Instances: ``L = A B`` with integer ``A`` (``N x r``), ``B`` (``r x N``) for
    ``r = 0..N`` (the exact rank of ``L`` is computed, not assumed), and the tight
    example ``L = [[0, I_r], [0, 0]]`` (``n_+ = n_- = r``). Signatures are exact
    (Descartes on the characteristic polynomial of ``S``); each count is compared
    with the exact rank.

    Examples
    --------
    >>> check_lemma3(seed=2).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma3", "exact")
    tight = 0
    for t in range(trials):
        r = t % (N + 1)
        A = exact.integer_matrix(rng, N, r) if r else flint.fmpq_mat(N, 0)
        B = exact.integer_matrix(rng, r, N) if r else flint.fmpq_mat(0, N)
        L = A * B if r else flint.fmpq_mat(N, N)
        rk = exact.rank(L)
        S, _ = exact.parts(L)
        sig = exact.signature(S)
        rec.instance()
        rec.require(rk <= r, f"rank {rk} of a product through R^{r}")
        rec.require(sig.n_pos <= rk and sig.n_neg <= rk,
                    f"N={N}, rank {rk}: signature {tuple(sig)} exceeds the rank bound")
        tight += sig.n_pos == rk or sig.n_neg == rk
    for r in range(1, N // 2 + 1):
        rec.instance()
        L = flint.fmpq_mat(2 * r, 2 * r, [int(j == i + r) for i in range(2 * r)
                                          for j in range(2 * r)])
        sig = exact.signature(exact.parts(L)[0])
        rec.require(tuple(sig) == (r, r, 0), f"tight example r={r}: signature {tuple(sig)}")
    rec.note(f"{tight} random instances attain the bound in one sign; "
             "tight examples [[0, I], [0, 0]] attain it in both")
    return rec.result()


def half_swap_form(M: flint.fmpq_mat, n: int) -> flint.fmpq_mat:
    """``1/2 M^T J M`` with ``J = [[0, I_n], [I_n, 0]]``, for any ``M`` with ``2n`` rows.

    For the stacked matrix of a head this is ``S`` (Lemma 10); for a factor ``F`` of the
    Gram matrix it is the ``k x k`` matrix the survey diagonalizes.

    Examples
    --------
    >>> half_swap_form(flint.fmpq_mat([[1, 0], [0, 1]]), 1).tolist()   # M = I: 1/2 J
    [[0, 1/2], [1/2, 0]]
    """
    J = flint.fmpq_mat(2 * n, 2 * n, [int(j == (i + n) % (2 * n)) for i in range(2 * n)
                                      for j in range(2 * n)])
    return M.transpose() * J * M * flint.fmpq(1, 2)


def _rows(A: flint.fmpq_mat, lo: int, hi: int) -> flint.fmpq_mat:
    return flint.fmpq_mat(hi - lo, A.ncols(), [A[i, j] for i in range(lo, hi)
                                              for j in range(A.ncols())])


def _stack(top: flint.fmpq_mat, bottom: flint.fmpq_mat) -> flint.fmpq_mat:
    return flint.fmpq_mat(top.tolist() + bottom.tolist())


def add_dead_rows(rng: np.random.Generator, W_Q: flint.fmpq_mat, W_K: flint.fmpq_mat,
                  kinds: list[str]) -> tuple[flint.fmpq_mat, flint.fmpq_mat, list[int]]:
    """Insert dead head coordinates into a head: one per entry of ``kinds``.

    A dead coordinate ``i`` has ``q_i = 0`` and a random nonzero ``k_i`` (kind ``"q"``),
    ``k_i = 0`` and a random nonzero ``q_i`` (``"k"``), or both rows zero (``"both"``);
    it contributes nothing to ``L = W_K^T W_Q`` (docs/theory.md §3). The rows are
    inserted at random positions (the same for both matrices).

    Returns
    -------
    (W_Q', W_K', live)
        The larger head and the positions of the original (live) rows, in order.

    Examples
    --------
    >>> Q, K, live = add_dead_rows(np.random.default_rng(0), flint.fmpq_mat([[1, 0]]),
    ...                            flint.fmpq_mat([[0, 1]]), ["q"])
    >>> (K.transpose() * Q).tolist(), len(live)
    ([[0, 0], [1, 0]], 1)
    """
    N = W_Q.ncols()
    q_rows: list[list[Any]] = W_Q.tolist()
    k_rows: list[list[Any]] = W_K.tolist()
    dead_q: list[list[Any]] = []
    dead_k: list[list[Any]] = []
    for kind in kinds:
        if kind not in DEAD_KINDS:
            raise ParameterError(f"dead kinds must be in {format_value(DEAD_KINDS)}, "
                                 f"not {format_value(kind)}")
        row = [int(v) for v in rng.integers(-3, 4, size=N)]
        row[int(rng.integers(0, N))] = int(rng.choice([-2, -1, 1, 2]))  # a nonzero row
        zero = [0] * N
        dead_q.append(zero if kind in ("q", "both") else row)
        dead_k.append(zero if kind in ("k", "both") else row)
    n = len(q_rows) + len(kinds)
    order = [int(i) for i in rng.permutation(n)]  # position of the i-th row of the list
    rows = list(zip(q_rows + dead_q, k_rows + dead_k, strict=True))
    placed: list[tuple[list, list]] = [([], [])] * n
    for src, dst in enumerate(order):
        placed[dst] = rows[src]
    live = sorted(order[: len(q_rows)])
    return (flint.fmpq_mat([r[0] for r in placed]), flint.fmpq_mat([r[1] for r in placed]),
            live)


class GramFactorCase(NamedTuple):
    """A head and several exact factors ``F`` of its Gram matrix (``F F^T = M M^T``)."""

    W_Q: flint.fmpq_mat
    W_K: flint.fmpq_mat
    factors: tuple[tuple[str, flint.fmpq_mat], ...]


def gram_factor_case(rng: np.random.Generator, *, n_live: int = 1, n_dead: int = 1,
                     extra: int = 1) -> GramFactorCase:
    """A rational head, possibly with dead rows, and three factors of its Gram matrix.

    A live head with a rational spectrum of ``S``
    (:func:`qkforms.exact.head_with_rational_spectrum`, ``n_live x 2 n_live``) gets
    ``n_dead`` dead rows (:func:`add_dead_rows`; then ``G`` is singular), giving
    ``F = [K_0; Q_0]`` (``2n x k``, ``k = 2 n_live``); the head is ``W = F_half V`` with
    ``V`` the first ``k`` rows of a rational orthogonal ``N x N`` matrix
    (``N = k + extra``), so ``M M^T = F F^T``. Factors: ``F`` itself (the survey's
    orthonormal-basis reduction), ``F U`` (``U`` rational orthogonal, ``k x k``) and
    ``[F, 0]`` (two zero columns: ``k`` is arbitrary).

    Examples
    --------
    >>> case = gram_factor_case(np.random.default_rng(0))
    >>> [name for name, _ in case.factors]
    ['basis', 'rotated', 'padded']
    """
    t = [int(v) for v in rng.integers(1, 5, size=n_live)]
    Q0, K0, _ = exact.head_with_rational_spectrum(t, 2 * n_live, rng)
    kinds = [DEAD_KINDS[int(i)] for i in rng.integers(0, len(DEAD_KINDS), size=n_dead)]
    Q1, K1, _ = add_dead_rows(rng, Q0, K0, kinds)
    F = _stack(K1, Q1)
    k = 2 * n_live
    N = k + extra
    V = _rows(exact.random_orthogonal(N, rng), 0, k)
    U = exact.random_orthogonal(k, rng)
    padded = flint.fmpq_mat([row + [0, 0] for row in F.tolist()])
    return GramFactorCase(Q1 * V, K1 * V, (("basis", F), ("rotated", F * U), ("padded", padded)))


def gram_factor_failures(case: GramFactorCase,
                         claims: tuple[str, ...] = ("charpoly", "signature", "energies",
                                                     "profile")) -> list[str]:
    """The statements of Lemma 10 (any factor) that fail on a case, as messages.

    For every factor ``F`` (``2n x k``) with ``K' = F[:n]``, ``Q' = F[n:]`` and
    ``S_F = 1/2 F^T J F``: ``F F^T = M M^T`` (the hypothesis) and
    ``S_F = sym(K'^T Q')``; ``charpoly``: ``x^k charpoly(S) = x^N charpoly(S_F)``;
    ``signature``: the same numbers of positive and of negative eigenvalues (Descartes);
    ``energies``: the same ``|L|^2``, ``|S|^2``, ``|T|^2``, ``tr L^2``; ``profile``: the same
    exact profile of ``L = W_K^T W_Q`` and ``L' = K'^T Q'``.

    Examples
    --------
    >>> gram_factor_failures(gram_factor_case(np.random.default_rng(1)))
    []
    """
    M = exact.to_fmpq_mat(exact.stacked_matrix(case.W_Q, case.W_K))
    n, N = M.nrows() // 2, M.ncols()
    L = case.W_K.transpose() * case.W_Q
    S = exact.parts(L)[0]
    x = flint.fmpq_poly([0, 1])
    bad = []
    for name, F in case.factors:
        k = F.ncols()
        Kp, Qp = _rows(F, 0, n), _rows(F, n, 2 * n)
        Lp = Kp.transpose() * Qp
        SF = half_swap_form(F, n)
        tag = f"factor {name} ({2 * n} x {k}) of a ({n}, {N}) head"
        if F * F.transpose() != M * M.transpose():
            bad.append(f"{tag}: F F^T != M M^T")
        if SF != exact.parts(Lp)[0]:
            bad.append(f"{tag}: 1/2 F^T J F != sym(K'^T Q')")
        if "charpoly" in claims and x ** k * exact.charpoly(S) != x ** N * exact.charpoly(SF):
            bad.append(f"{tag}: x^k charpoly(S) != x^N charpoly(1/2 F^T J F)")
        if "signature" in claims:
            a, b = exact.signature(S), exact.signature(SF)
            if (a.n_pos, a.n_neg) != (b.n_pos, b.n_neg):
                bad.append(f"{tag}: signatures {tuple(a)} and {tuple(b)} differ up to zeros")
        if "energies" in claims and exact.energies(L) != exact.energies(Lp):
            bad.append(f"{tag}: energies differ")
        if "profile" in claims and exact.profile(L) != exact.profile(Lp):
            bad.append(f"{tag}: profile {tuple(exact.profile(L))} != {tuple(exact.profile(Lp))}")
    return bad


def _trace(A: flint.fmpq_mat) -> flint.fmpq:
    return sum((A[i, i] for i in range(A.nrows())), flint.fmpq(0))


def check_lemma10(seed: int = 0, *, n: int = 2, N: int = 6, trials: int = 6) -> CheckResult:
    """Lemma 10 exactly: ``S = 1/2 M^T J M``, traces, characteristic polynomials.

    For random integer heads (surjective, degenerate and with ``N < 2n``):
    ``sym(W_K^T W_Q) = 1/2 M^T J M``; ``tr S^k = tr (1/2 J G)^k`` for ``k = 1..4``;
    ``|S|^2 = tr((J G)^2)/4``; ``charpoly(S) = x^(N-2n) charpoly(1/2 J G)`` (or the
    mirror identity when ``N < 2n``); for surjective heads ``G`` is positive definite,
    ``1/2 J G`` is invertible and its spectrum (Descartes on its characteristic
    polynomial, real-rooted by the identity) has ``n`` positive and ``n`` negative
    values (so the normalized spectrum lies in ``Λ_n``). Also, for surjective heads,
    the moment transfer:
    with ``q = |S|^2``, ``tr f(S)`` over the nonzero spectrum equals ``tr f(1/2 J G)``
    for ``f(x) = x/(1 - x^2/q)`` and ``x^2/(1 - x^2/q)`` (the ``O``, ``E`` statistics of
    ``λ = spec/|S|`` up to the factors ``|S|`` and 1).

    Any Gram factor (the Lean statement, ``QKForms/GramSpectrum.lean`` and
    ``GramProfile.lean``): on heads with 0-2 dead rows (singular ``G``) and three exact
    factors ``F`` each (:func:`gram_factor_case`), every statement of
    :func:`gram_factor_failures` holds: ``x^k charpoly(S) = x^N charpoly(1/2 F^T J F)``,
    equal positive and negative counts, equal energies and equal exact profiles of
    ``L`` and ``L_red = K'^T Q'``.

    Examples
    --------
    >>> check_lemma10(seed=3).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("lemma10", "exact")
    kinds = ["surjective", "equal", "shared_row", "narrow"]
    for t in range(trials):
        _lemma10_head(rec, rng, kinds[t % len(kinds)], n, N)
    for t in range(trials):  # any factor F F^T = M M^T (dead rows make G singular)
        case = gram_factor_case(rng, n_live=1 + t % n, n_dead=t % 3, extra=1 + t % 2)
        rec.instance()
        for msg in gram_factor_failures(case):
            rec.require(False, msg)
    rec.note("heads: surjective, W_K = W_Q, shared row, N < 2n; all identities exact")
    rec.note("Gram factors: basis reduction, rotated and zero-padded factors of heads with "
             "0-2 dead rows: charpoly, signature counts, energies and profile agree")
    return rec.result()


def _lemma10_head(rec: Recorder, rng: np.random.Generator, kind: str, n: int, N: int) -> None:
    """The identities of Lemma 10 on one random head of this kind (one instance)."""
    x = flint.fmpq_poly([0, 1])
    nn = 1 + int(rng.integers(0, n))
    NN = max(2 * nn, N) if kind != "narrow" else max(1, 2 * nn - 1)
    W_Q, W_K = exact.random_head(rng, nn, NN, kind)  # type: ignore[arg-type]
    M = exact.to_fmpq_mat(exact.stacked_matrix(W_Q, W_K))
    S = exact.symmetric_head_form(W_Q, W_K)
    A = exact.gram_operator(W_Q, W_K)
    G = M * M.transpose()
    rec.instance()
    tag = f"{kind} head (n, N) = ({nn}, {NN})"
    rec.require(S == half_swap_form(M, nn), f"{tag}: S != 1/2 M^T J M")
    Sk, Ak = S, A
    for k in range(1, 5):
        rec.require(_trace(Sk) == _trace(Ak), f"{tag}: tr S^{k} != tr (JG/2)^{k}")
        Sk, Ak = Sk * S, Ak * A
    JG = A * 2
    q = exact.frobenius_inner(S, S)
    rec.require(q == exact.as_fraction(_trace(JG * JG)) / 4, f"{tag}: |S|^2 != tr(JG)^2/4")
    pS, pA = exact.charpoly(S), exact.charpoly(A)
    if NN >= 2 * nn:
        rec.require(pS == x ** (NN - 2 * nn) * pA, f"{tag}: charpoly identity fails")
    else:
        rec.require(pA == x ** (2 * nn - NN) * pS, f"{tag}: charpoly identity fails")
    if kind == "surjective":
        rec.require(exact.signature(G) == (2 * nn, 0, 0), f"{tag}: G not positive definite")
        rec.require(pA.coeffs()[0] != 0, f"{tag}: 1/2 J G is singular")
        counts = exact.descartes_counts(pA.coeffs())
        rec.require(counts == (nn, nn, 0), f"{tag}: spectrum of JG/2 has counts {counts}")
        # |lambda_i| < 1 needs both signs (Lemma 9)
        _moment_transfer(rec, tag, S, A, flint.fmpq(q.numerator, q.denominator))


def _moment_transfer(rec: Recorder, tag: str, S: flint.fmpq_mat, A: flint.fmpq_mat,
                     q: flint.fmpq) -> None:
    """``tr f(S) = tr f(1/2 J G)`` for ``f(x) = x/(1 - x^2/q)`` and ``x^2/(1 - x^2/q)``."""
    def eye(k: int) -> flint.fmpq_mat:
        return flint.fmpq_mat(k, k, [int(i == j) for i in range(k) for j in range(k)])

    try:
        RS = (eye(S.nrows()) - S * S / q).inv()
        RA = (eye(A.nrows()) - A * A / q).inv()
    except ZeroDivisionError:
        rec.require(False, f"{tag}: I - S^2/|S|^2 singular")
        return
    rec.require(_trace(S * RS) == _trace(A * RA), f"{tag}: O-type trace transfer")
    rec.require(_trace(S * S * RS) == _trace(A * A * RA), f"{tag}: E-type transfer")


def check_thm3(seed: int = 0, *, n: int = 3, N: int = 9, trials: int = 6,
               dense_N: int = 10) -> CheckResult:
    """Theorem 3 exactly: surjective heads have signature ``(n, n, N - 2n)``.

    Random integer heads, surjective by construction and certified by the exact
    rank test, are given exact signatures by two independent routes: Descartes on
    ``charpoly(J G)`` (Lemma 10, ``2n x 2n``) and, for ``N <= dense_N``, on the
    ``N x N`` characteristic polynomial of ``S``; both must equal ``(n, n, N-2n)``.
    A float-weight head (``n = 4, N = 20``, weights converted exactly) too.
    Degenerate heads (``W_K = W_Q``, a shared row, ``N < 2n``) must *not* be
    certified surjective and must get a different signature (``W_K = W_Q``:
    ``n_- = 0``), computed the same way.

    Examples
    --------
    >>> check_thm3(seed=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("thm3", "exact")
    for t in range(trials):
        nn = 1 + t % n
        NN = 2 * nn + int(rng.integers(0, max(1, N - 2 * nn + 1)))
        W_Q, W_K = exact.random_head(rng, nn, NN, "surjective")
        rec.instance()
        expected = (nn, nn, NN - 2 * nn)
        tag = f"head (n, N) = ({nn}, {NN})"
        rec.require(exact.stacked_is_surjective(W_Q, W_K), f"{tag}: not certified surjective")
        sig = exact.head_signature(W_Q, W_K, method="charpoly")
        rec.require(tuple(sig) == expected, f"{tag}: Gram-route signature {tuple(sig)}")
        if NN <= dense_N:
            dense = exact.head_signature(W_Q, W_K, method="dense")
            rec.require(tuple(dense) == expected, f"{tag}: dense signature {tuple(dense)}")
    rec.instance()
    Wq = rng.standard_normal((4, 20)) * 0.05
    Wk = rng.standard_normal((4, 20)) * 0.05
    sig = exact.head_signature(Wq, Wk, method="charpoly")
    rec.require(exact.stacked_is_surjective(Wq, Wk), "float head not certified surjective")
    rec.require(tuple(sig) == (4, 4, 12), f"float head: signature {tuple(sig)}")
    for kind in ("equal", "shared_row", "narrow"):
        nn = n
        NN = 2 * nn - 1 if kind == "narrow" else max(N, 2 * nn)
        W_Q, W_K = exact.random_head(rng, nn, NN, kind)
        rec.instance()
        surj = exact.stacked_is_surjective(W_Q, W_K)
        sig = exact.head_signature(W_Q, W_K, method="charpoly")
        con = exact.head_signature(W_Q, W_K, method="congruence")
        rec.require(not surj, f"degenerate {kind} head certified surjective")
        rec.require(tuple(sig) != (nn, nn, NN - 2 * nn),
                    f"degenerate {kind} head has the balanced signature {tuple(sig)}")
        rec.require(sig == con, f"{kind}: charpoly {tuple(sig)} != congruence {tuple(con)}")
        rec.require(max(sig.n_pos, sig.n_neg) <= nn, f"{kind}: Lemma 3 bound violated")
        if kind == "equal":
            rec.require(sig.n_neg == 0, f"W_K = W_Q must give a PSD form, got {tuple(sig)}")
        rec.note(f"degenerate {kind} (n, N) = ({nn}, {NN}): signature {tuple(sig)}")
    return rec.result()


def check_thm3_live(seed: int = 0, *, n: int = 3, N: int = 8, trials: int = 6,
                    dense_N: int = 8) -> CheckResult:
    """Theorem 3 for the live part: dead rows leave the signature ``(n', n', N - 2n')``.

    A surjective integer head ``(n', N)`` gets 1-2 dead coordinates
    (:func:`add_dead_rows`: ``q_i = 0``, ``k_i = 0`` or both). Exactly: ``L`` is unchanged;
    the enlarged head is *not* surjective (so Theorem 3 itself does not apply) and its
    naive prediction ``(n, n, N - 2n)`` fails; deleting the rows with ``q_i = 0`` or
    ``k_i = 0`` gives back the live pair, which is certified surjective; and the exact
    signature (Descartes on ``charpoly(J G)``, and on the dense ``N x N`` charpoly for
    ``N <= dense_N``) is ``(n', n', N - 2n')``.

    Examples
    --------
    >>> check_thm3_live(seed=1).passed
    True
    """
    rng = np.random.default_rng(seed)
    rec = Recorder("thm3.live", "exact")
    for t in range(trials):
        n_live = 1 + t % n
        NN = 2 * n_live + int(rng.integers(0, max(1, N - 2 * n_live + 1)))
        Q0, K0 = exact.random_head(rng, n_live, NN, "surjective")
        kinds = [DEAD_KINDS[(t + j) % len(DEAD_KINDS)] for j in range(1 + t % 2)]
        Q1, K1, live = add_dead_rows(rng, Q0, K0, kinds)
        nn = Q1.nrows()
        rec.instance()
        tag = f"live (n', N) = ({n_live}, {NN}) with dead kinds {kinds}"
        rec.require(K1.transpose() * Q1 == K0.transpose() * Q0, f"{tag}: L changed")
        rec.require(not exact.stacked_is_surjective(Q1, K1), f"{tag}: head certified surjective")
        dead_free = [i for i in range(nn)
                     if any(Q1[i, j] != 0 for j in range(NN))
                     and any(K1[i, j] != 0 for j in range(NN))]
        rec.require(dead_free == live, f"{tag}: the dead rows are not the rows with a zero side")
        Qd = flint.fmpq_mat([Q1.tolist()[i] for i in dead_free])
        Kd = flint.fmpq_mat([K1.tolist()[i] for i in dead_free])
        rec.require(exact.stacked_is_surjective(Qd, Kd), f"{tag}: live pair not surjective")
        expected = (n_live, n_live, NN - 2 * n_live)
        sig = exact.head_signature(Q1, K1, method="charpoly")
        rec.require(tuple(sig) == expected, f"{tag}: signature {tuple(sig)} != {expected}")
        rec.require(tuple(sig) != (nn, nn, NN - 2 * nn), f"{tag}: Theorem 3 prediction holds")
        if NN <= dense_N:
            dense = exact.head_signature(Q1, K1, method="dense")
            rec.require(tuple(dense) == expected, f"{tag}: dense signature {tuple(dense)}")
    rec.note("dead rows of all three kinds; signatures exact (Descartes)")
    return rec.result()

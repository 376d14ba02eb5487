"""Properties of Lemma 5, Corollaries 1 and 2 and Proposition 5 (``lemma5``,
``cor1``, ``cor2``, ``prop5``).

The random-baseline statements hold for *every* centred law, so drawn two-point
laws are enumerated exactly (every sign pattern of a small matrix); Proposition 5's
symmetry argument is tested on drawn symmetric three-point laws.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

import qkforms
from qkforms import exact
from qkforms.checks.energy import _moments_by_enumeration, _qk_moments_by_enumeration
from qkforms.properties import prop
from qkforms.properties.strategies import centred_two_point, positive_rationals, rationals

F = Fraction
fracs = rationals(9, (1, 2, 3, 4))


@prop(st.integers(1, 5).flatmap(lambda N: st.lists(fracs, min_size=N * N, max_size=N * N)))
def lemma5_energy_identities(vals: list[Fraction]) -> None:
    N = int(round(len(vals) ** 0.5))
    L = [vals[i * N:(i + 1) * N] for i in range(N)]
    e = exact.energies(L)
    assert e.norm_sq == e.sym_sq + e.skew_sq
    assert 2 * e.sym_sq == e.norm_sq + e.trace_sq
    assert 2 * e.skew_sq == e.norm_sq - e.trace_sq
    ef = qkforms.energies(np.array([[float(x) for x in row] for row in L]))
    scale = max(1.0, float(e.norm_sq))
    for got, want in zip(ef, e, strict=True):
        assert abs(float(got) - float(want)) <= 1e-12 * scale


@prop(st.integers(1, 3), st.integers(1, 5), st.data())
def lemma5_head_trace(n: int, N: int, data: st.DataObject) -> None:
    Q = data.draw(st.lists(st.lists(fracs, min_size=N, max_size=N), min_size=n, max_size=n))
    K = data.draw(st.lists(st.lists(fracs, min_size=N, max_size=N), min_size=n, max_size=n))
    L = exact.to_fmpq_mat(K).transpose() * exact.to_fmpq_mat(Q)
    assert exact.trace(L) == exact.frobenius_inner(K, Q)


@prop(centred_two_point(), st.integers(1, 2), max_examples=30)
def cor1_moments_any_centred_law(law_var: tuple, N: int) -> None:
    law, var = law_var
    eL, eS, eT, _ = _moments_by_enumeration(N, law)
    assert eL == N * N * var
    assert eS == F(N * (N + 1), 2) * var
    assert eT == F(N * (N - 1), 2) * var


@prop(centred_two_point(), centred_two_point(), st.integers(1, 2), max_examples=30)
def cor2_moments_any_centred_laws(lk: tuple, lq: tuple, N: int) -> None:
    (law_K, vK), (law_Q, vQ) = lk, lq
    eL, eS, eT, _, _ = _qk_moments_by_enumeration(1, N, law_K, law_Q)
    v = vK * vQ
    assert eL == N * N * v
    assert eS == F(N * (N + 1), 2) * v
    assert eT == F(N * (N - 1), 2) * v


@prop(positive_rationals(5, (1, 2)), positive_rationals(5, (1, 2)),
      st.builds(F, st.integers(0, 4), st.just(10)), max_examples=30)
def prop5_symmetric_laws_conditional_ratio(c_k: Fraction, c_q: Fraction, p0: Fraction) -> None:
    """Sign-symmetric exchangeable entries: ``E[|S|^2/|L|^2 | L != 0] = (N+1)/(2N)``."""
    half = (1 - p0) / 2
    law_K = [(-c_k, half), (F(0), p0), (c_k, half)]
    law_Q = [(-c_q, half), (F(0), p0), (c_q, half)]
    _, _, _, pnz, eR = _qk_moments_by_enumeration(1, 2, law_K, law_Q)
    assert eR / pnz == F(3, 4)


@prop(st.integers(1, 4), st.integers(4, 6), st.floats(0.2, 3.0), st.floats(0.2, 3.0),
      st.integers(0, 2**16), max_examples=20)
def prop5_gaussian_mean_ratio(n: int, N: int, sk: float, sq: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    R = 4000
    WK = rng.normal(0.0, sk, size=(R, n, N))
    WQ = rng.normal(0.0, sq, size=(R, n, N))
    L = np.einsum("sra,srb->sab", WK, WQ)
    nsq = np.sum(L * L, axis=(1, 2))
    ratio = (nsq + np.einsum("sij,sji->s", L, L)) / (2 * nsq)
    se = ratio.std(ddof=1) / np.sqrt(R)
    assert abs(ratio.mean() - (N + 1) / (2 * N)) <= 5 * se  # 5 standard errors


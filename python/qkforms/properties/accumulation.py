"""Properties of Lemma 6 and Theorem 5 (``lemma6``, ``thm5``).

The deterministic ingredients hold for *all* vectors, so they are tested on
drawn rational vectors exactly; the limit map is compared with the float core.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

import qkforms
from qkforms.checks.accumulation import _estimates_hold, layer_cake_inner, limit_point
from qkforms.properties import prop
from qkforms.properties.strategies import nonnegative_rationals, positive_rationals

F = Fraction
nonneg = nonnegative_rationals(12, (1, 2, 3, 4))
pos_rho = positive_rationals(12, (1, 2, 3, 4))


@prop(st.integers(1, 6).flatmap(lambda k: st.tuples(
    st.lists(nonneg, min_size=k, max_size=k), st.lists(nonneg, min_size=k, max_size=k))))
def lemma6_layer_cake_identity(vecs: tuple) -> None:
    y = sorted(vecs[0], reverse=True)
    yp = sorted(vecs[1], reverse=True)
    assert layer_cake_inner(y, yp) == sum(a * b for a, b in zip(y, yp, strict=True))


@prop(st.integers(1, 5).flatmap(lambda k: st.tuples(
    st.lists(nonneg, min_size=k, max_size=k), st.lists(nonneg, min_size=k, max_size=k))))
def lemma6_sorted_pairing_is_maximal(vecs: tuple) -> None:
    y = sorted(vecs[0], reverse=True)
    yp = sorted(vecs[1], reverse=True)
    sorted_inner = sum(a * b for a, b in zip(y, yp, strict=True))
    for perm in itertools.permutations(range(len(y))):
        assert sum(a * yp[j] for a, j in zip(y, perm, strict=True)) <= sorted_inner


@prop(st.integers(2, 200), st.floats(0.5, 4.0), st.floats(0.1, 10.0), st.integers(0, 2**16))
def lemma6_departure_is_scale_free_and_zero_on_copies(n: int, shape: float, rho: float,
                                                           seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = np.sort(rng.gamma(shape, size=n))[::-1]
    Xp = np.sort(rng.gamma(shape, size=n))[::-1]
    delta = np.linalg.norm(rho * Xp - rho * X) / np.linalg.norm(X)
    delta_scaled = np.linalg.norm(3.0 * rho * Xp - rho * 3.0 * X) / np.linalg.norm(3.0 * X)
    assert abs(delta - delta_scaled) <= 1e-12 * max(1.0, float(delta))
    assert np.linalg.norm(rho * X - rho * X) == 0.0


@prop(st.integers(1, 6).flatmap(lambda k: st.tuples(
    st.lists(nonneg, min_size=k, max_size=k), st.lists(nonneg, min_size=k, max_size=k))),
    pos_rho)
def thm5_deterministic_estimates(vecs: tuple, rho: Fraction) -> None:
    alpha = sorted(vecs[0], reverse=True)
    beta = sorted(vecs[1], reverse=True)
    if alpha[0] == 0:  # repair: alpha != 0
        alpha[0] = F(1)
    assert _estimates_hold(alpha, beta, rho) == []


@prop(pos_rho)
def thm5_limit_point_float_core_and_theta(rho: Fraction) -> None:
    lim = limit_point(rho)
    assert sum(lim) == 1 and lim[0] == 0
    assert lim[2] * lim[3] == 0
    fl = qkforms.accumulation_limit(float(rho))
    np.testing.assert_allclose(np.array(fl), [float(x) for x in lim], atol=1e-12)
    tp = qkforms.theta_p(float(rho))  # the point of Theta mapped by p to the limit
    np.testing.assert_allclose(np.array([0.0, tp.a + tp.b, tp.c, tp.d]), np.array(fl),
                               atol=1e-12)
    # b(rho) = b(1/rho) and the edge: d = 0 for rho <= 1, c = 0 for rho >= 1
    assert limit_point(1 / rho)[1] == lim[1]
    assert (lim[3] == 0) if rho <= 1 else (lim[2] == 0)


@prop(pos_rho, st.integers(0, 2**16))
def thm5_profiles_of_exactly_proportional_lobes(rho: Fraction, seed: int) -> None:
    """With beta = rho alpha exactly (delta = 0) the profile *is* the limit."""
    rng = np.random.default_rng(seed)
    alpha = rng.gamma(2.0, size=int(rng.integers(1, 50)))
    eig = np.concatenate([alpha, -float(rho) * alpha, np.zeros(3)])
    p = qkforms.profile_from_eigenvalues(eig, float(np.sum(eig**2)))
    np.testing.assert_allclose(np.array(p), [float(x) for x in limit_point(rho)], atol=1e-12)


@prop(st.integers(1, 10**6))
def thm5_limit_tends_to_the_vertices(m: int) -> None:
    """Within ``2ρ`` of the vertex ``c = 1`` at ``ρ = 1/m``, within ``2/ρ`` of ``d = 1`` at
    ``ρ = m``; the two limits are mirror images (``c`` and ``d`` swap under ``ρ -> 1/ρ``)."""
    small, large = F(1, m), F(m)
    lo, hi = limit_point(small), limit_point(large)
    assert max(abs(x - y) for x, y in zip(lo, (0, 0, 1, 0), strict=True)) <= 2 * small
    assert max(abs(x - y) for x, y in zip(hi, (0, 0, 0, 1), strict=True)) <= 2 / large
    assert (lo[0], lo[1], lo[2], lo[3]) == (hi[0], hi[1], hi[3], hi[2])

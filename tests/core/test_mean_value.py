"""The mean-value interval backend: ranges over a ball contain every sampled value.

The shared formulas (profile, pairing, ρ, distance to Θ) evaluated by
``qkforms.mean_value.MEAN_VALUE`` on a ball must contain the float value at every point
sampled in the ball (uniformly, and at points on its boundary), must contain exact
values at the centre (rounding is outward), and must be tighter than a plain box
evaluation where the ball's geometry matters.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from qkforms.arithmetic import FLOAT64
from qkforms.mean_value import MEAN_VALUE, variables
from qkforms.pairing import lobe_ratio_from_lobes, pairing_from_lobes
from qkforms.profile_map import profile_from_lobes
from qkforms.theta_family import theta_distance_of_point


def _stats(alpha, beta, tau, ops):  # type: ignore[no-untyped-def]
    norm_sq = ops.total(ops.square(alpha)) + ops.total(ops.square(beta)) + ops.square(tau)
    p = profile_from_lobes(alpha, beta, norm_sq, ops.square(tau), ops)
    point = np.empty(4, dtype=object)
    point[:] = list(p)
    if ops is FLOAT64:
        point = point.astype(np.float64)
    return [p.a, p.b, p.c, p.d, pairing_from_lobes(alpha, beta, ops),
            lobe_ratio_from_lobes(alpha, beta, ops), theta_distance_of_point(point, ops)]


def _ball_points(rng: np.random.Generator, c: np.ndarray, R: float, count: int) -> np.ndarray:
    d = rng.standard_normal((count, c.size))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    r = R * np.where(np.arange(count) % 3 == 0, 1.0, rng.uniform(0, 1, count) ** (1 / c.size))
    return np.maximum(c + d * r[:, None], 0.0)  # the ball meets the orthant


@pytest.mark.parametrize("seed,rel", [(0, 0.002), (1, 0.02), (2, 0.1), (3, 0.5)])
def test_ranges_contain_every_sampled_value(seed: int, rel: float) -> None:
    rng = np.random.default_rng(seed)
    n, h = 5, 3
    alpha = np.sort(rng.gamma(2.0, 1.0, (h, n)), axis=1)[:, ::-1]
    beta = np.sort(rng.gamma(2.0, 1.0, (h, n)), axis=1)[:, ::-1]
    beta[0, -2:] = 0.0  # a degenerate head: zero lobe entries at the orthant's edge
    tau = rng.gamma(3.0, 1.0, (h, 1))
    Z = np.concatenate([alpha, beta, tau], axis=1)
    R = rel * np.linalg.norm(Z, axis=1)
    out = _stats(*variables(Z, R, [n, n, None]), MEAN_VALUE)
    for i in range(h):
        for z in _ball_points(rng, Z[i], R[i], 300):
            vals = _stats(z[:n], z[n:2 * n], z[2 * n], FLOAT64)
            for s, v in zip(out, vals, strict=True):
                lo, hi = s.range
                assert lo[i] <= float(v) <= hi[i]


def test_centre_encloses_the_exact_value() -> None:
    """1/3 is not a float: the outward-rounded centre interval contains it exactly."""
    (x,) = variables(np.array([[1.0, 3.0]]), np.array([0.0]), [2])
    third = MEAN_VALUE.total(x * np.array([1.0, 0.0])) / MEAN_VALUE.total(
        x * np.array([0.0, 1.0]))
    lo, hi = third.centre
    assert Fraction(float(lo[0])) < Fraction(1, 3) < Fraction(float(hi[0]))
    assert float(hi[0] - lo[0]) < 1e-14  # a few ulps per operation, outward


def test_tighter_than_a_box_on_sums_of_squares() -> None:
    """|z|^2 over a ball of radius R: width about 4 R |c|, a box gives 4 R |c|_1."""
    rng = np.random.default_rng(5)
    c = rng.uniform(1, 2, (1, 64))
    R = np.array([0.01])
    (z,) = variables(c, R, [64])
    lo, hi = MEAN_VALUE.total(MEAN_VALUE.square(z)).range
    norm, norm1 = float(np.linalg.norm(c)), float(np.abs(c).sum())
    exact = (norm + R[0]) ** 2 - (norm - R[0]) ** 2
    assert exact <= hi[0] - lo[0] < 1.2 * exact
    assert hi[0] - lo[0] < 0.3 * 4 * R[0] * norm1


def test_nonsmooth_operations_stay_valid() -> None:
    """pos, min, clip and sqrt at kinks: the ranges still contain every sample."""
    rng = np.random.default_rng(6)
    c = np.array([[0.0, 0.3, -0.2]])
    (x,) = variables(c, np.array([0.5]), [3], lower=None)
    exprs = [MEAN_VALUE.pos(x), MEAN_VALUE.clip(x, 0.0, 0.1),
             MEAN_VALUE.sqrt(MEAN_VALUE.pos(x)),
             MEAN_VALUE.minimum(MEAN_VALUE.total(x), MEAN_VALUE.total(x * x))]
    f = [lambda v: np.maximum(v, 0), lambda v: np.clip(v, 0, 0.1),
         lambda v: np.sqrt(np.maximum(v, 0)), lambda v: min(v.sum(), (v * v).sum())]
    d = rng.standard_normal((400, 3))
    d *= 0.5 * rng.uniform(0, 1, (400, 1)) / np.linalg.norm(d, axis=1, keepdims=True)
    for z in c[0] + d:
        for e, g in zip(exprs, f, strict=True):
            lo, hi = e.range
            v = np.asarray(g(z), dtype=np.float64).reshape(-1)
            assert np.all(lo.reshape(-1) <= v) and np.all(v <= hi.reshape(-1))

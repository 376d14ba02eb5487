"""Property tests of the certified enclosures (qkforms.exact.enclose).

Each property follows from a theorem about the true values plus the containment claim:
if two enclosures contain the same true number they must overlap; if the intervals of
``a, b, c, d`` contain a point of the simplex, their sum contains 1; a power-of-two
rescaling of the weights changes no exact computation, so the intervals are identical.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qkforms import Head
from qkforms.exact import CERTIFIED_STATS, enclose
from qkforms.exact.balls import BALLS, ball_array, working_precision
from qkforms.pairing import pairing_from_lobes
from qkforms.profile_map import lobes_from_sorted, profile_from_lobes


@st.composite
def float_heads(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 3))
    N = 2 * n + draw(st.integers(0, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dtype = draw(st.sampled_from([np.float64, np.float32, np.float16]))
    W_Q = rng.standard_normal((n, N)).astype(dtype).astype(np.float64)
    W_K = rng.standard_normal((n, N)).astype(dtype).astype(np.float64)
    return W_Q, W_K


def _overlap(x, y) -> bool:
    return max(x.lo, y.lo) <= min(x.hi, y.hi)


slow = settings(max_examples=40)


@slow
@given(float_heads(), st.integers(-60, 60))
def test_power_of_two_rescaling_changes_nothing(head, k):
    W_Q, W_K = head
    a, b = enclose(W_Q, W_K), enclose(W_Q * 2.0**k, W_K)
    for stat in CERTIFIED_STATS:
        assert a.interval(stat) == b.interval(stat), stat


@slow
@given(float_heads())
def test_profile_intervals_meet_the_simplex(head):
    enc = enclose(*head)
    lo = sum(enc.interval(s).lo for s in "abcd")
    hi = sum(enc.interval(s).hi for s in "abcd")
    assert lo <= 1.0 <= hi
    assert _overlap(enc.sym_energy, type(enc.a)(1 - enc.a.hi, 1 - enc.a.lo))
    assert enc.max_width() < 1e-11


@slow
@given(float_heads())
def test_sign_swaps_c_and_d_and_transpose_changes_nothing(head):
    W_Q, W_K = head
    enc = enclose(W_Q, W_K)
    neg = enclose(W_Q, -W_K)  # L -> -L: (a, b, c, d) -> (a, b, d, c)
    assert _overlap(enc.c, neg.d) and _overlap(enc.d, neg.c)
    assert _overlap(enc.a, neg.a) and _overlap(enc.b, neg.b)
    tr = enclose(W_K, W_Q)  # L -> L^T: the profile is unchanged
    for stat in CERTIFIED_STATS:
        assert _overlap(enc.interval(stat), tr.interval(stat)), stat


@slow
@given(float_heads())
def test_float_statistics_lie_within_rounding_of_the_intervals(head):
    W_Q, W_K = head
    enc = enclose(W_Q, W_K)
    p = Head(W_Q, W_K).profile()
    for stat, v in zip("abcd", p, strict=True):
        iv = enc.interval(stat)
        assert iv.lo - 1e-12 <= v <= iv.hi + 1e-12, stat


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=6), st.floats(0.0, 5.0))
def test_ball_formulas_agree_with_float_formulas_on_points(values, skew):
    """The shared formulas on exact point balls contain the float64 results' exact values."""
    lam = np.array(sorted(values, reverse=True))
    nsq = float(np.sum(lam**2)) + skew
    if nsq == 0 or not np.any(lam):
        return
    alpha, beta = lobes_from_sorted(lam)
    p = profile_from_lobes(alpha, beta, nsq, skew)
    with working_precision():
        ba, bb = lobes_from_sorted(ball_array(lam), BALLS)
        pb = profile_from_lobes(ba, bb, ball_array(nsq)[()], ball_array(skew)[()], BALLS)
        for x, xb in zip(p, pb, strict=True):
            assert abs(float(x) - float(xb.mid())) <= 1e-12 + 1e-12 * abs(float(x))
        assert abs(float(pairing_from_lobes(alpha, beta))
                   - float(pairing_from_lobes(ba, bb, BALLS).mid())) <= 1e-12

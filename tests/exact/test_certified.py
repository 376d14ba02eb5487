"""Certified enclosures (qkforms.exact.enclose): containment of exact and 50-digit values.

The enclosures claim to contain the true statistics of the weights as given. These
tests check that claim against (1) exact rational constructions whose profile is known
in closed form and verified by exact characteristic polynomials, (2) 50-digit mpmath
references computed from the dense N x N symmetric part of random float heads, and
(3) show that the checks can fail: an enclosure computed from a deliberately perturbed
matrix misses the true value.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest

from qkforms import Head
from qkforms.errors import QKFormsError, ZeroFormError
from qkforms.exact import (
    CERTIFIED_STATS,
    enclose,
    enclose_layer,
    head_with_rational_spectrum,
    pairing_quantities,
    profile,
    random_form,
)
from qkforms.exact.enclosure import enclose_gram
from qkforms.exact.verified_spectrum import ExactGram, exact_gram

# --------------------------------------------------------------------------- oracles

_VC = (0, 0, 1, 0)
_M = (mpmath.mpf(1) / 2, mpmath.mpf(1) / 2, 0, 0)
_VD = (0, 0, 0, 1)


def _segment_dist(x, p, q):
    """Euclidean distance from x to the segment [p, q] (mpmath)."""
    v = [qi - pi for pi, qi in zip(p, q, strict=True)]
    s = sum((xi - pi) * vi for xi, pi, vi in zip(x, p, v, strict=True)) / sum(vi * vi for vi in v)
    s = min(max(s, 0), 1)
    return mpmath.sqrt(sum((xi - pi - s * vi) ** 2 for xi, pi, vi in zip(x, p, v, strict=True)))


def reference_stats(eigs, norm_sq, skew_sq):
    """Definition 6, the pairing score, rho and the distance to Theta, in mpmath.

    Written independently of the package (it is the oracle): lobes by sorting, padded
    index-wise pairing, the distance to Theta as the distance to its two segments.
    """
    lam = [mpmath.mpf(v) if not isinstance(v, Fraction) else
           mpmath.mpf(v.numerator) / v.denominator for v in eigs]
    alpha = sorted((max(v, 0) for v in lam), reverse=True)
    beta = sorted((max(-v, 0) for v in lam), reverse=True)
    nsq = mpmath.mpf(norm_sq.numerator) / norm_sq.denominator if isinstance(
        norm_sq, Fraction) else mpmath.mpf(norm_sq)
    tsq = mpmath.mpf(skew_sq.numerator) / skew_sq.denominator if isinstance(
        skew_sq, Fraction) else mpmath.mpf(skew_sq)
    b = 2 * sum(x * y for x, y in zip(alpha, beta, strict=True)) / nsq
    c = sum(max(x - y, 0) ** 2 for x, y in zip(alpha, beta, strict=True)) / nsq
    d = sum(max(y - x, 0) ** 2 for x, y in zip(alpha, beta, strict=True)) / nsq
    a = tsq / nsq
    na = mpmath.sqrt(sum(x * x for x in alpha))
    nb = mpmath.sqrt(sum(y * y for y in beta))
    pairing = 1 - mpmath.sqrt(sum((x - y) ** 2 for x, y in zip(alpha, beta, strict=True))) / (
        mpmath.sqrt(na**2 + nb**2))
    point = (a, b, c, d)
    theta = min(_segment_dist(point, _VC, _M), _segment_dist(point, _M, _VD))
    return {"a": a, "b": b, "c": c, "d": d, "sym_energy": 1 - a, "pairing": pairing,
            "rho": nb / na if na else None, "theta_dist": theta}


def dense_reference(W_Q, W_K):
    """50-digit statistics from the dense N x N form L = W_K^T W_Q (mpmath.eigsy)."""
    with mpmath.workdps(50):
        Q = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in W_Q])
        K = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in W_K])
        L = K.T * Q
        S = (L + L.T) / 2
        T = (L - L.T) / 2
        norm_sq = sum(v**2 for v in L)
        skew_sq = sum(v**2 for v in T)
        eigs, _ = mpmath.eigsy(S)
        lam = [eigs[i] for i in range(S.rows)]
        # rank S <= rank L + rank L^T <= 2n: the N - 2n eigenvalues of least modulus are
        # exactly 0 (eigsy returns them as ~1e-53, which would add ~1e-106 to c or d)
        n = len(W_Q)
        for i in sorted(range(len(lam)), key=lambda i: abs(lam[i]))[: len(lam) - 2 * n]:
            lam[i] = mpmath.mpf(0)
        lam.sort(reverse=True)
        return reference_stats(lam, norm_sq, skew_sq), lam


def assert_contains(enc, ref, stats=CERTIFIED_STATS):
    for stat in stats:
        iv = enc.interval(stat)
        assert iv.contains(ref[stat]), (stat, iv, ref[stat])


# --------------------------------------------------------------------------- exact constructions


@pytest.mark.parametrize("seed", range(6))
def test_rational_surjective_heads(seed):
    """Heads with a surjective stacked map and a known rational spectrum of S (rump route)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    t = [Fraction(int(rng.integers(1, 7)), int(rng.integers(1, 7))) for _ in range(n)]
    N = 2 * n + int(rng.integers(0, 3))
    W_Q, W_K, lam = head_with_rational_spectrum(t, N, rng)
    L = W_K.transpose() * W_Q
    exact = profile(L, spectrum=lam)  # spectrum verified by the exact charpoly of S
    enc = enclose(W_Q, W_K)
    assert enc.method == "rump" and enc.full_rank is True
    for stat, value in zip("abcd", exact, strict=True):
        assert enc.interval(stat).contains(value), (stat, enc.interval(stat), value)
    assert enc.sym_energy.contains(1 - exact.a)
    with mpmath.workdps(50):
        assert_contains(enc, reference_stats(lam, enc.energies.norm_sq, enc.energies.skew_sq))
    nonzero = sorted((v for v in lam if v != 0), reverse=True)
    inside = [iv.contains(v) for iv, v in zip(enc.eigenvalues, nonzero, strict=True)]
    assert inside == [True] * 2 * n
    assert enc.max_width() < 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_rational_forms_as_degenerate_heads(seed):
    """random_form's L written as the head W_K = I, W_Q = L (n = N: charpoly route)."""
    rng = np.random.default_rng(100 + seed)
    N = int(rng.integers(2, 5))
    L, lam = random_form(rng, N)
    if all(v == 0 for v in lam) and (L == L.transpose()):
        L = L + flint.fmpq_mat(N, N, [1 if i == j else 0 for i in range(N) for j in range(N)])
        lam = [v + 1 for v in lam]
    eye = flint.fmpq_mat(N, N, [1 if i == j else 0 for i in range(N) for j in range(N)])
    exact = profile(L, spectrum=lam)
    enc = enclose(L, eye)
    assert enc.method == "charpoly"
    for stat, value in zip("abcd", exact, strict=True):
        assert enc.interval(stat).contains(value), (stat, enc.interval(stat), value)
    q = pairing_quantities(lam)
    if q.S_sq:
        with mpmath.workdps(50):
            ref = reference_stats(lam, enc.energies.norm_sq, enc.energies.skew_sq)
        stats = ("pairing", "theta_dist") + (("rho",) if q.plus_sq else ())
        assert_contains(enc, ref, stats)


def test_psd_head_charpoly_and_rump_refuses():
    """W_K = W_Q: S is PSD (profile vertex c = 1); not of full rank, so no rump certificate."""
    W = [[1, 2, 0, 1], [0, 1, 1, 3]]
    enc = enclose(W, W)
    assert enc.method == "charpoly" and enc.full_rank is None
    assert enc.c.contains(1) and enc.a.contains(0) and enc.b.contains(0) and enc.d.contains(0)
    assert enc.theta_dist.contains(0)
    with pytest.raises(QKFormsError, match="charpoly"):
        enclose(W, W, method="rump")


def test_zero_form_raises():
    with pytest.raises(ZeroFormError):
        enclose([[1.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]])


# --------------------------------------------------------------------------- 50-digit references


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_float_heads_contain_50_digit_reference(seed, dtype):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    N = 2 * n + int(rng.integers(0, 6))
    scale = 10.0 ** rng.uniform(-3, 3)
    W_Q = (rng.standard_normal((n, N)) * scale).astype(dtype).astype(np.float64)
    W_K = (rng.standard_normal((n, N)) * scale).astype(dtype).astype(np.float64)
    enc = enclose(Head(W_Q, W_K))
    ref, lam = dense_reference(W_Q, W_K)
    assert_contains(enc, ref)
    nonzero = lam[:n] + lam[-n:]
    assert all(iv.contains(v) for iv, v in zip(enc.eigenvalues, nonzero, strict=True))
    assert enc.max_width() < 1e-11


def test_layer_matches_single_heads():
    """enclose_layer (shared key heads, one integer scale) gives the same intervals."""
    rng = np.random.default_rng(7)
    Q, K = rng.standard_normal((4, 3, 16)), rng.standard_normal((2, 3, 16))
    kv = [0, 0, 1, 1]
    layer = enclose_layer(Q, K, kv)
    for h, g in enumerate(kv):
        single = enclose(Q[h], K[g])
        for stat in CERTIFIED_STATS:
            a, b = layer[h].interval(stat), single.interval(stat)
            assert max(a.lo, b.lo) <= min(a.hi, b.hi), stat  # both contain the truth


# --------------------------------------------------------------------------- the checks can fail


def test_perturbed_weights_are_caught():
    """An enclosure of a head perturbed by 1e-9 (relative, one entry) misses the truth."""
    rng = np.random.default_rng(3)
    W_Q, W_K = rng.standard_normal((2, 3, 10))
    ref, _ = dense_reference(W_Q, W_K)
    bad_Q = W_Q.copy()
    bad_Q[0, 0] *= 1 + 1e-9
    good, bad = enclose(W_Q, W_K), enclose(bad_Q, W_K)
    assert_contains(good, ref)
    missed = [s for s in CERTIFIED_STATS if not bad.interval(s).contains(ref[s])]
    assert len(missed) >= 6, missed


def test_perturbed_gram_block_is_caught():
    """A 1e-9 relative error in one exact Gram entry (a simulated bug) is caught."""
    rng = np.random.default_rng(5)
    W_Q, W_K = rng.standard_normal((2, 2, 7))
    ref, _ = dense_reference(W_Q, W_K)
    g = exact_gram(W_Q, W_K)
    QQ = flint.fmpz_mat(g.QQ.tolist())
    QQ[0, 0] += QQ[0, 0] // 10**9
    bad = ExactGram(n=g.n, N=g.N, KK=g.KK, QQ=QQ, QK=g.QK, unit=g.unit, approx=g.approx,
                    shift=g.shift)
    # float vectors for the perturbed matrix, so that its enclosure is tight: a factor F
    # with F F^T ~ G_bad / 4**shift, padded to N columns
    G_bad = np.array([[float(v) for v in row] for row in bad.gram().tolist()]) / 4.0**g.shift
    F = np.zeros((2 * g.n, g.N))
    F[:, : 2 * g.n] = np.linalg.cholesky(G_bad)
    bad = ExactGram(n=g.n, N=g.N, KK=g.KK, QQ=QQ, QK=g.QK, unit=g.unit, approx=F,
                    shift=g.shift)
    assert_contains(enclose_gram(g), ref)
    enc = enclose_gram(bad)
    missed = [s for s in CERTIFIED_STATS if not enc.interval(s).contains(ref[s])]
    assert len(missed) >= 6, missed


# --------------------------------------------------------------------------- real weights


def test_minilm_every_head_is_certified_tightly():
    """All 72 MiniLM heads: rump certificate, widths <= 1e-10, float survey values inside."""
    import qkforms.models as qm

    model = qm.load("minilm")
    widths = []
    for lw in model.layers():
        encs = enclose_layer(lw.W_Q, lw.W_K, lw.kv_index)
        for h, enc in enumerate(encs):
            assert enc.method == "rump" and enc.full_rank
            widths.append(enc.max_width())
            p = Head(lw.W_Q[h], lw.W_K[lw.kv_index[h]]).profile()
            for stat, v in zip("abcd", p, strict=True):
                iv = enc.interval(stat)
                assert iv.lo - 1e-12 <= v <= iv.hi + 1e-12
    assert len(widths) == 72
    assert max(widths) <= 1e-10


def test_smollm2_first_layer_is_certified_tightly():
    import qkforms.models as qm

    lw = next(iter(qm.load("smollm2").layers()))
    encs = enclose_layer(lw.W_Q, lw.W_K, lw.kv_index)
    assert len(encs) == 9
    assert all(e.method == "rump" for e in encs)
    assert max(e.max_width() for e in encs) <= 1e-10


def test_ill_conditioned_heads_are_refined():
    """cond(M) = 1e6: float64 vectors alone give width ~1e-5; refinement restores ~1e-13."""
    rng = np.random.default_rng(1)
    n, N = 4, 8
    U, _ = np.linalg.qr(rng.standard_normal((2 * n, 2 * n)))
    V, _ = np.linalg.qr(rng.standard_normal((N, 2 * n)))
    M = U @ np.diag(np.logspace(0, -6, 2 * n)) @ V.T
    enc = enclose(M[n:], M[:n])
    assert enc.method == "rump" and enc.max_width() < 1e-10
    ref, _ = dense_reference(M[n:], M[:n])
    assert_contains(enc, ref)


def test_widths_are_finite_and_ordered():
    enc = enclose(np.eye(2, 6), np.eye(2, 6, k=2))
    for stat in CERTIFIED_STATS:
        iv = enc.interval(stat)
        assert iv.lo <= iv.hi and math.isfinite(iv.width)


def test_decide_thresholds_and_spectral_types():
    from qkforms import spectral_type
    from qkforms.exact import decide

    lo, hi = np.array([0.01, 0.049, 0.2, np.nan]), np.array([0.02, 0.051, 0.3, np.nan])
    assert decide(lambda x: x <= 0.05, [lo], [hi]).tolist() == [True, None, False, None]
    # c - d straddles 0 on the second head: the type is undecided, not rounded
    lows = [np.array([0.3, 0.3]), np.array([0.69, 0.5]), np.array([0.005, 0.1]),
            np.array([0.0, 0.09])]
    highs = [np.array([0.3, 0.3]), np.array([0.69, 0.5]), np.array([0.006, 0.11]),
             np.array([0.001, 0.1])]
    types = decide(lambda a, b, c, d: spectral_type(np.stack([a, b, c, d], -1)), lows, highs)
    assert types.tolist() == ["II", None]
    # on a real enclosure: the type decided from the intervals equals the float type
    rng = np.random.default_rng(4)
    W_Q, W_K = rng.standard_normal((2, 3, 12))
    enc = enclose(W_Q, W_K)
    lows = [np.array([enc.interval(s).lo]) for s in "abcd"]
    highs = [np.array([enc.interval(s).hi]) for s in "abcd"]
    t = decide(lambda a, b, c, d: spectral_type(np.stack([a, b, c, d], -1)), lows, highs)
    assert t.tolist() == [spectral_type(Head(W_Q, W_K).profile())]


def test_rump_and_charpoly_certificates_agree_on_real_heads():
    """Two independent certificates (verified float eigenvectors vs exact root isolation)
    must overlap on every statistic and eigenvalue; the charpoly one is the tighter."""
    import qkforms.models as qm

    lw = next(iter(qm.load("minilm").layers()))
    for h in range(0, lw.W_Q.shape[0], 3):
        W_Q, W_K = lw.W_Q[h], lw.W_K[lw.kv_index[h]]
        rump, exact = enclose(W_Q, W_K, method="rump"), enclose(W_Q, W_K, method="charpoly")
        assert (rump.method, exact.method) == ("rump", "charpoly")
        for stat in CERTIFIED_STATS:
            a, b = rump.interval(stat), exact.interval(stat)
            assert max(a.lo, b.lo) <= min(a.hi, b.hi), stat
        for a, b in zip(rump.eigenvalues, exact.eigenvalues, strict=True):
            assert max(a.lo, b.lo) <= min(a.hi, b.hi)
        assert exact.max_width() < 1e-14


# --- second mutation campaign: each test states the property it checks -------------------


def test_exact_gram_is_exact_for_mixed_and_large_integer_inputs() -> None:
    """The Gram blocks are exact whatever the input types: a float array next to a list of
    Fractions keeps 1/3 exact, and int64 entries beyond 2^53 (not representable as
    float64) keep their last bit."""
    mixed = exact_gram(np.array([[1.0, 0.5, 0.0]]), [[Fraction(1, 3), 0, 1]])
    exact = exact_gram([[1, Fraction(1, 2), 0]], [[Fraction(1, 3), 0, 1]])
    assert (mixed.KK, mixed.QQ, mixed.QK, mixed.unit) == (exact.KK, exact.QQ, exact.QK,
                                                          exact.unit)
    big = 2**60 + 1
    g = exact_gram(np.array([[big, 0]], dtype=np.int64), np.array([[1, 1]], dtype=np.int64))
    assert g.unit == 1 and int(g.QQ[0, 0]) == big * big and int(g.QK[0, 0]) == big


def test_non_finite_weights_are_refused_by_name() -> None:
    """A NaN or infinity anywhere in float weights is a NonFiniteError naming W_Q/W_K."""
    from qkforms.errors import NonFiniteError

    for bad in (np.nan, np.inf):
        Q = np.array([[1.0, bad, 0.0]])
        with pytest.raises(NonFiniteError, match="W_Q or W_K contains NaN or infinite"):
            exact_gram(Q, np.eye(1, 3))


def test_certified_results_are_read_only_and_max_width_is_the_largest() -> None:
    """Enclosures and spectrum enclosures are frozen (a certificate cannot be edited after
    the fact); ``max_width`` is the largest width over the defined statistics."""
    import dataclasses

    rng = np.random.default_rng(4)
    enc = enclose(*rng.standard_normal((2, 2, 6)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        enc.a = enc.b  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        enc.spectrum.method = "other"  # type: ignore[misc]
    widths = [getattr(enc, s).width for s in CERTIFIED_STATS if getattr(enc, s) is not None]
    assert enc.max_width() == max(widths) and min(widths) < max(widths)


def test_intervals_width_midpoint_and_unbounded_ends() -> None:
    """``Interval``: width ``hi - lo`` rounded up (inf when an end is infinite), a midpoint
    inside the interval (the finite end of a half-line), and containment with infinite
    ends (``[-inf, 0]`` contains -1e300)."""
    from qkforms.exact.balls import Interval

    iv = Interval(0.1, 0.7)
    assert iv.width >= 0.6 and iv.width == pytest.approx(0.6, rel=1e-15)
    assert iv.mid == pytest.approx(0.4) and 0.1 <= iv.mid <= 0.7
    tiny = Interval(1.0, math.nextafter(1.0, 2.0))
    assert tiny.mid in (tiny.lo, tiny.hi)
    assert Interval(-math.inf, 0.0).width == math.inf == Interval(0.0, math.inf).width
    assert Interval(2.0, math.inf).mid == 2.0 and Interval(-math.inf, -3.0).mid == -3.0
    assert Interval(-math.inf, 0.0).contains(-1e300) and not Interval(-math.inf, 0.0).contains(1)
    assert Interval(0.0, math.inf).contains(Fraction(10**400)) and \
        not Interval(0.0, math.inf).contains(-1)


def test_one_by_one_heads_are_enclosed() -> None:
    """``n = N = 1`` is a head (L is the 1 x 1 form ``k q``): its enclosures contain the
    float profile of ``L``, a vertex of the simplex (``S = L``, ``T = 0``)."""
    import qkforms as qk

    for q, k in ((2.0, 3.0), (2.0, -3.0)):
        enc = enclose([[q]], [[k]])
        expected = qk.profile([[q * k]])
        for name, value in zip("abcd", expected, strict=True):
            assert getattr(enc, name).contains(float(value)), (q, k, name)
        layer = enclose_layer(np.array([[[q]]]), np.array([[[k]]]))
        assert layer[0].a.contains(float(expected[0]))


def test_layer_refuses_a_kv_index_of_the_wrong_length_or_range() -> None:
    """``kv_index`` gives one key head in ``[0, n_kv)`` per query head: a list too short,
    or an index equal to ``n_kv``, is a ShapeError (not a silently wrong pairing)."""
    from qkforms.errors import ShapeError

    rng = np.random.default_rng(5)
    Q, K = rng.standard_normal((3, 2, 6)), rng.standard_normal((2, 2, 6))
    assert len(enclose_layer(Q, K, [0, 1, 1])) == 3
    for kv in ([0, 1], [0, 1, 2], [0, -1, 1]):
        with pytest.raises(ShapeError, match="kv_index must give a key head in"):
            enclose_layer(Q, K, kv)


def test_ball_backend_sums_over_the_last_axis_of_a_batch() -> None:
    """``BALLS.total`` sums the last axis, per row of a batch, as the float backend does
    (the profile of a batch of heads is computed this way)."""
    from qkforms.arithmetic import FLOAT64
    from qkforms.exact.balls import BALLS, ball_array, working_precision

    x = np.arange(6.0).reshape(2, 3)
    with working_precision():
        got = BALLS.total(ball_array(x))
    assert [float(v.mid()) for v in got] == FLOAT64.total(x).tolist() == [3.0, 12.0]
    assert all(v.rad() == 0 for v in got)

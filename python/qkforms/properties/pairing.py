"""Properties of Lemma 2 and the bimodal Lemmas 7, 8, 9 (``lemma2``, ``lemma7``,
``lemma8``, ``lemma9``).

Rational unit spectra in ``Λ_m`` are built from drawn rational points (inverse
stereographic projection), with signs assigned to halves; proportional lobes are
built as ``beta = rho * alpha``.
"""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
from hypothesis import strategies as st

import qkforms
from qkforms import exact
from qkforms.checks._tools import involution
from qkforms.properties import prop
from qkforms.properties.strategies import positive_rationals, unit_spectra

F = Fraction
pos_fracs = positive_rationals(9, (1, 2, 3, 5))
spectra = st.lists(st.integers(-20, 20).map(lambda k: k / 4), min_size=1, max_size=8)


@prop(spectra)
def lemma2_float_bound_and_closed_form(values: list[float]) -> None:
    lam = np.array(values + [1.0])  # repair: lambda_+ != 0
    P = qkforms.pairing_score(lam)
    rho = qkforms.lobe_ratio(lam)
    assert P <= qkforms.pairing_bound(rho) + 1e-12
    p = qkforms.profile_from_eigenvalues(lam, float(np.sum(lam**2)))
    assert abs(P - (1 - np.sqrt(1 - p.b))) < 1e-12
    assert qkforms.pairing_gap(lam) >= -1e-12


@prop(st.lists(pos_fracs, min_size=1, max_size=5), st.data())
def lemma2_exact_bound_and_equality(alpha: list[Fraction], data: st.DataObject) -> None:
    alpha = sorted(alpha, reverse=True)
    proportional = data.draw(st.booleans())
    if proportional:
        rho = data.draw(st.builds(F, st.integers(0, 6), st.sampled_from([1, 2, 3])))
        beta = [rho * a for a in alpha]
    else:
        beta = sorted(data.draw(st.lists(pos_fracs, min_size=len(alpha), max_size=len(alpha))),
                      reverse=True)
    pq = exact.pairing_quantities(alpha + [-b for b in beta])
    assert pq.diff_sq == pq.S_sq - 2 * pq.cross  # closed form under the square root
    assert 0 <= pq.cross and pq.cross**2 <= pq.plus_sq * pq.minus_sq  # the bound
    equal = pq.cross**2 == pq.plus_sq * pq.minus_sq
    prop = all(alpha[i] * beta[j] == alpha[j] * beta[i]
               for i in range(len(alpha)) for j in range(len(alpha)))
    assert equal == prop
    if proportional:
        assert equal


@prop(unit_spectra())
def lemma7_bimodal_identities(lam: list[Fraction]) -> None:
    m = len(lam) // 2
    assert sum(x * x for x in lam) == 1
    plus, minus = lam[m:][::-1], [-x for x in lam[:m]]
    p2, n2 = sum(x * x for x in plus), sum(x * x for x in minus)
    imb = p2 - n2
    C = sum(x * y for x, y in zip(plus, minus, strict=True))
    d2 = sum((x - y) ** 2 for x, y in zip(plus, minus, strict=True))
    assert p2 == (1 + imb) / 2 and n2 == (1 - imb) / 2
    assert 4 * p2 * n2 == 1 - imb**2
    assert d2 == 1 - 2 * C
    z = sum((complex(float(x), float(y)) ** 2 for x, y in zip(plus, minus, strict=True)), 0j)
    assert abs(z - complex(float(imb), float(2 * C))) < 1e-12
    assert 0 <= 2 * C <= 1
    P = qkforms.pairing_score(np.array([float(x) for x in lam]))
    assert abs(P - (1 - np.sqrt(float(1 - 2 * C)))) < 1e-12


@prop(unit_spectra(max_m=4))
def lemma8_involution(lam: list[Fraction]) -> None:
    m = len(lam) // 2
    il = involution(lam)
    assert involution(il) == lam
    assert il == sorted(il) and sum(x * x for x in il) == 1
    assert all(x < 0 for x in il[:m]) and all(x > 0 for x in il[m:])
    plus, minus = lam[m:][::-1], [-x for x in lam[:m]]
    assert il[m:][::-1] == minus and [-x for x in il[:m]] == plus
    d2 = sum((x - y) ** 2 for x, y in zip(plus, minus, strict=True))
    assert sum((x - y) ** 2 for x, y in zip(lam, il, strict=True)) == 2 * d2
    assert (d2 == 0) == (il == lam)


@prop(st.lists(pos_fracs, min_size=1, max_size=3))
def lemma8_fixed_points_have_pairing_one(mu: list[Fraction]) -> None:
    lam = sorted([-x for x in mu] + mu)  # symmetric spectrum (not normalized: scale-free)
    assert involution(lam) == lam
    assert qkforms.pairing_score(np.array([float(x) for x in lam])) == 1.0


@prop(unit_spectra(max_m=2), st.data())
def lemma9_moments(lam: list[Fraction], data: st.DataObject) -> None:
    k = len(lam)
    il = involution(lam)
    assert all(abs(x) < 1 for x in lam)

    def O_(v: list[Fraction]) -> Fraction:
        return sum((x / (1 - x * x) for x in v), F(0))

    def E_(v: list[Fraction]) -> Fraction:
        return sum((x * x / (1 - x * x) for x in v), F(0))

    def R_(v: list[Fraction]) -> Fraction:
        return sum((1 / (1 - x) for x in v), F(0))

    assert O_(lam) == (R_(lam) - R_(il)) / 2
    assert k + E_(lam) == (R_(lam) + R_(il)) / 2
    assert O_(il) == -O_(lam) and E_(il) == E_(lam)
    K = data.draw(st.integers(0, 8))
    part = sum(x ** (2 * r + 1) for r in range(K) for x in lam)
    assert O_(lam) - part == sum(x ** (2 * K + 1) / (1 - x * x) for x in lam)
    A = exact.symmetric_with_spectrum(lam, np.random.default_rng(data.draw(st.integers(0, 99))))
    eye = flint.fmpq_mat(k, k, [int(i == j) for i in range(k) for j in range(k)])
    inv = (eye - A * A).inv()
    assert exact.trace(A * inv) == O_(lam)
    assert exact.trace(A * A * inv) == E_(lam)
    assert exact.trace((eye - A).inv()) == R_(lam)

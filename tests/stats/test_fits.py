"""Batched fits against scipy's own maximum-likelihood fits and direct recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from qkforms.stats.fits import (
    fit_gamma,
    fit_gengamma,
    fit_gengamma_scipy,
    fit_lognormal,
    fit_weibull,
    gengamma_cdf,
    gengamma_loglik,
    ks_distance,
)


def _samples(m: int = 64) -> np.ndarray:
    rng = np.random.default_rng(11)
    return np.stack([
        rng.gamma(1.8, 2.0, m),
        rng.lognormal(0.3, 0.6, m),
        rng.weibull(2.2, m) * 3.0,
        stats.gengamma.rvs(2.0, -1.5, size=m, random_state=5),
        rng.gamma(0.7, 1.0, m),
        rng.gamma(30.0, 0.01, m),
    ])


def test_gamma_matches_scipy_fit_floc0() -> None:
    x = _samples()
    k, theta, ll = fit_gamma(x)
    for i, row in enumerate(x):
        k_ref, _, theta_ref = stats.gamma.fit(row, floc=0)
        assert k[i] == pytest.approx(k_ref, rel=1e-6)
        assert theta[i] == pytest.approx(theta_ref, rel=1e-6)
        assert ll[i] == pytest.approx(stats.gamma.logpdf(row, k[i], scale=theta[i]).sum(),
                                      rel=1e-10)


def test_lognormal_matches_scipy_fit_floc0() -> None:
    x = _samples()
    sigma, scale, ll = fit_lognormal(x)
    for i, row in enumerate(x):
        s_ref, _, scale_ref = stats.lognorm.fit(row, floc=0)
        assert sigma[i] == pytest.approx(s_ref, rel=1e-6)
        assert scale[i] == pytest.approx(scale_ref, rel=1e-6)
        assert ll[i] == pytest.approx(stats.lognorm.logpdf(row, sigma[i], scale=scale[i]).sum(),
                                      rel=1e-10)


def test_gengamma_at_least_as_likely_as_scipy_best_of_three() -> None:
    x = _samples()
    fit = fit_gengamma(x)
    for i, row in enumerate(x):
        # the reported log-likelihood is the likelihood of the reported parameters
        direct = stats.gengamma.logpdf(row, fit.a[i], fit.c[i], scale=fit.scale[i]).sum()
        assert fit.loglik[i] == pytest.approx(direct, rel=1e-9)
        _, _, _, ll_scipy = fit_gengamma_scipy(row)
        assert fit.loglik[i] >= ll_scipy - 1e-6 * abs(ll_scipy)
        # nested families can never beat the generalized gamma
        assert fit.loglik[i] >= fit_gamma(row)[2][0] - 1e-9
        assert fit.loglik[i] >= fit_weibull(row)[2][0] - 1e-9


def test_gengamma_recovers_parameters_on_a_large_sample() -> None:
    x = stats.gengamma.rvs(3.0, 0.8, scale=2.0, size=(1, 20000), random_state=3)
    fit = fit_gengamma(x)
    assert fit.c[0] == pytest.approx(0.8, rel=0.1)
    assert fit.a[0] == pytest.approx(3.0, rel=0.25)
    assert gengamma_loglik(x, fit.a, fit.c, fit.scale)[0] == pytest.approx(fit.loglik[0])


def test_ks_distance_matches_scipy_kstest() -> None:
    x = _samples()
    fit = fit_gengamma(x)
    d = ks_distance(x, gengamma_cdf(x, fit.a, fit.c, fit.scale))
    for i, row in enumerate(x):
        ref = stats.kstest(row, stats.gengamma(fit.a[i], fit.c[i], scale=fit.scale[i]).cdf)
        assert d[i] == pytest.approx(ref.statistic, abs=1e-9)


def test_fits_reject_nonpositive_samples() -> None:
    with pytest.raises(ValueError, match="positive"):
        fit_gamma([[1.0, 0.0, 2.0]])

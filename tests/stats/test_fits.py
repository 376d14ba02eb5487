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


# --- per-head spectral columns (second mutation campaign) ---------------------------------


def _spectral_inputs(k: float, seed: int, m: int, heads: int) -> tuple[list, list, list]:
    """Gamma(k) lobes of S, singular values of T and |eigenvalues| of L, per head."""
    rng = np.random.default_rng(seed)
    eig = [np.concatenate([rng.gamma(k, 1.0, m), -rng.gamma(k, 1.0, m)]) for _ in range(heads)]
    return (eig, [rng.gamma(k, 1.0, m) for _ in range(heads)],
            [rng.gamma(k, 1.0, m) for _ in range(heads)])


def _spectral_cols(k: float, seed: int = 0, m: int = 48, heads: int = 6) -> dict:
    from qkforms.stats.spectral import spectral_rows

    return spectral_rows(*_spectral_inputs(k, seed, m, heads), fits=True)


def test_information_criteria_and_ks_columns_are_the_textbook_ones() -> None:
    """AIC = 2p - 2 log L and BIC = p log m - 2 log L with p = 3 (generalized gamma) and
    p = 2 (lognormal); the lognormal KS distance is scipy's against the fitted law."""
    from qkforms.stats.spectral import SAMPLES, head_samples

    cols = _spectral_cols(2.0)
    for name in SAMPLES:
        m = cols[f"{name}_m"].astype(float)
        ll_gg, ll_ln = cols[f"{name}_gg_loglik"], cols[f"{name}_ln_loglik"]
        assert np.all(np.isfinite(ll_gg)) and np.all(np.isfinite(ll_ln))
        assert cols[f"{name}_aic_gg"] == pytest.approx(6 - 2 * ll_gg)
        assert cols[f"{name}_aic_ln"] == pytest.approx(4 - 2 * ll_ln)
        assert cols[f"{name}_bic_gg"] == pytest.approx(3 * np.log(m) - 2 * ll_gg)
        assert cols[f"{name}_bic_ln"] == pytest.approx(2 * np.log(m) - 2 * ll_ln)
    # the first head's samples again: its lognormal KS distance is scipy's
    eig, sv_T, abs_L = _spectral_inputs(2.0, 0, 48, 6)
    sample = head_samples(eig[0], sv_T[0], abs_L[0])
    for name in SAMPLES:
        law = stats.lognorm(s=cols[f"{name}_ln_sigma"][0], scale=cols[f"{name}_ln_scale"][0])
        assert cols[f"{name}_ks_ln"][0] == pytest.approx(
            stats.kstest(sample[name], law.cdf).statistic, rel=1e-9)


def test_gamma_mode_is_defined_for_every_shape_above_one() -> None:
    """``mode = (k - 1) theta`` for every fitted shape ``k > 1`` (including 1 < k <= 2),
    NaN for ``k <= 1``; ``all_shapes_gt1`` says whether all three shapes exceed 1."""
    cols = _spectral_cols(1.6, seed=2, m=200, heads=4)
    for key in ("pos", "neg", "T"):
        k, theta = cols[f"k_{key}"], cols[f"theta_{key}"]
        assert np.all((k > 1) & (k <= 2))
        assert cols[f"mode_{key}"] == pytest.approx((k - 1) * theta)
    assert cols["all_shapes_gt1"].all()
    low = _spectral_cols(0.6, seed=2, m=200, heads=2)
    assert np.all(low["k_pos"] < 1) and np.isnan(low["mode_pos"]).all()
    assert not low["all_shapes_gt1"].any()


# --- batching: the fits of many layers in one call (issue #23) ----------------------------


def test_fits_do_not_depend_on_what_they_are_batched_with() -> None:
    """The stopping rule of every iteration is per row, so a row's fit is the same, bit
    for bit, alone, in a batch of 9 (one layer) or in one batch of all rows."""
    rng = np.random.default_rng(7)
    x = rng.gamma(rng.uniform(0.5, 6.0, (45, 1)), 1.0, size=(45, 40)) ** rng.uniform(
        0.3, 3.0, (45, 1))
    whole = fit_gengamma(x)
    k_all, theta_all, _ = fit_gamma(x)
    c_all, scale_all, _ = fit_weibull(x)
    for a in range(0, 45, 9):
        part = fit_gengamma(x[a:a + 9])
        for name in ("a", "c", "scale", "loglik"):
            assert np.array_equal(getattr(part, name), getattr(whole, name)[a:a + 9]), name
        assert list(part.source) == list(whole.source[a:a + 9])
    for i in (0, 13, 44):
        one = fit_gengamma(x[i:i + 1])
        assert (one.a[0], one.c[0], one.scale[0]) == (whole.a[i], whole.c[i], whole.scale[i])
        assert fit_gamma(x[i:i + 1])[0][0] == k_all[i]
        assert fit_gamma(x[i:i + 1])[1][0] == theta_all[i]
        assert fit_weibull(x[i:i + 1])[:2] == (c_all[i:i + 1], scale_all[i:i + 1])


def test_batched_layers_give_the_per_layer_fits() -> None:
    """``fit_layers`` (all layers in one batch, over two threads) equals the family
    columns of ``layer_task(..., fits=True)`` run layer by layer."""
    from qkforms import Head
    from qkforms.stats.layer import fit_layers, layer_task
    from qkforms.stats.synthetic_rows import survey_rows

    rng = np.random.default_rng(3)
    heads = [Head(*rng.standard_normal((2, 12, 40))) for _ in range(12)]
    h, s = survey_rows("m", heads, heads_per_layer=4)
    payloads = []
    for layer in range(3):
        rows = [i for i, v in enumerate(h["layer"]) if v == layer]
        srows = [i for i, v in enumerate(s["layer"]) if v == layer]
        payloads.append(({k: [v[i] for i in rows] for k, v in h.items()},
                         {k: [v[i] for i in srows] for k, v in s.items()}))
    batched = fit_layers(payloads, threads=2)
    for (hl, sl), cols in zip(payloads, batched, strict=True):
        alone = layer_task(hl, sl, fits=True, baseline=False)["head_stats"]
        without = layer_task(hl, sl, fits=False, baseline=False)["head_stats"]
        assert list(cols) == [k for k in alone if k not in without]
        for k, v in cols.items():
            assert np.array_equal(np.asarray(v, dtype=object),
                                  np.asarray(alone[k], dtype=object)), k
        assert np.isfinite(np.asarray(cols["sigma_T_gg_loglik"], dtype=float)).all()

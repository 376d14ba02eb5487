"""Observation tables against direct recomputation on synthetic heads with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from stats_inputs import (
    gamma_lobe_spectra,
    gaussian_heads,
    join,
    mixed_survey_rows,
    proportional_spectra,
    rank_one_heads,
    rows_from_spectrum,
    survey_rows,
)

from qkforms import accumulation_limit, gram_spectrum, profile_from_eigenvalues, theta_distance
from qkforms.errors import QKFormsError
from qkforms.head import head_energies
from qkforms.stats import POOLED, observations
from qkforms.stats.bootstrap import rng_for
from qkforms.stats.types import TYPES

BOOT = 100

@pytest.fixture(scope="module")
def mixed_survey() -> tuple[dict, dict]:
    """Two Gaussian 'models' of different shapes and one rank-one model."""
    return mixed_survey_rows()


@pytest.fixture(scope="module")
def tables(mixed_survey):
    heads, spectra = mixed_survey
    return observations(heads, spectra, seed=0, n_boot=BOOT)


def _row(table, model, **match):
    for r in table.rows():
        if r["model"] == model and all(r[k] == v for k, v in match.items()):
            return r
    raise AssertionError(f"no row for {model} {match}")


def _col(heads, name, model=None):
    vals = np.asarray([v for v, m in zip(heads[name], heads["model"], strict=True)
                       if model is None or m == model], dtype=float)
    return vals


def test_every_median_and_share_matches_direct_recomputation(mixed_survey, tables) -> None:
    heads, _ = mixed_survey
    for model in ("gauss-a", "gauss-b", "rank-one", POOLED):
        m = None if model == POOLED else model
        for table, name in (("symmetric_energy", "sym_energy"), ("pairing", "pairing"),
                            ("proportional_lobes", "lobe_departure"),
                            ("proportional_lobes", "pairing_gap"), ("proportional_lobes", "rho"),
                            ("accumulation", "theta_dist"), ("accumulation", "b_minus_a"),
                            ("accumulation", "participation_ratio")):
            r = _row(tables[table], model)
            x = _col(heads, name, m)
            assert r[f"{name}_median"] == pytest.approx(np.median(x), abs=1e-15)
            assert r[f"{name}_p10"] == pytest.approx(np.quantile(x, 0.1), abs=1e-15)
            lo, hi = r[f"{name}_median_ci_low"], r[f"{name}_median_ci_high"]
            assert np.min(x) <= lo <= hi <= np.max(x)
        acc = _row(tables["accumulation"], model)
        pr = _col(heads, "participation_ratio", m)
        assert acc["pr_lt2"] == int(np.sum(pr < 2))
        assert acc["pr_lt5_share"] == pytest.approx(np.mean(pr < 5))
        cd = _col(heads, "c", m) * _col(heads, "d", m)
        assert acc["cd_median"] == pytest.approx(np.median(cd))
        bma = _col(heads, "b_minus_a", m)
        df, loc, scale = stats.t.fit(bma)
        assert acc["b_minus_a_t_df"] == pytest.approx(df, rel=1e-6)
        assert acc["b_minus_a_t_loc"] == pytest.approx(loc, rel=1e-6, abs=1e-12)


def test_observation1_counts(mixed_survey, tables) -> None:
    t = tables["observation1_balance"]
    a = _row(t, "gauss-a")
    assert a["heads"] == a["ok"] == a["balanced"] == a["full_signature"] == 12
    assert a["decided"] == a["decided_exact"] == 12  # survey_rows(..., exact=True)
    assert a["surjective"] == a["thm3"] == a["thm3_met"] == 12
    assert a["contradictions"] == a["undecided"] == a["zero_form"] == a["failed"] == 0
    b = _row(t, "gauss-b")
    assert b["balanced"] == b["decided_float"] == 8 and b["decided_exact"] == 0
    # rank-one heads: n = 1 rows, decided in float, each its own Theorem 3 instance
    r = _row(t, "rank-one")
    assert r["thm3_met"] == r["decided"] == 8
    pooled = _row(t, POOLED)
    assert pooled["heads"] == 28 and pooled["balanced"] == 28
    assert pooled["balanced_share"] == 1.0


def test_failed_heads_are_counted_but_not_used(mixed_survey) -> None:
    heads, spectra = (dict((k, list(v)) for k, v in d.items()) for d in mixed_survey)
    heads["status"][0] = "failed"
    heads["n_pos"][0] = None
    heads["status"][1] = "zero_form"
    out = observations(heads, spectra, n_boot=0, fits=False, baseline=False)
    a = _row(out["observation1_balance"], "gauss-a")
    assert (a["heads"], a["ok"], a["failed"], a["zero_form"], a["balanced"]) == (12, 10, 1, 1,
                                                                                 10)
    assert _row(out["symmetric_energy"], "gauss-a")["heads"] == 10


def test_gaussian_heads_symmetric_energy_near_prop5_baseline(tables) -> None:
    base = tables["baseline_heads"]
    for model, N in (("gauss-a", 64), ("gauss-b", 40)):
        r = _row(tables["symmetric_energy"], model)
        assert r["baseline_theory"] == pytest.approx((N + 1) / (2 * N))
        # Gaussian baseline heads: same shape, mean within Monte Carlo error of (N+1)/(2N)
        x = np.asarray([v for v, m in zip(base["sym_energy"], base["model"], strict=True)
                        if m == model])
        assert x.size == r["baseline_heads"]
        assert abs(x.mean() - (N + 1) / (2 * N)) < 4 * x.std(ddof=1) / np.sqrt(x.size)
        # the "trained" heads here are Gaussian too: their median sits near the theory
        assert abs(r["sym_energy_median"] - (N + 1) / (2 * N)) < 0.03


def test_baseline_goes_through_the_core_with_layer_seeds(tables) -> None:
    base = tables["baseline_heads"]
    rows = [r for r in base.rows() if r["model"] == "gauss-b" and r["layer"] == 1]
    assert len(rows) == 4
    rng = rng_for(0, "gaussian-baseline", "gauss-b", 1, 40, 6)
    W_Q = rng.standard_normal((4, 6, 40))
    W_K = rng.standard_normal((4, 6, 40))
    lam = gram_spectrum(W_Q, W_K)
    p = profile_from_eigenvalues(lam, head_energies(W_Q, W_K).norm_sq)
    assert [r["a"] for r in rows] == pytest.approx(np.asarray(p.a), rel=1e-12)
    assert [r["theta_dist"] for r in rows] == pytest.approx(
        np.asarray(theta_distance(np.stack(p, axis=-1))), rel=1e-9, abs=1e-15)
    h2 = np.linalg.svd(np.swapaxes(W_K, -1, -2) @ W_Q, compute_uv=False) ** 2
    pr = h2.sum(axis=1) ** 2 / (h2**2).sum(axis=1)
    assert [r["participation_ratio"] for r in rows] == pytest.approx(pr, rel=1e-9)


def test_rank_one_heads_lie_on_theta(tables) -> None:
    r = _row(tables["accumulation"], "rank-one")
    assert r["theta_dist_median"] < 1e-12
    assert r["pr_lt2"] == r["heads"] == 8
    assert abs(r["b_minus_a_median"]) < 1e-12 and r["cd_median"] < 1e-15
    test = _row(tables["accumulation_test"], "rank-one", null="uniform_simplex")
    assert test["cliffs_delta"] == -1.0  # every rank-one head is closer than every null point
    assert test["p_value"] < 1e-3
    hs = tables["head_stats"]
    geo = [v for v, m in zip(hs["geo_rel_err"], hs["model"], strict=True) if m == "rank-one"]
    assert np.max(geo) < 1e-12  # sigma = sqrt(lambda+ lambda-) exactly for rank one


def test_accumulation_test_matches_scipy(tables) -> None:
    t = _row(tables["accumulation_test"], "gauss-a", null="gaussian")
    hs = tables["head_stats"]
    x = np.asarray([v for v, m in zip(hs["theta_dist"], hs["model"], strict=True)
                    if m == "gauss-a"])
    base = tables["baseline_heads"]
    y = np.asarray([v for v, m in zip(base["theta_dist"], base["model"], strict=True)
                    if m == "gauss-a"])
    res = stats.mannwhitneyu(x, y, alternative="two-sided")
    assert t["p_value"] == pytest.approx(res.pvalue)
    brute = np.mean(np.sign(x[:, None] - y[None, :]))
    assert t["cliffs_delta"] == pytest.approx(brute)
    assert t["median_ratio"] == pytest.approx(np.median(x) / np.median(y))
    assert t["cliffs_delta_ci_low"] <= t["cliffs_delta"] <= t["cliffs_delta_ci_high"]


def test_proportional_lobes_have_zero_departure_and_gap() -> None:
    heads, spectra = rows_from_spectrum("prop", proportional_spectra(10, 16, 4),
                                        heads_per_layer=5)
    out = observations(heads, spectra, n_boot=BOOT, fits=False, baseline=False)
    r = _row(out["proportional_lobes"], "prop")
    assert r["lobe_departure_median"] < 1e-12 and r["lobe_departure_p90"] < 1e-12
    assert abs(r["pairing_gap_median"]) < 1e-12
    assert r["thm5_dist_median"] < 1e-12  # exactly on the Theorem 5 limit curve


def test_gamma_lobes_approach_the_theorem5_limit() -> None:
    rho = 0.5
    limit = np.asarray(accumulation_limit(rho))[1:]  # (b, c, d) = (0.8, 0.2, 0)
    assert limit == pytest.approx([0.8, 0.2, 0.0])
    dists, own, departure = {}, {}, {}
    for n in (64, 1024):
        heads, spectra = rows_from_spectrum(f"gamma{n}",
                                            gamma_lobe_spectra(20, n, rho, 2.0, 7))
        out = observations(heads, spectra, n_boot=BOOT, fits=False, baseline=False)
        hs = out["head_stats"]
        sym = np.stack([np.asarray(hs[c], dtype=float) for c in ("b_S", "c_S", "d_S")], axis=1)
        dists[n] = float(np.median(np.linalg.norm(sym - limit, axis=1)))
        lobes = _row(out["proportional_lobes"], f"gamma{n}")
        assert lobes["rho_median"] == pytest.approx(rho, rel=0.1)
        own[n] = lobes["thm5_dist_median"]  # distance to the limit at each head's own rho
        departure[n] = lobes["lobe_departure_median"]
    # Lemma 6: the lobe departure vanishes; Theorem 5: profiles approach the limit
    assert departure[1024] < departure[64] / 2
    assert own[1024] < own[64] / 5 and own[1024] < 2e-3
    assert dists[1024] < dists[64] / 2 and dists[1024] < 0.035


def test_spectral_types_three_rules_and_sensitivity(mixed_survey, tables) -> None:
    from qkforms import spectral_type
    from qkforms.faces import spectral_type_imbalance

    heads, _ = mixed_survey
    prof = np.stack([np.asarray(heads[c], dtype=float) for c in "abcd"], axis=1)
    models = np.asarray(heads["model"])
    t = tables["spectral_types"]
    assert sorted({r["rule"] for r in t.rows()}) == ["imbalance", "kmeans", "radius"]
    for model in ("gauss-a", "rank-one", POOLED):
        mask = np.ones(len(models), bool) if model == POOLED else models == model
        radius = spectral_type(prof[mask], radius=0.02)
        imb = spectral_type_imbalance(prof[mask])
        for rule, lab in (("radius", radius), ("imbalance", imb)):
            r = _row(t, model, rule=rule)
            for ty in TYPES:
                assert r[f"n_{ty}"] == int(np.sum(lab == ty))
            assert r["parity_plus_share"] == pytest.approx(np.mean(prof[mask, 2] > prof[mask, 3]))
        assert sum(_row(t, model, rule="kmeans")[f"n_{ty}"] for ty in TYPES) == mask.sum()
    assert _row(t, "gauss-a", rule="radius")["survey_type_agreement"] == 1.0
    sens = [r for r in tables["spectral_types_sensitivity"].rows() if r["model"] == POOLED]
    assert [r["radius"] for r in sens] == [0.01, 0.02, 0.03, 0.05, 0.10]
    n_ii = [r["n_II"] for r in sens]
    assert n_ii == sorted(n_ii)  # a larger neighbourhood of b = 1 holds more Type II heads
    for r in sens:
        c_s = prof[:, 2] / (1 - prof[:, 0])
        d_s = prof[:, 3] / (1 - prof[:, 0])
        assert r["n_II"] == int(np.sum(c_s + d_s <= r["radius"]))


def test_spectral_geometry_matches_scipy_gamma_fits(mixed_survey, tables) -> None:
    heads, spectra = mixed_survey
    hs = tables["head_stats"]
    i = 0  # first gauss-a head
    lam = np.asarray(spectra["eig_S"][i])
    sv = np.asarray(spectra["sv_T"][i])
    kp, _, tp = stats.gamma.fit(lam[lam > 0], floc=0)
    kn, _, tn = stats.gamma.fit(-lam[lam < 0], floc=0)
    kt, _, tt = stats.gamma.fit(sv, floc=0)
    assert hs["k_pos"][i] == pytest.approx(kp, rel=1e-5)
    if min(kp, kn, kt) > 1:
        ratio = (kt - 1) * tt / np.sqrt((kp - 1) * tp * (kn - 1) * tn)
        assert hs["mode_ratio"][i] == pytest.approx(ratio, rel=1e-5)
        assert hs["shape_ratio"][i] == pytest.approx(kt / np.sqrt(kp * kn), rel=1e-5)
    pos = np.sort(lam[lam > 0])[::-1]
    neg = np.sort(-lam[lam < 0])[::-1]
    expect = np.linalg.norm(np.sort(sv)[::-1] - np.sqrt(pos * neg)) / np.linalg.norm(sv)
    assert hs["geo_rel_err"][i] == pytest.approx(expect, rel=1e-12)
    corr = np.corrcoef(np.sort(np.abs(lam)), np.sort(np.repeat(sv, 2)))[0, 1]
    assert hs["sorted_corr"][i] == pytest.approx(corr, rel=1e-12)
    g = _row(tables["spectral_geometry"], "gauss-a")
    ok = np.asarray(hs["all_shapes_gt1"], bool) & (np.asarray(hs["model"]) == "gauss-a")
    assert g["heads_all_shapes_gt1"] == int(ok.sum())
    assert g["excluded_shapes_le1"] == 12 - int(ok.sum())
    assert g["mode_ratio_median"] == pytest.approx(np.median(np.asarray(hs["mode_ratio"])[ok]))


def test_family_shares_follow_the_per_head_likelihoods(tables) -> None:
    hs = tables["head_stats"]
    fam = tables["families"]
    models = np.asarray(hs["model"])
    for sample in ("abs_eig_L", "lambda_pos", "lambda_neg", "sigma_T"):
        gg = np.asarray(hs[f"{sample}_gg_loglik"], float)
        ln = np.asarray(hs[f"{sample}_ln_loglik"], float)
        mask = models == "gauss-a"
        r = _row(fam, "gauss-a", sample=sample)
        assert r["heads_fitted"] == 12
        assert r["gengamma_share"] == pytest.approx(np.mean(gg[mask] >= ln[mask]))
        assert r["gengamma_share"] + r["lognormal_share"] == pytest.approx(1.0)
        aic = (6 - 2 * gg[mask]) <= (4 - 2 * ln[mask])
        assert r["aic_gengamma_share"] == pytest.approx(np.mean(aic))
        # rank-one heads have 1-point samples: not fitted
        assert _row(fam, "rank-one", sample=sample)["heads_fitted"] == 0
    summary = {r["sample"]: r for r in tables["families_summary"].rows()}
    for sample, r in summary.items():
        shares = [_row(fam, m, sample=sample)["gengamma_share"] for m in ("gauss-a", "gauss-b")]
        assert r["models"] == 2  # the rank-one model has no fitted head
        assert r["gengamma_share_mean"] == pytest.approx(np.mean(shares))
        assert r["lognormal_share_mean"] == pytest.approx(1 - np.mean(shares))
        assert r["gengamma_share_mean_ci_low"] <= r["gengamma_share_mean"] <= r[
            "gengamma_share_mean_ci_high"]


def test_pooled_bootstrap_is_stratified_and_seeded(mixed_survey) -> None:
    heads, spectra = mixed_survey
    a = observations(heads, spectra, seed=5, n_boot=BOOT, fits=False)
    b = observations(heads, spectra, seed=5, n_boot=BOOT, fits=False)
    c = observations(heads, spectra, seed=6, n_boot=BOOT, fits=False)
    assert a["symmetric_energy"] == b["symmetric_energy"]
    assert a["symmetric_energy"] != c["symmetric_energy"]  # other seed: other CIs/baseline
    # a share that is 1 in every model stays exactly 1 in every stratified replicate
    pooled = _row(a["observation1_balance"], POOLED)
    assert pooled["balanced_share_ci_low"] == pooled["balanced_share_ci_high"] == 1.0


def test_table_intervals_follow_the_row_and_sample_seeding_rule(mixed_survey, tables) -> None:
    """Every interval of a row's heads comes from the replicates named by the row key and
    the sample (docs/statistics.md): recomputed by hand for a median, a share and the
    ratio of a trained median to a baseline median."""
    from qkforms.stats.bootstrap import Draws

    heads, _ = mixed_survey
    q = [0.025, 0.975]
    x = _col(heads, "theta_dist", "gauss-a")
    idx = Draws(0, "accumulation", "gauss-a", "heads").index(None, x.size, BOOT)
    row = _row(tables["accumulation"], "gauss-a")
    assert (row["theta_dist_median_ci_low"], row["theta_dist_median_ci_high"]) == \
        pytest.approx(np.quantile(np.median(x[idx], axis=1), q), rel=1e-12)
    pr = _col(heads, "participation_ratio", "gauss-a")  # same heads: same replicates
    assert (row["pr_lt5_share_ci_low"], row["pr_lt5_share_ci_high"]) == \
        pytest.approx(np.quantile(np.mean(pr[idx] < 5, axis=1), q), rel=1e-12)
    base = tables["baseline_heads"]
    bx = np.asarray([v for v, m in zip(base["sym_energy"], base["model"], strict=True)
                     if m == "gauss-a"], dtype=float)
    sx = _col(heads, "sym_energy", "gauss-a")
    ix = Draws(0, "sym", "gauss-a", "heads").index(None, sx.size, BOOT)
    iy = Draws(0, "sym", "gauss-a", "baseline").index(None, bx.size, BOOT)
    reps = np.median(sx[ix], axis=1) / np.median(bx[iy], axis=1)
    row = _row(tables["symmetric_energy"], "gauss-a")
    assert (row["sym_energy_median_ratio_ci_low"], row["sym_energy_median_ratio_ci_high"]) == \
        pytest.approx(np.quantile(reps, q), rel=1e-12)


def test_missing_columns_are_reported(mixed_survey) -> None:
    heads, spectra = mixed_survey
    broken = {k: v for k, v in heads.items() if k != "theta_dist"}
    with pytest.raises(QKFormsError, match="theta_dist"):
        observations(broken, spectra, n_boot=0)


def test_many_models_pool_into_one_table_set() -> None:
    parts = [survey_rows(f"m{i}", gaussian_heads(3, 4, 16, 20 + i)) for i in range(4)]
    heads, spectra = join(*parts)
    out = observations(heads, spectra, n_boot=0, fits=False, baseline=False)
    models = [r["model"] for r in out["symmetric_energy"].rows()]
    assert models == ["m0", "m1", "m2", "m3", POOLED]
    assert _row(out["symmetric_energy"], POOLED)["heads"] == 12
    assert len(out["head_stats"]) == 12 and len(out["baseline_heads"]) == 0
    _ = rank_one_heads  # (helpers shared with the other test modules)


def test_observations_markdown_lists_nearly_rank_one_layers(tables) -> None:
    from qkforms.stats.output import render_markdown

    text = render_markdown(tables)
    section = text.split("## Layers with nearly rank-one forms", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| rank-one |")]
    assert len(rows) == 2  # both layers of the rank-one model, and no Gaussian layer
    assert "gauss-a" not in section and "gauss-b" not in section


def test_semidefinite_heads_do_not_break_the_tables() -> None:
    rng = np.random.default_rng(12)
    spectra = [np.concatenate([rng.gamma(2.0, 1.0, 8), np.zeros(8)]),      # PSD: d = 0, b = 0
               -np.concatenate([rng.gamma(2.0, 1.0, 8), np.zeros(8)]),     # NSD: c = 0, b = 0
               np.concatenate([rng.gamma(2.0, 1.0, 8), -rng.gamma(2.0, 1.0, 8)])]
    heads, spec = rows_from_spectrum("edge", spectra)
    out = observations(heads, spec, n_boot=20)
    types = {r["rule"]: r for r in out["spectral_types"].rows() if r["model"] == "edge"}
    assert (types["radius"]["n_I+"], types["radius"]["n_I-"]) == (1, 2)  # NSD and the tie
    hs = out["head_stats"]
    assert np.isnan(hs["lobe_departure"][0]) and hs["lambda_neg_best"][0] is None
    assert hs["lambda_pos_best"][0] in ("gengamma", "lognormal")
    assert _row(out["proportional_lobes"], "edge")["lobe_departure_median"] == pytest.approx(
        np.nanmedian(np.asarray(hs["lobe_departure"], float)))


def test_type_shares_are_the_counts_over_the_heads(tables) -> None:
    """share_<type> = n_<type> / heads for every rule and radius (a flipped mask would
    give 1 - share); the shares of a row add up to 1."""
    for name in ("spectral_types", "spectral_types_sensitivity"):
        for r in tables[name].rows():
            total = sum(r[f"n_{ty}"] for ty in TYPES)
            assert total > 0
            for ty in TYPES:
                assert r[f"share_{ty}"] == pytest.approx(r[f"n_{ty}"] / total), (name, r)
            assert sum(r[f"share_{ty}"] for ty in TYPES) == pytest.approx(1.0)


# --- second mutation campaign: each test states the property it checks -------------------


def test_pooled_row_ranges_over_every_models_median(tables) -> None:
    """The pooled row of ``proportional_lobes`` gives the min and max of the per-model
    medians, over all models (not only some of them)."""
    t = tables["proportional_lobes"]
    per_model = [r for r in t.rows() if r["model"] != POOLED]
    assert len(per_model) == 3
    pooled = _row(t, POOLED)
    for name in ("lobe_departure", "pairing_gap", "rho", "thm5_dist"):
        meds = [r[f"{name}_median"] for r in per_model if not np.isnan(r[f"{name}_median"])]
        assert pooled[f"{name}_model_median_min"] == min(meds)
        assert pooled[f"{name}_model_median_max"] == max(meds)


def test_families_quartiles_and_between_model_spread(tables) -> None:
    """``families``: the KS quartiles are those of the per-head KS distances of the model;
    ``families_summary``: mean and sample standard deviation (ddof = 1) of the per-model
    shares, over the models with fitted heads."""
    hs = tables["head_stats"]
    models = np.asarray([str(m) for m in hs["model"]])
    for r in tables["families"].rows():
        if r["model"] == POOLED or r["heads_fitted"] == 0:
            continue
        ks = np.asarray(hs[f"{r['sample']}_ks_gg"], float)[models == r["model"]]
        ks = ks[~np.isnan(ks)]
        assert (r["ks_gengamma_p25"], r["ks_gengamma_p75"]) == pytest.approx(
            np.quantile(ks, [0.25, 0.75]), rel=1e-12)
    for s in tables["families_summary"].rows():
        per = [r for r in tables["families"].rows()
               if r["sample"] == s["sample"] and r["model"] != POOLED and r["heads_fitted"]]
        assert s["models"] == len(per) >= 2
        gg = np.asarray([r["gengamma_share"] for r in per])
        ln = np.asarray([r["lognormal_share"] for r in per])
        assert s["gengamma_share_mean"] == pytest.approx(gg.mean())
        assert s["gengamma_share_sd"] == pytest.approx(gg.std(ddof=1))
        assert s["lognormal_share_sd"] == pytest.approx(ln.std(ddof=1))


def test_families_summary_of_one_model_and_without_bootstrap(mixed_survey) -> None:
    """One model: the spread over models is undefined (NaN, and no warning about degrees
    of freedom); ``n_boot = 0``: no interval, the estimates are still there."""
    import warnings

    heads, spectra = mixed_survey
    keep = [i for i, m in enumerate(heads["model"]) if m == "gauss-a"]
    one_h = {k: [v[i] for i in keep] for k, v in heads.items()}
    one_s = {k: [v[i] for i in keep] for k, v in spectra.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = observations(one_h, one_s, n_boot=0, baseline=False)
    for s in out["families_summary"].rows():
        assert s["models"] == 1 and np.isnan(s["gengamma_share_sd"])
        assert 0.0 <= s["gengamma_share_mean"] <= 1.0
        assert np.isnan(s["gengamma_share_mean_ci_low"])
        assert np.isnan(s["lognormal_share_mean_ci_high"])


def test_by_layer_baseline_is_that_layers_baseline(tables) -> None:
    """``by_layer``: the baseline medians of a (model, layer) row come from the baseline
    heads drawn for that model and layer only."""
    base = tables["baseline_heads"]
    bm = np.asarray([str(m) for m in base["model"]])
    bl = np.asarray([int(v) for v in base["layer"]])
    checked = 0
    for r in tables["by_layer"].rows():
        mask = (bm == r["model"]) & (bl == r["layer"])
        assert mask.sum() == r["heads"]
        for name in ("sym_energy", "pairing", "theta_dist"):
            x = np.asarray(base[name], float)[mask]
            assert r[f"baseline_{name}_median"] == pytest.approx(np.median(x), rel=1e-12)
        checked += 1
    assert checked == 7  # 3 + 2 + 2 layers


def test_accumulation_fits_a_t_law_from_three_heads_and_counts_pr_below_two() -> None:
    """``b_minus_a`` gets a Student-t fit as soon as three finite values vary; ``pr_lt2``
    counts participation ratios strictly below 2 (``diag(1, -1)`` has exactly 2)."""
    gh, gs = survey_rows("three", gaussian_heads(3, 3, 12, 41))
    sh, ss = rows_from_spectrum("pr2", [[1.0, -1.0], [3.0, -1.0], [2.0, 1.0]])
    heads, spectra = join((gh, gs), (sh, ss))
    out = observations(heads, spectra, n_boot=0, fits=False, baseline=False)
    r = _row(out["accumulation"], "three")
    df, loc, scale = stats.t.fit(_col(heads, "b_minus_a", "three"))
    assert r["b_minus_a_t_df"] == pytest.approx(df, rel=1e-6)
    assert r["b_minus_a_t_scale"] == pytest.approx(scale, rel=1e-6)
    pr = _col(heads, "participation_ratio", "pr2")
    assert pr[0] == 2.0 and pr[1] < 2.0
    assert _row(out["accumulation"], "pr2")["pr_lt2"] == int(np.sum(pr < 2)) == 2

"""Statistics over training steps: per-step medians, settling steps, the step-0 baseline."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")

from qkforms.cli import main  # noqa: E402
from qkforms.stats import observations  # noqa: E402
from qkforms.stats.table import read_parquet  # noqa: E402
from qkforms.stats.training import (  # noqa: E402
    MEDIAN_QUANTITIES,
    SETTLE_MARGIN,
    dist_to_M,
    series_tables,
    settle_step,
)
from qkforms.survey.synthetic_checkpoints import write_series  # noqa: E402

STEPS = [0, 10, 20, 40, 80]


@pytest.fixture(scope="module")
def survey_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("sstats")
    run = write_series(base / "run", STEPS, n_layers=2, N=48, n=4, n_q=6, n_kv=3)
    out = base / "out"
    assert main(["survey", str(run), "--out", str(out), "--no-stats", "--no-progress"]) == 0
    return out


@pytest.fixture(scope="module")
def tables(survey_dir: Path):
    heads = read_parquet(survey_dir / "heads.parquet")
    return heads, series_tables(heads, seed=0, n_boot=200)


def _isnull(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def test_settle_step_rule() -> None:
    assert settle_step([0, 1, 2, 3], [5.0, 1.0, 1.0, 1.0], 0.9, 1.1) == 1
    assert settle_step([0, 1, 2, 3], [1.0, 1.0, 1.0, 1.0], 0.9, 1.1) == 0
    assert settle_step([0, 1, 2, 3], [1.0, 5.0, 1.0, 1.0], 0.9, 1.1) == 2  # left and came back
    assert math.isnan(settle_step([0, 1], [1.0, 2.0], 0.9, 1.1))
    assert settle_step([0, 1, 2], [1.0, float("nan"), 1.0], 0.9, 1.1) == 2  # NaN is outside


def test_per_step_rows_are_medians_of_the_heads(tables) -> None:
    heads, out = tables
    steps_t = out["series_steps"]
    assert len(steps_t) == len(STEPS) * 3  # two layers and the pooled row per step
    h = {c: np.asarray(heads[c]) for c in ("step", "layer", "sym_energy", "c", "theta_dist",
                                           "tokens_seen", "a", "b", "d")}
    for r in steps_t.rows():
        mask = h["step"] == r["step"]
        if not _isnull(r["layer"]):
            mask &= h["layer"] == r["layer"]
        assert r["heads"] == r["heads_total"] == int(mask.sum()) == (6 if not _isnull(
            r["layer"]) else 12)
        assert r["tokens_seen"] == r["step"] * 1024
        for q in ("sym_energy", "c", "theta_dist"):
            assert r[f"{q}_median"] == pytest.approx(float(np.median(h[q][mask])), abs=1e-15)
            assert r[f"{q}_median_ci_low"] <= r[f"{q}_median"] <= r[f"{q}_median_ci_high"]
        prof = np.stack([h[k][mask] for k in ("a", "b", "c", "d")], axis=1)
        assert r["dist_M_median"] == pytest.approx(float(np.median(dist_to_M(prof))))
        assert r["balanced"] == r["heads"] and r["balanced_share"] == 1.0
        assert r["share_I+"] + r["share_II"] + r["share_I-"] == pytest.approx(1.0)
    for q in MEDIAN_QUANTITIES:
        assert f"{q}_median_ci_high" in steps_t


def test_settling_follows_the_plateau_rule(tables) -> None:
    _, out = tables
    steps_t, settle = out["series_steps"], out["series_settling"]
    pooled = [r for r in steps_t.rows() if _isnull(r["layer"])]
    row = next(r for r in settle.rows() if r["quantity"] == "c" and _isnull(r["layer"]))
    vals = [r["c_median"] for r in pooled]
    last = pooled[-1]
    span = max(vals) - min(vals)
    low = min(last["c_median_ci_low"], vals[-1]) - SETTLE_MARGIN * span
    high = max(last["c_median_ci_high"], vals[-1]) + SETTLE_MARGIN * span
    assert (row["band_low"], row["band_high"]) == pytest.approx((low, high))
    assert row["settle_step"] == settle_step(STEPS, vals, low, high)
    assert row["first_value"] < 0.1 < 0.4 < row["last_value"]  # the synthetic pull towards c
    assert row["change"] == pytest.approx(vals[-1] - vals[0])
    # the pull grows linearly in the step, so c keeps moving: it settles only late
    assert row["settle_step"] >= 40
    bal = next(r for r in settle.rows() if r["quantity"] == "balanced_share"
               and _isnull(r["layer"]))
    assert bal["settle_step"] == 0 and bal["settled"]  # always balanced (Theorem 3)


def test_step0_is_compared_with_theorem5_and_the_gaussian_baseline(tables) -> None:
    _, out = tables
    init = out["series_init"]
    assert len(init) == 3
    pooled = init.row(2)
    assert _isnull(pooled["layer"]) and pooled["heads"] == 12
    assert pooled["prop5_sym_energy"] == pytest.approx(49 / 96)
    # iid Gaussian heads at step 0: symmetric energy near (N+1)/(2N), profiles near M,
    # symmetric profiles near the Theorem 5 limit, like the Gaussian baseline
    assert abs(pooled["sym_energy_median"] - 49 / 96) < 0.05
    assert pooled["dist_M_median"] < 0.1 and pooled["thm5_dist_median"] < 0.1
    assert pooled["baseline_heads"] == 12 and pooled["baseline_dist_M_median"] < 0.1
    assert -1.0 <= pooled["dist_M_cliffs_delta_ci_low"] <= pooled["dist_M_cliffs_delta"] \
        <= pooled["dist_M_cliffs_delta_ci_high"] <= 1.0


def test_observations_of_a_run_use_the_last_step(survey_dir: Path) -> None:
    heads = read_parquet(survey_dir / "heads.parquet")
    spectra = read_parquet(survey_dir / "spectra.parquet")
    t = observations(heads, spectra, seed=0, n_boot=0, fits=False)
    assert t["observation1_balance"].row(0)["heads"] == 12  # one checkpoint's heads
    assert set(t["head_stats"]["step"].tolist()) == {80}
    assert len(t["series_steps"]) == len(STEPS) * 3
    # a plain survey has no series tables
    plain = heads.take(np.asarray(heads["step"]) == 80).with_column("step", [None] * 12)
    assert "series_steps" not in observations(plain, spectra, n_boot=0, fits=False,
                                              baseline=False)


def test_stats_command_writes_the_series_tables(survey_dir: Path, tmp_path: Path) -> None:
    assert main(["stats", str(survey_dir), "--out", str(tmp_path), "--bootstrap", "50",
                 "--no-fits"]) == 0
    for name in ("series_steps", "series_settling", "series_init"):
        assert (tmp_path / f"{name}.csv").is_file()
    text = (tmp_path / "observations.md").read_text()
    assert "## Training dynamics" in text


def test_dist_to_M_takes_any_leading_shape() -> None:
    """``dist_to_M`` measures the last axis (the four coordinates) for ``(..., 4)`` input."""
    rng = np.random.default_rng(0)
    pts = rng.dirichlet(np.ones(4), size=(2, 3))
    want = np.sqrt(((pts - np.array([0.5, 0.5, 0.0, 0.0])) ** 2).sum(axis=-1))
    assert dist_to_M(pts).shape == (2, 3)
    np.testing.assert_allclose(dist_to_M(pts), want, rtol=1e-14)


def test_last_step_rows_of_tables_without_steps_are_all_rows() -> None:
    """Tables without a ``step`` column (a plain survey) keep every row."""
    from qkforms.stats.table import Table
    from qkforms.stats.training import last_step_rows

    h = Table({"model": ["m", "m", "k"], "layer": [0, 1, 0]})
    s = Table({"model": ["m", "m", "k"], "layer": [0, 1, 0]})
    kept_h, kept_s = last_step_rows(h, s)
    assert kept_h == h and kept_s == s


# --- a tiny constructed run: every value below is worked out by hand ------------------

#: heads per layer (unequal, so a per-layer filter that picks the wrong heads shows; layer 0
#: has a single head, so reading a layer's shape from its second head fails)
_COUNTS = {0: 1, 1: 2, 2: 3}
#: model and head dimension per layer (layer 2 differs in N, layer 1 in n)
_SHAPES = {0: (8, 2), 1: (8, 3), 2: (16, 2)}
#: the value of ``c`` of every head at each step of run "r": pooled and per-layer medians
#: are these values, the band is [1 - 0.05, 1 + 0.05] (n_boot=0: no interval), so ``c``
#: settles at the third step, before the last one
_C_PATH = (0.0, 0.5, 1.0, 1.0)


def _tiny_rows(model: str, step: int, *, c: float = 0.25, failed: int = 0,
               sym: dict[int, list[float]] | None = None) -> dict[str, list]:
    """Rows of one checkpoint: ``_COUNTS`` ok heads per layer, plus ``failed`` failed heads
    in layer 2; ``sym`` gives per-layer symmetric energies (default 0.5)."""
    cols: dict[str, list] = {}

    def add(layer: int, status: str, s: float) -> None:
        N, n = _SHAPES[layer]
        vals = {"model": model, "step": step, "tokens_seen": step * 100, "layer": layer,
                "status": status, "N": N, "n": n, "n_pos": n, "n_neg": n, "n_zero": N - 2 * n,
                "spectral_type": "II", "sym_energy": s, "pairing": 0.1, "rho": 1.0, "a": 0.5,
                "b": 0.25, "c": c, "d": 0.0, "b_S": 0.5, "c_S": 0.25, "d_S": 0.25,
                "theta_dist": 0.1, "thm5_dist": 0.2, "participation_ratio": 3.0,
                "signature_by": "float", "surjective": True, "prediction": "thm3",
                "prediction_met": True}
        for k, v in vals.items():
            cols.setdefault(k, []).append(v)

    for layer, count in _COUNTS.items():
        energies = (sym or {}).get(layer, [0.5] * count)
        for i in range(count):
            add(layer, "ok", energies[i])
    for _ in range(failed):
        add(2, "failed", 0.5)
    return cols


def _tiny_table(*parts: dict[str, list]):
    from qkforms.stats.table import Table

    return Table({k: sum((p[k] for p in parts), []) for k in parts[0]})


@pytest.fixture(scope="module")
def tiny() -> dict:
    """Run "r" starts at step 5 (steps 5, 15, 25, 35), run "z" at step 0 (steps 0, 10)."""
    sym = {0: [0.9], 1: [0.6, 0.7], 2: [0.5, 0.55, 0.8]}
    parts = [_tiny_rows("r", s, c=c, failed=1) for s, c in zip((5, 15, 25, 35), _C_PATH,
                                                                  strict=True)]
    parts += [_tiny_rows("z", 0, sym=sym), _tiny_rows("z", 10)]
    return series_tables(_tiny_table(*parts), seed=0, n_boot=0, baseline=True)


def test_series_steps_count_each_layers_own_heads(tiny) -> None:
    """``heads_total`` of a layer row counts that layer's heads, failed ones included."""
    got = {(r["model"], r["step"], None if _isnull(r["layer"]) else int(r["layer"])):
           (r["heads"], r["heads_total"]) for r in tiny["series_steps"].rows()}
    # layers hold 1, 2, 3 ok heads; run "r" has one failed head in layer 2 at every step
    for step in (5, 15, 25, 35):
        assert got["r", step, 0] == (1, 1) and got["r", step, 1] == (2, 2)
        assert got["r", step, 2] == (3, 4) and got["r", step, None] == (6, 7)
    assert got["z", 0, 0] == (1, 1) and got["z", 0, 2] == (3, 3) and got["z", 0, None] == (6, 6)


def test_settling_of_a_run_that_starts_after_step_0(tiny) -> None:
    """First/last step, settling step, fraction and flag of a run starting at step 5."""
    row = next(r for r in tiny["series_settling"].rows()
               if r["model"] == "r" and r["quantity"] == "c" and _isnull(r["layer"]))
    assert (row["steps"], row["first_step"], row["last_step"]) == (4, 5, 35)
    assert (row["first_value"], row["last_value"], row["range"]) == (0.0, 1.0, 1.0)
    assert (row["band_low"], row["band_high"]) == pytest.approx((0.95, 1.05))
    assert row["settle_step"] == 25 and row["settle_tokens"] == 2500
    assert row["settle_fraction"] == pytest.approx((25 - 5) / (35 - 5))  # 2/3
    assert row["settled"] is True  # settles at step 25, before the last step 35
    # a constant quantity settles at the first step
    const = next(r for r in tiny["series_settling"].rows()
                 if r["model"] == "r" and r["quantity"] == "a" and r["layer"] == 1)
    assert (const["settle_step"], const["settle_fraction"], const["settled"]) == (5, 0.0, True)


def test_series_init_only_for_runs_that_start_at_step_0(tiny) -> None:
    """Run "r" starts at step 5: no step-0 rows; run "z": three layers and the pooled row."""
    init = tiny["series_init"]
    assert init["model"].tolist() == ["z"] * 4
    assert [None if _isnull(v) else int(v) for v in init["layer"]] == [0, 1, 2, None]


def test_series_init_rows_use_each_layers_heads_and_shapes(tiny) -> None:
    """Per layer: its own head count, N, n, Prop. 5 prediction and baseline of equal size."""
    rows = {None if _isnull(r["layer"]) else int(r["layer"]): r
            for r in tiny["series_init"].rows()}
    want = {0: (1, 8, 2, 9 / 16, 0.9), 1: (2, 8, 3, 9 / 16, 0.65), 2: (3, 16, 2, 17 / 32, 0.55)}
    for layer, (heads, N, n, prop5, med) in want.items():
        r = rows[layer]
        assert (r["heads"], r["N"], r["n"], r["baseline_heads"]) == (heads, N, n, heads)
        assert r["prop5_sym_energy"] == pytest.approx(prop5, abs=1e-15)
        assert r["sym_energy_median"] == pytest.approx(med, abs=1e-15)
        assert r["sym_energy_excess_median"] == pytest.approx(med - prop5, abs=1e-15)
    pooled = rows[None]
    # mixed shapes: no single N or n; the prediction is the mean over the six heads
    assert (pooled["heads"], pooled["baseline_heads"]) == (6, 6)
    assert _isnull(pooled["N"]) and _isnull(pooled["n"])
    prop5 = (3 * 9 / 16 + 3 * 17 / 32) / 6
    assert pooled["prop5_sym_energy"] == pytest.approx(prop5, abs=1e-15)
    # energies 0.9, 0.6, 0.7, 0.5, 0.55, 0.8: median (0.6 + 0.7) / 2
    assert pooled["sym_energy_median"] == pytest.approx(0.65, abs=1e-15)
    assert pooled["sym_energy_excess_median"] == pytest.approx(0.65 - prop5, abs=1e-15)


def test_series_init_of_a_step_0_without_ok_heads() -> None:
    """Every step-0 head failed: one pooled row with no heads and NaN, not a crash."""
    step0 = _tiny_rows("z", 0)
    step0["status"] = ["failed"] * len(step0["status"])
    out = series_tables(_tiny_table(step0, _tiny_rows("z", 10)), n_boot=0)
    (row,) = out["series_init"].rows()
    assert _isnull(row["layer"]) and row["heads"] == 0 and _isnull(row["N"])
    assert math.isnan(row["prop5_sym_energy"]) and math.isnan(row["sym_energy_excess_median"])
    assert out["series_steps"].row(3)["heads_total"] == 6  # the failed heads still count

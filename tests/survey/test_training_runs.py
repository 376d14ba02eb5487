"""Training runs as survey sources: discovery, step columns, manifest, resume per checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")

from qkforms.cli import main  # noqa: E402
from qkforms.errors import CheckpointError  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint, write_series  # noqa: E402
from qkforms.survey.training_runs import (  # noqa: E402
    discover_run,
    is_run_directory,
    read_trainer_state,
    series_from_paths,
)

STEPS = [0, 40, 100, 7]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_series(tmp_path_factory.mktemp("series") / "run", STEPS, n_layers=3)


def _state(d: Path, **state: object) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")


# ----------------------------------------------------------------------------- discovery


def test_run_directory_is_ordered_by_step_with_tokens(run_dir: Path) -> None:
    s = discover_run(run_dir)
    assert s.name == "run"
    assert s.steps == [0, 7, 40, 100]  # numeric order, not the names' order
    assert [c.tokens_seen for c in s.checkpoints] == [0, 7 * 1024, 40 * 1024, 100 * 1024]
    assert {c.step_from for c in s.checkpoints} == {"trainer_state"}
    assert is_run_directory(run_dir) and not is_run_directory(run_dir / "checkpoint-7")


def test_name_patterns_and_state_files(tmp_path: Path) -> None:
    root = tmp_path / "r"
    for name in ("step5", "global_step12", "step_30", "checkpoint-2", "notes", "eval"):
        (root / name).mkdir(parents=True)
    _state(root / "final", global_step=99, num_input_tokens_seen=4000)  # no number in name
    s = discover_run(root)
    assert s.steps == [2, 5, 12, 30, 99]
    assert [c.name for c in s.checkpoints] == ["checkpoint-2", "step5", "global_step12",
                                               "step_30", "final"]
    assert s.checkpoints[-1].tokens_seen == 4000 and s.checkpoints[-1].step_from == "trainer_state"
    assert s.checkpoints[0].tokens_seen is None and s.checkpoints[0].step_from == "name"


def test_tokens_from_the_log_history(tmp_path: Path) -> None:
    _state(tmp_path / "c", global_step=20, log_history=[
        {"step": 10, "num_input_tokens_seen": 100}, {"step": 20, "num_input_tokens_seen": 200},
        {"step": 30, "num_input_tokens_seen": 300}])  # an entry after global_step is ignored
    assert read_trainer_state(tmp_path / "c") == (20, 200)


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no checkpoints found"):
        (tmp_path / "empty" / "logs").mkdir(parents=True)
        discover_run(tmp_path / "empty")
    (tmp_path / "dup" / "step3").mkdir(parents=True)
    _state(tmp_path / "dup" / "last", global_step=3)
    with pytest.raises(CheckpointError, match="two checkpoints have step 3"):
        discover_run(tmp_path / "dup")
    _state(tmp_path / "bad" / "checkpoint-5", global_step=6)
    with pytest.raises(CheckpointError, match="says step 5 but trainer_state.json says"):
        discover_run(tmp_path / "bad")
    _state(tmp_path / "junk" / "checkpoint-5", global_step="five")
    with pytest.raises(CheckpointError, match="global_step must be an integer"):
        discover_run(tmp_path / "junk")
    (tmp_path / "anon").mkdir()
    with pytest.raises(CheckpointError, match="cannot tell the training step"):
        series_from_paths([tmp_path / "anon"])


def test_explicit_list_is_ordered_by_step(run_dir: Path) -> None:
    s = series_from_paths([run_dir / "checkpoint-100", run_dir / "checkpoint-0"], name="two")
    assert (s.name, s.steps) == ("two", [0, 100])


# ----------------------------------------------------------------------------- survey


@pytest.fixture(scope="module")
def surveyed(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "s"
    assert main(["survey", str(run_dir), "--out", str(out), "--no-stats", "--no-progress"]) == 0
    return out


def test_heads_carry_step_and_tokens(surveyed: Path, run_dir: Path) -> None:
    heads = pq.read_table(surveyed / "heads.parquet")
    assert heads.num_rows == len(STEPS) * 3 * 4
    assert set(heads.column("model").to_pylist()) == {"run"}
    steps = heads.column("step").to_pylist()
    assert steps == sorted(steps)  # checkpoints in step order, then layer, head
    assert [r["tokens_seen"] for r in heads.select(["step", "tokens_seen"]).to_pylist()] == \
        [s * 1024 for s in steps]
    spectra = pq.read_table(surveyed / "spectra.parquet")
    assert spectra.column("step").to_pylist() == steps  # every head ok here
    # the rows of one checkpoint equal a plain survey of that checkpoint
    plain = surveyed.parent / "plain"
    assert main(["survey", str(run_dir / "checkpoint-40"), "--out", str(plain),
                 "--no-stats", "--no-progress"]) == 0
    one = pq.read_table(plain / "heads.parquet")
    mask = np.asarray(steps) == 40
    mine = heads.filter(mask)
    for col in ("layer", "head", "n_pos", "sym_energy", "a", "b", "c", "d", "theta_dist"):
        assert mine.column(col).to_pylist() == one.column(col).to_pylist(), col
    assert one.column("step").null_count == one.num_rows  # a single model has no step


def test_the_run_moves_from_M_towards_c(surveyed: Path) -> None:
    heads = pq.read_table(surveyed / "heads.parquet").to_pydict()
    step = np.asarray(heads["step"])
    c = np.asarray(heads["c"])
    theta0 = np.asarray(heads["theta_dist"])[step == 0]
    # step 0: iid Gaussian products, profiles near the midpoint M of Θ (small c)
    assert np.median(c[step == 0]) < 0.1 and np.median(theta0) < 0.1
    meds = [np.median(c[step == s]) for s in sorted(set(step.tolist()))]
    assert meds == sorted(meds) and meds[-1] > 0.4  # pulled towards symmetric PSD forms


def test_one_manifest_describes_the_run(surveyed: Path, run_dir: Path) -> None:
    man = json.loads((surveyed / "manifest.json").read_text())
    (run,) = man["runs"]
    assert run["model"] == "run" and run["steps"] == [0, 7, 40, 100]
    assert run["source"] == str(run_dir)
    assert [c["name"] for c in run["checkpoints"]] == [
        "checkpoint-0", "checkpoint-7", "checkpoint-40", "checkpoint-100"]
    assert [m["step"] for m in man["models"]] == [0, 7, 40, 100]
    assert all(m["run"] == run["key"] and len(m["files"]) == 2 for m in man["models"])
    text = (surveyed / "summary.md").read_text()
    assert "## run (training run, 4 checkpoints)" in text
    assert "| 100 | 102400 | 12 | 12 | 0 | 12 |" in text


def test_resume_per_checkpoint_and_layer(surveyed: Path, run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "resumed"
    shutil.copytree(surveyed / "parts", out / "parts")
    # lose two layers of one checkpoint and a whole other checkpoint
    for p in (out / "parts" / "run.step-000000040").glob("layer-000[12].*"):
        p.unlink()
    shutil.rmtree(out / "parts" / "run.step-000000007")
    assert main(["survey", str(run_dir), "--out", str(out), "--resume", "--no-stats",
                 "--no-progress"]) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert [m["resumed_layers"] for m in man["models"]] == [3, 0, 1, 3]
    for name in ("heads", "spectra"):
        assert pq.read_table(out / f"{name}.parquet").equals(
            pq.read_table(surveyed / f"{name}.parquet")), name


def test_resume_refuses_a_changed_step(run_dir: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    moved = tmp_path / "run2"
    shutil.copytree(run_dir, moved)
    out = tmp_path / "o"
    args = ["survey", str(moved), "--out", str(out), "--no-stats", "--no-progress"]
    assert main(args) == 0
    _state(moved / "checkpoint-100", global_step=100, num_input_tokens_seen=5)
    assert main([*args, "--resume"]) != 0
    assert "differs in ids" in capsys.readouterr().err


def test_runs_and_models_together(run_dir: Path, tmp_path: Path) -> None:
    other = write_llama_checkpoint(tmp_path / "plain", n_layers=1, N=16, n=2, n_q=2, n_kv=1)
    out = tmp_path / "mix"
    assert main(["survey", str(other), str(run_dir), "--out", str(out), "--no-stats",
                 "--no-progress", "--layers", "0"]) == 0
    heads = pq.read_table(out / "heads.parquet").to_pydict()
    models = list(dict.fromkeys(heads["model"]))
    assert len(models) == 2 and models[1] == "run"
    assert heads["step"][:2] == [None, None] and heads["step"][2:] == sorted(heads["step"][2:])


def test_series_flag_with_a_list(run_dir: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "list"
    assert main(["survey", "--series", str(run_dir / "checkpoint-100"),
                 str(run_dir / "checkpoint-0"), "--run-name", "pair", "--out", str(out),
                 "--no-stats", "--no-progress"]) == 0
    heads = pq.read_table(out / "heads.parquet")
    assert set(heads.column("model").to_pylist()) == {"pair"}
    assert sorted(set(heads.column("step").to_pylist())) == [0, 100]
    assert main(["survey", "a", "b", "--revisions", "step1", "--out", str(tmp_path / "x")]) == 1
    assert "--revisions takes exactly one SOURCE (a hub id), got 2" in capsys.readouterr().err


def test_a_broken_checkpoint_stops_the_run_and_loses_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_series(tmp_path / "run", [0, 5, 9], n_layers=2)
    weights = run / "checkpoint-5" / "model.safetensors"
    good = weights.read_bytes()
    weights.write_bytes(b"\xff" * 64)  # not a safetensors header
    out = tmp_path / "out"
    args = ["survey", str(run), "--out", str(out), "--no-stats", "--no-progress"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "checkpoint-5" in err and "model.safetensors" in err
    assert sorted(p.name for p in (out / "parts").iterdir()) == ["run.step-000000000"]
    weights.write_bytes(good)
    assert main([*args, "--resume"]) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert [m["resumed_layers"] for m in man["models"]] == [2, 0, 0]
    assert pq.read_table(out / "heads.parquet").num_rows == 3 * 2 * 4

"""A survey killed with SIGKILL mid-run and resumed gives the uninterrupted result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")

from qkforms.cli import main  # noqa: E402
from qkforms.survey.pipeline import DELAY_ENV  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LAYERS = 24


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("resume") / "ckpt"
    # one NaN head, so that failed rows must survive the resume too
    return write_llama_checkpoint(
        path, n_layers=LAYERS, N=64, n=8, n_q=4, n_kv=2, seed=3, nan_heads=[(20, 1)]
    )


def _parts(out: Path) -> list[Path]:
    return sorted((out / "parts").glob("*/layer-*.heads.parquet"))


def test_resume_after_kill_matches_uninterrupted_run(checkpoint: Path, tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    assert main(["survey", str(checkpoint), "--out", str(reference), "--no-stats"]) == 0

    out = tmp_path / "killed"
    env = {
        **os.environ,
        DELAY_ENV: "0.3",
        "PYTHONPATH": str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "qkforms",
            "survey",
            str(checkpoint),
            "--out",
            str(out),
            "--no-stats",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_parts(out)) < 6:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the survey made no progress"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done_before = len(_parts(out))
    assert 6 <= done_before < LAYERS, "the kill must land mid-run"
    assert not (out / "heads.parquet").exists()

    assert main(["survey", str(checkpoint), "--out", str(out), "--resume", "--no-stats"]) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["models"][0]["resumed_layers"] >= done_before
    assert len(_parts(out)) == LAYERS
    assert not list((out / "parts").glob("*/*.tmp-*"))  # no temporary file left behind

    got = pq.read_table(out / "heads.parquet")
    want = pq.read_table(reference / "heads.parquet")
    assert got.num_rows == want.num_rows == LAYERS * 4
    keys = [(r["layer"], r["head"]) for r in got.select(["layer", "head"]).to_pylist()]
    assert len(set(keys)) == len(keys)  # nothing duplicated
    assert got.equals(want)  # nothing lost, every value identical
    assert pq.read_table(out / "spectra.parquet").equals(
        pq.read_table(reference / "spectra.parquet")
    )
    assert sum(r == "failed" for r in got.column("status").to_pylist()) == 1
    # the reference wrote its merged factors while surveying (FactorsStream), the
    # resumed run merged them from the parts at the end: the same file
    assert not list((out / "factors").glob("*.tmp-*"))
    assert not list((reference / "factors").glob("*.tmp-*"))
    [ref_path] = list((reference / "factors").glob("*.npz"))
    with np.load(ref_path) as ref, np.load(out / "factors" / ref_path.name) as res:
        assert list(ref.files) == list(res.files)
        assert len(ref.files) == 2 * LAYERS
        for key in ref.files:
            assert np.array_equal(ref[key], res[key], equal_nan=True), key


def test_fresh_run_discards_old_parts(checkpoint: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert (
        main(["survey", str(checkpoint), "--out", str(out), "--layers", "0-3", "--no-stats"]) == 0
    )
    assert len(_parts(out)) == 4
    # without --resume a new run starts over: old parts of other layers are dropped
    assert main(["survey", str(checkpoint), "--out", str(out), "--layers", "5", "--no-stats"]) == 0
    assert [p.name for p in _parts(out)] == ["layer-0005.heads.parquet"]
    assert pq.read_table(out / "heads.parquet").num_rows == 4


def test_resume_detects_changed_weights_without_hashing_files(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """No full-file sha256 by default: the manifest records sizes, mtimes and the sha256
    of every tensor read (hashed as it streams); rewriting the weights (same size) makes
    ``--resume`` refuse; ``--sha256`` adds the whole-file hashes."""
    import hashlib

    import qkforms.models as qm
    from qkforms.models.sources import sha256

    ckpt = write_llama_checkpoint(tmp_path / "c", n_layers=3, N=32, n=4, n_q=2, n_kv=1,
                                  seed=1)
    out = tmp_path / "o"
    assert main(["survey", str(ckpt), "--out", str(out), "--layers", "0-1",
                 "--no-stats", "--no-progress"]) == 0
    entry = json.loads((out / "manifest.json").read_text())["models"][0]
    weights = ckpt / "model.safetensors"
    files = {Path(f["path"]).name: f for f in entry["files"]}
    assert files["model.safetensors"]["sha256"] is None
    assert files["model.safetensors"]["size"] == weights.stat().st_size
    assert files["model.safetensors"]["mtime_ns"] == weights.stat().st_mtime_ns
    # one hash per tensor read (q and k of layers 0 and 1), that of its stored bytes
    hashes = entry["tensor_sha256"]
    assert len(hashes) == 4
    f = qm.safetensors.SafetensorsFile(str(weights))
    name = "model.layers.1.self_attn.k_proj.weight"
    offset, length = f.byte_range(name)
    with open(weights, "rb") as fh:
        fh.seek(offset)
        assert hashes[name] == hashlib.sha256(fh.read(length)).hexdigest()
    f.close()
    # the same shapes, other weights: same size, new mtime -> resume refused
    size = weights.stat().st_size
    time.sleep(0.01)
    write_llama_checkpoint(tmp_path / "c", n_layers=3, N=32, n=4, n_q=2, n_kv=1, seed=2)
    assert weights.stat().st_size == size
    capsys.readouterr()
    assert main(["survey", str(ckpt), "--out", str(out), "--layers", "0-2", "--resume",
                 "--no-stats", "--no-progress"]) != 0
    assert "differs in files" in capsys.readouterr().err
    assert main(["survey", str(ckpt), "--out", str(out), "--sha256", "--no-stats",
                 "--no-progress"]) == 0
    entry = json.loads((out / "manifest.json").read_text())["models"][0]
    files = {Path(f["path"]).name: f for f in entry["files"]}
    assert files["model.safetensors"]["sha256"] == sha256(str(weights))
    assert len(entry["tensor_sha256"]) == 6


def test_a_failing_survey_leaves_no_unfinished_factors_file(
        checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merged factors file is written while the layers are: a run that fails midway
    removes it (nothing half-written under factors/), and a later run writes it whole."""
    from qkforms.errors import QKFormsError
    from qkforms.survey import pipeline

    real = pipeline._layer_result
    calls = {"n": 0}

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise QKFormsError("injected failure in layer 2")
        return real(*args, **kwargs)

    out = tmp_path / "o"
    monkeypatch.setattr(pipeline, "_layer_result", failing)
    assert main(["survey", str(checkpoint), "--out", str(out), "--layers", "0-5",
                 "--no-stats", "--no-progress"]) != 0
    assert calls["n"] == 3
    factors = out / "factors"
    assert (list(factors.iterdir()) if factors.exists() else []) == []
    monkeypatch.setattr(pipeline, "_layer_result", real)
    assert main(["survey", str(checkpoint), "--out", str(out), "--layers", "0-5",
                 "--no-stats", "--no-progress"]) == 0
    [path] = list((out / "factors").iterdir())
    with np.load(path) as z:
        assert sorted(z.files) == sorted(f"L{i:04d}_{k}_red" for i in range(6) for k in "QK")


def test_a_later_model_failing_removes_the_earlier_models_factors_files(
        checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two RoPE models: the first one's merged factors file is written (under a temporary
    name) while it is surveyed; when the second fails, that file goes too."""
    from qkforms.errors import QKFormsError
    from qkforms.survey import pipeline

    real = pipeline._layer_result
    calls = {"n": 0}

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 8:  # the second model's second layer
            raise QKFormsError("injected failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "_layer_result", failing)
    out = tmp_path / "o"
    assert main(["survey", str(checkpoint), str(checkpoint), "--out", str(out), "--layers",
                 "0-5", "--no-stats", "--no-progress"]) != 0
    assert calls["n"] == 8
    factors = out / "factors"
    assert (list(factors.iterdir()) if factors.exists() else []) == []

"""The training script makes a real run (a tiny llama on Python's documentation text);
the survey of that run is the same with the local and the dask executor.

A shortened run (a few steps of a smaller model) keeps this under a minute; the README's
run uses the script's defaults.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dask.distributed")

from qkforms.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "train_tiny_llama.py"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    run = tmp_path_factory.mktemp("train") / "tiny"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(run), "--steps", "12", "--checkpoints", "3",
         "--layers", "2", "--d-model", "32", "--heads", "4", "--kv-heads", "2", "--batch", "4",
         "--seq", "32", "--warmup", "2"],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run


@pytest.mark.torch
@pytest.mark.slow
def test_the_script_writes_a_hugging_face_run(run_dir: Path) -> None:
    import pydoc_data.topics as topics

    names = sorted(p.name for p in run_dir.iterdir())
    assert names == ["checkpoint-0", "checkpoint-12", "checkpoint-3", "corpus.json"]
    for step in (0, 3, 12):
        ck = run_dir / f"checkpoint-{step}"
        assert {"config.json", "model.safetensors", "trainer_state.json"} <= {
            p.name for p in ck.iterdir()}
        state = json.loads((ck / "trainer_state.json").read_text())
        assert state["global_step"] == step and state["num_input_tokens_seen"] == step * 4 * 32
        assert state["log_history"][-1]["eval_loss"] > 0
    corpus = json.loads((run_dir / "corpus.json").read_text())
    text = "\n\n".join(topics.topics[k] for k in sorted(topics.topics)).encode("utf-8")
    assert corpus["sha256"] == hashlib.sha256(text).hexdigest() and corpus["bytes"] == len(text)
    # training lowers the held-out loss from about ln 256 (uniform over bytes)
    first = json.loads((run_dir / "checkpoint-0" / "trainer_state.json").read_text())
    last = json.loads((run_dir / "checkpoint-12" / "trainer_state.json").read_text())
    loss0, loss1 = first["log_history"][-1]["eval_loss"], last["log_history"][-1]["eval_loss"]
    assert abs(loss0 - np.log(256)) < 0.2 and loss1 < loss0 - 0.3


@pytest.mark.torch
@pytest.mark.slow
def test_local_and_dask_surveys_of_the_run_are_identical(run_dir: Path, tmp_path: Path) -> None:
    local, dask = tmp_path / "local", tmp_path / "dask"
    common = ["--exact", "--no-progress", "--no-stats"]
    assert main(["survey", str(run_dir), "--out", str(local), *common]) == 0
    assert main(["survey", str(run_dir), "--out", str(dask), "--executor", "dask",
                 "--workers", "2", *common]) == 0
    for name in ("heads", "spectra"):
        a, b = pq.read_table(local / f"{name}.parquet"), pq.read_table(dask / f"{name}.parquet")
        assert a.num_rows == (3 * 2 * 4 if name == "heads" else a.num_rows) and a.equals(b)
    heads = pq.read_table(local / "heads.parquet").to_pydict()
    assert heads["model"][0] == "tiny" and sorted(set(heads["step"])) == [0, 3, 12]
    assert all(heads["prediction_met"])  # Theorem 3 holds at every step, decided exactly
    assert set(heads["signature_by"]) == {"exact"}
    step0 = np.asarray(heads["step"]) == 0
    sym = np.asarray(heads["sym_energy"])[step0]
    # the initialization is Gaussian: symmetric energy near (N+1)/(2N) = 33/64
    assert abs(np.median(sym) - 33 / 64) < 0.1

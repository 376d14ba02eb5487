"""``--executor dask``: identical tables to the local executor, and a killed worker loses nothing.

The cluster is a ``LocalCluster`` of two worker processes (one thread each).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")
distributed = pytest.importorskip("dask.distributed")

from qkforms.cli import main  # noqa: E402
from qkforms.survey import SurveyOptions  # noqa: E402
from qkforms.survey.dask_executor import HOLD_ENV  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_series  # noqa: E402
from qkforms.survey.training_runs import discover_run, survey_units, units_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_and_reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("dask")
    run = write_series(base / "run", [0, 30, 60], n_layers=2, N=32, n=4, n_q=4, n_kv=2)
    ref = base / "local"
    assert main(["survey", str(run), "--out", str(ref), "--no-stats", "--no-progress"]) == 0
    return run, ref


def _same(a: Path, b: Path) -> None:
    for name in ("heads", "spectra"):
        ta, tb = pq.read_table(a / f"{name}.parquet"), pq.read_table(b / f"{name}.parquet")
        assert ta.num_rows > 0 and ta.equals(tb), name
    fa = sorted(p.name for p in (a / "factors").glob("*.npz"))
    assert fa == sorted(p.name for p in (b / "factors").glob("*.npz")) and len(fa) == 3


def test_dask_executor_gives_identical_tables(run_and_reference: tuple[Path, Path],
                                              tmp_path: Path) -> None:
    run, ref = run_and_reference
    out = tmp_path / "dask"
    assert main(["survey", str(run), "--out", str(out), "--executor", "dask", "--workers", "2",
                 "--no-stats", "--no-progress"]) == 0
    _same(ref, out)
    import json

    man = json.loads((out / "manifest.json").read_text())
    assert "--executor" in man["argv"] and man["runs"][0]["steps"] == [0, 30, 60]


def test_a_worker_killed_mid_task_loses_nothing(run_and_reference: tuple[Path, Path],
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    run, ref = run_and_reference
    hold = tmp_path / "hold"
    hold.mkdir()
    # every task announces itself (marker with its worker's pid), then waits before working
    monkeypatch.setenv(HOLD_ENV, str(hold))
    monkeypatch.setenv(f"{HOLD_ENV}_S", "1.5")
    killed: list[tuple[str, int]] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for marker in sorted(hold.glob("*.started")):
                task, pid = marker.name.rsplit(".", 2)[0], int(marker.read_text())
                os.kill(pid, signal.SIGKILL)  # the worker process dies inside the task
                killed.append((task, pid))
                return
            time.sleep(0.02)

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        thread = threading.Thread(target=killer)
        thread.start()
        series = discover_run(run)
        out = tmp_path / "killed"
        survey_units(units_for([series]),
                     SurveyOptions(out=out, progress=False, executor="dask", threads=1),
                     series=[series], client=client)
        thread.join()
    finally:
        client.close()
        cluster.close()
    assert len(killed) == 1
    task, pid = killed[0]
    runs_of_task = sorted(hold.glob(f"{task}.*.started"))
    pids = {int(p.read_text()) for p in runs_of_task}
    assert len(runs_of_task) == 2 and pid in pids and len(pids) == 2  # it ran again elsewhere
    assert len(list(hold.glob("*.started"))) == 3 * 2 + 1  # every task, one of them twice
    _same(ref, out)  # nothing lost, every value identical
    assert not list((out / "parts").glob("*/*.tmp-*"))


def test_scheduler_needs_the_dask_executor(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["survey", "minilm", "--scheduler", "tcp://127.0.0.1:1", "--out",
                 str(tmp_path)]) == 1
    assert "--scheduler needs --executor dask" in capsys.readouterr().err


@pytest.mark.torch
def test_hub_revisions_from_the_local_cache(run_and_reference: tuple[Path, Path],
                                            tmp_path: Path) -> None:
    """A hub id with --revisions: each revision is a snapshot of the local HF cache."""
    pytest.importorskip("huggingface_hub")
    run, ref = run_and_reference
    repo = tmp_path / "hub" / "models--org--tiny-run"
    for i, step in enumerate((0, 30, 60)):
        commit = f"{i + 1:040x}"
        snap = repo / "snapshots" / commit
        snap.mkdir(parents=True)
        for f in ("config.json", "model.safetensors"):
            (snap / f).write_bytes((run / f"checkpoint-{step}" / f).read_bytes())
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / f"step{step}").write_text(commit)
    out = tmp_path / "out"
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "qkforms", "survey", "org/tiny-run", "--revisions", "step60",
         "step0", "step30", "--out", str(out), "--no-stats", "--no-progress"],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    got = pq.read_table(out / "heads.parquet")
    want = pq.read_table(ref / "heads.parquet")
    assert set(got.column("model").to_pylist()) == {"org/tiny-run"}
    assert got.column("step").to_pylist() == want.column("step").to_pylist()
    for col in ("layer", "head", "sym_energy", "a", "b", "c", "d", "theta_dist"):
        assert got.column(col).equals(want.column(col)), col
    assert got.column("tokens_seen").null_count == got.num_rows  # no trainer_state there
    missing = subprocess.run(
        [sys.executable, "-m", "qkforms", "survey", "org/tiny-run", "--revisions", "step99",
         "--out", str(tmp_path / "o2"), "--no-stats"],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert missing.returncode == 1 and "at revision 'step99'" in missing.stderr

"""Issue #19, class 2: no hang, no orphan, a clean Ctrl-C, bounded sizes.

Processes are started in their own session and tagged (see conftest.py); every wait
polls with a generous deadline, so the tests hold on a loaded 2-core machine.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from reliability_helpers import (  # noqa: E402
    assert_one_line_error,
    kill_started,
    run_cli,
    start_cli,
    tagged_processes,
    temporaries,
    wait_until,
)

from qkforms.cli import main  # noqa: E402
from qkforms.survey import outdir  # noqa: E402
from qkforms.survey.outdir import LOCK_NAME, OutputLock, process_start_time  # noqa: E402
from qkforms.survey.pipeline import DELAY_ENV  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint  # noqa: E402

LAYERS = 16
linux = pytest.mark.skipif(not sys.platform.startswith("linux"),
                           reason="uses /proc and PR_SET_PDEATHSIG (Linux)")


@pytest.fixture(scope="module")
def long_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_llama_checkpoint(tmp_path_factory.mktemp("long") / "ckpt", n_layers=LAYERS,
                                  N=32, n=4, n_q=4, n_kv=2, seed=7, nan_heads=[(3, 1)])


@pytest.fixture(scope="module")
def reference(long_checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reference") / "out"
    assert main(["survey", str(long_checkpoint), "--out", str(out), "--no-stats",
                 "--no-progress"]) == 0
    return out


def parts(out: Path) -> list[Path]:
    return sorted((out / "parts").glob("*/layer-*.heads.parquet"))


def same_heads(a: Path, b: Path) -> bool:
    return pq.read_table(a / "heads.parquet").equals(pq.read_table(b / "heads.parquet"))


def lock_record(out: Path) -> dict:
    try:
        return json.loads((out / LOCK_NAME).read_text() or "{}")
    except (OSError, json.JSONDecodeError):
        return {}


# --------------------------------------------------------------------------- hangs


def _fifo_model_dir(tmp_path: Path, checkpoint: Path) -> Path:
    d = tmp_path / "fifo-model"
    d.mkdir()
    (d / "config.json").write_bytes((checkpoint / "config.json").read_bytes())
    os.mkfifo(d / "model.safetensors")
    return d


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("case", ["gguf", "safetensors-in-dir", "safetensors-named",
                                  "no-suffix"])
def test_a_fifo_is_refused_at_once(case: str, checkpoint: Path, tmp_path: Path) -> None:
    if case == "gguf":
        source = tmp_path / "model.gguf"
        os.mkfifo(source)
    elif case == "no-suffix":
        source = tmp_path / "weights"
        os.mkfifo(source)
    else:
        d = _fifo_model_dir(tmp_path, checkpoint)
        source = d if case == "safetensors-in-dir" else d / "model.safetensors"
    start = time.monotonic()
    res = run_cli(["survey", str(source), "--out", str(tmp_path / "out"), "--no-stats"],
                  timeout=180)  # a hang fails here instead of blocking the suite
    assert_one_line_error(res, "FIFO", "not a regular file")
    assert time.monotonic() - start < 180


def test_verify_refuses_sizes_beyond_the_limit(capsys) -> None:
    start = time.monotonic()
    assert main(["verify", "--size", "N=100000000", "--lean", "skip"]) == 1
    err = capsys.readouterr().err
    assert_one_line_error((1, err), "N must be an integer between 1 and 16")
    assert time.monotonic() - start < 60


# --------------------------------------------------------------------------- orphans


@linux
def test_workers_die_with_a_killed_parent_and_resume_is_exact(long_checkpoint: Path,
                                                               reference: Path,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = start_cli(["survey", str(long_checkpoint), "--out", str(out), "--workers", "2",
                      "--no-stats", "--no-progress"], **{DELAY_ENV: "0.4"})
    workers: list[int] = []

    def ready() -> bool:
        workers[:] = [int(p) for p, _ in lock_record(out).get("workers", [])]
        tagged = tagged_processes(os.environ["QKFORMS_TEST_TAG"])
        return len(workers) == 2 and bool(parts(out)) and all(w in tagged for w in workers)

    kill_started(proc, ready, "two workers (carrying the test tag) and a first part")
    # the workers die with their parent (PR_SET_PDEATHSIG; the watchdog as fallback)
    wait_until(lambda: not any(outdir.process_alive(w) for w in workers), 60,
               "the workers of the killed parent to die")
    done = len(parts(out))
    time.sleep(1.5)  # longer than a layer's delay: a live worker would add a part
    assert len(parts(out)) == done < LAYERS
    assert not (out / "heads.parquet").exists()
    # a restarted run checks the recorded workers, then resumes; same rows as uninterrupted
    res = run_cli(["survey", str(long_checkpoint), "--out", str(out), "--resume",
                   "--workers", "2", "--no-stats", "--no-progress"])
    assert res.returncode == 0, res.stderr
    assert same_heads(out, reference)
    assert temporaries(out) == [] and not (out / LOCK_NAME).exists()


def test_a_second_live_survey_into_the_same_directory_is_refused(checkpoint: Path,
                                                                  tmp_path: Path,
                                                                  capsys) -> None:
    out = tmp_path / "out"
    with OutputLock(out):  # another survey holds the directory
        assert main(["survey", str(checkpoint), "--out", str(out), "--no-stats"]) == 1
        line = assert_one_line_error((1, capsys.readouterr().err), "another qkforms survey")
        assert f"pid {os.getpid()}" in line
    assert not (out / "parts").exists()
    assert main(["survey", str(checkpoint), "--out", str(out), "--no-stats"]) == 0


@linux
def test_a_restarted_run_waits_for_leftover_workers(checkpoint: Path, tmp_path: Path,
                                                    monkeypatch, capsys) -> None:
    import subprocess

    out = tmp_path / "out"
    out.mkdir()
    leftover = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        wait_until(lambda: process_start_time(leftover.pid) is not None, 60, "the process")
        (out / LOCK_NAME).write_text(json.dumps(
            {"pid": 999999999, "start": None,
             "workers": [[leftover.pid, process_start_time(leftover.pid)]]}))
        monkeypatch.setattr(outdir, "LEFTOVER_WAIT", 1.0)
        assert main(["survey", str(checkpoint), "--out", str(out), "--no-stats"]) == 1
        assert_one_line_error((1, capsys.readouterr().err), "still running",
                              str(leftover.pid))
        assert not (out / "parts").exists()  # nothing written while they live
    finally:
        leftover.kill()
        leftover.wait(timeout=60)
    assert main(["survey", str(checkpoint), "--out", str(out), "--no-stats"]) == 0


# --------------------------------------------------------------------------- Ctrl-C


@linux
@pytest.mark.parametrize(("workers", "sig", "status"), [(1, signal.SIGINT, 130),
                                                         (2, signal.SIGINT, 130),
                                                         (1, signal.SIGTERM, 143)])
def test_ctrl_c_ends_cleanly_and_resume_completes(workers: int, sig: int, status: int,
                                                  long_checkpoint: Path, reference: Path,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = start_cli(["survey", str(long_checkpoint), "--out", str(out), "--workers",
                      str(workers), "--no-stats", "--no-progress"], **{DELAY_ENV: "0.4"})
    try:
        wait_until(lambda: len(parts(out)) >= 2, 240, "two finished layers")
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)  # Ctrl-C reaches the terminal's whole process group
        else:
            os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert_one_line_error((proc.returncode, err), word, "--resume", status=status)
    assert temporaries(out) == []
    assert not (out / LOCK_NAME).exists()
    assert len(parts(out)) < LAYERS
    for p in parts(out):  # every finished part is complete and readable
        assert pq.read_table(p).num_rows == 4
    res = run_cli(["survey", str(long_checkpoint), "--out", str(out), "--resume",
                   "--no-stats", "--no-progress"])
    assert res.returncode == 0, res.stderr
    assert same_heads(out, reference)


def test_a_failing_worker_stops_the_others_in_process(long_checkpoint: Path, tmp_path: Path,
                                                      monkeypatch, capsys) -> None:
    # the test hook's delay is unparsable: every worker's task raises (a clear error,
    # issue #24) after writing its layer; the pool is stopped (the other worker ended and
    # joined) and the error reported in one line
    monkeypatch.setenv(DELAY_ENV, "not-a-number")
    out = tmp_path / "out"
    code = main(["survey", str(long_checkpoint), "--out", str(out), "--workers", "2",
                 "--no-stats", "--no-progress"])
    assert_one_line_error((code, capsys.readouterr().err), DELAY_ENV, "'not-a-number'")
    assert tagged_processes(os.environ["QKFORMS_TEST_TAG"]) == []  # no worker survives
    assert temporaries(out) == [] and not (out / LOCK_NAME).exists()
    assert len(parts(out)) < LAYERS


@linux
def test_dask_workers_die_with_a_killed_parent_and_resume_is_exact(tmp_path: Path) -> None:
    """``kill -9`` of a survey running on a LocalCluster leaves no dask process behind."""
    pytest.importorskip("distributed")
    from qkforms.survey.dask_executor import HOLD_ENV
    from qkforms.survey.synthetic_checkpoints import write_series

    run = write_series(tmp_path / "run", range(0, 60, 10), n_layers=2)
    ref = tmp_path / "ref"
    res = run_cli(["survey", str(run), "--out", str(ref), "--no-stats", "--no-progress"])
    assert res.returncode == 0, res.stderr
    out = tmp_path / "out"
    held = tmp_path / "held"
    held.mkdir()
    proc = start_cli(["survey", str(run), "--out", str(out), "--executor", "dask",
                      "--workers", "2", "--no-stats", "--no-progress"],
                     **{HOLD_ENV: str(held), f"{HOLD_ENV}_S": "2"})
    cluster: list[int] = []

    def started() -> bool:
        cluster[:] = [p for p in tagged_processes(os.environ["QKFORMS_TEST_TAG"])
                      if p != proc.pid]
        return bool(list(held.glob("*.started"))) and bool(cluster)

    kill_started(proc, started, "a dask task to start")
    wait_until(lambda: not any(outdir.process_alive(p) for p in cluster), 120,
               "the LocalCluster of the killed parent to exit")
    assert not (out / "heads.parquet").exists()
    res = run_cli(["survey", str(run), "--out", str(out), "--resume", "--no-stats",
                   "--no-progress"])
    assert res.returncode == 0, res.stderr
    assert same_heads(out, ref)
    assert temporaries(out) == [] and not (out / LOCK_NAME).exists()

"""The survey command's statistics step in a process of its own (issue #23).

The process imports the statistics' modules and draws the Gaussian baselines while the
survey runs, then writes the tables; they must be those of ``qkforms stats`` run on the
same directory, its errors must reach the user as one clear error, and a dead process
must be reported, not waited for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qkforms.cli import main
from qkforms.errors import QKFormsError
from qkforms.stats import baseline
from qkforms.stats.table import read_parquet
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

pytest.importorskip("pyarrow")


def _tables(d: Path) -> dict[str, object]:
    return {p.name: read_parquet(p) for p in sorted(d.glob("*.parquet"))}


def test_tables_of_the_survey_command_equal_those_of_qkforms_stats(tmp_path: Path) -> None:
    ckpt = write_llama_checkpoint(tmp_path / "c", n_layers=2, N=24, n=3, n_q=4, n_kv=2)
    out = tmp_path / "out"
    assert main(["survey", str(ckpt), "--out", str(out), "--no-progress"]) == 0
    again = tmp_path / "again"
    assert main(["stats", str(out), "--out", str(again), "--no-progress"]) == 0
    first, second = _tables(out / "stats"), _tables(again)
    assert first.keys() == second.keys() and "baseline_heads.parquet" in first
    for name in first:
        assert first[name] == second[name], name
    assert len(first["baseline_heads.parquet"]) == 8  # 4 heads in each of 2 layers


def test_an_error_of_the_step_is_raised_here_and_a_dead_process_is_reported(
        tmp_path: Path) -> None:
    from qkforms.main_command import _StatsProcess

    proc = _StatsProcess.start()
    assert proc is not None
    try:
        with pytest.raises(QKFormsError, match="heads.parquet does not exist"):
            proc.run(tmp_path)  # no survey there
    finally:
        proc.stop()
    proc = _StatsProcess.start()
    assert proc is not None
    try:
        proc._proc.kill()
        proc._proc.join(10)
        with pytest.raises(QKFormsError, match="ended before writing .*`qkforms stats "):
            proc.run(tmp_path)
    finally:
        proc.stop()


def test_baselines_computed_ahead_equal_the_direct_ones() -> None:
    """A job done in the background, one taken by the caller before the thread got to
    it, and one whose key differs only in type (3 vs numpy.int64(3): another stream)."""
    jobs = [(3, 16, 2, 7, ("ahead-test", i)) for i in range(40)]
    direct = [baseline._draw(*job) for job in jobs]
    thread = baseline.compute_ahead(jobs)
    last = baseline.baseline_heads(3, N=16, n=2, seed=7, key=("ahead-test", 39))
    thread.join(60)
    got = [baseline.baseline_heads(3, N=16, n=2, seed=7, key=("ahead-test", i))
           for i in range(39)] + [last]
    for a, b in zip(direct, got, strict=True):
        assert a.keys() == b.keys() and all(np.array_equal(a[c], b[c]) for c in a)
    assert not baseline._AHEAD  # every entry handed out once
    baseline.compute_ahead([(3, 16, 2, 7, ("ahead-test", 3))]).join(60)
    other = baseline.baseline_heads(3, N=16, n=2, seed=7, key=("ahead-test", np.int64(3)))
    assert not np.array_equal(other["pairing"], direct[3]["pairing"])
    assert len(baseline._AHEAD) == 1  # the int-keyed job is still waiting for its caller
    baseline._AHEAD.clear()

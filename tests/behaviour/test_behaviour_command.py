"""``qkforms behaviour``'s command line and output files, without running a model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from qkforms.behaviour.command import write_behaviour
from qkforms.behaviour.probe_run import BehaviourOptions, ModelScores
from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS
from qkforms.errors import ParameterError, QKFormsError

ROOT = Path(__file__).resolve().parents[2]


def _scores(model: str, heads: int, value: float) -> ModelScores:
    cols = {c: [value] * heads for c in BEHAVIOUR_COLUMNS}
    cols.update(model=[model] * heads, step=[None] * heads, layer=[0] * heads,
                head=list(range(heads)), kv_head=[0] * heads, N=[8] * heads, n=[2] * heads)
    return ModelScores(cols, {"model": model, "probes": {}, "timings": {"wall_s": 1.0}})


def test_a_run_replaces_its_models_and_keeps_the_others(tmp_path: Path) -> None:
    write_behaviour(tmp_path, [_scores("a", 2, 0.1), _scores("b", 3, 0.2)], BehaviourOptions())
    write_behaviour(tmp_path, [_scores("a", 4, 0.7)], BehaviourOptions(seed=5))
    table = pq.read_table(tmp_path / "behaviour.parquet").to_pydict()
    assert table["model"] == ["b"] * 3 + ["a"] * 4
    assert table["induction"] == [0.2] * 3 + [0.7] * 4
    man = json.loads((tmp_path / "behaviour.json").read_text())
    assert [e["model"] for e in man["models"]] == ["b", "a"]
    assert man["options"]["seed"] == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["behaviour.json", "behaviour.parquet"]


def test_a_table_of_another_version_is_refused_and_kept(tmp_path: Path) -> None:
    write_behaviour(tmp_path, [_scores("a", 2, 0.1)], BehaviourOptions())
    table = pq.read_table(tmp_path / "behaviour.parquet").drop(["sink"])
    pq.write_table(table, tmp_path / "behaviour.parquet")
    before = (tmp_path / "behaviour.parquet").read_bytes()
    with pytest.raises(QKFormsError, match="not this version's"):
        write_behaviour(tmp_path, [_scores("b", 2, 0.1)], BehaviourOptions())
    assert (tmp_path / "behaviour.parquet").read_bytes() == before


def test_options_are_checked() -> None:
    with pytest.raises(ParameterError, match="dtype"):
        BehaviourOptions(dtype="float16")
    with pytest.raises(ParameterError, match="sequences"):
        BehaviourOptions(sequences=0)
    assert BehaviourOptions(sequences=40).batch_for(layers=30, heads=9, length=128) == 7
    assert BehaviourOptions(batch=3).batch_for(layers=30, heads=9, length=128) == 3


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qkforms", "behaviour", *args],
                          capture_output=True, text=True, cwd=ROOT, check=False)


def test_bad_sources_and_numbers_are_one_line_errors(tmp_path: Path) -> None:
    proc = _run("/no/such/model", "--out", str(tmp_path / "out"))
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("qkforms behaviour: error: no such file or directory: "
                                   "'/no/such/model' (and not a short name: minilm, smollm2)")
    assert not (tmp_path / "out").exists()
    proc = _run("minilm", "--sequences", "0", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "--sequences" in proc.stderr
    proc = _run("minilm", "--out", "")
    assert proc.returncode == 2 and "must name a directory" in proc.stderr

"""Issue #19, class 5: one clear line instead of a traceback; nothing half-written.

Operating-system errors (a file as ``--out``, permission denied, a full disk), data
errors (non-numeric config values, corrupt run records, parts and tables), memory
exhaustion and Ctrl-C all end in one line naming the file and the problem, with a
non-zero exit status, and leave no temporary file behind.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")

from reliability_helpers import assert_one_line_error, temporaries  # noqa: E402

import qkforms._fs as fs  # noqa: E402
from qkforms.cli import main  # noqa: E402
from qkforms.errors import CheckpointError  # noqa: E402
from qkforms.models.model import Model  # noqa: E402
from qkforms.survey.outdir import LOCK_NAME  # noqa: E402
from qkforms.survey.store import PartStore  # noqa: E402


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def survey(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    return cli(capsys, "survey", *args, "--no-stats", "--no-progress")


@pytest.fixture(scope="module")
def reference(checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "out"
    assert main(["survey", str(checkpoint), "--out", str(out), "--no-stats",
                 "--no-progress"]) == 0
    return out


def same_heads(a: Path, b: Path) -> bool:
    return pq.read_table(a / "heads.parquet").equals(pq.read_table(b / "heads.parquet"))


# --------------------------------------------------------------------------- --out


def test_out_is_a_file(checkpoint: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "results.txt"
    target.write_text("precious")
    assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(target)),
                          str(target), "not a directory")
    assert target.read_text() == "precious"


def test_out_below_a_file(checkpoint: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "f").write_text("x")
    assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(tmp_path / "f" / "o")),
                          "cannot create the output directory", "Not a directory")


def test_permission_denied(checkpoint: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    # (the tests may run as root, for whom chmod does not deny: fake the refusal instead)
    real_open = os.open

    def deny(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if fs.TMP_MARK in os.fspath(path):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", deny)
    out = tmp_path / "out"
    line = assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out)),
                                 "Permission denied")
    assert str(out) in line
    monkeypatch.undo()
    assert temporaries(out) == [] and not (out / LOCK_NAME).exists()


class _FullDisk:
    """A file object that accepts ``budget`` bytes, then fails like a full disk."""

    def __init__(self, f: Any, budget: int) -> None:
        self._f, self._budget = f, budget

    def write(self, data: Any) -> int:
        n = len(memoryview(data).cast("B"))
        if n > self._budget:
            raise OSError(errno.ENOSPC, "No space left on device")
        self._budget -= n
        return self._f.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()


@pytest.mark.parametrize("budget", [0, 3000])
def test_full_disk_names_the_file_and_leaves_no_temporary(budget: int, checkpoint: Path,
                                                          reference: Path, tmp_path: Path,
                                                          monkeypatch, capsys) -> None:
    out = tmp_path / "out"
    real_fdopen = os.fdopen
    monkeypatch.setattr(fs.os, "fdopen", lambda fd, mode="r", *a, **k: _FullDisk(
        real_fdopen(fd, mode, *a, **k), budget) if "w" in mode else real_fdopen(fd, mode, *a, **k))
    line = assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out)),
                                 "No space left on device", "cannot write", str(out))
    assert "temporary file was removed" in line
    monkeypatch.undo()
    assert temporaries(out) == [], temporaries(out)
    assert not (out / "heads.parquet").exists() and not (out / LOCK_NAME).exists()
    # space freed: the run resumes and gives the uninterrupted result
    assert survey(capsys, str(checkpoint), "--out", str(out), "--resume")[0] == 0
    assert same_heads(out, reference)


def test_full_disk_at_the_final_merge_keeps_the_previous_table(checkpoint: Path,
                                                               tmp_path: Path,
                                                               monkeypatch, capsys) -> None:
    out = tmp_path / "out"
    assert survey(capsys, str(checkpoint), "--out", str(out))[0] == 0
    before = (out / "heads.parquet").read_bytes()
    real_fdopen = os.fdopen
    real_write = fs.atomic_write

    def failing(path: Any, data: Any, **kw: Any) -> None:
        if Path(path).name == "heads.parquet":
            monkeypatch.setattr(fs.os, "fdopen", lambda fd, mode="r", *a, **k: _FullDisk(
                real_fdopen(fd, mode, *a, **k), 100))
        try:
            real_write(path, data, **kw)
        finally:
            monkeypatch.setattr(fs.os, "fdopen", real_fdopen)

    import qkforms.survey.store as store

    monkeypatch.setattr(store, "atomic_write", failing)
    assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out), "--resume"),
                          "heads.parquet", "No space left on device")
    assert (out / "heads.parquet").read_bytes() == before
    assert temporaries(out) == []


# --------------------------------------------------------------------------- data errors


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("rope_theta", "abc", "rope_theta"),
    ("rope_theta", -1.0, "rope_theta"),
    ("partial_rotary_factor", "half", "partial_rotary_factor"),
    ("hidden_size", "576", "hidden_size"),
])
def test_non_numeric_config_values(field: str, value: Any, needle: str, checkpoint: Path,
                                   tmp_path: Path, capsys) -> None:
    import shutil

    d = tmp_path / "model"
    shutil.copytree(checkpoint, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg[field] = value
    (d / "config.json").write_text(json.dumps(cfg))
    assert_one_line_error(survey(capsys, str(d), "--out", str(tmp_path / "out")), needle,
                          repr(value))


def test_gguf_rope_freq_base_a_string(tmp_path: Path, capsys) -> None:
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1)
    w.add_embedding_length(8)
    w.add_head_count(2)
    w.add_head_count_kv(2)
    w.add_string("llama.rope.freq_base", "ten thousand")
    w.add_tensor("blk.0.attn_q.weight", np.zeros((8, 8), dtype=np.float32))
    w.add_tensor("blk.0.attn_k.weight", np.zeros((8, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    from qkforms.models import load

    with pytest.raises(CheckpointError, match="rope.freq_base must be a number"):
        load(path)
    assert_one_line_error(survey(capsys, str(path), "--out", str(tmp_path / "out")),
                          "rope.freq_base", "'ten thousand'")


def test_corrupt_run_record(checkpoint: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert survey(capsys, str(checkpoint), "--out", str(out))[0] == 0
    run_json = next((out / "parts").glob("*/run.json"))
    run_json.write_text('{"files": [')
    assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out), "--resume"),
                          str(run_json), "corrupt")
    assert survey(capsys, str(checkpoint), "--out", str(out))[0] == 0  # without --resume


@pytest.mark.parametrize("kind", ["heads", "spectra"])
def test_a_damaged_part_is_computed_again(kind: str, checkpoint: Path, reference: Path,
                                          tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert survey(capsys, str(checkpoint), "--out", str(out))[0] == 0
    part = next((out / "parts").glob(f"*/layer-0002.{kind}.parquet"))
    part.write_bytes(part.read_bytes()[: len(part.read_bytes()) // 2])
    code, err = survey(capsys, str(checkpoint), "--out", str(out), "--resume")
    assert code == 0 and "layer 2 is computed again" in err
    assert same_heads(out, reference)
    assert json.loads((out / "manifest.json").read_text())["models"][0]["resumed_layers"] == 3


def test_an_unreadable_part_at_merge_is_one_line(checkpoint: Path, tmp_path: Path) -> None:
    store = PartStore(tmp_path, "m")
    store.dir.mkdir(parents=True)
    (store.dir / "layer-0000.heads.parquet").write_bytes(b"PAR1 garbage")
    from qkforms.errors import QKFormsError

    with pytest.raises(QKFormsError, match="layer-0000.heads.parquet: cannot read"):
        store.read_layer(0, "heads")


@pytest.mark.parametrize("command", ["stats", "report"])
def test_corrupt_tables_given_to_stats_and_report(command: str, tmp_path: Path,
                                                  capsys) -> None:
    d = tmp_path / "survey"
    d.mkdir()
    (d / "heads.parquet").write_bytes(b"PAR1 this is not parquet PAR1")
    (d / "spectra.parquet").write_bytes(b"")
    args = [command, str(d)] + (["--no-png"] if command == "report" else [])
    assert_one_line_error(cli(capsys, *args), str(d / "heads.parquet"),
                          "not a readable Parquet file")


def test_out_of_memory_says_what_to_do(checkpoint: Path, tmp_path: Path, monkeypatch,
                                       capsys) -> None:
    def no_memory(self: Model, layer: int, **kw: Any) -> Any:
        raise MemoryError()

    monkeypatch.setattr(Model, "layer", no_memory)
    out = tmp_path / "out"
    assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out)),
                          "out of memory", "--layers", "--workers")
    assert temporaries(out) == [] and not (out / LOCK_NAME).exists()


def test_ctrl_c_in_the_middle_of_a_write(checkpoint: Path, reference: Path, tmp_path: Path,
                                         monkeypatch, capsys) -> None:
    import qkforms.survey.store as store

    real_write = store.atomic_write
    calls = {"n": 0}

    def interrupted(path: Any, data: Any, **kw: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 5:  # inside the second layer's parts, after the temp file exists
            def half(f: Any) -> None:
                f.write(b"half a part")
                raise KeyboardInterrupt
            return real_write(path, half, **kw)
        return real_write(path, data, **kw)

    monkeypatch.setattr(store, "atomic_write", interrupted)
    out = tmp_path / "out"
    code, err = survey(capsys, str(checkpoint), "--out", str(out))
    assert_one_line_error((code, err), "interrupted", "--resume", status=130)
    monkeypatch.undo()
    assert temporaries(out) == [] and not (out / LOCK_NAME).exists()
    assert survey(capsys, str(checkpoint), "--out", str(out), "--resume")[0] == 0
    assert same_heads(out, reference)

"""Issue #19, class 1: nothing outside ``--out`` is ever written or deleted.

The survey never follows a link when it writes or deletes, refuses an output tree with
links (or foreign entries) where it keeps its files, deletes only its own files one by
one, and checks (sanitizes) its output tree on start (docs/survey.md, "What the survey
writes and deletes").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

from reliability_helpers import assert_one_line_error, files_under, temporaries  # noqa: E402

from qkforms._fs import atomic_write, ensure_dir, remove_files  # noqa: E402
from qkforms.cli import main  # noqa: E402
from qkforms.errors import UnsafePathError  # noqa: E402
from qkforms.models import load  # noqa: E402
from qkforms.survey.outdir import LOCK_NAME, sanitize  # noqa: E402

KEY = "synthetic-mistral-4x4q2kv-32-4"


def survey(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["survey", *args, "--no-stats", "--no-progress"])
    return code, capsys.readouterr().err


def test_issue_example_parts_link_to_a_victim_is_refused(checkpoint: Path, tmp_path: Path,
                                                          capsys) -> None:
    # mkdir -p /x/victim/<model> && touch .../thesis.txt && mkdir /x/out && ln -s victim out/parts
    victim = tmp_path / "victim"
    (victim / KEY).mkdir(parents=True)
    (victim / KEY / "thesis.txt").write_text("four years of work")
    (victim / KEY / "layer-0000.heads.parquet").write_text("not the survey's")
    out = tmp_path / "out"
    out.mkdir()
    (out / "parts").symlink_to(victim)
    before = files_under(victim)

    line = assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out)),
                                 "symbolic link", str(out / "parts"))
    assert "never writes or deletes through links" in line
    assert files_under(victim) == before
    assert (victim / KEY / "thesis.txt").read_text() == "four years of work"
    assert (victim / KEY / "layer-0000.heads.parquet").read_text() == "not the survey's"
    assert not (out / "heads.parquet").exists()
    assert not (out / LOCK_NAME).exists()  # released on the way out


@pytest.mark.parametrize("where", ["parts/KEY", "factors", "stats", "heads.parquet",
                                   "manifest.json", "parts/KEY/run.json",
                                   "parts/KEY/layer-0001.heads.parquet", LOCK_NAME])
def test_a_link_anywhere_the_survey_writes_is_refused(where: str, checkpoint: Path,
                                                      tmp_path: Path, capsys) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("x")
    out = tmp_path / "out"
    link = out / where.replace("KEY", KEY)
    link.parent.mkdir(parents=True)
    link.symlink_to(victim if "." not in link.name else victim / "keep.txt")
    code, err = survey(capsys, str(checkpoint), "--out", str(out))
    assert_one_line_error((code, err), str(link))
    assert "symbolic link" in err or "regular file" in err
    assert files_under(victim) == ["keep.txt"]
    assert (victim / "keep.txt").read_text() == "x"
    assert link.is_symlink()  # not replaced, not deleted


def test_a_foreign_entry_of_the_wrong_kind_is_refused(checkpoint: Path, tmp_path: Path,
                                                      capsys) -> None:
    out = tmp_path / "out"
    (out / "heads.parquet").mkdir(parents=True)  # a directory where the table goes
    (out / "heads.parquet" / "mine.txt").write_text("mine")
    assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out)),
                          "heads.parquet", "directory")
    assert (out / "heads.parquet" / "mine.txt").read_text() == "mine"


def test_rerun_deletes_only_its_own_files(checkpoint: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert survey(capsys, str(checkpoint), "--out", str(out))[0] == 0
    parts = out / "parts" / KEY
    (parts / "notes.txt").write_text("mine")
    (parts / "layer-0009.heads.parquet.bak").write_text("mine too")
    (out / "README").write_text("mine")
    (parts / "layer-0002.spectra.parquet.tmp-1-0").write_bytes(b"half")  # a dead write
    assert survey(capsys, str(checkpoint), "--out", str(out))[0] == 0  # no --resume
    assert (parts / "notes.txt").read_text() == "mine"
    assert (parts / "layer-0009.heads.parquet.bak").read_text() == "mine too"
    assert (out / "README").read_text() == "mine"
    assert temporaries(out) == []
    assert sorted(p.name for p in parts.glob("layer-*.heads.parquet")) == [
        f"layer-{i:04d}.heads.parquet" for i in range(4)]


def test_sanitize_removes_only_temporaries_of_its_own_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "parts" / "m").mkdir(parents=True)
    (out / "stats").mkdir()
    names = ["heads.parquet.tmp-12-0", "parts/m/layer-0003.heads.parquet.tmp-7-1",
             "stats/pairing.csv.tmp-9-2"]
    for name in names:
        (out / name).write_bytes(b"")
    (out / "mine.tmp-3").write_bytes(b"")  # not a name the survey writes: kept
    (out / "parts" / "m" / "x.tmp-1-0").write_bytes(b"")  # idem
    assert sorted(sanitize(out)) == sorted(names)
    assert (out / "mine.tmp-3").exists() and (out / "parts" / "m" / "x.tmp-1-0").exists()


def test_fs_primitives_never_follow_links(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "a.txt").write_text("victim")
    root = tmp_path / "out"
    root.mkdir()
    (root / "sub").symlink_to(victim)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        atomic_write(root / "sub" / "a.txt", b"overwritten", root=root)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        ensure_dir(root / "sub" / "deeper", root=root)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        remove_files(root / "sub", lambda name: True, root=root)
    assert (victim / "a.txt").read_text() == "victim"
    assert files_under(victim) == ["a.txt"]
    # a link at the target itself is replaced, never written through
    (root / "t.txt").symlink_to(victim / "a.txt")
    atomic_write(root / "t.txt", b"new", root=root)
    assert not (root / "t.txt").is_symlink() and (root / "t.txt").read_bytes() == b"new"
    assert (victim / "a.txt").read_text() == "victim"
    # remove_files refuses a selected link rather than deleting through it
    (root / "d").mkdir()
    (root / "d" / "l.tmp-1-0").symlink_to(victim / "a.txt")
    with pytest.raises(UnsafePathError):
        remove_files(root / "d", lambda name: True, root=root)
    assert (victim / "a.txt").exists()


def test_stats_and_report_writers_do_not_write_through_links(tmp_path: Path) -> None:
    from qkforms.stats.output import write_tables
    from qkforms.stats.table import Table

    victim = tmp_path / "victim.csv"
    victim.write_text("victim")
    out = tmp_path / "stats"
    out.mkdir()
    os.symlink(victim, out / "pairing.csv")
    write_tables({"pairing": Table({"model": ["m"]})}, out, parquet=False)
    assert victim.read_text() == "victim"
    assert (out / "pairing.csv").read_text().startswith("model")


def test_the_survey_reads_checkpoints_through_links(checkpoint: Path, tmp_path: Path,
                                                    capsys) -> None:
    # reading follows links (the Hugging Face cache is made of them): only writes do not
    linked = tmp_path / "linked"
    linked.mkdir()
    for f in checkpoint.iterdir():
        (linked / f.name).symlink_to(f)
    assert load(linked).info.n_layers == 4
    assert survey(capsys, str(linked), "--out", str(tmp_path / "out"))[0] == 0

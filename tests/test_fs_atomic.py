"""Atomic writes in steps (qkforms._fs.AtomicFile) and in one step (atomic_write)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qkforms._fs import AtomicFile, atomic_write, is_temporary
from qkforms.errors import OutputError, UnsafePathError


def test_nothing_is_in_place_before_commit_and_discard_leaves_the_old_file(
        tmp_path: Path) -> None:
    target = tmp_path / "sub" / "x.bin"
    atomic_write(target, b"old", root=tmp_path)
    f = AtomicFile(target, root=tmp_path)
    f.file.write(b"new")
    f.close()  # no descriptor kept: committed later, the directory is reached again
    assert target.read_bytes() == b"old"
    assert [n for n in os.listdir(target.parent) if is_temporary(n)]
    f.discard()
    assert target.read_bytes() == b"old"
    assert os.listdir(target.parent) == ["x.bin"]
    g = AtomicFile(target, root=tmp_path)
    g.file.write(b"new")
    g.close()
    g.commit()
    assert target.read_bytes() == b"new" and os.listdir(target.parent) == ["x.bin"]
    with pytest.raises(OutputError, match="already committed"):
        g.commit()
    g.discard()  # a no-op once done
    assert target.read_bytes() == b"new"


def test_the_writers_own_error_survives_a_directory_swapped_meanwhile(tmp_path: Path) -> None:
    """The directory is held from creation to the end: a writer that fails after its
    directory was swapped for a link gets its own error, and the temporary goes."""
    (tmp_path / "a").mkdir()

    def write(f: object) -> None:
        os.rename(tmp_path / "a", tmp_path / "a2")
        os.symlink(tmp_path / "a2", tmp_path / "a")
        raise ValueError("the writer's own error")

    with pytest.raises(ValueError, match="own error"):
        atomic_write(tmp_path / "a" / "x.bin", write, root=tmp_path)
    assert os.listdir(tmp_path / "a2") == []  # the temporary was removed


def test_commit_after_close_refuses_a_directory_swapped_for_a_link(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    f = AtomicFile(tmp_path / "a" / "x.bin", root=tmp_path)
    f.file.write(b"x")
    f.close()
    os.rename(tmp_path / "a", tmp_path / "a2")
    os.symlink(tmp_path / "a2", tmp_path / "a")
    with pytest.raises(UnsafePathError):
        f.commit()
    assert not (tmp_path / "a2" / "x.bin").exists()  # nothing written through the link

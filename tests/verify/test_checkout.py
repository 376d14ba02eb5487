"""Finding the checkout whose Lean sources ``verify`` reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from qkforms.cli import main
from qkforms.errors import QKFormsError
from qkforms.verify import verify
from qkforms.verify.checkout import find_root

pytest_plugins = ["verify_fixtures"]


def test_find_root_searches_upward(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = repo / "lean" / "QKForms"
    monkeypatch.chdir(deep)
    assert find_root() == repo
    assert find_root(deep) == repo




def test_lean_dir_must_be_a_checkout(tmp_path: Path, capsys) -> None:
    with pytest.raises(QKFormsError, match="not a qkforms checkout"):
        verify(tmp_path, property_tests=False)
    assert main(["verify", "--lean-dir", str(tmp_path / "nope")]) == 1
    assert "not a directory" in capsys.readouterr().err
    assert main(["verify", "--root", str(tmp_path / "nope")]) == 1  # the former option name
    assert "--lean-dir" in capsys.readouterr().err

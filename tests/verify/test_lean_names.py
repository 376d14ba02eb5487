"""``python -m qkforms.verify.lean_names``: the uses lacking evidence, fragments included."""

from __future__ import annotations

from pathlib import Path

import pytest

from qkforms.verify.lean_names import main

ENTRY = ('source = "Mathlib/Order/Basic.lean"\n'
         'commit = "a3a10db0e9d66acbebf76c5e6a135066525ac900"\n'
         'statement = "theorem le_refl (a : α) : a ≤ a"\nstatus = "read"\n')


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "lakefile.lean").write_text("", encoding="utf-8")
    lib = tmp_path / "lean" / "QKForms"
    lib.mkdir(parents=True)
    (lib / "A.lean").write_text("theorem t (a : ℝ) : a ≤ a := le_refl a\n", encoding="utf-8")
    (tmp_path / "lean" / "names.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(lib)  # the checkout is found upward from the current directory
    return tmp_path.resolve()


def test_a_use_without_evidence_is_listed_until_a_fragment_records_it(
        checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["lean/QKForms/A.lean:1: no evidence for `le_refl`"]
    assert err.strip() == "1 problem(s)"
    (checkout / "lean" / "names.d").mkdir()
    (checkout / "lean" / "names.d" / "wip.toml").write_text('[names."le_refl"]\n' + ENTRY,
                                                            encoding="utf-8")
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert (out, err.strip()) == ("", "0 problem(s)")


def test_all_lists_every_use(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--all"]) == 0
    path = checkout / "lean" / "QKForms" / "A.lean"
    assert capsys.readouterr().out.splitlines() == [f"{path}:1: name le_refl"]

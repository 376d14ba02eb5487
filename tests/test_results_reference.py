"""The table of result ids in docs/architecture.md is generated from the registry."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from qkforms import results_reference
from qkforms.errors import QKFormsError
from qkforms.results_reference import BLOCK, PAGE, PAGE_TEXT, main, render_page, table

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def docs_copy(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    for rel in (PAGE, PAGE_TEXT):
        shutil.copy2(ROOT / rel, tmp_path / rel)
    return tmp_path


def test_the_table_in_the_docs_is_the_registry() -> None:
    assert main(["--root", str(ROOT), "--check"]) == 0
    text = (ROOT / PAGE).read_text(encoding="utf-8")
    assert f"{BLOCK[0]}\n{table()}{BLOCK[1]}" in text


def test_a_registry_change_makes_the_table_stale_until_regenerated(
        docs_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    rows = list(results_reference.RESULTS)
    title = rows[0].title
    rows[0] = dataclasses.replace(rows[0], title="energies, renamed")
    monkeypatch.setattr(results_reference, "RESULTS", tuple(rows))
    assert main(["--root", str(docs_copy), "--check"]) == 1
    assert "stale table of result ids in docs/architecture.md" in capsys.readouterr().err
    assert main(["--root", str(docs_copy)]) == 0
    assert main(["--root", str(docs_copy), "--check"]) == 0
    page = (docs_copy / PAGE).read_text(encoding="utf-8")
    assert f"| `{rows[0].id}` | {rows[0].paper}, energies, renamed |" in page
    assert page.replace("energies, renamed", title) == (ROOT / PAGE).read_text(
        encoding="utf-8")  # nothing else moved


def test_page_text_of_no_result_or_missing_is_reported(docs_copy: Path, capsys) -> None:
    path = docs_copy / PAGE_TEXT
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[lemma3]", "[lemma33]", 1), encoding="utf-8")
    assert main(["--root", str(docs_copy), "--check"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "lemma3: no entry in docs/results.toml",
        "lemma33: an entry in docs/results.toml, but no registered result"]


def test_a_page_without_the_markers_is_refused() -> None:
    with pytest.raises(QKFormsError, match="no block <!-- results:table -->"):
        render_page("no table here\n")

"""Mathlib style habits of the Lean sources that can be checked without a toolchain."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qkforms.registry import RESULTS

ROOT = Path(__file__).resolve().parents[1]
LEAN_FILES = sorted((ROOT / "lean").rglob("*.lean"))


def test_there_are_lean_files() -> None:
    assert len(LEAN_FILES) >= 13


@pytest.mark.parametrize("path", LEAN_FILES, ids=lambda p: p.name)
def test_lines_at_most_100_characters(path: Path) -> None:
    long = [
        i
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > 100
    ]
    assert not long, f"{path.relative_to(ROOT)}: lines longer than 100 characters: {long}"


@pytest.mark.parametrize(
    "path", [p for p in LEAN_FILES if p.parent.name == "QKForms"], ids=lambda p: p.name
)
def test_module_docstring_opens_each_library_file(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    body = re.sub(r"^/-(?!-|!).*?-/\s*", "", text, count=1, flags=re.S)  # copyright header
    body = re.sub(r"^(import .*\n)+\s*", "", body)
    assert body.startswith("/-!"), f"{path.name} does not open with a /-! module docstring"


@pytest.mark.parametrize("result", [r for r in RESULTS if r.lean], ids=lambda r: r.id)
def test_registered_docstrings_name_the_paper_result(result) -> None:  # noqa: ANN001
    """Some tagged docstring of every formalized id names its paper number."""
    tag = f"[qkforms:{result.id}]"
    number = result.paper.split(" (")[0]  # "Theorem 4 (3)" -> "Theorem 4"
    docs = []
    for path in LEAN_FILES:
        for doc in re.findall(r"/--(.*?)-/", path.read_text(encoding="utf-8"), flags=re.S):
            if tag in doc:
                docs.append(" ".join(doc.split()))
    assert docs, f"no docstring carries {tag}"
    assert any(number in d for d in docs), f"no {tag} docstring names {number!r}"

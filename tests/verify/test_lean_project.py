"""The static Lean checks (``lean_project``) on a copy of this repository, one thing broken.

The copy holds ``lean/`` and the three pin files; the registry is the real one. Each
test breaks the copy in one way and checks that the static half of ``verify`` fails
with the specific message and marks the right result ``failed``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from qkforms import registry
from qkforms.verify import verify
from qkforms.verify.checkout import find_root

ROOT = find_root(Path(__file__).resolve().parent)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dst = tmp_path / "qkforms"
    shutil.copytree(ROOT / "lean", dst / "lean", ignore=shutil.ignore_patterns(".lake"))
    for name in ("lakefile.lean", "lean-toolchain", "lake-manifest.json"):
        shutil.copy2(ROOT / name, dst / name)
    return dst


def static_only(root: Path):
    return verify(root, lean="skip", exact_checks=False, property_tests=False)


def test_clean_copy_passes_the_static_checks(copy: Path) -> None:
    report = static_only(copy)
    assert [m for c in report.static for m in c.messages] == []
    assert report.exit_status == 0
    assert {r.lean.status for r in report.rows} == {"not run", "not formalized"}


def test_planted_sorry_in_the_theorem3_file(copy: Path) -> None:
    thm3 = registry.get("thm3")
    path = copy / thm3.lean_file
    lines = path.read_text().splitlines()
    lines.append("theorem planted_gap : (1 : ℕ) = 2 := by")
    lines.append("  sorry")
    path.write_text("\n".join(lines) + "\n")
    report = static_only(copy)
    assert report.exit_status == 1
    expected = f"static check forbidden: {thm3.lean_file}:{len(lines)}: forbidden `sorry`"
    assert [m for m in report.failures() if m.startswith("static check forbidden")] == [
        expected + ": sorry"
    ]
    row = next(r for r in report.rows if r.result.id == "thm3")
    assert row.lean.status == "failed"
    assert row.verdict == "fail"


def test_removed_registered_declaration(copy: Path) -> None:
    thm3 = registry.get("thm3")
    full = thm3.lean[0]
    short = full.rsplit(".", 1)[1]
    path = copy / thm3.lean_file
    text, count = re.subn(rf"\b(theorem|lemma)(\s+){re.escape(short)}\b",
                          rf"\1\2{short}_renamed", path.read_text(), count=1)
    assert count == 1
    path.write_text(text)
    report = static_only(copy)
    assert report.exit_status == 1
    assert (
        f"static check declarations: thm3: registered declaration {full} is not declared in "
        f"lean/ (expected in {thm3.lean_file})"
    ) in report.failures()
    row = next(r for r in report.rows if r.result.id == "thm3")
    assert row.lean.status == "failed"


def test_mismatched_toolchain_pin(copy: Path) -> None:
    (copy / "lean-toolchain").write_text("leanprover/lean4:v4.28.0-rc1\n")
    report = static_only(copy)
    assert report.exit_status == 1
    assert (
        "static check pins: lean-toolchain pins 'leanprover/lean4:v4.28.0-rc1', expected "
        "'leanprover/lean4:v4.27.0'"
    ) in report.failures()

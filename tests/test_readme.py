"""The README's tour runs as written, and CI runs exactly the README's test command."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_readme_examples_run_as_written() -> None:
    result = doctest.testfile(str(README), module_relative=False, verbose=False)
    assert result.attempted >= 10
    assert result.failed == 0


def test_ci_runs_the_readme_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    test_command = next(b.strip() for b in blocks if "test" in b and "pytest" not in b)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci.splitlines()
    script = (ROOT / test_command.split()[-1]).read_text(encoding="utf-8")
    assert "pytest" in script and "pip install" in script


def test_readme_says_lean_was_not_built_here() -> None:
    text = README.read_text(encoding="utf-8")
    assert "No Lean toolchain could be installed" in text
    assert "**not run**" in text

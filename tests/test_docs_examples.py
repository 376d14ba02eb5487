"""The docs match the program: the CLI reference equals ``--help``, every ``>>>`` example
of ``docs/*.md`` runs as written, the tutorial's Python runs on a real survey with the
packages its install line names, and the README states the test command's time."""

from __future__ import annotations

import contextlib
import doctest
import importlib.metadata as md
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from qkforms import cli_reference
from qkforms.cli import SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
OPTION = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")


def test_cli_reference_pages_are_current() -> None:
    assert cli_reference.main(["--root", str(ROOT), "--check"]) == 0


def _help(name: str) -> str:
    env = {**os.environ, "COLUMNS": "200",
           "PYTHONPATH": str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-m", "qkforms", name, "--help"], env=env,
                         capture_output=True, text=True, check=True, timeout=120)
    return out.stdout


def _table(page: str, name: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    begin, end = (m.format(name=name) for m in cli_reference.BLOCK)
    block = text[text.index(begin):text.index(end)]
    return [line.split("|")[1].strip().strip("`") for line in block.splitlines()
            if line.startswith("| `")]


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_option_tables_equal_help(name: str) -> None:
    """Every option and positional of ``--help`` is in the table, and nothing else."""
    helptext = _help(name)
    sections = re.split(r"\n(?=\S[^\n]*:\n)", helptext)
    opts_section = next(s for s in sections if s.startswith("options:"))
    help_options = set(OPTION.findall(re.sub(r"\n {20,}.*", "", opts_section)))
    help_options -= {"-h", "--help"}
    positional = next((s for s in sections if s.startswith("positional arguments:")), "")
    help_positionals = {line.split()[0] for line in positional.splitlines()[1:]
                        if line.startswith("  ") and not line.startswith("    ")}
    for page, names in cli_reference.PAGES.items():
        if name not in names:
            continue
        rows = _table(page, name)
        table_options = {o for r in rows for o in OPTION.findall(r.split(" ")[0] + " "
                                                                 + " ".join(r.split(", ")))}
        table_options = {o for o in table_options if o.startswith("-")}
        table_positionals = {r.split(" ")[0] for r in rows if not r.startswith("-")}
        assert table_options == help_options, (page, table_options ^ help_options)
        assert table_positionals == help_positionals, page


def _md_doctest(path: Path) -> doctest.TestResults:
    return doctest.testfile(str(path), module_relative=False, verbose=False,
                            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


def test_every_docs_example_runs_and_none_is_skipped() -> None:
    pages = [p for p in sorted(DOCS.glob("*.md")) if ">>> " in p.read_text(encoding="utf-8")]
    assert DOCS / "certified.md" in pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "+SKIP" not in text, f"{page.name}: an example a user compares is skipped"
        result = _md_doctest(page)
        assert result.failed == 0 and result.attempted > 0, page.name


def _python_blocks(page: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _install_provides(page: str) -> set[str]:
    """Top-level modules of the distributions the page's ``pip install`` lines install."""
    text = (DOCS / page).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "pip install" in line]
    wanted: set[str] = set()
    extras: set[str] = set()
    for line in lines:
        for m in re.finditer(r'"\.\[([\w,-]+)\]"', line):
            extras |= set(m[1].split(","))
        for word in line.split("pip install", 1)[1].split():
            if not word.startswith(("-", '"', ".")):
                wanted.add(canonicalize_name(Requirement(word).name))
    import importlib.util

    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)  # its extras resolver, not its hooks
    wanted |= set(root_conftest.installed_by(frozenset(extras)))
    modules = {mod for mod, dists in md.packages_distributions().items()
               if {canonicalize_name(d) for d in dists} & wanted}
    return modules | set(sys.stdlib_module_names)


def test_tutorial_snippets_need_only_the_documented_install() -> None:
    provided = _install_provides("tutorial.md")
    for block in _python_blocks("tutorial.md"):
        for mod in re.findall(r"^\s*(?:import|from)\s+(\w+)", block, flags=re.M):
            assert mod in provided, f"tutorial.md imports {mod}, which its install omits"


@pytest.mark.slow
def test_tutorial_python_runs_on_a_real_survey(tmp_path: Path, monkeypatch) -> None:
    """Step 1 of the tutorial (without ``--exact``), then its Python block as written."""
    from qkforms.cli import main

    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["survey", "smollm2", "--out", "survey-out", "--no-stats",
                     "--no-progress"]) == 0
    (block,) = _python_blocks("tutorial.md")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "tutorial.md", "exec"), {})  # noqa: S102 - our own docs
    text = out.getvalue()
    assert re.search(r"^64\s+64\s+448\s+270$", text, flags=re.M), text  # every head
    assert "theta_dist" in text or "count    270" in text


def test_statistics_snippet_runs() -> None:
    import numpy as np

    from qkforms import Head
    from qkforms.stats.synthetic_rows import survey_rows

    rng = np.random.default_rng(2)
    heads_df, spectra_df = survey_rows("toy", [Head(*rng.standard_normal((2, 2, 10)))
                                               for _ in range(4)])
    (block,) = _python_blocks("statistics.md")
    scope = {"heads_df": heads_df, "spectra_df": spectra_df}
    exec(compile(block, "statistics.md", "exec"), scope)  # noqa: S102 - our own docs
    assert "observation1_balance" in scope["tables"]


def test_readme_states_the_test_commands_time() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"about 6 min", text) and re.search(r"30 min", text)

"""The command-line reference pages, generated from the argparse definitions.

The options of every subcommand are defined once, in its module's ``configure(parser)``
(:data:`qkforms.cli.SUBCOMMANDS`). This module renders them as Markdown -- the usage
line and a table of every argument with its default and help text -- into
``docs/cli.md`` (all commands) and into the marked blocks of the command pages
(``docs/survey.md``: the block between ``<!-- cli:survey -->`` and
``<!-- /cli:survey -->``). ``python -m qkforms.cli_reference`` rewrites those files in a
checkout; ``--check`` only reports whether they are current (the docs tests run it and
compare the tables with ``--help``).

Examples
--------
>>> text = reference("stats")
>>> text.splitlines()[0]
'### `qkforms stats`'
>>> "| `--no-fits` | off | skip the generalized-gamma / lognormal family fits |" in text
True
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from qkforms.cli import SUBCOMMANDS
from qkforms.errors import QKFormsError

__all__ = ["BLOCK", "PAGES", "main", "parser_for", "reference", "render_blocks", "rows"]

#: width of the usage lines in the pages (independent of the terminal)
WIDTH = 92
#: the page holding every command's reference, and the pages with one command's block
PAGES: dict[str, tuple[str, ...]] = {"docs/cli.md": tuple(SUBCOMMANDS),
                                     "docs/survey.md": ("survey",)}
#: the markers around a generated block (``{name}``: the subcommand)
BLOCK = ("<!-- cli:{name} -->", "<!-- /cli:{name} -->")


def parser_for(name: str) -> argparse.ArgumentParser:
    """The parser of ``qkforms NAME`` exactly as :func:`qkforms.cli.main` builds it.

    Examples
    --------
    >>> parser_for("report").prog
    'qkforms report'
    """
    module = importlib.import_module(SUBCOMMANDS[name][0])
    parser = argparse.ArgumentParser(
        prog=f"qkforms {name}", description=SUBCOMMANDS[name][1],
        formatter_class=lambda prog: argparse.HelpFormatter(prog, width=WIDTH))
    module.configure(parser)
    return parser


def _label(action: argparse.Action) -> str:
    if not action.option_strings:
        metavar = action.metavar or action.dest
        return f"{metavar} ..." if action.nargs in ("*", "+") else str(metavar)
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return names
    if action.choices is not None and action.metavar is None:
        value = "|".join(str(c) for c in action.choices)
    else:
        value = str(action.metavar or action.dest.upper())
    more = " ..." if action.nargs in ("*", "+") else ""
    return f"{names} {value}{more}"


def _default(action: argparse.Action) -> str:
    if action.nargs == 0:  # a flag: not given by default
        return "off"
    value = action.default
    if value is None or value == argparse.SUPPRESS:
        return "—"
    if isinstance(value, list | tuple):
        return " ".join(f"`{v}`" for v in value)
    return f"`{value}`"


def rows(parser: argparse.ArgumentParser) -> list[tuple[str, str, str]]:
    """``(argument, default, help)`` for every argument of ``parser`` but ``-h``.

    Examples
    --------
    >>> rows(parser_for("report"))[0]
    ('DIR', '—', 'survey output directory')
    """
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        text = " ".join((action.help or "").split())
        if "%(default)" in text:
            text = text % {"default": action.default}
        out.append((_label(action), _default(action), text))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference(name: str) -> str:
    """The Markdown reference of ``qkforms NAME``: heading, usage and options table."""
    parser = parser_for(name)
    usage = parser.format_usage().strip()
    lines = [f"### `qkforms {name}`", "", f"{SUBCOMMANDS[name][1].capitalize()}.", "",
             "```text", usage, "```", "", "| argument | default | meaning |", "|---|---|---|"]
    lines += [f"| `{_cell(arg)}` | {_cell(default)} | {_cell(text)} |"
              for arg, default, text in rows(parser)]
    return "\n".join(lines) + "\n"


def render_blocks(text: str, names: Sequence[str]) -> str:
    """``text`` with the generated block of every command in ``names`` brought up to date.

    Raises
    ------
    QKFormsError
        When a block's markers are missing.

    Examples
    --------
    >>> page = "intro\\n<!-- cli:stats -->\\nold\\n<!-- /cli:stats -->\\nrest\\n"
    >>> new = render_blocks(page, ["stats"])
    >>> new.startswith("intro\\n<!-- cli:stats -->\\n### `qkforms stats`"), new.endswith("rest\\n")
    (True, True)
    """
    for name in names:
        begin, end = (m.format(name=name) for m in BLOCK)
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
        if not pattern.search(text):
            raise QKFormsError(f"no block {begin} ... {end}")
        block = f"{begin}\n{reference(name)}{end}"
        text = pattern.sub(lambda _m: block, text)  # noqa: B023 - used at once
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the generated blocks of :data:`PAGES` under ``--root`` (default: the
    current directory); with ``--check`` print the stale pages and return 1 instead."""
    p = argparse.ArgumentParser(prog="python -m qkforms.cli_reference",
                                description="regenerate the CLI reference in docs/")
    p.add_argument("--root", type=Path, default=Path("."), help="the checkout")
    p.add_argument("--check", action="store_true", help="only report stale pages")
    args = p.parse_args(argv)
    stale = []
    for page, names in PAGES.items():
        path = args.root / page
        old = path.read_text(encoding="utf-8")
        new = render_blocks(old, names)
        if new != old:
            stale.append(page)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(f"stale CLI reference: {', '.join(stale)} (run python -m qkforms.cli_reference)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

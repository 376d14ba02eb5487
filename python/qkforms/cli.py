"""The ``qkforms`` command line.

Each subcommand lives in the module that holds its concept and is imported only
when that subcommand runs, so ``qkforms --help`` stays light. A subcommand module
exposes ``configure(parser)`` (add its arguments) and ``run(args) -> int``.

Examples
--------
>>> from qkforms.cli import build_parser
>>> sorted(build_parser()._subparsers._group_actions[0].choices)  # doctest: +NORMALIZE_WHITESPACE
['report', 'stats', 'survey', 'verify']
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from qkforms.errors import QKFormsError

#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "survey": ("qkforms.survey.command", "survey the attention heads of real models"),
    "stats": ("qkforms.stats.command", "observation tables from survey outputs"),
    "report": ("qkforms.report.command", "offline HTML report of a survey"),
    "verify": ("qkforms.verify", "check Lean and Python side by side, theorem by theorem"),
}


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser; subcommand arguments load lazily in :func:`main`."""
    from qkforms import __version__

    parser = argparse.ArgumentParser(
        prog="qkforms",
        description="Bilinear forms of attention heads: theorems, checks and survey.",
    )
    parser.add_argument("--version", action="version", version=f"qkforms {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in SUBCOMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0] not in SUBCOMMANDS:
        args = parser.parse_args(argv)
        parser.print_help()
        return 0 if args.command is None and not argv else 2
    name = argv[0]
    module = importlib.import_module(SUBCOMMANDS[name][0])
    sub = argparse.ArgumentParser(prog=f"qkforms {name}", description=SUBCOMMANDS[name][1])
    module.configure(sub)
    args = sub.parse_args(argv[1:])
    try:
        return int(module.run(args))
    except QKFormsError as exc:
        print(f"qkforms {name}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""The ``qkforms`` command line.

Each subcommand lives in the module that holds its concept and is imported only
when that subcommand runs, so ``qkforms --help`` stays light. A subcommand module
exposes ``configure(parser)`` (add its arguments) and ``run(args) -> int``.

Examples
--------
>>> from qkforms.cli import build_parser
>>> sorted(build_parser()._subparsers._group_actions[0].choices)  # doctest: +NORMALIZE_WHITESPACE
['behaviour', 'report', 'stats', 'survey', 'verify']
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from qkforms import __version__
from qkforms._fs import describe_os_error

# the typed values live in qkforms.arguments (a ground module the commands share); they
# stay importable from here, where the commands have always found them
from qkforms.arguments import (
    MAX_SEED,
    bounded_float,
    bounded_int,
    directory_arg,
    env_number,
    parse_real,
    scheduler_arg,
    seconds_arg,
    seed_arg,
)
from qkforms.errors import QKFormsError

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "MAX_SEED",
    "SUBCOMMANDS",
    "Terminated",
    "bounded_float",
    "bounded_int",
    "build_parser",
    "directory_arg",
    "env_number",
    "main",
    "one_line",
    "parse_real",
    "run_reporting_errors",
    "scheduler_arg",
    "seconds_arg",
    "seed_arg",
]

#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "survey": ("qkforms.main_command", "survey the attention heads of real models"),
    "stats": ("qkforms.stats_command", "observation tables from survey outputs"),
    "report": ("qkforms.report.command", "offline HTML report of a survey"),
    "behaviour": ("qkforms.behaviour.command",
                  "score what every head does (previous-token, induction, ...) by running "
                  "the model"),
    "verify": ("qkforms.verify", "check Lean and Python side by side, theorem by theorem"),
}


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser; subcommand arguments load lazily in :func:`main`."""
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
    """Run the command line; return the process exit status.

    Without ``argv`` this process is the ``qkforms`` program itself, and ``qkforms
    survey`` then first sets the survey's allocator policy for the process
    (:func:`qkforms.allocator.keep_freed_memory`; never when called with ``argv``, e.g.
    from another program or a test).
    """
    own_process = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if own_process and argv[:1] == ["survey"]:
        from qkforms.allocator import keep_freed_memory

        keep_freed_memory()
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
    return run_reporting_errors(name, lambda: int(module.run(args)))


#: exit status after Ctrl-C (128 + SIGINT), as shells report it
EXIT_INTERRUPTED = 130
#: exit status after SIGTERM (128 + SIGTERM)
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that the same clean-up runs."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def one_line(message: str) -> str:
    """An error message on one line (messages of libraries may hold newlines).

    Examples
    --------
    >>> one_line("Couldn't deserialize thrift: bad \\n)")
    "Couldn't deserialize thrift: bad )"
    """
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def run_reporting_errors(name: str, func: Callable[[], int]) -> int:
    """Run a subcommand; turn every expected failure into one line on stderr.

    ``QKFormsError`` (the package's own errors), operating-system errors (naming the
    file: permission denied, disk full, ...) and ``MemoryError`` (with what to do) exit
    with status 1; Ctrl-C exits with 130 and SIGTERM with 143, after the clean-up of
    the command (temporary files removed, worker processes ended). Anything else is a
    bug and keeps its traceback.

    Examples
    --------
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> def full_disk() -> int:
    ...     raise OSError(28, "No space left on device", "out/heads.parquet")
    >>> with contextlib.redirect_stderr(err):
    ...     status = run_reporting_errors("survey", full_disk)
    >>> status, err.getvalue()
    (1, 'qkforms survey: error: out/heads.parquet: No space left on device\\n')
    """
    import signal
    import threading

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return func()
    except QKFormsError as exc:
        print(f"qkforms {name}: error: {one_line(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        what = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted (Ctrl-C)"
        hint = ("; the finished layers are kept and temporary files were removed: rerun with "
                "--resume to continue" if name == "survey" else
                "; temporary files were removed")
        print(f"qkforms {name}: {what}{hint}", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    except MemoryError:
        print(f"qkforms {name}: error: out of memory. Survey fewer layers at a time "
              "(--layers 0-9, then --layers 10-19 ... with --resume), use fewer --workers "
              "or --threads, or run on a machine with more memory", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"qkforms {name}: error: {one_line(describe_os_error(exc))}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

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
from pathlib import Path

from qkforms.errors import QKFormsError

#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "survey": ("qkforms.main_command", "survey the attention heads of real models"),
    "stats": ("qkforms.stats.command", "observation tables from survey outputs"),
    "report": ("qkforms.report.command", "offline HTML report of a survey"),
    "behaviour": ("qkforms.behaviour.command",
                  "score what every head does (previous-token, induction, ...) by running "
                  "the model"),
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
    return run_reporting_errors(name, lambda: int(module.run(args)))


def bounded_int(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[low, high]`` (a clear message otherwise).

    The one parser of every integer option (counts, sizes, seeds: :func:`seed_arg`).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(prog="qkforms stats")
    >>> _ = p.add_argument("--bootstrap", type=bounded_int(0, 100_000))
    >>> p.parse_args(["--bootstrap", "200"]).bootstrap
    200
    >>> bounded_int(0)("-5")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be an integer >= 0, got -5
    >>> bounded_int(1, 10)("1e3")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected an integer, got '1e3'
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f">= {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"must be an integer {bounds}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


#: largest seed: the random streams take the seed as one 32-bit word
MAX_SEED = 2**32 - 1


def seed_arg(text: str) -> int:
    """An argparse ``type`` for a seed: an integer in ``[0, 2**32 - 1]``.

    (A negative or larger seed would silently alias another one.)

    Examples
    --------
    >>> seed_arg("7")
    7
    >>> seed_arg("-1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be an integer between 0 and 4294967295, got -1
    """
    return bounded_int(0, MAX_SEED)(text)


def parse_real(text: str, low: float | None = None, high: float | None = None, *,
               low_open: bool = False) -> float:
    """A finite real number in a range, from text; ``ParameterError`` with the reason otherwise.

    The one parser of real numbers given as text (options and environment variables).

    Examples
    --------
    >>> parse_real("2.5", 0, low_open=True)
    2.5
    >>> parse_real("nan", 0)
    Traceback (most recent call last):
    qkforms.errors.ParameterError: must be a finite number, got 'nan'
    >>> parse_real("0", 0, low_open=True)
    Traceback (most recent call last):
    qkforms.errors.ParameterError: must be a number > 0, got 0.0
    """
    import math

    from qkforms.errors import ParameterError

    try:
        value = float(text)
    except ValueError:
        raise ParameterError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ParameterError(f"must be a finite number, got {text!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    if too_low or (high is not None and value > high):
        lo = "" if low is None else f"{'>' if low_open else '>='} {low:g}"
        hi = "" if high is None else f"<= {high:g}"
        raise ParameterError(f"must be a number {' and '.join(b for b in (lo, hi) if b)}, "
                         f"got {value!r}")
    return value


def bounded_float(low: float | None = None, high: float | None = None, *,
                  low_open: bool = False) -> Callable[[str], float]:
    """An argparse ``type``: a finite real number in a range (NaN and inf refused).

    Examples
    --------
    >>> seconds = bounded_float(0, low_open=True)
    >>> seconds("90")
    90.0
    >>> seconds("-1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a number > 0, got -1.0
    """
    def parse(text: str) -> float:
        try:
            return parse_real(text, low, high, low_open=low_open)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "number"
    return parse


#: an argparse ``type`` for a duration in seconds (a timeout): finite and > 0
seconds_arg = bounded_float(0, low_open=True)


def env_number(name: str, default: float, low: float = 0.0) -> float:
    """A number from the environment variable ``name`` (``default`` when unset or empty).

    Raises
    ------
    ParameterError
        Naming the variable, when its value is not a finite number ``>= low``.

    Examples
    --------
    >>> import os
    >>> os.environ["QKFORMS_DOCTEST_NUMBER"] = "soon"
    >>> try:
    ...     env_number("QKFORMS_DOCTEST_NUMBER", 0.0)
    ... except QKFormsError as exc:
    ...     print(exc)
    environment variable QKFORMS_DOCTEST_NUMBER: expected a number, got 'soon'
    >>> del os.environ["QKFORMS_DOCTEST_NUMBER"]
    >>> env_number("QKFORMS_DOCTEST_NUMBER", 1.5)
    1.5
    """
    import os

    from qkforms.errors import ParameterError

    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return parse_real(text, low)
    except ValueError as exc:
        raise ParameterError(f"environment variable {name}: {exc}") from None


def scheduler_arg(text: str) -> str:
    """An argparse ``type`` for a dask scheduler address: ``[tcp://]host:port`` and the like.

    Examples
    --------
    >>> scheduler_arg("tcp://10.0.0.5:8786")
    'tcp://10.0.0.5:8786'
    >>> scheduler_arg("not a url")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected an address like tcp://HOST:PORT, got 'not a url'
    """
    import re

    m = re.fullmatch(r"(?:(?P<scheme>[a-z][a-z0-9+.-]*)://)?(?P<host>\[[0-9a-fA-F:.]+\]|"
                     r"[A-Za-z0-9_.-]+)(?::(?P<port>\d{1,5}))?/?", text.strip())
    if m is None or (m.group("scheme") is None and m.group("port") is None) or (
            m.group("port") is not None and not 0 < int(m.group("port")) < 65536):
        raise argparse.ArgumentTypeError(
            f"expected an address like tcp://HOST:PORT, got {text!r}")
    return text.strip()


def directory_arg(text: str) -> Path:
    """An argparse ``type`` for an output directory: a non-empty path.

    ``Path("")`` is ``Path(".")``, so without this an empty ``--out ''`` would write into
    the current directory.

    Examples
    --------
    >>> directory_arg("survey-out").name
    'survey-out'
    >>> directory_arg("")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must name a directory, got an empty string
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a directory, got an empty string")
    return Path(text)


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

    from qkforms._fs import describe_os_error

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

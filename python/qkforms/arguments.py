"""Typed command-line values: argparse ``type`` callables and numbers from the environment.

The one parser of every integer, real, seed, duration, scheduler address and output
directory of the subcommands (:mod:`qkforms.cli` and each command's ``configure``), and of
the numeric test hooks in environment variables (:func:`env_number`), so that a bad value
is one clear line naming the option or the variable (docs/cli.md, docs/files.md). Ground
layer: imports only :mod:`qkforms.errors`.

Examples
--------
>>> from qkforms.arguments import bounded_int
>>> bounded_int(1, 4)("3")
3
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

from qkforms.errors import ParameterError

__all__ = [
    "MAX_SEED",
    "bounded_float",
    "bounded_int",
    "directory_arg",
    "env_number",
    "parse_real",
    "scheduler_arg",
    "seconds_arg",
    "seed_arg",
]


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
    >>> from qkforms.errors import QKFormsError
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

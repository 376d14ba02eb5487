"""``qkforms report DIR``: a self-contained offline HTML report of a survey.

Examples
--------
>>> import argparse
>>> from qkforms.report.command import configure
>>> p = argparse.ArgumentParser()
>>> configure(p)
>>> args = p.parse_args(["runs/a", "--no-png"])
>>> args.dir, args.png
('runs/a', False)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from qkforms import _progress
from qkforms.arguments import bounded_int, seed_arg
from qkforms.errors import QKFormsError
from qkforms.extras import require
from qkforms.report.build import build_report
from qkforms.report.rope_view import MAX_D
from qkforms.report.rope_view import MAX_HEADS as MAX_ROPE_HEADS
from qkforms.stats.bootstrap import MAX_BOOT as MAX_BOOTSTRAP

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``report`` arguments to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> p.parse_args(["d"]).d_max
    128
    """
    parser.add_argument("dir", metavar="DIR", help="survey output directory")
    parser.add_argument("--out", type=Path, default=None,
                        help="HTML file to write (default DIR/report.html)")
    parser.add_argument("--no-png", dest="png", action="store_false",
                        help="skip the static PNGs in DIR/figures/")
    parser.add_argument("--recompute", action="store_true",
                        help="recompute DIR/stats even if it exists")
    parser.add_argument("--seed", type=seed_arg, default=0,
                        help="seed when the statistics are computed (default 0)")
    parser.add_argument("--bootstrap", type=bounded_int(0, MAX_BOOTSTRAP), default=1000,
                        help="bootstrap replicates when the statistics are computed")
    parser.add_argument("--no-fits", dest="fits", action="store_false",
                        help="skip the family fits when the statistics are computed")
    parser.add_argument("--rope-heads", type=bounded_int(0, MAX_ROPE_HEADS), default=16,
                        help="heads per RoPE model in the L(d) slider (default 16)")
    parser.add_argument("--d-max", type=bounded_int(0, MAX_D), default=128,
                        help="largest displacement d of the slider (default 128)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress output (a bar on a terminal, a plain line every 10 s "
                             "otherwise, for phases longer than 5 s)")


def run(args: argparse.Namespace) -> int:
    """Build the report; return 0.

    Examples
    --------
    >>> import argparse
    >>> from qkforms.errors import QKFormsError
    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> try:
    ...     run(p.parse_args(["/nonexistent-survey-dir"]))
    ... except QKFormsError as exc:
    ...     print(exc)
    /nonexistent-survey-dir is not a directory
    """
    require("survey", modules=("pyarrow",), command="qkforms report",
            why="reading the survey's Parquet tables")
    require("plots", modules=("plotly", "matplotlib") if args.png else ("plotly",),
            command="qkforms report",
            why="the interactive figures" + (" and the PNGs (or --no-png)" if args.png else ""))
    directory = Path(args.dir)
    if not directory.is_dir():
        raise QKFormsError(f"{directory} is not a directory")
    with _progress.settings(enabled=not args.no_progress and _progress.current().enabled):
        path = build_report(directory, out=args.out, pngs=args.png, seed=args.seed,
                            n_boot=args.bootstrap, fits=args.fits, recompute=args.recompute,
                            rope_heads=args.rope_heads, d_max=args.d_max)
    print(f"qkforms report: wrote {path}", file=sys.stderr)
    return 0

"""``qkforms stats DIR...``: observation tables from one or more survey directories.

Every ``DIR`` must hold ``heads.parquet`` and ``spectra.parquet`` (architecture.md §5).
With one directory the tables go to ``DIR/stats/``; with several, the rows are pooled
into one table set written to each ``DIR/stats/`` unless ``--out`` names another place.

Examples
--------
>>> import argparse
>>> from qkforms.stats.command import configure
>>> p = argparse.ArgumentParser()
>>> configure(p)
>>> args = p.parse_args(["runs/a", "--no-fits", "--bootstrap", "200"])
>>> args.dirs, args.fits, args.bootstrap, args.executor
(['runs/a'], False, 200, 'local')
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from qkforms import _progress
from qkforms.arguments import bounded_int, directory_arg, scheduler_arg, seed_arg
from qkforms.errors import QKFormsError
from qkforms.extras import require
from qkforms.stats.bootstrap import MAX_BOOT as MAX_BOOTSTRAP
from qkforms.stats.observation_tables import observations
from qkforms.stats.output import Section, write_tables
from qkforms.stats.survey_input import read_survey
from qkforms.stats.table import Table, concat

__all__ = ["TableJoin", "configure", "run"]


@dataclass(frozen=True)
class TableJoin:
    """Tables that a layer above the statistics joins to theirs (e.g. the behaviour
    associations, :mod:`qkforms.stats_command`).

    ``tables(dirs, heads=..., seed=..., n_boot=...)`` gives the further tables of the
    survey directories (``heads``: the read ``heads.parquet`` of a single directory, else
    None; ``{}`` when there are none); ``section`` their part of ``observations.md``.

    Examples
    --------
    >>> from qkforms.stats.command import TableJoin
    >>> j = TableJoin(lambda dirs, **kw: {}, lambda tables: [])
    >>> j.tables([], heads=None, seed=0, n_boot=0), j.section({})
    ({}, [])
    """

    tables: Callable[..., dict[str, Table]]
    section: Section


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``stats`` arguments to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> p.parse_args(["d"]).bootstrap
    1000
    """
    parser.add_argument("dirs", nargs="+", metavar="DIR",
                        help="survey output directories (heads.parquet, spectra.parquet)")
    parser.add_argument("--out", type=directory_arg, default=None,
                        help="output directory (default: DIR/stats for every DIR)")
    parser.add_argument("--seed", type=seed_arg, default=0,
                        help="seed of the baselines and the bootstrap (default 0)")
    parser.add_argument("--bootstrap", type=bounded_int(0, MAX_BOOTSTRAP), default=1000,
                        metavar="B",
                        help="bootstrap replicates per interval (default 1000; 0: none)")
    parser.add_argument("--no-fits", dest="fits", action="store_false",
                        help="skip the generalized-gamma / lognormal family fits")
    parser.add_argument("--no-baseline", dest="baseline", action="store_false",
                        help="skip the seeded Gaussian baseline survey")
    parser.add_argument("--baseline-heads", type=bounded_int(1), default=None, metavar="K",
                        help="at most K baseline heads per layer (default: as many as the layer)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="where the per-(model, layer) tasks run (default local)")
    parser.add_argument("--scheduler", type=scheduler_arg, default=None, metavar="ADDRESS",
                        help="dask scheduler address (default: start a LocalCluster)")
    parser.add_argument("--workers", type=bounded_int(1, 256), default=2,
                        help="workers of the LocalCluster (default 2)")
    parser.add_argument("--no-parquet", dest="parquet", action="store_false",
                        help="write CSV only")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress output (a bar on a terminal, a plain line every 10 s "
                             "otherwise, for phases longer than 5 s)")


def run(args: argparse.Namespace, joins: Sequence[TableJoin] = ()) -> int:
    """Read the survey outputs, compute the tables (and those of ``joins``), write them;
    return 0.

    Examples
    --------
    >>> import argparse, tempfile
    >>> from qkforms.errors import QKFormsError
    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> try:
    ...     run(p.parse_args([tempfile.mkdtemp()]))
    ... except QKFormsError as exc:
    ...     print("heads.parquet" in str(exc))
    True
    """
    require("survey", modules=("pyarrow",), command="qkforms stats",
            why="reading and writing Parquet tables")
    if args.executor == "dask":
        require("dask", command="qkforms stats", why="--executor dask")

    dirs = [Path(d) for d in args.dirs]
    for d in dirs:
        if not d.is_dir():
            raise QKFormsError(f"{d} is not a directory")
    read = [read_survey(d) for d in dirs]  # each table checked against the schema
    heads = concat([h for h, _ in read])
    spectra = concat([s for _, s in read])
    start = time.perf_counter()
    with _progress.settings(enabled=not args.no_progress and _progress.current().enabled):
        tables = observations(
            heads, spectra, seed=args.seed, fits=args.fits, n_boot=args.bootstrap,
            baseline=args.baseline, baseline_max_heads=args.baseline_heads,
            executor=args.executor, scheduler=args.scheduler, n_workers=args.workers,
        )

    for join in joins:
        tables.update(join.tables(dirs, heads=heads if len(dirs) == 1 else None,
                                  seed=args.seed, n_boot=args.bootstrap))
    elapsed = time.perf_counter() - start
    header = (f"Sources: {', '.join(str(d) for d in dirs)}. Seed {args.seed}, "
              f"{args.bootstrap} bootstrap replicates, family fits "
              f"{'on' if args.fits else 'off'}, executor {args.executor}.")
    # DIR/stats below the DIR the user named (no link followed there), or --out itself
    targets = ([(args.out, args.out)] if args.out is not None
               else [(d / "stats", d) for d in dirs])
    for target, root in targets:
        paths = write_tables(tables, target, header=header,
                             parquet=None if args.parquet else False, root=root,
                             sections=tuple(j.section for j in joins))
        print(f"qkforms stats: wrote {len(paths)} files to {target}", file=sys.stderr)
    print(f"qkforms stats: {len(heads)} heads, {elapsed:.1f} s", file=sys.stderr)
    return 0

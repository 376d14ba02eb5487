"""``qkforms behaviour``: what each head does, next to what its form is (``docs/behaviour.md``).

Usage::

    qkforms behaviour [SOURCE ...] [--out DIR] [--seed S] [--sequences K] [--length L]
                      [--repeat T] [--rebuild R] [--batch B] [--memory-mb M]
                      [--dtype float32|float64] [--threads T] [--qk-norm refuse|fold]
                      [--download] [--no-progress]

SOURCE defaults to ``smollm2``; any source of :func:`qkforms.models.load` that
``transformers`` can run (Hugging Face directories, GGUF files, the short names). The
default ``--out`` is the survey's, so that ``qkforms survey`` and ``qkforms behaviour``
fill the same directory, and ``qkforms stats`` / ``qkforms report`` join them.

Writes ``DIR/behaviour.parquet`` (one row per (model, layer, query head), keyed like
``heads.parquet``) and ``DIR/behaviour.json`` (the manifest: probe sizes and seeds,
token pools, the keying check, timings). Rows and manifest entries of models this run
does not score are kept; the run's own models are replaced.

Examples
--------
>>> import argparse
>>> from qkforms.behaviour.command import configure
>>> p = argparse.ArgumentParser(); configure(p)
>>> a = p.parse_args([])
>>> a.sources, str(a.out), a.sequences, a.length, a.repeat
(['smollm2'], 'survey-out', 16, 128, 64)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from qkforms import __version__
from qkforms._fs import atomic_write, ensure_dir, read_json
from qkforms.arguments import bounded_int, directory_arg
from qkforms.behaviour.files import BEHAVIOUR_FILE, MANIFEST_FILE
from qkforms.behaviour.probe_run import DTYPES, BehaviourOptions, score_source
from qkforms.behaviour.scores import CLASS_SCORES, CLASS_THRESHOLD, SCORES
from qkforms.errors import OutputError, QKFormsError, SurveyLockedError
from qkforms.models import load
from qkforms.survey.outdir import check_out

__all__ = ["BEHAVIOUR_FILE", "MANIFEST_FILE", "configure", "run", "write_behaviour"]

LOCK_FILE = ".qkforms-behaviour.lock"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``behaviour`` arguments to ``parser``."""
    d = BehaviourOptions()
    parser.add_argument("sources", nargs="*", default=["smollm2"], metavar="SOURCE",
                        help="model directories, .gguf files or short names (default: "
                        "smollm2)")
    parser.add_argument("--out", type=directory_arg, default=Path("survey-out"),
                        metavar="DIR", help="output directory (default: ./survey-out, the "
                        "survey's)")
    parser.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=d.seed,
                        help=f"seed of the probes (default {d.seed})")
    parser.add_argument("--sequences", type=bounded_int(1, 4096), default=d.sequences,
                        metavar="K", help=f"sequences per probe (default {d.sequences})")
    parser.add_argument("--length", type=bounded_int(2, 8192), default=d.length, metavar="L",
                        help=f"random tokens per sequence of the random probe (default "
                        f"{d.length})")
    parser.add_argument("--repeat", type=bounded_int(2, 4096), default=d.repeat, metavar="T",
                        help=f"tokens per copy of the repeated probe (default {d.repeat}; "
                        "bodies of 2T)")
    parser.add_argument("--rebuild", type=bounded_int(1, 4096), default=d.rebuild,
                        metavar="R", help="sequences of each probe whose scores are rebuilt "
                        f"from the survey's maps: keying check and bilinear shares (default "
                        f"{d.rebuild})")
    parser.add_argument("--batch", type=bounded_int(1, 4096), default=None, metavar="B",
                        help="sequences per forward pass (default: as many as --memory-mb "
                        "allows)")
    parser.add_argument("--memory-mb", type=bounded_int(1, 1 << 20), default=d.memory_mb,
                        metavar="M", help="memory for the attention patterns of one forward "
                        f"pass, all layers (default {d.memory_mb})")
    parser.add_argument("--dtype", choices=DTYPES, default=d.dtype,
                        help=f"dtype the model runs in (default {d.dtype})")
    parser.add_argument("--threads", type=bounded_int(1, 256), default=None, metavar="T",
                        help="torch threads (default 1, fastest on shared cores)")
    parser.add_argument("--qk-norm", choices=("refuse", "fold"), default="refuse",
                        help="as for the survey: load q/k-normalized models (their patterns "
                        "are scored; their scores are not rebuilt)")
    parser.add_argument("--download", action="store_true",
                        help="allow fetching hub ids over the network")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress lines on stderr")


def _options(args: argparse.Namespace) -> Any:
    return BehaviourOptions(seed=args.seed, sequences=args.sequences, length=args.length,
                            repeat=args.repeat, rebuild=args.rebuild, batch=args.batch,
                            memory_mb=args.memory_mb, dtype=args.dtype, threads=args.threads,
                            qk_norm=args.qk_norm, progress=not args.no_progress)


def _argv(args: argparse.Namespace) -> list[str]:
    out = ["qkforms", "behaviour", *args.sources, "--out", str(args.out), "--seed",
           str(args.seed), "--sequences", str(args.sequences), "--length", str(args.length),
           "--repeat", str(args.repeat), "--rebuild", str(args.rebuild), "--memory-mb",
           str(args.memory_mb), "--dtype", args.dtype]
    if args.batch is not None:
        out += ["--batch", str(args.batch)]
    if args.threads is not None:
        out += ["--threads", str(args.threads)]
    if args.qk_norm != "refuse":
        out += ["--qk-norm", args.qk_norm]
    return out


def run(args: argparse.Namespace) -> int:
    """Score every head of every SOURCE; write the table and manifest; return 0.

    Examples
    --------
    >>> import argparse, tempfile, pathlib
    >>> from qkforms.errors import QKFormsError
    >>> p = argparse.ArgumentParser(); configure(p)
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "a-file"; _ = f.write_text("x")
    >>> try:
    ...     run(p.parse_args(["minilm", "--out", str(f)]))
    ... except QKFormsError as exc:
    ...     print(str(exc).split(",")[0])  # doctest: +ELLIPSIS
    --out ... exists and is a regular file
    """
    # lazy: keeps python-flint out of this module's import
    from qkforms.survey.pipeline import unique_labels

    out = check_out(args.out)
    opts = _options(args)
    t0 = time.perf_counter()
    names = []
    for src in args.sources:  # open every source first: bad sources fail before any work
        with load(src, download=args.download, qk_norm=args.qk_norm, checksum=False) as m:
            names.append(m.info.name)
    _keys, labels = unique_labels(names)
    results = [score_source(src, options=opts, name=label, download=args.download)
               for src, label in zip(args.sources, labels, strict=True)]
    write_behaviour(out, results, opts, argv=_argv(args))
    for r in results:
        e = r.entry
        check = e["key_check"]
        dev = ("" if check["max_pattern_dev"] is None else
               f", largest pattern difference {check['max_pattern_dev']:.1e}")
        print(f"{e['model']}: {len(r.columns['head'])} heads scored; keyed like heads.parquet "
              f"(checked by {check['method']}{dev}); {e['timings']['total_s']:.1f} s")
    print(f"wrote {out / BEHAVIOUR_FILE} and {MANIFEST_FILE} "
          f"({time.perf_counter() - t0:.1f} s)")
    return 0


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold ``DIR/.qkforms-behaviour.lock`` while the table is merged and written."""
    import fcntl

    ensure_dir(out, root=out)
    path = out / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise OutputError(f"{path}: cannot create the lock ({exc.strerror or exc})") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SurveyLockedError(f"{out}: another qkforms behaviour is writing its table "
                                    "there now; wait for it and run again") from None
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
    finally:
        os.close(fd)


def _environment() -> dict[str, Any]:
    import numpy

    env: dict[str, Any] = {"python": platform.python_version(), "numpy": numpy.__version__,
                           "platform": platform.platform()}
    for mod in ("torch", "transformers", "gguf", "pyarrow"):
        module = sys.modules.get(mod)
        env[mod] = getattr(module, "__version__", None) if module is not None else None
    return env


def _kept_rows(table_path: Path, models: list[str]) -> dict[str, list[Any]]:
    """The rows of an existing ``behaviour.parquet`` of models other than ``models``."""
    # lazy: keeps python-flint out of this module's import
    from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS

    # lazy: keeps python-flint out of this module's import
    from qkforms.stats.table import read_parquet

    columns: dict[str, list[Any]] = {c: [] for c in BEHAVIOUR_COLUMNS}
    if table_path.exists():
        old = read_parquet(table_path)
        if tuple(old.columns) != BEHAVIOUR_COLUMNS:
            raise QKFormsError(f"{table_path} has the columns {old.columns}, not this "
                               "version's; remove it or choose another --out (nothing "
                               "was written)")
        keep = [i for i, m in enumerate(old["model"]) if str(m) not in models]
        kept = old.take(np.asarray(keep, dtype=np.intp)).to_dict()
        for c in BEHAVIOUR_COLUMNS:
            columns[c].extend(kept[c])
    return columns


def _kept_entries(man_path: Path, models: list[str]) -> list[dict[str, Any]]:
    """The entries of an existing ``behaviour.json`` of models other than ``models``."""
    if not man_path.exists():
        return []
    old_man = read_json(man_path, "behaviour manifest")
    if not isinstance(old_man, dict) or not isinstance(old_man.get("models"), list):
        raise QKFormsError(f"{man_path}: not a behaviour manifest (no models list); "
                           "remove it or choose another --out (nothing was written)")
    return [e for e in old_man["models"]
            if isinstance(e, dict) and str(e.get("model")) not in models]


def _with_total_time(entry: dict[str, Any]) -> dict[str, Any]:
    """A copy of a model's entry with ``timings.total_s`` (loading, both loaders, run)."""
    entry = dict(entry)
    entry.setdefault("timings", {})
    entry["timings"]["total_s"] = sum(
        float(v) for k, v in entry["timings"].items()
        if k in ("load_s", "wall_s")) + float(
        (entry.get("transformers") or {}).get("torch_load_s", 0.0)) + float(
        (entry.get("transformers") or {}).get("tokenizer_s", 0.0))
    return entry


def write_behaviour(out: str | os.PathLike[str], results: Sequence[Any], options: Any, *,
                    argv: Sequence[str] | None = None) -> tuple[Path, Path]:
    """Write (merge) ``behaviour.parquet`` and ``behaviour.json`` into ``out``.

    Rows and manifest entries of models not in ``results`` are kept from the files
    already there; those of ``results``' models are replaced.

    Raises
    ------
    QKFormsError
        If the existing table or manifest cannot be read, or the table's columns are not
        this version's (nothing is written then).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from qkforms.behaviour.probe_run import BehaviourOptions, ModelScores
    >>> from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS
    >>> row = {c: [0.5] for c in BEHAVIOUR_COLUMNS} | {"model": ["m"], "step": [None]}
    >>> row |= {k: [0] for k in ("layer", "head", "kv_head")} | {"N": [4], "n": [2]}
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> table, man = write_behaviour(out, [ModelScores(row, {"model": "m"})],
    ...                              BehaviourOptions())
    >>> table.name, json.loads(man.read_text())["models"][0]["model"]
    ('behaviour.parquet', 'm')
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    # lazy: keeps python-flint out of this module's import
    from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS, behaviour_schema

    out = Path(out)
    models = [str(r.entry["model"]) for r in results]
    with _locked(out):
        table_path, man_path = out / BEHAVIOUR_FILE, out / MANIFEST_FILE
        columns = _kept_rows(table_path, models)
        entries = _kept_entries(man_path, models)
        for r in results:
            for c in BEHAVIOUR_COLUMNS:
                columns[c].extend(r.columns[c])
            entries.append(_with_total_time(r.entry))
        table = pa.table(columns, schema=behaviour_schema())
        manifest = {
            "tool": "qkforms behaviour",
            "version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "argv": list(argv) if argv is not None else None,
            "options": options.recorded(),
            "environment": _environment(),
            "scores": {s.name: {"probe": s.probe, "displacement": s.displacement,
                                "meaning": s.meaning} for s in SCORES.values()},
            "classes": {"scores": list(CLASS_SCORES), "threshold": CLASS_THRESHOLD},
            "models": entries,
        }
        atomic_write(table_path, lambda f: pq.write_table(table, f), root=out)
        atomic_write(man_path, json.dumps(manifest, indent=2, default=str).encode("utf-8"),
                     root=out)
    return table_path, man_path

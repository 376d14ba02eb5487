"""``qkforms survey``: the per-head table of real models (``docs/theory.md`` §12).

Usage::

    qkforms survey [SOURCE ...] [--out DIR] [--exact] [--certify] [--precision-bands] [--resume]
                   [--fold-norm] [--qk-norm {refuse,fold}] [--workers K] [--threads T]
                   [--layers SEL ...]

SOURCE defaults to ``smollm2`` (SmolLM2-135M-Instruct as shipped on PyPI); any source
accepted by :func:`qkforms.models.load` works. See ``docs/survey.md`` for the outputs.
The command ``qkforms survey`` is this survey followed by its statistics, composed by
:mod:`qkforms.main_command` (``--no-stats``).

Examples
--------
>>> import argparse
>>> from qkforms.survey.command import configure
>>> p = argparse.ArgumentParser(); configure(p)
>>> a = p.parse_args([])
>>> a.sources, str(a.out), a.exact, a.workers
(['smollm2'], 'survey-out', False, 1)
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qkforms import _progress
from qkforms.arguments import bounded_int, directory_arg, scheduler_arg
from qkforms.errors import QKFormsError
from qkforms.extras import require
from qkforms.models import load
from qkforms.survey.layer import norm_gain
from qkforms.survey.options import SurveyOptions
from qkforms.survey.runner import survey
from qkforms.survey.summary import model_summary
from qkforms.survey.training_runs import (
    Series,
    discover_run,
    is_run_directory,
    series_from_paths,
    series_from_revisions,
    survey_units,
    units_for,
)

__all__ = ["configure", "result_line", "survey_from_args"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the survey's arguments to ``parser``."""
    for add in (_add_source_args, _add_rigour_args, _add_input_args, _add_parallel_args,
                _add_training_run_args, _add_executor_args):
        add(parser)


def _add_source_args(parser: argparse.ArgumentParser) -> None:
    """The sources and the output directory."""
    parser.add_argument(
        "sources",
        nargs="*",
        default=["smollm2"],
        metavar="SOURCE",
        help="model directories, .gguf files or short names (default: smollm2)",
    )
    parser.add_argument(
        "--out",
        type=directory_arg,
        default=Path("survey-out"),
        metavar="DIR",
        help="output directory (default: ./survey-out)",
    )


def _add_rigour_args(parser: argparse.ArgumentParser) -> None:
    """The exact, certified and storage-precision stages (``--exact``, ``--certify``,
    ``--precision-bands``)."""
    parser.add_argument(
        "--exact", action="store_true",
        help="decide every head's signature, live dimensions, ranks and Theorem 3 prediction "
        "in exact arithmetic, for heads of any rank (signature_by = exact; docs/survey.md)"
    )
    parser.add_argument(
        "--exact-method",
        choices=("auto", "charpoly"),
        default="auto",
        help="auto: certified rank of the live pair, then Theorem 3 or the exact inertia of the "
        "restricted form (Sylvester's law; fast); charpoly: Descartes' rule on the exact "
        "characteristic polynomial of J G (about 1 s per head at N=576, n=64)",
    )
    parser.add_argument(
        "--certify",
        action="store_true",
        help="certified intervals (<stat>_lo, <stat>_hi) of every head's a, b, c, d, 1 - a, "
        "pairing, rho and distance to Theta; the observation tables then count a head "
        "against a threshold only when its interval decides it (docs/certified.md)",
    )
    parser.add_argument(
        "--certify-method",
        choices=("auto", "charpoly"),
        default="auto",
        help="auto: verified float eigenvectors + Weyl/Ostrowski bounds in ball arithmetic "
        "(about 0.05 s per head at N=576, n=64); charpoly: root isolation of the exact "
        "characteristic polynomial (about 0.5 s per head)",
    )
    parser.add_argument(
        "--precision-bands",
        action="store_true",
        help="storage-precision bands (<stat>_band_lo, <stat>_band_hi) of every head's a, b, "
        "c, d, 1 - a, pairing, rho and distance to Theta, and whether its signature is "
        "stable: the statistic for every weight within half an ulp (float dtypes) or half "
        "a quantization step (GGUF blocks) of the stored one (docs/certified.md)",
    )


def _add_input_args(parser: argparse.ArgumentParser) -> None:
    """Resuming, checksums and how the weights are read (norm gains, q/k norms)."""
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the complete layers of an interrupted run in DIR",
    )
    parser.add_argument(
        "--sha256",
        action="store_true",
        help="also record the sha256 of every whole checkpoint file (a full read of each; "
        "by default the manifest records sizes, mtimes and the sha256 of every tensor read)",
    )
    parser.add_argument(
        "--fold-norm",
        action="store_true",
        help="fold the gain of the norm before each attention into W_Q, W_K",
    )
    parser.add_argument(
        "--qk-norm",
        choices=("refuse", "fold"),
        default="refuse",
        help="models that normalize their projected queries/keys (Qwen3, Gemma 3, OLMo2, "
        "...): refuse them (default), or fold the norm gains and survey "
        "L' = (C W_K)^T diag(gamma_q gamma_k) (C W_Q), which fixes the sign of every score "
        "(Hugging Face checkpoints and GGUF files; docs/survey.md)",
    )


def _add_parallel_args(parser: argparse.ArgumentParser) -> None:
    """Worker processes, compute threads and the layer selection."""
    parser.add_argument(
        "--workers",
        type=bounded_int(1, 256),
        default=1,
        metavar="K",
        help="worker processes (layers are spread over them; default 1)",
    )
    parser.add_argument(
        "--threads",
        type=bounded_int(1, 256),
        default=None,
        metavar="T",
        help="compute threads per process (default: cores / workers)",
    )
    parser.add_argument(
        "--layers",
        nargs="+",
        default=None,
        metavar="SEL",
        help="layers to survey, e.g. 0-3 7 or 1,5 (default: all)",
    )


def _add_training_run_args(parser: argparse.ArgumentParser) -> None:
    """Training runs: checkpoints as sources (``--series``, ``--revisions``)."""
    parser.add_argument(
        "--series",
        action="store_true",
        help="the SOURCEs are the checkpoints of one training run (ordered by step from "
        "their names or trainer_state.json); a run directory (checkpoint-*/, step*/, "
        "global_step*/) is recognised without this flag",
    )
    parser.add_argument(
        "--revisions",
        nargs="+",
        default=None,
        metavar="REV",
        help="the SOURCE is a hub id and these revisions (e.g. step1000 step2000) are the "
        "checkpoints of its training run (read from the local Hugging Face cache, or "
        "fetched with --download)",
    )
    parser.add_argument(
        "--download",
        action="store_true",
        help="allow fetching hub ids and revisions over the network",
    )
    parser.add_argument(
        "--run-name",
        default=None,
        metavar="NAME",
        help="the model column of a training run (default: the run directory's name)",
    )


def _add_executor_args(parser: argparse.ArgumentParser) -> None:
    """The executor (local or dask) and the progress output."""
    parser.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="where the (checkpoint, layer) tasks run: this machine, or a dask cluster "
        "(identical tables; default local)",
    )
    parser.add_argument(
        "--scheduler",
        type=scheduler_arg,
        default=None,
        metavar="ADDRESS",
        help="dask scheduler address, e.g. tcp://host:8786 (default: a LocalCluster of "
        "--workers processes); workers must see the same paths",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress output (a bar on a terminal, a plain line every 10 s otherwise, for "
        "phases longer than 5 s)",
    )


def _argv(args: argparse.Namespace) -> list[str]:
    """The command line equivalent to ``args`` (recorded in the manifest)."""
    out = ["qkforms", "survey", *args.sources, "--out", str(args.out)]
    out += [
        flag
        for flag, on in (
            ("--exact", args.exact),
            ("--certify", args.certify),
            ("--precision-bands", args.precision_bands),
            ("--resume", args.resume),
            ("--fold-norm", args.fold_norm),
        )
        if on
    ]
    if args.exact and args.exact_method != "auto":
        out += ["--exact-method", args.exact_method]
    if args.qk_norm != "refuse":
        out += ["--qk-norm", args.qk_norm]
    if args.certify and args.certify_method != "auto":
        out += ["--certify-method", args.certify_method]
    if args.series:
        out.append("--series")
    if args.revisions:
        out += ["--revisions", *args.revisions]
    if args.run_name:
        out += ["--run-name", args.run_name]
    if args.executor != "local":
        out += ["--executor", args.executor]
    if args.scheduler:
        out += ["--scheduler", args.scheduler]
    out += ["--workers", str(args.workers)]
    if args.threads is not None:
        out += ["--threads", str(args.threads)]
    if args.layers:
        out += ["--layers", *args.layers]
    return out


def survey_from_args(args: argparse.Namespace,
                     on_models: Callable[[list[Any], SurveyOptions], None] | None = None
                     ) -> dict[str, Any]:
    """Survey the sources of ``args`` (parsed by :func:`configure`); return the manifest.

    ``on_models(models, opts)`` is called once the plain models are open, before any
    layer is surveyed (the main command has the statistics process draw its baselines
    meanwhile). Prints one line per model and per training run.

    Examples
    --------
    >>> import argparse, tempfile, pathlib, contextlib, io
    >>> from qkforms.survey.command import configure, survey_from_args
    >>> from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> d = write_llama_checkpoint(tmp / "ckpt", n_layers=1, N=16, n=2, n_q=2, n_kv=1)
    >>> p = argparse.ArgumentParser(); configure(p)
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     man = survey_from_args(p.parse_args([str(d), "--out", str(tmp / "out")]))
    >>> man["models"][0]["heads"]
    2
    """
    opts = _options(args)
    entries = _entries(args)
    if args.executor != "local" or any(not isinstance(e, str) for e in entries):
        manifest = _survey_units(entries, opts, args)
    else:
        manifest = _survey_models(args, opts, on_models)
    _report(Path(args.out), manifest)
    return manifest


def _options(args: argparse.Namespace) -> SurveyOptions:
    """The survey options of ``args``, after checking that the run can start at all."""
    # every optional module the run will need, before any work (docs/cli.md)
    require("survey", command="qkforms survey")
    if args.executor == "dask":
        require("dask", command="qkforms survey", why="--executor dask")
    if args.workers < 1:
        raise QKFormsError(f"--workers must be >= 1, got {args.workers}")
    opts = SurveyOptions(
        out=args.out,
        exact=args.exact,
        exact_method=args.exact_method,
        certify=args.certify,
        certify_method=args.certify_method,
        precision_bands=args.precision_bands,
        resume=args.resume,
        sha256=args.sha256,
        fold_norm=args.fold_norm,
        qk_norm=args.qk_norm,
        workers=args.workers,
        layers=args.layers,
        progress=not args.no_progress,
        threads=args.threads,
        executor=args.executor,
        scheduler=args.scheduler,
    )
    if args.scheduler and args.executor != "dask":
        raise QKFormsError("--scheduler needs --executor dask")
    return opts


def _survey_models(args: argparse.Namespace, opts: SurveyOptions,
                   on_models: Callable[[list[Any], SurveyOptions], None] | None
                   ) -> dict[str, Any]:
    """Plain model sources, surveyed in this process (and its workers)."""
    models, load_s = [], []
    with _progress.settings(enabled=opts.progress and _progress.current().enabled):
        for src in _progress.track(args.sources, "open models", unit="model"):
            t = time.perf_counter()
            models.append(load(src, download=args.download, qk_norm=args.qk_norm,
                              checksum=args.sha256))
            load_s.append(time.perf_counter() - t)
    try:
        if args.fold_norm:  # refuse early, before any work, for unsupported architectures
            for m in models:
                norm_gain(m, 0)
        if on_models is not None:
            on_models(models, opts)
        return survey(models, opts, sources=args.sources, argv=_argv(args), load_seconds=load_s)
    finally:
        for m in models:
            close = getattr(m, "close", None)
            if close is not None:
                close()


def result_line(manifest: dict[str, Any], *, stats_s: float | None, total_s: float) -> str:
    """The last line of ``qkforms survey``: the total wall time and where it went.

    Examples
    --------
    >>> man = {"models": [{"timings": {"load_s": 1.25, "wall_s": 10.4}}],
    ...        "timings": {"merge_s": 0.1, "total_s": 10.9}}
    >>> result_line(man, stats_s=172.5, total_s=185.0)
    'done in 3 min 05 s (open 1.2 s, survey 10.9 s, statistics 2 min 52 s)'
    >>> result_line(man, stats_s=None, total_s=12.2)
    'done in 12.2 s (open 1.2 s, survey 10.9 s; no statistics: --no-stats)'
    """
    load_s = sum(float((e.get("timings") or {}).get("load_s") or 0.0)
                 for e in manifest.get("models", []))
    survey_s = float((manifest.get("timings") or {}).get("total_s") or 0.0)
    parts = f"open {_progress.format_seconds(load_s)}, survey {_progress.format_seconds(survey_s)}"
    tail = (f", statistics {_progress.format_seconds(stats_s)}" if stats_s is not None
            else "; no statistics: --no-stats")
    return f"done in {_progress.format_seconds(total_s)} ({parts}{tail})"


def _entries(args: argparse.Namespace) -> list[Any]:
    """The sources as plain model sources (str) and training runs (Series)."""
    if args.revisions:
        if len(args.sources) != 1:
            raise QKFormsError("--revisions takes exactly one SOURCE (a hub id), got "
                               f"{len(args.sources)}")
        return [series_from_revisions(args.sources[0], args.revisions, download=args.download,
                                      name=args.run_name)]
    if args.series:
        return [series_from_paths(args.sources, name=args.run_name)]
    entries: list[Any] = []
    for src in args.sources:
        entries.append(discover_run(src, name=args.run_name) if is_run_directory(src) else src)
    return entries


def _survey_units(entries: list[Any], opts: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Runs and/or the dask executor: through :func:`qkforms.survey.training_runs.survey_units`."""
    names = []
    for e in entries:  # open the plain models first: their names, and errors before any work
        if isinstance(e, str):
            with load(e, download=args.download, qk_norm=args.qk_norm,
                      checksum=args.sha256) as m:
                if args.fold_norm:
                    norm_gain(m, 0)
                names.append(m.info.name)
    series = [e for e in entries if isinstance(e, Series)]
    return survey_units(units_for(entries, names=names), opts, argv=_argv(args), series=series)


def _report(out: Path, manifest: dict[str, Any]) -> None:
    """One line per model and per training run."""
    import pyarrow.parquet as pq  # the survey wrote it: pyarrow is loaded

    heads = pq.read_table(out / "heads.parquet")
    for entry in manifest["models"]:
        if entry.get("run") is not None:
            continue
        s = model_summary(heads, entry["model"])
        cert = f", {s['undecided']} undecided (run --exact)" if s["undecided"] else ""
        if s["decided_exact"]:
            cert += f", decided exactly {s['decided_exact']}"
        if s["thm3_live"] or s["no_prediction"] or s["zero_form"]:
            cert += (f", dead dimensions with live part onto {s['thm3_live']}, outside "
                     f"Theorem 3 {s['no_prediction']}, zero forms {s['zero_form']}")
        if s["contradictions"]:
            cert += f", CONTRADICTING Theorem 3: {s['contradictions']} (see summary.md)"
        if s["enclosed"] is not None:
            cert += (f", certified intervals for {s['enclosed']} (max width "
                     f"{s['max_width']:.1e}, near Theta: {s['near_theta']} certain, "
                     f"{s['near_theta_undecided']} undecided)")
        print(
            f"{entry['model']}: {s['heads']} heads, {s['ok']} ok, {s['failed']} failed, "
            f"balanced {s['balanced']} ({s['thm3_met']} of {s['surjective']} surjective "
            f"as Theorem 3 predicts){cert} "
            f"(layers {entry['timings']['wall_s']:.1f} s)"
        )
    for run in manifest.get("runs") or []:
        steps = run["steps"]
        last = model_summary(heads, run["model"], steps[-1])
        print(f"{run['model']}: training run, {len(steps)} checkpoints (steps {steps[0]}–"
              f"{steps[-1]}), {last['heads']} heads per checkpoint; last checkpoint: "
              f"{last['ok']} ok, balanced {last['balanced']}")
    print(f"wrote {out / 'heads.parquet'} and summary.md")

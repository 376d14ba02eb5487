"""``qkforms survey``: the per-head table of real models (``docs/theory.md`` §12).

Usage::

    qkforms survey [SOURCE ...] [--out DIR] [--exact] [--certify] [--precision-bands] [--resume]
                   [--fold-norm] [--qk-norm {refuse,fold}] [--workers K] [--threads T]
                   [--layers SEL ...]

SOURCE defaults to ``smollm2`` (SmolLM2-135M-Instruct as shipped on PyPI); any source
accepted by :func:`qkforms.models.load` works. See ``docs/survey.md`` for the outputs.

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
import threading
import time
from pathlib import Path
from typing import Any

from qkforms import _progress
from qkforms.cli import bounded_int, directory_arg, scheduler_arg

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the survey's arguments to ``parser``."""
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
    parser.add_argument(
        "--no-stats",
        dest="stats",
        action="store_false",
        help="do not compute the observation tables (DIR/stats) at the end",
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


def run(args: argparse.Namespace) -> int:
    """Run the survey; return the exit status (errors propagate as QKFormsError).

    Examples
    --------
    >>> import argparse, tempfile, pathlib, contextlib, io
    >>> from qkforms.survey.command import configure, run
    >>> from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> d = write_llama_checkpoint(tmp / "ckpt", n_layers=1, N=16, n=2, n_q=2, n_kv=1)
    >>> p = argparse.ArgumentParser(); configure(p)
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     status = run(p.parse_args([str(d), "--out", str(tmp / "out"), "--exact",
    ...                                "--no-stats"]))
    >>> status, (tmp / "out" / "heads.parquet").exists()
    (0, True)
    """
    stats = _StatsProcess.start() if getattr(args, "stats", False) else None
    try:
        return _run(args, stats)
    finally:
        if stats is not None:
            stats.stop()


class _StatsProcess:
    """The statistics step in a process of its own, started with the survey.

    The survey is mostly Python holding the GIL (``--exact``) or BLAS on every core, so
    work for the statistics in a thread of the survey's process slows the survey by
    about what it saves (measured: importing ``scipy.stats`` beside it cost the survey
    1.6 s, more than the import). A process of its own shares no GIL: while the survey
    runs it imports the statistics' modules and draws the Gaussian baselines (:meth:`ahead`,
    :func:`qkforms.stats.baseline.compute_ahead`); after the survey :meth:`run` has it
    compute and write the tables (``qkforms stats`` with its defaults, the same code and
    numbers as in this process). The process dies with this one
    (:func:`qkforms.survey.parallel.die_with_parent`) and ignores Ctrl-C (this process
    stops it).
    """

    def __init__(self, proc: Any, conn: Any) -> None:
        self._proc = proc
        self._conn = conn

    @classmethod
    def start(cls) -> _StatsProcess | None:
        """Start the process; None if it cannot be started (the step then runs here)."""
        import multiprocessing as mp
        import os
        import sys

        from qkforms.survey.parallel import single_threaded_children

        try:
            # fork where it is safe and cheap: on Linux, in a process with no other thread
            # (as at the start of `qkforms survey`: no thread can hold a lock the child
            # would need), the child gets numpy and qkforms already imported -- about
            # 0.5 s of CPU that a spawned interpreter would spend again. Else spawn.
            safe = sys.platform.startswith("linux") and threading.active_count() == 1
            ctx: Any = mp.get_context("fork" if safe else "spawn")
            sys.stdout.flush()
            sys.stderr.flush()
            conn, child = ctx.Pipe()
            proc = ctx.Process(target=_stats_process_main, args=(child, os.getpid()),
                               name="qkforms-stats", daemon=True)
            with single_threaded_children():  # the thread policy (qkforms.threads)
                proc.start()
        except (OSError, RuntimeError, ValueError):
            return None
        child.close()
        return cls(proc, conn)

    def ahead(self, jobs: list[Any]) -> None:
        """Have the process draw these baselines (``compute_ahead`` jobs) meanwhile."""
        try:
            self._conn.send(("ahead", jobs))
        except (OSError, ValueError):  # the process is gone: run() reports it
            pass

    def run(self, out: Path) -> None:
        """Compute and write the tables of ``out`` in the process; wait for it.

        What the step reports comes back here: its progress events are replayed as
        this process's own phases (:mod:`qkforms._progress`, with the settings in force
        here) and its stderr lines are written to this process's stderr.

        Raises
        ------
        QKFormsError
            The step's own error (e.g. unreadable tables), or the process died.
        """
        import sys

        from qkforms.errors import QKFormsError

        phases: dict[str, _progress.Phase] = {}
        try:
            self._conn.send(("go", str(out)))
            while True:
                reply = self._conn.recv()
                if reply[0] == "progress":
                    _replay(phases, reply[1])
                elif reply[0] == "stderr":
                    sys.stderr.write(reply[1])
                    sys.stderr.flush()
                else:
                    break
        except (EOFError, OSError) as exc:
            raise QKFormsError(
                f"the statistics process ended before writing {out / 'stats'} (exit code "
                f"{self._proc.exitcode}; killed, most often by the system for lack of "
                f"memory); the survey is complete: run `qkforms stats {out}`") from exc
        finally:
            for p in phases.values():  # left open by a failure: no "done" line
                p.__exit__(QKFormsError, None, None)
        if reply[0] == "error":
            raise reply[1]
        if reply[0] == "crash":
            raise QKFormsError(f"the statistics step failed on {out}:\n{reply[1]}")

    def stop(self) -> None:
        """End the process (at once if it is still waiting) and join it."""
        try:
            self._conn.send(("stop",))
        except (OSError, ValueError):
            pass
        self._proc.join(timeout=5)
        if self._proc.is_alive():  # pragma: no cover - it stops on "stop" or EOF
            self._proc.terminate()
            self._proc.join(timeout=5)
        self._conn.close()


def _replay(phases: dict[str, _progress.Phase], event: _progress.ProgressEvent) -> None:
    """Show a progress event of the statistics process as a phase of this one."""
    p = phases.get(event.desc)
    if p is None:
        p = phases[event.desc] = _progress.phase(event.desc, event.total, unit=event.unit)
    if event.done > p.done:
        p.update(event.done - p.done)
    if event.finished:
        phases.pop(event.desc).close()


class _PipeText:
    """A text stream whose writes go to the survey process (``("stderr", text)``)."""

    def __init__(self, send: Any) -> None:
        self._send = send

    def write(self, text: str) -> int:
        if text:
            self._send(("stderr", text))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _stats_process_main(conn: Any, parent: int) -> None:
    """The body of :class:`_StatsProcess`: imports, baselines ahead, then the step."""
    import contextlib
    import signal
    import traceback

    from qkforms.survey.parallel import die_with_parent
    from qkforms.threads import single_threaded_libraries

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    # the thread policy for this process's life (a forked child inherits the BLAS thread
    # count; a spawned one was started with single_threaded_children)
    single_threaded_libraries().__enter__()
    lock = threading.Lock()

    def send(msg: tuple[Any, ...]) -> None:
        with lock:  # progress events may come from several threads
            conn.send(msg)

    def load() -> None:
        import importlib

        try:
            for name in ("qkforms.stats.command", "qkforms.stats.observations",
                         "qkforms.stats.output", "scipy.stats", "pyarrow.parquet"):
                importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the step imports again and reports
            pass

    loader = threading.Thread(target=load, name="qkforms-stats-imports", daemon=True)
    loader.start()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "ahead":
            from qkforms.stats.baseline import compute_ahead

            compute_ahead(msg[1])
            continue
        if msg[0] != "go":
            return
        loader.join()
        from qkforms.errors import QKFormsError
        from qkforms.stats.command import run as stats_run

        try:
            with contextlib.redirect_stderr(_PipeText(send)), \
                    _progress.settings(enabled=False,
                                       callback=lambda e: send(("progress", e))):
                stats_run(_stats_args(Path(msg[1])))
            reply: tuple[Any, ...] = ("done",)
        except QKFormsError as exc:
            reply = ("error", exc)
        except BaseException:  # noqa: BLE001 - handed to the survey process
            reply = ("crash", traceback.format_exc())
        try:
            send(reply)
        except Exception:  # noqa: BLE001 - e.g. an error that does not pickle
            send(("crash", str(reply[1])))
        # the tables are written and closed: leave without the interpreter's teardown
        # (a few tenths of a second with scipy loaded), which the survey would wait for
        import os
        import sys

        sys.stderr.flush()
        os._exit(0)


def _stats_args(out: Path) -> argparse.Namespace:
    """The arguments of the statistics step that follows the survey: ``qkforms stats``'s
    defaults on ``out``."""
    from qkforms.stats.command import configure as stats_configure

    parser = argparse.ArgumentParser()
    stats_configure(parser)
    return parser.parse_args([str(out)])


def _baseline_jobs(models: list[Any], opts: Any) -> list[Any]:
    """The Gaussian baselines the statistics step will ask for (``compute_ahead`` jobs).

    The baseline of a layer depends only on its shape, head count and the seed
    (:mod:`qkforms.stats.baseline`), so it can be drawn while the survey runs; the
    statistics step then takes the rows instead of computing them (identical: same
    function, same arguments). A layer whose rows the step does not ask for (failed
    heads change the count) costs only that background work.
    """
    from qkforms.errors import QKFormsError
    from qkforms.survey.runner import parse_layers, unique_labels

    stats = _stats_args(Path(opts.out))
    if not stats.baseline:
        return []
    _, labels = unique_labels([m.info.name for m in models])
    jobs = []
    for m, label in zip(models, labels, strict=True):
        N, n, n_q = int(m.info.N), int(m.info.n), int(m.info.n_q)
        count = n_q if stats.baseline_heads is None else min(n_q, stats.baseline_heads)
        try:
            layers = parse_layers(opts.layers, m.info.n_layers)
        except QKFormsError:  # the survey reports it
            return []
        jobs += [(count, N, n, int(stats.seed), (label, int(layer), N, n)) for layer in layers]
    return jobs


def _run(args: argparse.Namespace, stats: _StatsProcess | None) -> int:
    """The survey command proper (:func:`run`); ``stats`` runs the statistics step."""
    from qkforms.errors import QKFormsError
    from qkforms.extras import require
    from qkforms.models import load
    from qkforms.survey.runner import SurveyOptions, survey

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
    t_start = time.perf_counter()
    entries = _entries(args)
    if args.executor != "local" or any(not isinstance(e, str) for e in entries):
        manifest = _survey_units(entries, opts, args)
        _finish(Path(args.out), manifest, args, t_start, stats)
        return 0
    models, load_s = [], []
    with _progress.settings(enabled=opts.progress and _progress.current().enabled):
        for src in _progress.track(args.sources, "open models", unit="model"):
            t = time.perf_counter()
            models.append(load(src, download=args.download, qk_norm=args.qk_norm,
                              checksum=args.sha256))
            load_s.append(time.perf_counter() - t)
    try:
        if args.fold_norm:  # refuse early, before any work, for unsupported architectures
            from qkforms.survey.runner import norm_gain

            for m in models:
                norm_gain(m, 0)
        if stats is not None:
            stats.ahead(_baseline_jobs(models, opts))
        manifest = survey(models, opts, sources=args.sources, argv=_argv(args), load_seconds=load_s)
    finally:
        for m in models:
            close = getattr(m, "close", None)
            if close is not None:
                close()
    _finish(Path(args.out), manifest, args, t_start, stats)
    return 0


def _finish(out: Path, manifest: dict[str, Any], args: argparse.Namespace,
            t_start: float, stats: _StatsProcess | None = None) -> None:
    """The per-model lines, the observation tables, and the result line with the total
    wall time (opening the models, the survey and the statistics)."""
    _report(out, manifest)
    t_stats = time.perf_counter()
    if args.stats:
        progress = not args.no_progress and _progress.current().enabled
        with _progress.settings(enabled=progress):
            if stats is not None:
                stats.run(out)
                print(f"wrote the observation tables to {out / 'stats'} (observations.md)")
            else:
                _observation_tables(out)
    print(result_line(manifest, stats_s=time.perf_counter() - t_stats if args.stats else None,
                      total_s=time.perf_counter() - t_start))


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
    from qkforms._progress import format_seconds

    load_s = sum(float((e.get("timings") or {}).get("load_s") or 0.0)
                 for e in manifest.get("models", []))
    survey_s = float((manifest.get("timings") or {}).get("total_s") or 0.0)
    parts = f"open {format_seconds(load_s)}, survey {format_seconds(survey_s)}"
    tail = (f", statistics {format_seconds(stats_s)}" if stats_s is not None
            else "; no statistics: --no-stats")
    return f"done in {format_seconds(total_s)} ({parts}{tail})"


def _entries(args: argparse.Namespace) -> list[Any]:
    """The sources as plain model sources (str) and training runs (Series)."""
    from qkforms.errors import QKFormsError
    from qkforms.survey.training_runs import (
        discover_run,
        is_run_directory,
        series_from_paths,
        series_from_revisions,
    )

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
    from qkforms.models import load
    from qkforms.survey.training_runs import Series, survey_units, units_for

    names = []
    for e in entries:  # open the plain models first: their names, and errors before any work
        if isinstance(e, str):
            with load(e, download=args.download, qk_norm=args.qk_norm,
                      checksum=args.sha256) as m:
                if args.fold_norm:
                    from qkforms.survey.runner import norm_gain

                    norm_gain(m, 0)
                names.append(m.info.name)
    series = [e for e in entries if isinstance(e, Series)]
    return survey_units(units_for(entries, names=names), opts, argv=_argv(args), series=series)


def _report(out: Path, manifest: dict[str, Any]) -> None:
    """One line per model and per training run."""
    import pyarrow.parquet as pq

    from qkforms.survey.summary import model_summary

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


def _observation_tables(out: Path) -> None:
    """Write the observation tables of ``qkforms stats`` (defaults) to ``out/stats``."""
    from qkforms.stats.command import run as stats_run

    stats_run(_stats_args(out))
    print(f"wrote the observation tables to {out / 'stats'} (observations.md)")

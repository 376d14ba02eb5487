"""``qkforms survey``, the main command: the survey, then its observation tables.

The command line layer composes the two steps (the survey itself knows nothing of the
statistics that read it): :mod:`qkforms.survey.command` parses the survey's flags and
surveys the models (:func:`qkforms.survey.command.survey_from_args`); unless
``--no-stats``, the statistics step (``qkforms stats`` with its defaults,
:mod:`qkforms.stats_command`) then writes ``DIR/stats``. The step runs in a process of
its own started with the survey (:class:`_StatsProcess`), which meanwhile imports the
statistics' modules and draws the Gaussian baselines; where no process can be started
it runs in this one. See ``docs/survey.md`` and ``docs/statistics.md``.

Examples
--------
>>> import argparse
>>> from qkforms.main_command import configure
>>> p = argparse.ArgumentParser(); configure(p)
>>> a = p.parse_args(["--no-stats"])
>>> a.sources, a.stats
(['smollm2'], False)
"""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path
from typing import Any

from qkforms import _progress
from qkforms.errors import QKFormsError
from qkforms.survey import command as survey_command
from qkforms.survey.options import parse_layers
from qkforms.survey.parallel import die_with_parent, single_threaded_children
from qkforms.survey.pipeline import unique_labels
from qkforms.threads import single_threaded_libraries

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the survey's arguments and ``--no-stats`` to ``parser``."""
    survey_command.configure(parser)
    parser.add_argument(
        "--no-stats",
        dest="stats",
        action="store_false",
        help="do not compute the observation tables (DIR/stats) at the end",
    )


def run(args: argparse.Namespace) -> int:
    """Run the survey, then its statistics; return the exit status (errors propagate as
    QKFormsError).

    Examples
    --------
    >>> import argparse, tempfile, pathlib, contextlib, io
    >>> from qkforms.main_command import configure, run
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
        t_start = time.perf_counter()

        def ahead(models: list[Any], opts: Any) -> None:
            if stats is not None:
                stats.ahead(_baseline_jobs(models, opts))

        manifest = survey_command.survey_from_args(args, on_models=ahead)
        _finish(Path(args.out), manifest, args, t_start, stats)
        return 0
    finally:
        if stats is not None:
            stats.stop()


def _finish(out: Path, manifest: dict[str, Any], args: argparse.Namespace,
            t_start: float, stats: _StatsProcess | None = None) -> None:
    """The observation tables, and the result line with the total wall time (opening the
    models, the survey and the statistics)."""
    t_stats = time.perf_counter()
    if args.stats:
        progress = not args.no_progress and _progress.current().enabled
        with _progress.settings(enabled=progress):
            if stats is not None:
                stats.run(out)
                print(f"wrote the observation tables to {out / 'stats'} (observations.md)")
            else:
                _observation_tables(out)
    print(survey_command.result_line(
        manifest, stats_s=time.perf_counter() - t_stats if args.stats else None,
        total_s=time.perf_counter() - t_start))


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
            for name in ("qkforms.stats_command", "qkforms.stats.observation_tables",
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
            from qkforms.stats.baseline import compute_ahead  # in this process only

            compute_ahead(msg[1])
            continue
        if msg[0] != "go":
            return
        loader.join()
        # the statistics' modules are imported in this process only
        from qkforms.stats_command import run as stats_run

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
    from qkforms.stats_command import configure as stats_configure  # scipy: when asked

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


def _observation_tables(out: Path) -> None:
    """Write the observation tables of ``qkforms stats`` (defaults) to ``out/stats``."""
    from qkforms.stats_command import run as stats_run  # scipy and pyarrow: when asked

    stats_run(_stats_args(out))
    print(f"wrote the observation tables to {out / 'stats'} (observations.md)")

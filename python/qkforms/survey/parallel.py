"""How the survey runs in parallel: BLAS threads, compute threads, read-ahead, processes.

The survey's linear algebra is a batch of many small problems (``2n x 2n`` eigenvalue
problems, ``n x N`` products): multi-threaded OpenBLAS gains little there and, when the
cores are shared with other work, its spinning threads slow such calls down by an
order of magnitude. So BLAS runs single-threaded (:func:`blas_single_thread`) and the
parallelism is the survey's own (the thread policy of :mod:`qkforms.threads`): compute
threads over slices of a layer's heads (:func:`map_slices`), a reader thread that
decodes the next layer meanwhile (:func:`prefetched`), and worker processes over
layers (:func:`run_processes`).
Nothing here knows what is computed; :mod:`qkforms.survey.layer` and
:mod:`qkforms.survey.pipeline` say that.

Examples
--------
>>> from qkforms.survey.parallel import map_slices
>>> map_slices(lambda a, b: list(range(a, b)), 5, threads=2)
[[0, 1], [2, 3, 4]]
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from qkforms.errors import QKFormsError
from qkforms.threads import map_slices, single_threaded_libraries

__all__ = [
    "OneBehind",
    "blas_single_thread",
    "die_with_parent",
    "map_slices",
    "prefetched",
    "run_processes",
    "single_threaded_children",
]

T = TypeVar("T")

def blas_single_thread() -> AbstractContextManager[object]:
    """Context manager limiting BLAS/LAPACK (and OpenMP) to one thread.

    The survey's side of the thread policy of :mod:`qkforms.threads`
    (:func:`~qkforms.threads.single_threaded_libraries`; a no-op without threadpoolctl).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.parallel import blas_single_thread
    >>> with blas_single_thread():
    ...     float(np.linalg.eigvalsh(np.eye(2)).sum())
    2.0
    """
    return single_threaded_libraries()


def prefetched(read: Callable[[int], T], items: Sequence[int], *,
               ahead: int = 1) -> Iterator[tuple[int, T, float]]:
    """Yield ``(item, read(item), read_seconds)`` in order; later items are read meanwhile.

    At most ``ahead + 1`` results are alive at once (the one being used and those read
    ahead): the reader takes a slot before reading and the consumer gives it back when
    it asks for the next item. An exception in ``read`` is raised in the consumer.

    Examples
    --------
    >>> [(i, v) for i, v, _ in prefetched(lambda i: i * i, [1, 2, 3])]
    [(1, 1), (2, 4), (3, 9)]
    """
    q: queue.Queue[Any] = queue.Queue()
    slots = threading.Semaphore(ahead + 1)
    stop = threading.Event()

    def produce() -> None:
        for item in items:
            while not slots.acquire(timeout=0.1):
                if stop.is_set():
                    return
            if stop.is_set():
                return
            t = time.perf_counter()
            try:
                got: Any = (item, read(item), time.perf_counter() - t)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                q.put(exc)
                return
            q.put(got)

    thread = threading.Thread(target=produce, name="qkforms-survey-reader", daemon=True)
    thread.start()
    try:
        for i in range(len(items)):
            if i:
                slots.release()  # the previous item has been used
            got = q.get()
            if isinstance(got, BaseException):
                raise got
            yield got
            got = None
    finally:
        stop.set()
        thread.join(timeout=5)


class OneBehind:
    """Run tasks one at a time in a background thread, at most one pending.

    :meth:`submit` waits for the previous task (re-raising its exception) before
    handing over the next, so the caller works on item i + 1 while item i finishes;
    :meth:`finish` waits for the last one. Results are passed to ``on_result``.

    Examples
    --------
    >>> out = []
    >>> with OneBehind(out.append) as behind:
    ...     for i in range(3):
    ...         behind.submit(lambda i=i: i * i)
    >>> out
    [0, 1, 4]
    """

    def __init__(self, on_result: Callable[[Any], None]) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qkforms-writer")
        self._pending: Future[Any] | None = None
        self._on_result = on_result

    def _collect(self) -> None:
        if self._pending is not None:
            fut, self._pending = self._pending, None
            self._on_result(fut.result())

    def submit(self, task: Callable[[], Any]) -> None:
        """Wait for the previous task, then start ``task`` in the background."""
        self._collect()
        self._pending = self._pool.submit(task)

    def finish(self) -> None:
        """Wait for the last task."""
        self._collect()

    def __enter__(self) -> OneBehind:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            if exc_type is None:
                self.finish()
            elif self._pending is not None:
                self._pending.cancel()
                self._pending = None
        finally:
            self._pool.shutdown(wait=True)


#: seconds between two checks of the parent by a worker's watchdog thread
WATCHDOG_PERIOD = 0.5


def die_with_parent(parent: int) -> None:
    """Make the calling (worker) process end when process ``parent`` ends.

    On Linux the kernel sends SIGKILL at the parent's death
    (``prctl(PR_SET_PDEATHSIG)``, via ctypes); everywhere a daemon thread checks every
    :data:`WATCHDOG_PERIOD` seconds that the parent is still ``os.getppid()`` and ends
    the process otherwise (``os._exit``). A parent that died before this call is
    noticed at once. So a worker never outlives a killed survey and never writes into
    ``--out`` after it.

    Examples
    --------
    >>> import subprocess, sys
    >>> code = ("import os, sys; from qkforms.survey.parallel import die_with_parent; "
    ...         "die_with_parent(int(sys.argv[1])); print('running')")
    >>> run = lambda parent: subprocess.run([sys.executable, "-c", code, str(parent)],
    ...                                     capture_output=True, text=True)
    >>> import os
    >>> run(os.getpid()).stdout, run(-1).returncode   # -1: "my parent is already gone"
    ('running\\n', 1)
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the watchdog remains
            pass
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCHDOG_PERIOD)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="qkforms-parent-watchdog", daemon=True).start()


def _worker_init(parent: int) -> None:
    """Initializer of the survey's worker processes.

    Ctrl-C reaches every process of the terminal's group; the workers ignore it and
    the parent stops them (so a single clean message is printed, and no worker dies
    in the middle of a write it cannot clean up). Each worker is a process of the
    survey's own, so it keeps freed memory for the next layer as the survey command
    does (:func:`qkforms.allocator.keep_freed_memory`).
    """
    from qkforms.allocator import keep_freed_memory

    keep_freed_memory()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)


def _stop_pool(pool: Any) -> None:
    """End the workers of a process pool now (terminate, then kill), and join them."""
    procs = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 10
    for p in procs:
        p.join(timeout=max(0.1, deadline - time.monotonic()))
        if p.is_alive():  # pragma: no cover - SIGTERM not honoured
            p.kill()
            p.join(timeout=10)
    pool.shutdown(wait=True)


def run_processes(task: Callable[..., T], calls: Sequence[tuple[Any, ...]], *, workers: int,
                  on_result: Callable[[T], None],
                  on_start: Callable[[list[int]], None] | None = None) -> None:
    """Run ``task(*args)`` for every ``args`` in ``calls`` in ``workers`` spawned processes.

    Each process runs BLAS/OpenMP single-threaded (environment variables set for the
    children, restored afterwards; :mod:`qkforms.threads`) and its own compute threads
    (the usable cores over ``workers``); ``on_result`` sees every result as it
    comes; ``on_start`` gets the workers' pids once they run. The workers die with
    this process (:func:`die_with_parent`) and ignore Ctrl-C; on any exception here
    (a failed task, Ctrl-C, a worker killed e.g. by the kernel's out-of-memory killer)
    the remaining tasks are cancelled and the workers are ended and joined before the
    exception propagates.

    Raises
    ------
    QKFormsError
        When a worker process died abruptly (the pool is broken).
    """
    with single_threaded_children():
        _run_pool(task, calls, workers=workers, on_result=on_result, on_start=on_start)


@contextmanager
def single_threaded_children() -> Iterator[None]:
    """Processes started inside run BLAS/OpenMP single-threaded (the thread policy).

    Sets ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` to 1 for
    the children (read when their libraries load) and restores them afterwards.

    Examples
    --------
    >>> import os
    >>> from qkforms.survey.parallel import single_threaded_children
    >>> with single_threaded_children():
    ...     os.environ["OMP_NUM_THREADS"]
    '1'
    """
    saved = {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                            "MKL_NUM_THREADS")}
    os.environ.update({k: "1" for k in saved})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run_pool(task: Callable[..., T], calls: Sequence[tuple[Any, ...]], *, workers: int,
              on_result: Callable[[T], None],
              on_start: Callable[[list[int]], None] | None) -> None:
    """The pool of :func:`run_processes` (under :func:`single_threaded_children`)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    pool = None
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                                   initializer=_worker_init, initargs=(os.getpid(),))
        futures = [pool.submit(task, *args) for args in calls]
        if on_start is not None:
            on_start(sorted(p.pid for p in getattr(pool, "_processes", {}).values()
                            if p.pid is not None))
        for fut in as_completed(futures):
            on_result(fut.result())
    except BrokenProcessPool as exc:
        if pool is not None:
            _stop_pool(pool)
        raise QKFormsError(
            "a survey worker process died abruptly (killed, most often by the system for "
            "lack of memory); rerun with fewer --workers or fewer layers at a time "
            "(--layers), and --resume to keep the layers already done") from exc
    except BaseException:
        if pool is not None:
            _stop_pool(pool)
        raise
    else:
        pool.shutdown(wait=True)

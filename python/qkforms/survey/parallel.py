"""How the survey runs in parallel: BLAS threads, compute threads, read-ahead, processes.

The survey's linear algebra is a batch of many small problems (``2n x 2n`` eigenvalue
problems, ``n x N`` products): multi-threaded OpenBLAS gains little there and, when the
cores are shared with other work, its spinning threads slow such calls down by an
order of magnitude. So BLAS runs single-threaded (:func:`blas_single_thread`) and the
parallelism is the survey's own: compute threads over slices of a layer's heads
(:func:`map_slices`), a reader thread that decodes the next layer meanwhile
(:func:`prefetched`), and worker processes over layers (:func:`run_processes`).
Nothing here knows what is computed; :mod:`qkforms.survey.runner` says that.

Examples
--------
>>> from qkforms.survey.parallel import map_slices
>>> map_slices(lambda a, b: list(range(a, b)), 5, threads=2)
[[0, 1], [2, 3, 4]]
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import numpy as np

__all__ = ["OneBehind", "blas_single_thread", "map_slices", "prefetched", "run_processes"]

T = TypeVar("T")

_CONTROLLER: Any = None  # threadpoolctl.ThreadpoolController, created on first use
_POOL: ThreadPoolExecutor | None = None


def blas_single_thread() -> AbstractContextManager[object]:
    """Context manager limiting BLAS/LAPACK to one thread (no-op without threadpoolctl).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.survey.parallel import blas_single_thread
    >>> with blas_single_thread():
    ...     float(np.linalg.eigvalsh(np.eye(2)).sum())
    2.0
    """
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl is in the survey extra
        from contextlib import nullcontext

        return nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    limiter: AbstractContextManager[object] = _CONTROLLER.limit(limits=1, user_api="blas")
    return limiter


def map_slices(func: Callable[[int, int], T], count: int, *, threads: int) -> list[T]:
    """``func(start, stop)`` on ``threads`` consecutive slices of ``range(count)``.

    The slices run in a shared thread pool (one call in the calling thread when
    ``threads`` is 1); results come back in slice order.
    """
    threads = max(1, min(threads, count))
    bounds = np.linspace(0, count, threads + 1).round().astype(int)
    pairs = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    if threads == 1:
        return [func(a, b) for a, b in pairs]
    global _POOL
    if _POOL is None or _POOL._max_workers < threads:
        _POOL = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="qkforms-survey")
    futures: list[Future[T]] = [_POOL.submit(func, a, b) for a, b in pairs]
    return [f.result() for f in futures]


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


def run_processes(task: Callable[..., T], calls: Sequence[tuple[Any, ...]], *, workers: int,
                  on_result: Callable[[T], None]) -> None:
    """Run ``task(*args)`` for every ``args`` in ``calls`` in ``workers`` spawned processes.

    Each process gets ``cpu_count // workers`` BLAS threads (environment variables set
    for the children, restored afterwards); ``on_result`` sees every result as it comes.
    """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    threads = str(max(1, (os.cpu_count() or 1) // workers))
    saved = {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                            "MKL_NUM_THREADS")}
    os.environ.update({k: threads for k in saved})
    try:
        with ProcessPoolExecutor(max_workers=workers,
                                 mp_context=mp.get_context("spawn")) as pool:
            futures = [pool.submit(task, *args) for args in calls]
            for fut in as_completed(futures):
                on_result(fut.result())
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

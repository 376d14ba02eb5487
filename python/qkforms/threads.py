"""The thread policy: how many threads qkforms computes with, and BLAS at one thread.

qkforms' heavy steps are batches of many small problems: the survey's ``2n x 2n``
eigenproblems and ``n x N`` products, the statistics' batched fits and baselines. A
multi-threaded BLAS or OpenMP runtime gains little on such calls, and when the cores
are shared -- with the survey's own reader and writer threads, or with other jobs on
the machine -- its spinning threads slow them down by an order of magnitude (one
24B-shaped layer's Gram blocks: 15.7 s with 2 BLAS threads on a busy 2-core machine,
0.77 s with 1). So the policy, used by the survey and the statistics alike, is:

* BLAS and OpenMP run single-threaded inside qkforms' steps
  (:func:`single_threaded_libraries`);
* the parallelism is qkforms' own: :func:`compute_threads` threads (the cores this
  process may run on, :func:`usable_cores`, shared among the worker processes) work on
  disjoint slices of a batch (:func:`map_slices`). These threads block instead of
  spinning, so a busy machine costs them their share of the cores, not more.

Every result computed in slices is identical to the result of one batch (each row is
computed by the same calls on the same data whatever the slicing; tested).

Examples
--------
>>> from qkforms.threads import compute_threads, map_slices
>>> map_slices(lambda a, b: list(range(a, b)), 5, threads=2)
[[0, 1], [2, 3, 4]]
>>> compute_threads(workers=10**6)
1
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

import numpy as np

__all__ = ["compute_threads", "map_slices", "single_threaded_libraries", "usable_cores"]

T = TypeVar("T")

#: threadpoolctl.ThreadpoolController and the size of ``sys.modules`` when it was made
_CONTROLLER: tuple[Any, int] | None = None
_POOL: ThreadPoolExecutor | None = None


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity, else ``cpu_count``).

    Examples
    --------
    >>> from qkforms.threads import usable_cores
    >>> usable_cores() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def compute_threads(*, workers: int = 1, requested: int | None = None) -> int:
    """Compute threads per process: ``requested``, else the usable cores over ``workers``.

    Examples
    --------
    >>> from qkforms.threads import compute_threads, usable_cores
    >>> compute_threads(requested=3), compute_threads() == usable_cores()
    (3, True)
    """
    if requested is not None:
        return max(1, int(requested))
    return max(1, usable_cores() // max(1, int(workers)))


def single_threaded_libraries() -> AbstractContextManager[object]:
    """Context manager limiting BLAS/LAPACK and OpenMP to one thread (threadpoolctl).

    Every such library loaded so far is limited, also those loaded after an earlier
    call: the controller that finds them is made again whenever a module was imported
    since. scipy brings its own OpenBLAS, loaded only when ``scipy.linalg`` is first
    imported -- by qkforms itself lazily, inside such a context (the Gram engine's
    ``trtri``) -- so ``scipy.linalg`` is imported before the controller is made: its
    threads would otherwise spin beside the survey's compute threads for as long as the
    context lasts. A no-op when threadpoolctl is not installed (it is in the ``survey``
    extra).

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.threads import single_threaded_libraries
    >>> with single_threaded_libraries():
    ...     float(np.linalg.eigvalsh(np.eye(2)).sum())
    2.0
    """
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl is in the survey extra
        return nullcontext()
    import scipy.linalg  # noqa: F401  (a core dependency: loads scipy's own BLAS first)

    if _CONTROLLER is None or _CONTROLLER[1] != len(sys.modules):
        _CONTROLLER = (ThreadpoolController(), len(sys.modules))
    limiter: AbstractContextManager[object] = _CONTROLLER[0].limit(limits=1)
    return limiter


def map_slices(func: Callable[[int, int], T], count: int, *, threads: int) -> list[T]:
    """``func(start, stop)`` on ``threads`` consecutive slices of ``range(count)``.

    The slices run in a shared thread pool (one call in the calling thread when
    ``threads`` is 1); results come back in slice order.

    Examples
    --------
    >>> from qkforms.threads import map_slices
    >>> map_slices(lambda a, b: b - a, 7, threads=3)
    [2, 3, 2]
    """
    threads = max(1, min(threads, count))
    bounds = np.linspace(0, count, threads + 1).round().astype(int)
    pairs = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    if threads == 1:
        return [func(a, b) for a, b in pairs]
    global _POOL
    if _POOL is None or _POOL._max_workers < threads:
        _POOL = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="qkforms-compute")
    futures: list[Future[T]] = [_POOL.submit(func, a, b) for a, b in pairs]
    return [f.result() for f in futures]

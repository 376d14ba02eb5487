"""Running survey layer tasks on a Dask cluster (``qkforms survey --executor dask``).

A task is one (model or checkpoint, layer): :class:`LayerTask`. On a worker it runs the
survey's own layer computation (:func:`qkforms.survey.pipeline.compute_layer`: open the
checkpoint, read the layer, compute) and **returns the layer's tables**; the driver
(the dask client, this process) writes each returned layer's part atomically under
``DIR/parts/<key>/`` as it arrives, and merges the parts in (unit, layer) order at the
end. So the tables are identical to the local executor's, whatever the order in which
tasks finish or where they run.

**Only the driver writes into ``--out``.** Workers may live on other machines and
outlive the driver (a ``kill -9`` of the driver does not reach them at once); since
they write nothing, nothing appears in ``--out`` after the driver died
(``docs/survey.md``, "Interruptions and failures").

**A worker lost mid-task loses nothing.** It had written nothing; the scheduler reruns
the tasks of a lost worker on another worker (up to
``distributed.scheduler.allowed-failures`` times, default 3); the rerun computes the
same tables. Errors raised by a task (e.g. a
corrupt file) are not retried: they stop the run, and the finished parts stay for
``--resume``.

**Clusters.** Without a scheduler address a ``LocalCluster`` of ``workers`` processes
(one thread each) is started and closed. With ``--scheduler tcp://host:8786`` the
workers of that cluster must see the checkpoints at the same paths as the driver (a
shared filesystem: NFS, Lustre, a mounted object store, at the same mount point; the
output directory need only be the driver's), and qkforms installed (same version) in
the workers' environment.

Examples
--------
>>> from qkforms.survey.dask_executor import LayerTask
>>> LayerTask("ckpt", "out", "run.step-000000010", "run", 3, False, 10, None).layer
3
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from qkforms.arguments import env_number
from qkforms.errors import QKFormsError
from qkforms.survey.options import SurveyOptions
from qkforms.survey.pipeline import compute_layer, layer_progress, write_layer
from qkforms.survey.store import PartStore
from qkforms.threads import compute_threads

__all__ = ["HOLD_ENV", "LayerTask", "dask_client", "run_dask_layers"]

#: test hook: a directory; each task writes ``<key>-L<layer>.<pid>.started`` there and
#: then waits ``QKFORMS_SURVEY_TEST_HOLD_S`` seconds before working (lets a test kill
#: the worker process mid-task)
HOLD_ENV = "QKFORMS_SURVEY_TEST_HOLD"


@dataclass(frozen=True)
class LayerTask:
    """One (model or checkpoint, layer) of a survey: what a worker needs to do it."""

    source: str
    out: str
    key: str
    label: str
    layer: int
    keep_factors: bool
    step: int | None = None
    tokens_seen: int | None = None


@contextmanager
def dask_client(*, scheduler: str | None = None, client: Any = None, n_workers: int = 2,
                processes: bool = True) -> Iterator[Any]:
    """A ``dask.distributed.Client``: the one given, one for ``scheduler``, or a LocalCluster.

    Whatever this opens (client, cluster) it closes on exit.

    Raises
    ------
    QKFormsError
        When dask.distributed is not installed, or the scheduler cannot be reached.

    Examples
    --------
    >>> from qkforms.survey.dask_executor import dask_client
    >>> with dask_client(n_workers=1, processes=False) as c:
    ...     c.submit(sum, [1, 2]).result()
    3
    """
    if client is not None:
        yield client
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise QKFormsError("--executor dask needs dask.distributed: pip install "
                           "'qkforms[dask]'") from exc
    cluster = None
    try:
        if scheduler:
            try:
                own = Client(scheduler, timeout="20s")
            except OSError as exc:
                raise QKFormsError(f"cannot reach the dask scheduler at {scheduler}: "
                                   f"{exc}") from exc
        else:
            cluster = LocalCluster(n_workers=max(1, n_workers), threads_per_worker=1,
                                   processes=processes, dashboard_address=None,
                                   silence_logs=logging.CRITICAL)
            own = Client(cluster)
        try:
            yield own
        finally:
            own.close()
    finally:
        if cluster is not None:
            cluster.close()


def _hold(task: LayerTask) -> None:
    hold = os.environ.get(HOLD_ENV)
    if not hold:
        return
    marker = Path(hold) / f"{task.key}-L{task.layer:04d}.{os.getpid()}.started"
    marker.write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(env_number(f"{HOLD_ENV}_S", 1.0))


def _run_task(task: LayerTask, opts: dict[str, Any]) -> Any:
    """The worker side: one layer computed and returned (a ``LayerResult``); no write."""
    _hold(task)
    return compute_layer(task.source, task.label, task.layer, opts, task.keep_factors,
                         step=task.step, tokens_seen=task.tokens_seen)


def run_dask_layers(tasks: list[LayerTask], opts: SurveyOptions, *,
                    client: Any = None) -> list[dict[str, float]]:
    """Run every task on dask, writing each returned layer's part here; return the timings.

    Parameters
    ----------
    tasks : list of LayerTask
    opts : SurveyOptions
        ``scheduler`` (else a LocalCluster of ``workers`` processes), ``threads`` (compute
        threads per task; default: cores / workers for a LocalCluster, 1 on a given
        cluster), ``progress``.
    client : dask.distributed.Client, optional
        Use this client (its cluster is left running).

    Raises
    ------
    QKFormsError
        The first error of a task (the other tasks are cancelled; finished parts stay).
    """
    if not tasks:
        return []
    odict = asdict(opts)
    odict["out"] = str(opts.out)
    if odict.get("threads") is None:  # a remote worker's cores are its own business
        odict["threads"] = (1 if opts.scheduler or client is not None
                            else compute_threads(workers=opts.workers))
    results: list[dict[str, float] | None] = [None] * len(tasks)
    with dask_client(scheduler=opts.scheduler, client=client,
                     n_workers=max(1, opts.workers)) as c:
        from dask.distributed import as_completed

        futures = [c.submit(_run_task, t, odict, pure=False,
                            key=f"qkforms-survey-{t.key}-L{t.layer:04d}-{os.getpid()}-"
                                f"{time.monotonic_ns()}")
                   for t in tasks]
        index = {f.key: i for i, f in enumerate(futures)}
        with layer_progress(len(tasks), "survey (dask)", opts.progress) as bar:
            for fut in as_completed(futures):
                try:
                    res = fut.result()
                except Exception as exc:
                    for other in futures:
                        other.cancel()
                    if isinstance(exc, QKFormsError):
                        raise
                    t = tasks[index[fut.key]]
                    raise QKFormsError(
                        f"dask task for {t.source} layer {t.layer} failed: "
                        f"{type(exc).__name__}: {exc}; the finished layers are kept "
                        "(rerun with --resume)") from exc
                t = tasks[index[fut.key]]
                results[index[fut.key]] = write_layer(PartStore(Path(t.out), t.key), t.layer,
                                                      res)
                bar.update(1)
    return [r if r is not None else {} for r in results]

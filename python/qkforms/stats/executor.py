"""Running the per-(model, layer) tasks on dask.distributed.

Each task is :func:`qkforms.stats.layer.layer_task` on one layer's rows; results are
gathered in submission order, so the tables are the same as with the local executor.
Without a client or scheduler address a ``LocalCluster`` is started (and closed).

Examples
--------
>>> from qkforms.stats.executor import run_dask
>>> run_dask([], {}, n_workers=1, processes=False)
[]
"""

from __future__ import annotations

from typing import Any

from qkforms.stats.layer import layer_task
from qkforms.survey.dask_executor import dask_client

__all__ = ["run_dask"]


def run_dask(
    payloads: list[tuple[dict, dict]],
    kwargs: dict[str, Any],
    *,
    scheduler: str | None = None,
    client: Any = None,
    n_workers: int = 2,
    processes: bool = True,
) -> list[dict[str, dict[str, list[Any]]]]:
    """Run ``layer_task(heads, spectra, **kwargs)`` for every payload on dask.

    Parameters
    ----------
    payloads : list of (heads columns, spectra columns)
    kwargs : dict
        Keyword arguments of ``layer_task``.
    scheduler : str, optional
        Scheduler address (``tcp://host:port``).
    client : dask.distributed.Client, optional
        Existing client; takes precedence.
    n_workers, processes :
        LocalCluster settings when neither is given.

    Examples
    --------
    >>> from qkforms.stats.executor import run_dask
    >>> heads = {"model": ["m"], "layer": [0], "head": [0], "N": [8], "n": [1]}
    >>> spectra = {"model": ["m"], "layer": [0], "head": [0], "eig_S": [[1.0, -0.5]],
    ...            "sv_T": [[0.7]], "abs_eig_L": [[0.5]]}
    >>> out = run_dask([(heads, spectra)], {"fits": False, "baseline": False},
    ...                n_workers=1, processes=False)
    >>> out[0]["head_stats"]["head"]
    [0]
    """
    if not payloads:
        return []

    with dask_client(scheduler=scheduler, client=client, n_workers=n_workers,
                     processes=processes) as c:
        futures = [c.submit(layer_task, h, s, pure=False, **kwargs) for h, s in payloads]
        return list(c.gather(futures))

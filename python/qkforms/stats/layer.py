"""The per-(model, layer) task: a pure function of one layer's rows.

:func:`layer_task` takes the ``heads.parquet`` and ``spectra.parquet`` rows of one
(model, layer) as plain column dicts and returns the per-head spectral statistics
and fits (:func:`qkforms.stats.spectral.spectral_rows`) and the rows of the seeded
Gaussian baseline of the same shape (:func:`qkforms.stats.baseline.baseline_heads`).
It reads nothing else and draws only from streams seeded by ``(seed, model,
layer)``, so the local and the dask executors give identical results.

Examples
--------
>>> import numpy as np
>>> from qkforms.stats.layer import layer_task
>>> heads = {"model": ["m"], "layer": [0], "head": [0], "N": [16], "n": [2],
...          "status": ["ok"]}
>>> spectra = {"model": ["m"], "layer": [0], "head": [0],
...            "eig_S": [[2.0, 1.0, -1.0, -2.0]], "sv_T": [[1.4, 0.7]],
...            "abs_eig_L": [[1.5, 0.9]]}
>>> out = layer_task(heads, spectra, seed=0, fits=False)
>>> out["head_stats"]["head"], len(out["baseline"]["sym_energy"])
([0], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from qkforms.errors import QKFormsError
from qkforms.stats.baseline import baseline_heads

__all__ = ["fit_layers", "layer_task"]


def _plain_list(values: Any) -> list[Any]:
    return [v.item() if isinstance(v, np.generic) else v for v in list(values)]


def _ordered_spectra(heads: dict[str, Any], spectra: dict[str, Any]
                     ) -> tuple[list[int], dict[str, list[Any]]]:
    """The layer's head ids and its spectra columns in the order of ``heads``.

    Raises
    ------
    QKFormsError
        If the rows span several (model, layer) groups or a head has no spectra row.
    """
    models = set(_plain_list(heads["model"]))
    layers = set(_plain_list(heads["layer"]))
    if len(models) > 1 or len(layers) > 1:
        raise QKFormsError(f"layer_task got several (model, layer) groups: {models} x {layers}")
    head_ids = [int(h) for h in _plain_list(heads["head"])]
    spec_index = {int(h): i for i, h in enumerate(_plain_list(spectra.get("head", [])))}
    missing = [h for h in head_ids if h not in spec_index]
    if missing:
        raise QKFormsError(
            f"spectra.parquet has no rows for heads {missing} of model "
            f"{next(iter(models))!r}, layer {next(iter(layers))}"
        )
    order = [spec_index[h] for h in head_ids]

    def col(name: str) -> list[Any]:
        values = list(spectra[name]) if name in spectra else [None] * len(spec_index)
        return [values[i] for i in order]

    return head_ids, {name: col(name) for name in ("eig_S", "sv_T", "abs_eig_L")}


def fit_layers(payloads: Sequence[tuple[dict[str, Any], dict[str, Any]]], *,
               threads: int = 1) -> list[dict[str, list[Any]]]:
    """The family-fit columns of many layers' heads, fitted in one batch.

    ``payloads`` are ``(heads, spectra)`` pairs as for :func:`layer_task`; the result
    has, per payload, the columns that ``layer_task(..., fits=True)`` adds to
    ``head_stats`` beyond ``fits=False``, with the same values (the fits are per row:
    :func:`qkforms.stats.spectral.family_rows`).

    Examples
    --------
    >>> heads = {"model": ["m"], "layer": [0], "head": [0], "N": [16], "n": [1]}
    >>> spectra = {"model": ["m"], "layer": [0], "head": [0], "eig_S": [[1.0, -0.5]],
    ...            "sv_T": [[0.7]], "abs_eig_L": [[0.5]]}
    >>> cols = fit_layers([(heads, spectra)] * 2)
    >>> len(cols), cols[0]["sigma_T_m"], cols[1]["sigma_T_best"]
    (2, [1], [None])
    """
    # qkforms.stats.spectral loads scipy: only when this runs
    # lazy: keeps scipy out of this module's import
    from qkforms.stats.spectral import family_rows

    ordered = [_ordered_spectra(h, s) for h, s in payloads]
    bounds = np.cumsum([0] + [len(ids) for ids, _ in ordered])
    fam = family_rows(*([v for _, spec in ordered for v in spec[name]]
                        for name in ("eig_S", "sv_T", "abs_eig_L")), threads=threads)
    return [{k: _plain_list(v[a:b]) for k, v in fam.items()}
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def layer_task(
    heads: dict[str, Any],
    spectra: dict[str, Any],
    *,
    seed: int = 0,
    fits: bool = True,
    baseline: bool = True,
    baseline_max_heads: int | None = None,
) -> dict[str, dict[str, list[Any]]]:
    """Per-head statistic/fit rows and baseline rows of one (model, layer).

    Parameters
    ----------
    heads, spectra : dict of column -> sequence
        The layer's rows (``status == "ok"`` rows of heads; spectra rows of the
        same heads, any order).
    seed : int
        Seed of the Gaussian baseline.
    fits : bool
        Run the generalized-gamma/lognormal family fits.
    baseline : bool
        Draw the Gaussian baseline (as many heads as the layer has, or at most
        ``baseline_max_heads``).

    Returns
    -------
    dict with ``"head_stats"`` and ``"baseline"``, each a dict of column -> list

    Examples
    --------
    >>> heads = {"model": ["m"], "layer": [3], "head": [1], "N": [8], "n": [1]}
    >>> spectra = {"model": ["m"], "layer": [3], "head": [1], "eig_S": [[1.0, -0.5]],
    ...            "sv_T": [[0.7]], "abs_eig_L": [[0.5]]}
    >>> out = layer_task(heads, spectra, fits=False, baseline=False)
    >>> round(out["head_stats"]["geo_rel_err"][0], 6)
    0.010153
    """
    # qkforms.stats.spectral loads scipy: only when this runs
    # lazy: keeps scipy out of this module's import
    from qkforms.stats.spectral import spectral_rows

    head_ids, spec = _ordered_spectra(heads, spectra)
    models = set(_plain_list(heads["model"]))
    layers = set(_plain_list(heads["layer"]))
    stats = spectral_rows(spec["eig_S"], spec["sv_T"], spec["abs_eig_L"], fits=fits)
    model = next(iter(models)) if models else None
    layer = int(next(iter(layers))) if layers else 0
    head_stats: dict[str, list[Any]] = {
        "model": [model] * len(head_ids),
        "layer": [layer] * len(head_ids),
        "head": head_ids,
    }
    for name, values in stats.items():
        head_stats[name] = _plain_list(values)

    base: dict[str, list[Any]] = {"model": [], "layer": [], "head": [], "N": [], "n": []}
    if baseline and head_ids:
        shapes = sorted({(int(N), int(n)) for N, n in zip(heads["N"], heads["n"], strict=True)})
        count = len(head_ids)
        if baseline_max_heads is not None:
            count = min(count, int(baseline_max_heads))
        for N, n in shapes:  # one shape per layer in practice
            rows = baseline_heads(count, N=N, n=n, seed=seed, key=(model, layer, N, n))
            base["model"] += [model] * count
            base["layer"] += [layer] * count
            base["head"] += list(range(count))
            base["N"] += [N] * count
            base["n"] += [n] * count
            for name, values in rows.items():
                base.setdefault(name, []).extend(_plain_list(values))
    return {"head_stats": head_stats, "baseline": base}

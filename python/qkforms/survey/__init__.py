"""The survey of real attention heads (``qkforms survey``; ``docs/theory.md`` §12).

The API: :func:`survey` (opened models -> ``heads.parquet``, ``spectra.parquet``,
``manifest.json``, ``summary.md``; ``docs/survey.md``) with its :class:`SurveyOptions`
and :func:`parse_layers`; one layer alone is :func:`process_layer` (with
:class:`LayerInputs` and :class:`LayerOptions`, returning a :class:`LayerResult`);
training runs are :func:`discover_run`, :func:`units_for` and :func:`survey_units`.

Modules, top first: :mod:`~qkforms.survey.command` (the command line),
:mod:`~qkforms.survey.runner` (:func:`survey`), :mod:`~qkforms.survey.training_runs`
(training runs as sources), :mod:`~qkforms.survey.dask_executor` (the dask executor),
:mod:`~qkforms.survey.pipeline` (one model's layers read, computed, written, merged),
:mod:`~qkforms.survey.layer` (one layer), :mod:`~qkforms.survey.options` (the options),
:mod:`~qkforms.survey.manifest`, :mod:`~qkforms.survey.summary`,
:mod:`~qkforms.survey.arrow_tables` (arrow tables), :mod:`~qkforms.survey.head_statistics`
(the one per-head statistics function), :mod:`~qkforms.survey.schema` (the column table),
:mod:`~qkforms.survey.store` (resumable atomic parts), :mod:`~qkforms.survey.outdir` (the
output directory's lock and its check on start), :mod:`~qkforms.survey.parallel` (BLAS
threads, compute threads, read-ahead, background writer, worker processes, which die with
their parent), :mod:`~qkforms.survey.rope` (relative-position forms of RoPE heads),
:mod:`~qkforms.survey.balance` and :mod:`~qkforms.survey.synthetic_checkpoints`
(synthetic checkpoints for tests and benchmarks); the survey's files are checked on
reading by :mod:`qkforms.stats.survey_input`. Output files: ``docs/survey.md``.

Importing this package is light (numpy only): the names above are loaded on first use.

Examples
--------
>>> import qkforms.survey
>>> from qkforms.survey import SurveyOptions, survey
>>> survey.__module__, SurveyOptions().workers
('qkforms.survey.runner', 1)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qkforms.survey.layer import LayerInputs, LayerOptions, LayerResult, process_layer
    from qkforms.survey.options import SurveyOptions, parse_layers
    from qkforms.survey.runner import survey
    from qkforms.survey.training_runs import discover_run, survey_units, units_for

#: exported name -> the module defining it (imported on first use, keeping this light)
_EXPORTS: dict[str, str] = {
    "LayerInputs": "qkforms.survey.layer",
    "LayerOptions": "qkforms.survey.layer",
    "LayerResult": "qkforms.survey.layer",
    "SurveyOptions": "qkforms.survey.options",
    "discover_run": "qkforms.survey.training_runs",
    "parse_layers": "qkforms.survey.options",
    "process_layer": "qkforms.survey.layer",
    "survey": "qkforms.survey.runner",
    "survey_units": "qkforms.survey.training_runs",
    "units_for": "qkforms.survey.training_runs",
}

__all__ = [
    "LayerInputs",
    "LayerOptions",
    "LayerResult",
    "SurveyOptions",
    "discover_run",
    "parse_layers",
    "process_layer",
    "survey",
    "survey_units",
    "units_for",
]


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        # error-contract: the module protocol of __getattr__ (hasattr, import machinery)
        raise AttributeError(f"module 'qkforms.survey' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))

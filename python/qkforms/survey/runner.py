"""The survey run: models -> per-layer parts -> heads/spectra tables, manifest, summary.

:func:`survey` is what ``qkforms survey`` calls (and what ``qkforms.survey.survey``
names). It checks the models against the options, gives each model its part key and
``model`` label, surveys each one under the output directory's lock
(:func:`qkforms.survey.pipeline.survey_model`, one layer at a time by
:func:`qkforms.survey.layer.process_layer`) and merges the parts
(:func:`qkforms.survey.pipeline.finish_survey`). With ``--executor dask`` the
(model, layer) tasks go to a dask cluster instead
(:func:`qkforms.survey.training_runs.survey_units`).

Examples
--------
>>> from qkforms.survey.runner import survey
>>> survey.__module__
'qkforms.survey.runner'
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from qkforms.allocator import release_freed_memory
from qkforms.errors import QKFormsError
from qkforms.survey.manifest import ModelRun
from qkforms.survey.options import SurveyOptions, parse_layers
from qkforms.survey.outdir import check_out, check_resume_models, open_output
from qkforms.survey.pipeline import (
    discard_factor_streams,
    finish_survey,
    survey_model,
    unique_labels,
)
from qkforms.survey.training_runs import survey_units, units_for

if TYPE_CHECKING:
    from qkforms.models import Model

__all__ = ["survey"]


def survey(
    models: Sequence[Model],
    opts: SurveyOptions,
    *,
    sources: Sequence[str | None] | None = None,
    argv: Sequence[str] | None = None,
    load_seconds: Sequence[float] | None = None,
) -> dict[str, Any]:
    """Survey already opened models into ``opts.out``; return the manifest.

    Parameters
    ----------
    models : sequence of Model
        Objects with ``info`` and ``layer(i)`` (see :mod:`qkforms.models`).
    opts : SurveyOptions
    sources : sequence of str, optional
        The source each model was loaded from (recorded; needed for ``workers > 1``).
    argv : sequence of str, optional
        The command line (recorded in the manifest).
    load_seconds : sequence of float, optional
        Time spent opening each model (headers and sha256; recorded as ``load_s``).

    Returns
    -------
    dict
        The manifest written to ``manifest.json``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import qkforms.models as qm
    >>> from qkforms.survey import SurveyOptions, survey
    >>> from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> d = write_llama_checkpoint(tmp / "ckpt", n_layers=2, N=24, n=3, n_q=2, n_kv=1)
    >>> man = survey([qm.load(d)], SurveyOptions(out=tmp / "out", progress=False))
    >>> man["models"][0]["heads"], sorted(p.name for p in (tmp / "out").glob("*.*"))
    (4, ['heads.parquet', 'manifest.json', 'spectra.parquet', 'summary.md'])
    """
    t_start = time.perf_counter()
    out = check_out(opts.out)
    srcs = list(sources) if sources is not None else [None] * len(models)
    for m in models:
        policy = getattr(m.info, "qk_norm_policy", None)
        if policy is not None and policy != opts.qk_norm:
            raise QKFormsError(f"{m.info.name}: loaded with qk_norm={policy!r} but the survey "
                               f"options say qk_norm={opts.qk_norm!r}; load it with the "
                               "survey's policy")
    names = [m.info.name for m in models]
    if opts.executor != "local":
        if any(s is None for s in srcs):
            raise QKFormsError(f"--executor {opts.executor} needs the sources of the models "
                               "(the workers open them)")
        return survey_units(units_for([str(s) for s in srcs], names=names), opts, argv=argv)
    keys, labels = unique_labels(names)
    selections = [parse_layers(opts.layers, m.info.n_layers) for m in models]
    with open_output(out) as lock:
        if opts.resume:
            check_resume_models(out, keys, names)
        runs: list[ModelRun] = []
        try:
            for model, src, key, label, layers in zip(models, srcs, keys, labels, selections,
                                                      strict=True):
                runs.append(survey_model(model, src, key, label, opts, layers, lock=lock))
                release_freed_memory()  # the next model may be smaller (qkforms.allocator)
        except BaseException:
            discard_factor_streams(runs)  # the earlier models' unfinished factors files
            raise
        if load_seconds is not None:
            for run, secs in zip(runs, load_seconds, strict=True):
                run.timings["load_s"] = secs
        return finish_survey(models, srcs, runs, opts, argv=argv, t_start=t_start)

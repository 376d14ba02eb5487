"""The survey of real attention heads (``qkforms survey``; THEORY §7).

Modules: :mod:`~qkforms.survey.spectra` (batched Gram-route spectra of a layer),
:mod:`~qkforms.survey.statistics` (the per-head columns), :mod:`~qkforms.survey.rope`
(relative-position forms of RoPE heads), :mod:`~qkforms.survey.store` (resumable
atomic parts), :mod:`~qkforms.survey.outdir` (the output directory's lock and its check
on start), :mod:`~qkforms.survey.parallel` (threads and worker processes, which die with
their parent), :mod:`~qkforms.survey.runner` (the run), :mod:`~qkforms.survey.summary`,
:mod:`~qkforms.survey.synthetic` (synthetic checkpoints for tests and benchmarks) and
:mod:`~qkforms.survey.command` (the command line). Output files: ``docs/survey.md``.

Importing this package is light (numpy only); pyarrow is imported when tables are built.

Examples
--------
>>> import qkforms.survey
>>> qkforms.survey.__name__
'qkforms.survey'
"""

"""The survey of real attention heads (``qkforms survey``; ``docs/theory.md`` §12).

Modules: :mod:`~qkforms.survey.runner` (the run: options, one layer, one model, the
survey), :mod:`~qkforms.survey.parallel` (BLAS threads, compute threads, read-ahead,
background writer, worker processes, which die with their parent),
:mod:`~qkforms.survey.head_statistics` (the one per-head statistics function),
:mod:`~qkforms.survey.schema` (the column table),
:mod:`~qkforms.survey.arrow_tables` (arrow tables), :mod:`~qkforms.survey.store` (resumable
atomic parts), :mod:`~qkforms.survey.outdir` (the output directory's lock and its check
on start), :mod:`~qkforms.survey.manifest`, :mod:`~qkforms.survey.summary`,
:mod:`~qkforms.survey.rope` (relative-position forms of RoPE heads),
:mod:`~qkforms.survey.training_runs` (training runs as sources),
:mod:`~qkforms.survey.dask_executor` (the dask executor),
:mod:`~qkforms.survey.synthetic_checkpoints` (synthetic checkpoints for tests and
benchmarks) and
:mod:`~qkforms.survey.command` (the command line). Output files: ``docs/survey.md``.

Importing this package is light (numpy only); pyarrow is imported when tables are built.

Examples
--------
>>> import qkforms.survey
>>> qkforms.survey.__name__
'qkforms.survey'
"""

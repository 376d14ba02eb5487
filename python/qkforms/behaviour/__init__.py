"""What attention heads do, next to what their forms are: ``qkforms behaviour``.

The survey (:mod:`qkforms.survey`) describes each head by the geometry of its bilinear
form ``L = W_K^T W_Q``; this package runs the model and describes the same heads by
their attention patterns -- previous-token, induction, duplicate-token and
attention-sink scores, mean attention distance and entropy (:mod:`.scores`) -- on
probes of random tokens from the model's own vocabulary (:mod:`.probes`), keyed exactly
like ``heads.parquet`` and checked (:mod:`.probe_run`, :mod:`.reconstruct`). The
statistics and the report join the two tables (:mod:`.join`, :mod:`.associations`,
:mod:`qkforms.report.behaviour_view`): associations between what a head does and
what its form is, not causes. Definitions and references: ``docs/behaviour.md``.

Modules: :mod:`.scores` (the score definitions on patterns), :mod:`.probes` (token pool,
framing, probes), :mod:`.reconstruct` (scores rebuilt from the survey's maps, the
bilinear share), :mod:`.probe_run` (running the model on the probes and scoring its
heads), :mod:`.transformers_model` (loading the ``transformers`` model and finding the
survey's maps in it; torch and transformers load there only), :mod:`.schema` (the
columns of ``behaviour.parquet``), :mod:`.files` (the names of its files),
:mod:`.command` (the command line), :mod:`.join` (the join with ``heads.parquet`` and
the relative forms ``L(d)``), :mod:`.associations` (the tables of ``qkforms stats``),
:mod:`qkforms.report.behaviour_view` (the report's section).

Importing this package loads numpy only.

Examples
--------
>>> from qkforms.behaviour import SCORES
>>> list(SCORES)[:3]
['previous_token', 'induction', 'duplicate_token']
"""

from __future__ import annotations

from qkforms.behaviour.scores import CLASS_SCORES, CLASS_THRESHOLD, SCORES

__all__ = ["CLASS_SCORES", "CLASS_THRESHOLD", "SCORES"]

"""``qkforms stats DIR...``: the observation tables, joined with what the heads do.

The statistics (:mod:`qkforms.stats.command`) know the survey's tables only; when a
directory also holds a behaviour run (``behaviour.parquet``, ``docs/behaviour.md``), this
command adds its association tables and their section of ``observations.md``
(:func:`qkforms.behaviour.associations.behaviour_tables`). It sits in the commands layer
(``docs/architecture.md`` §8), so that neither the statistics nor the behaviour package
imports the other upward; ``qkforms survey``'s statistics step runs it too.

Examples
--------
>>> import argparse
>>> from qkforms.stats_command import configure
>>> p = argparse.ArgumentParser()
>>> configure(p)
>>> p.parse_args(["runs/a"]).dirs
['runs/a']
"""

from __future__ import annotations

import argparse

from qkforms.behaviour.associations import behaviour_tables, markdown_lines
from qkforms.stats import command as stats_command
from qkforms.stats.command import TableJoin

__all__ = ["BEHAVIOUR", "configure", "run"]

#: the behaviour tables of the directories that hold a behaviour run
BEHAVIOUR = TableJoin(behaviour_tables, markdown_lines)

configure = stats_command.configure


def run(args: argparse.Namespace) -> int:
    """:func:`qkforms.stats.command.run` with the behaviour tables joined; return 0.

    Examples
    --------
    >>> import argparse, tempfile
    >>> from qkforms.errors import QKFormsError
    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> try:
    ...     run(p.parse_args([tempfile.mkdtemp()]))
    ... except QKFormsError as exc:
    ...     print("heads.parquet" in str(exc))
    True
    """
    return stats_command.run(args, joins=(BEHAVIOUR,))

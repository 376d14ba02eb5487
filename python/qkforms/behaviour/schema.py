"""The columns of ``behaviour.parquet``, defined once (``docs/behaviour.md``).

The key columns are the survey's own (:data:`qkforms.survey.schema.HEADS`: ``model``,
``step``, ``layer``, ``head``, ``kv_head``, ``N``, ``n``), so that a behaviour row and a
``heads.parquet`` row of the same head carry the same key; the score columns come from
:data:`qkforms.behaviour.scores.SCORES`. The docs' column table is generated from
:data:`BEHAVIOUR` (:func:`update_docs`; a test keeps them equal).

Examples
--------
>>> from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS, KEY_COLUMNS
>>> KEY_COLUMNS
('model', 'step', 'layer', 'head', 'kv_head', 'N', 'n')
>>> BEHAVIOUR_COLUMNS[7:9]
('previous_token', 'induction')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qkforms.behaviour.scores import SCORES
from qkforms.survey.schema import HEADS, Column, markdown_table, write_schema_blocks

__all__ = [
    "BEHAVIOUR",
    "BEHAVIOUR_COLUMNS",
    "KEY_COLUMNS",
    "SCORE_COLUMNS",
    "behaviour_schema",
    "update_docs",
]

#: the survey's columns that key a head (taken from heads.parquet's schema)
KEY_COLUMNS: tuple[str, ...] = ("model", "step", "layer", "head", "kv_head", "N", "n")
_HEADS = {c.name: c for c in HEADS}

#: every column of behaviour.parquet, in file order
BEHAVIOUR: tuple[Column, ...] = (
    *(Column(c.name, c.type, c.nullable, "as in heads.parquet", "id")
      for c in (_HEADS[k] for k in KEY_COLUMNS)),
    *(Column(s.name, "double", True, s.meaning, "behaviour") for s in SCORES.values()),
    Column("bilinear_share", "double", True,
           "share of the variance of the pre-softmax scores explained by the bilinear part "
           "`c xⱼᵀ L xᵢ` (random probe, all (query, key) pairs); null when the scores are "
           "not rebuilt", "rebuilt"),
    Column("bilinear_share_row", "double", True,
           "the same within each query's row (row means removed: the part the softmax "
           "sees)", "rebuilt"),
    Column("pattern_max_dev", "double", True,
           "largest difference between the pattern rebuilt from the survey's maps and the "
           "model's (the keying check); null when the scores are not rebuilt", "rebuilt"),
)
#: every column of behaviour.parquet, in order
BEHAVIOUR_COLUMNS: tuple[str, ...] = tuple(c.name for c in BEHAVIOUR)
#: the score columns (behaviour scores and bilinear shares), in order
SCORE_COLUMNS: tuple[str, ...] = tuple(c.name for c in BEHAVIOUR
                                       if c.source in ("behaviour", "rebuilt")
                                       and c.name != "pattern_max_dev")


def behaviour_schema() -> Any:
    """The pyarrow schema of ``behaviour.parquet``.

    Examples
    --------
    >>> str(behaviour_schema().field("induction").type)
    'double'
    """
    import pyarrow as pa

    return pa.schema([c.arrow() for c in BEHAVIOUR])




def update_docs(path: str | Path, *, check: bool = False) -> bool:
    """Rewrite the generated column table of ``docs/behaviour.md``; True if it changed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "b.md"
    >>> _ = p.write_text("<!-- schema:behaviour -->\\nold\\n<!-- /schema -->\\n")
    >>> update_docs(p), update_docs(p)
    (True, False)
    """
    return write_schema_blocks(path, {"behaviour": markdown_table(BEHAVIOUR)}, check=check)

"""Column names and types of the survey's output files (architecture.md §5).

The schemas are built on demand (:func:`heads_schema`, :func:`spectra_schema`) so that
importing this module does not import pyarrow.

Examples
--------
>>> from qkforms.survey.schema import HEADS_COLUMNS, heads_schema
>>> HEADS_COLUMNS[:8]
('model', 'layer', 'head', 'kv_head', 'N', 'n', 'status', 'error')
>>> str(heads_schema().field("exact_certified").type)
'bool'
"""

from __future__ import annotations

from typing import Any

from qkforms.survey.statistics import FLOAT_COLUMNS, INT_COLUMNS

__all__ = [
    "HEADS_COLUMNS",
    "SPECTRA_COLUMNS",
    "heads_schema",
    "spectra_schema",
]

_ID_COLUMNS = ("model", "layer", "head", "kv_head", "N", "n", "status", "error")
_STAT_COLUMNS = (
    *INT_COLUMNS,
    "balance", "sym_energy", "pairing", "rho", "pairing_bound", "pairing_gap",
    "lobe_departure", "a", "b", "c", "d", "b_S", "c_S", "d_S", "theta_dist",
    "theta_L_dist", "thm5_dist", "trace_ratio", "participation_ratio", "stable_rank",
    "leading_share", "a_over_b", "b_minus_a", "spectral_type", "norm_sq",
)
#: every column of heads.parquet, in order
HEADS_COLUMNS: tuple[str, ...] = (*_ID_COLUMNS, *_STAT_COLUMNS, "exact_certified")
#: every column of spectra.parquet, in order
SPECTRA_COLUMNS: tuple[str, ...] = ("model", "layer", "head", "eig_S", "sv_T", "abs_eig_L")

assert set(FLOAT_COLUMNS) | set(INT_COLUMNS) | {"spectral_type"} == set(_STAT_COLUMNS)


def heads_schema() -> Any:
    """The pyarrow schema of ``heads.parquet``.

    Examples
    --------
    >>> from qkforms.survey.schema import heads_schema
    >>> s = heads_schema()
    >>> str(s.field("layer").type), str(s.field("a").type), str(s.field("n_pos").type)
    ('int32', 'double', 'int32')
    """
    import pyarrow as pa

    types: dict[str, Any] = {
        "model": pa.string(), "status": pa.string(), "error": pa.string(),
        "spectral_type": pa.string(), "exact_certified": pa.bool_(),
    }
    for name in ("layer", "head", "kv_head", "N", "n", *INT_COLUMNS):
        types[name] = pa.int32()
    for name in FLOAT_COLUMNS:
        types[name] = pa.float64()
    nullable_never = {"model", "layer", "head", "kv_head", "N", "n", "status"}
    return pa.schema(
        [pa.field(c, types[c], nullable=c not in nullable_never) for c in HEADS_COLUMNS]
    )


def spectra_schema() -> Any:
    """The pyarrow schema of ``spectra.parquet``.

    Examples
    --------
    >>> from qkforms.survey.schema import spectra_schema
    >>> str(spectra_schema().field("eig_S").type)
    'list<item: double>'
    """
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("model", pa.string(), nullable=False),
            pa.field("layer", pa.int32(), nullable=False),
            pa.field("head", pa.int32(), nullable=False),
            pa.field("eig_S", pa.list_(pa.float64())),
            pa.field("sv_T", pa.list_(pa.float64())),
            pa.field("abs_eig_L", pa.list_(pa.float64())),
        ]
    )

"""The survey's output columns, defined once (``docs/architecture.md`` §5).

:data:`HEADS` and :data:`SPECTRA` list every column of ``heads.parquet`` and
``spectra.parquet`` as a :class:`Column` (name, arrow type, nullable, meaning, and
which part of the run fills it). Everything else derives from them: the column-name
tuples, the statistic columns that :func:`qkforms.survey.head_statistics.head_statistics`
computes (:data:`INT_COLUMNS`, :data:`FLOAT_COLUMNS`), the pyarrow schemas
(:func:`heads_schema`, :func:`spectra_schema`, built on demand so that importing this
module does not import pyarrow), the columns the statistics read, and the column
tables of ``docs/survey.md`` (:func:`markdown_table`; a test keeps the docs equal to it).

Examples
--------
>>> from qkforms.survey.schema import HEADS_COLUMNS, heads_schema
>>> HEADS_COLUMNS[:8]
('model', 'step', 'tokens_seen', 'layer', 'head', 'kv_head', 'N', 'n')
>>> str(heads_schema().field("surjective").type)
'bool'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from qkforms.bands import BAND_KINDS, BAND_STATS
from qkforms.exact.enclosure import CERTIFIED_STATS
from qkforms.tolerances import SPECTRAL_TYPE_RADIUS

__all__ = [
    "BOOL_COLUMNS",
    "BAND_COLUMNS",
    "CERTIFY_COLUMNS",
    "EXACT_COLUMNS",
    "FLOAT_COLUMNS",
    "HEADS",
    "HEADS_COLUMNS",
    "INT_COLUMNS",
    "SPECTRA",
    "SERIES_COLUMNS",
    "SPECTRA_COLUMNS",
    "SPECTRA_READ_COLUMNS",
    "STAT_READ_COLUMNS",
    "STRING_COLUMNS",
    "Column",
    "heads_schema",
    "markdown_table",
    "spectra_schema",
    "update_docs",
    "write_schema_blocks",
]

ArrowType = Literal["string", "int32", "int64", "double", "bool", "list<double>"]


@dataclass(frozen=True)
class Column:
    """One column of a survey output file.

    Attributes
    ----------
    name : str
    type : str
        Arrow type: ``"string"``, ``"int32"``, ``"int64"``, ``"double"``, ``"bool"`` or
        ``"list<double>"``.
    nullable : bool
        Null allowed (heads that are not ``ok``, undecided or undefined values, or an
        option not asked).
    meaning : str
        One line of Markdown for the docs.
    source : str
        What fills it: ``"id"`` (the run), ``"stat"`` (the per-head statistics function;
        ``--exact`` and ``--certify`` may decide :data:`EXACT_COLUMNS` afterwards),
        ``"certify"`` (certified enclosures, ``--certify``), ``"bands"`` (storage-precision
        bands, ``--precision-bands``) or ``"spectra"`` (the Gram engine).
    """

    name: str
    type: ArrowType
    nullable: bool
    meaning: str
    source: str = "stat"

    def arrow(self) -> Any:
        """The pyarrow field."""
        import pyarrow as pa

        types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(),
                 "double": pa.float64(),
                 "bool": pa.bool_(), "list<double>": pa.list_(pa.float64())}
        return pa.field(self.name, types[self.type], nullable=self.nullable)


def _num(x: float) -> str:
    return f"{x:g}".replace("e-0", "e-")


def _id(name: str, type_: ArrowType, meaning: str, nullable: bool = False) -> Column:
    return Column(name, type_, nullable, meaning, "id")


def _int(name: str, meaning: str) -> Column:
    return Column(name, "int32", True, meaning)


def _dbl(name: str, meaning: str) -> Column:
    return Column(name, "double", True, meaning)


#: every column of heads.parquet, in file order
HEADS: tuple[Column, ...] = (
    _id("model", "string", "model name (`ModelInfo.name`, made unique if two sources share one; "
        "for a training run: the run's name)"),
    _id("step", "int64", "training step of the checkpoint (training runs; null for a single "
        "model)", nullable=True),
    _id("tokens_seen", "int64", "tokens seen by the checkpoint, from `trainer_state.json` "
        "(`num_input_tokens_seen`); null when unknown", nullable=True),
    _id("layer", "int32", "layer index, from 0"),
    _id("head", "int32", "query head index"),
    _id("kv_head", "int32", "key/value head used (GQA: `⌊h / (n_q/n_kv)⌋`)"),
    _id("N", "int32", "residual dimension"),
    _id("n", "int32", "head dimension"),
    _id("status", "string", '`"ok"`, `"zero_form"` (`L = 0`: the profile is undefined) or '
        '`"failed"` (unreadable or non-finite weights)'),
    _id("error", "string", "why a head is not `ok`", nullable=True),
    _int("n_pos", "positive eigenvalues of S, decided (docs/survey.md, \"Signatures: decided, "
         "never guessed\"); null when undecided"),
    _int("n_neg", "negative eigenvalues of S (null when undecided)"),
    _int("n_zero", "zero eigenvalues of S on R^N (null when undecided)"),
    Column("signature_by", "string", True,
           '`"float"` (every reduced eigenvalue clears its float error bound), `"certified"` '
           '(`--certify`: verified enclosures), `"exact"` (`--exact`: exact arithmetic), or '
           "null: undecided"),
    _dbl("signature_margin", "smallest `|λ|/err` over the reduced eigenvalues of S that are not "
         "known zeros (float error model of `qkforms.gram`; a property of the float "
         "computation, not of the head alone); decided in float when > 1"),
    _int("n_uncertain", "reduced eigenvalues of S within their float error bound, beyond the "
         "known zeros (0 when decided in float)"),
    _int("n_live", "live head dimensions n′ (`q_i ≠ 0` and `k_i ≠ 0`, exact test): a dead "
         "dimension contributes nothing to L"),
    _int("stacked_rank", "rank of the stacked map `[W_K; W_Q]` (null when undecided)"),
    _int("live_rank", "rank of the live pair `[K′; Q′]` (dead dimensions dropped from both; "
         "null when undecided)"),
    Column("surjective", "bool", True,
           "the stacked map is onto (rank 2n), Theorem 3's hypothesis; null when undecided"),
    Column("prediction", "string", True,
           '`"thm3"`: Theorem 3 predicts `(n, n, N − 2n)`; `"thm3-live"`: the stacked map is '
           "not onto but the live pair is, so `(n′, n′, N − 2n′)`; `\"none\"`: neither is "
           "onto; null when undecided"),
    Column("prediction_met", "bool", True,
           "the decided signature equals the prediction (false would contradict Theorem 3: "
           "a bug or a numerical failure); null without a prediction or a decided signature"),
    _dbl("balance", "`1 − |n_pos − n_neg|/(n_pos + n_neg)`"),
    _dbl("sym_energy", "`‖S‖²/‖L‖² = 1 − a`"),
    _dbl("pairing", "pairing score `1 − ‖λ₊ − λ₋‖/‖S‖` (padded lobes)"),
    _dbl("rho", "`‖λ₋‖/‖λ₊‖` (inf without positive eigenvalue)"),
    _dbl("pairing_bound", "Lemma 2 bound `1 − |1−ρ|/√(1+ρ²)`"),
    _dbl("pairing_gap", "`pairing_bound − pairing` (≥ 0)"),
    _dbl("lobe_departure", "`‖λ₋ − ρλ₊‖/‖λ₋‖`"),
    _dbl("a", "profile of L (Definition 6): `‖T‖²/‖L‖²`"),
    _dbl("b", "profile of L: `2⟨α, β⟩/‖L‖²` (lobes α, β of S)"),
    _dbl("c", "profile of L: `‖(α − β)₊‖²/‖L‖²`"),
    _dbl("d", "profile of L: `‖(β − α)₊‖²/‖L‖²`"),
    _dbl("b_S", "symmetric profile `b/(1 − a)`"),
    _dbl("c_S", "symmetric profile `c/(1 − a)`"),
    _dbl("d_S", "symmetric profile `d/(1 − a)`"),
    _dbl("theta_dist", "Euclidean distance in R⁴ from the profile to Θ"),
    _dbl("theta_L_dist", "Euclidean distance in R⁴ from the profile to `θ_L(ρ)`"),
    _dbl("thm5_dist", "Euclidean distance in R³ from `(b_S, c_S, d_S)` to the Theorem 5 "
         "limit at ρ"),
    _dbl("trace_ratio", "`|tr L|/‖L‖`"),
    _dbl("participation_ratio", "`(Σh²)²/Σh⁴`, h = singular values of L"),
    _dbl("stable_rank", "`Σh²/h₁²`"),
    _dbl("leading_share", "`h₁²/Σh²`"),
    _dbl("a_over_b", "`a/b`"),
    _dbl("b_minus_a", "`b − a`"),
    Column("spectral_type", "string", True,
           '`"I+"`, `"II"`, `"I-"` (radius rule: II when '
           f'`c_S + d_S ≤ {_num(SPECTRAL_TYPE_RADIUS)}`, else I+ when `c > d`, else I-)'),
    _dbl("norm_sq", "`‖L‖²` (sum of squared entries)"),
    *(Column(f"{stat}_{end}", "double", True,
             f"`--certify`: guaranteed {word} bound of `{stat}` for the stored weights "
             "(docs/certified.md); null without `--certify`, for failed heads, or when "
             "undefined", "certify")
      for stat in CERTIFIED_STATS for end, word in (("lo", "lower"), ("hi", "upper"))),
    Column("certify_method", "string", True,
           '`--certify`: how the eigenvalues of S were enclosed, `"rump"` (verified float '
           'eigenvectors, Weyl and Ostrowski) or `"charpoly"` (root isolation of the exact '
           "characteristic polynomial)", "certify"),
    *(Column(f"{stat}_band_{end}", "double", True,
             f"`--precision-bands`: {word} end of the storage-precision band of `{stat}`: "
             "its value for every weight within the storage precision of the stored one "
             "(docs/certified.md); null without the option, for failed heads, or when "
             "undefined", "bands")
      for stat in BAND_STATS for end, word in (("lo", "lower"), ("hi", "upper"))),
    Column("band_kind", "string", True,
           "`--precision-bands`: which band the `<stat>_band_*` columns hold, "
           + ", ".join(f'`"{k}"`' for k in BAND_KINDS)
           + " (rigorous with a certified centre, rigorous up to the float64 allowance of "
           "the stored spectrum, or the first-order estimate; docs/certified.md)", "bands"),
    Column("band_radius", "double", True,
           "`--precision-bands`: `R/‖L‖`, the proved bound on how far the storage precision "
           "lets `(λ₊, λ₋, ‖T‖)` move, relative to `‖L‖`", "bands"),
    Column("signature_band_stable", "bool", True,
           "`--precision-bands`: the signature of S is the same for every weight within the "
           "storage precision (by the `band_kind` bound)", "bands"),
    Column("signature_band_margin", "double", True,
           "`--precision-bands`: `min_k (|λ_k| − r_k)/max|λ|`, r_k the bound on the move of "
           "eigenvalue k (> 0 iff `signature_band_stable`)", "bands"),
)

#: every column of spectra.parquet (one row per ok head), in file order
SPECTRA: tuple[Column, ...] = (
    _id("model", "string", "as in heads.parquet"),
    _id("step", "int64", "as in heads.parquet", nullable=True),
    _id("layer", "int32", "as in heads.parquet"),
    _id("head", "int32", "as in heads.parquet"),
    Column("eig_S", "list<double>", True, "the 2n nonzero eigenvalues of S, decreasing",
           "spectra"),
    Column("sv_T", "list<double>", True, "the n distinct singular values of T, decreasing",
           "spectra"),
    Column("abs_eig_L", "list<double>", True,
           "`|eigenvalues|` of the n × n `W_Q W_K^T`, decreasing", "spectra"),
)

#: every column of heads.parquet, in order
HEADS_COLUMNS: tuple[str, ...] = tuple(c.name for c in HEADS)
#: every column of spectra.parquet, in order
SPECTRA_COLUMNS: tuple[str, ...] = tuple(c.name for c in SPECTRA)
#: integer statistics (computed by the per-head statistics function)
INT_COLUMNS: tuple[str, ...] = tuple(c.name for c in HEADS
                                     if c.source == "stat" and c.type == "int32")
#: floating-point statistics (computed by the per-head statistics function)
FLOAT_COLUMNS: tuple[str, ...] = tuple(c.name for c in HEADS
                                       if c.source == "stat" and c.type == "double")
#: boolean statistics (True, False or None per head)
BOOL_COLUMNS: tuple[str, ...] = tuple(c.name for c in HEADS
                                      if c.source == "stat" and c.type == "bool")
#: string statistics (a str or None per head)
STRING_COLUMNS: tuple[str, ...] = tuple(c.name for c in HEADS
                                        if c.source == "stat" and c.type == "string")
#: what ``--exact`` decides and overwrites (the signature, the ranks and the prediction)
EXACT_COLUMNS: tuple[str, ...] = ("n_pos", "n_neg", "n_zero", "signature_by", "stacked_rank",
                                  "live_rank", "surjective", "prediction", "prediction_met")
#: the columns filled by ``--certify`` (``<stat>_lo``, ``<stat>_hi``, ``certify_method``)
CERTIFY_COLUMNS: tuple[str, ...] = tuple(c.name for c in HEADS if c.source == "certify")
#: the columns filled by ``--precision-bands``
BAND_COLUMNS: tuple[str, ...] = tuple(c.name for c in HEADS if c.source == "bands")
#: the columns that identify a checkpoint of a training run (optional for readers:
#: absent or null for a single model)
SERIES_COLUMNS: tuple[str, ...] = ("step", "tokens_seen")
#: the spectra.parquet columns the observation statistics require
SPECTRA_READ_COLUMNS: tuple[str, ...] = tuple(
    c for c in SPECTRA_COLUMNS if c not in SERIES_COLUMNS)
#: the heads.parquet columns the observation statistics read (all but the run's
#: bookkeeping: kv_head, error; the certify, bands and series columns are optional)
STAT_READ_COLUMNS: tuple[str, ...] = tuple(
    c for c in HEADS_COLUMNS
    if c not in ("kv_head", "error", *SERIES_COLUMNS)
    and c not in CERTIFY_COLUMNS and c not in BAND_COLUMNS)


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

    return pa.schema([c.arrow() for c in HEADS])


def spectra_schema() -> Any:
    """The pyarrow schema of ``spectra.parquet``.

    Examples
    --------
    >>> from qkforms.survey.schema import spectra_schema
    >>> str(spectra_schema().field("eig_S").type)
    'list<item: double>'
    """
    import pyarrow as pa

    return pa.schema([c.arrow() for c in SPECTRA])


def markdown_table(columns: tuple[Column, ...]) -> str:
    """The docs' Markdown table of a file's columns.

    Examples
    --------
    >>> print(markdown_table(SPECTRA).splitlines()[4])
    | `layer` | int32 | as in heads.parquet |
    """
    rows = ["| column | type | meaning |", "|---|---|---|"]
    for c in columns:
        typ = c.type + (", null" if c.nullable else "")
        rows.append(f"| `{c.name}` | {typ} | {c.meaning} |")
    return "\n".join(rows)


_BLOCK = re.compile(r"(<!-- schema:(\w+) -->\n)(.*?)(\n<!-- /schema -->)", re.S)


def update_docs(path: str | Path, *, check: bool = False) -> bool:
    """Rewrite the generated column tables of ``docs/survey.md``; True if it changed.

    The tables sit between ``<!-- schema:heads -->`` (or ``spectra``) and
    ``<!-- /schema -->``. With ``check``, nothing is written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.md"
    >>> _ = p.write_text("<!-- schema:spectra -->\\nold\\n<!-- /schema -->\\n")
    >>> update_docs(p), update_docs(p)
    (True, False)
    """
    tables = {"heads": markdown_table(HEADS), "spectra": markdown_table(SPECTRA)}
    return write_schema_blocks(path, tables, check=check)


def write_schema_blocks(path: str | Path, tables: dict[str, str], *,
                        check: bool = False) -> bool:
    """Put ``tables[name]`` between ``<!-- schema:name -->`` and ``<!-- /schema -->`` in the
    file at ``path`` (blocks of other names untouched); True if the text changed. With
    ``check``, nothing is written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.md"
    >>> _ = p.write_text("<!-- schema:t -->\\nold\\n<!-- /schema -->\\n")
    >>> write_schema_blocks(p, {"t": "new"}), p.read_text()
    (True, '<!-- schema:t -->\\nnew\\n<!-- /schema -->\\n')
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    new = _BLOCK.sub(lambda m: m.group(1) + tables[m.group(2)] + m.group(4)
                     if m.group(2) in tables else m.group(0), text)
    if new != text and not check:
        p.write_text(new, encoding="utf-8")
    return new != text

"""Joining ``behaviour.parquet`` with the survey's ``heads.parquet`` and its RoPE forms.

A behaviour row and a survey row describe the same head when they share ``model``,
``layer`` and ``head`` (single models: ``step`` null in both). The join checks what the
keys promise (:func:`join_tables`):

* the two runs read the same checkpoint: the files in ``behaviour.json`` and
  ``manifest.json`` agree (their sha256 when both recorded one, else path, size and
  modification time);
* every ok survey head of a scored model has a behaviour row, with the same
  ``kv_head``, ``N`` and ``n``;

and refuses the join otherwise. Models only one table holds are left out and named
(the ``behaviour_join`` table).

For RoPE models the score between two positions depends on their distance, through the
relative form ``L(d) = K_redᵀ Rot(d) Q_red`` (``docs/theory.md`` §12.4;
:func:`qkforms.survey.rope.relative_form`, from the factors the survey stores).
:func:`relative_geometry` computes the survey's statistics of ``L(d)`` with the survey's
own per-head function (:func:`qkforms.survey.head_statistics.head_statistics`) at the
displacements :data:`DISPLACEMENTS` and at those the scores concern (1 for the previous
token, ``T - 1`` for induction, ``T`` for the duplicate token; ``T`` the repeated probe's
copy length).

Examples
--------
>>> from qkforms.behaviour.join import GEOMETRY
>>> GEOMETRY[:4]
('a', 'b', 'c', 'd')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from qkforms._fs import open_regular, read_json
from qkforms.behaviour.files import BEHAVIOUR_FILE, MANIFEST_FILE
from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS, KEY_COLUMNS, SCORE_COLUMNS
from qkforms.behaviour.scores import SCORES
from qkforms.errors import QKFormsError, format_value
from qkforms.stats.table import Table, concat, read_parquet
from qkforms.survey.head_statistics import head_statistics
from qkforms.survey.manifest import factors_path
from qkforms.survey.rope import relative_form

__all__ = [
    "DISPLACEMENTS",
    "GEOMETRY",
    "Joined",
    "join_directory",
    "join_tables",
    "read_behaviour",
    "relative_geometry",
]

#: the survey statistics each behaviour score is compared with (numeric; plus the
#: categorical ``spectral_type`` in the class tables)
GEOMETRY: tuple[str, ...] = ("a", "b", "c", "d", "sym_energy", "pairing", "rho",
                             "theta_dist", "participation_ratio")
#: displacements at which the relative forms of RoPE heads are described ("across d"),
#: besides those the scores concern
DISPLACEMENTS: tuple[int, ...] = (0, 1, 2, 4, 8, 16, 32, 64, 128)


@dataclass
class Joined:
    """The joined tables of one or more survey directories.

    Attributes
    ----------
    heads : Table
        One row per joined head: the key columns, every behaviour score, the survey's
        :data:`GEOMETRY` and ``spectral_type`` (of ``L``, for RoPE heads ``L(0)``).
    forms : Table
        RoPE heads only, one row per (head, displacement): ``model, layer, head,
        displacement`` and the same statistics of ``L(d)``.
    concerns : dict
        Per model, the displacement each score concerns (None: no single one).
    report : Table
        Per model of either table: rows in each, joined heads, and what was left out.
    """

    heads: Table
    forms: Table
    concerns: dict[str, dict[str, int | None]] = field(default_factory=dict)
    report: Table = field(default_factory=Table)


def read_behaviour(directory: str | Path) -> tuple[Table, dict[str, Any]] | None:
    """``behaviour.parquet`` and ``behaviour.json`` of a directory (None without the table).

    Raises
    ------
    QKFormsError
        If the table exists but the manifest is missing or unreadable, or the table
        lacks a column.

    Examples
    --------
    >>> import tempfile
    >>> read_behaviour(tempfile.mkdtemp()) is None
    True
    """
    d = Path(directory)
    if not (d / BEHAVIOUR_FILE).exists():
        return None
    table = read_parquet(d / BEHAVIOUR_FILE)
    missing = [c for c in BEHAVIOUR_COLUMNS if c not in table]
    if missing:
        raise QKFormsError(f"{d / BEHAVIOUR_FILE} lacks the columns {missing}; rerun "
                           "`qkforms behaviour` into this directory")
    if not (d / MANIFEST_FILE).exists():
        raise QKFormsError(f"{d / BEHAVIOUR_FILE} has no {MANIFEST_FILE} next to it (the "
                           "probe sizes are needed for the join); rerun `qkforms behaviour`")
    manifest = read_json(d / MANIFEST_FILE, "behaviour manifest")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("models"), list):
        raise QKFormsError(f"{d / MANIFEST_FILE}: not a behaviour manifest (no models list)")
    return table, manifest


def _entry(manifest: dict[str, Any], model: str) -> dict[str, Any] | None:
    for e in manifest.get("models") or []:
        if isinstance(e, dict) and str(e.get("model")) == model and e.get("run") is None:
            return e
    return None


def _digests(entry: dict[str, Any] | None) -> set[str] | None:
    if not entry:
        return None
    files = [f for f in entry.get("files") or [] if isinstance(f, dict)]
    if not files:
        return None
    if all(f.get("sha256") for f in files):
        return {str(f["sha256"]) for f in files}
    # without whole-file hashes (the survey's default): the files' identity on disk
    return {f"{f.get('path')}|{f.get('size')}|{f.get('mtime_ns')}" for f in files}


def _check_same_files(model: str, survey_manifest: dict[str, Any] | None,
                      behaviour_manifest: dict[str, Any] | None) -> None:
    """Both runs read the same files for ``model`` (where both manifests record them)."""
    want = _digests(_entry(survey_manifest or {}, model))
    have = _digests(_entry(behaviour_manifest or {}, model))
    if want is not None and have is not None and want != have:
        raise QKFormsError(
            f"{model}: behaviour.parquet was computed from other files than the "
            f"survey (sha256 {sorted(have)} vs {sorted(want)}); rerun one of them on "
            "the same checkpoint")


def _join_model(model: str, ok_rows: list[int], heads: Table, behaviour: Table,
                index: dict[tuple[str, int, int], int], out: dict[str, list[Any]]) -> int:
    """Append the joined rows of ``model``'s ok survey heads to ``out``; return their count.

    Every ok survey head needs a behaviour row with the same ``kv_head``, ``N`` and ``n``.
    """
    joined = 0
    for i in ok_rows:
        key = (model, int(heads["layer"][i]), int(heads["head"][i]))
        j = index.get(key)
        where = f"{model}: layer {key[1]}, head {key[2]}"
        if j is None:
            raise QKFormsError(f"{where} is in heads.parquet but not in "
                               "behaviour.parquet; rerun `qkforms behaviour` on the "
                               "surveyed checkpoint")
        for col in ("kv_head", "N", "n"):
            if int(heads[col][i]) != int(behaviour[col][j]):
                raise QKFormsError(
                    f"{where} has {col} {format_value(int(heads[col][i]))} in "
                    f"heads.parquet but {format_value(int(behaviour[col][j]))} in "
                    "behaviour.parquet")
        for col in KEY_COLUMNS:
            out[col].append(heads[col][i] if col != "step" else None)
        for col in SCORE_COLUMNS:
            v = behaviour[col][j]
            out[col].append(np.nan if v is None else float(v))
        for col in GEOMETRY:
            v = heads[col][i]
            out[col].append(np.nan if v is None else float(v))
        out["spectral_type"].append(heads["spectral_type"][i])
        joined += 1
    return joined


def join_tables(heads: Table, behaviour: Table, *, survey_manifest: dict[str, Any] | None,
                behaviour_manifest: dict[str, Any] | None) -> tuple[Table, Table]:
    """The joined per-head table and the per-model join report.

    Raises
    ------
    QKFormsError
        When the two runs read different files for a model, or a survey head of a scored
        model has no behaviour row or another ``kv_head``, ``N`` or ``n``.

    Examples
    --------
    >>> from qkforms.stats.table import Table
    >>> h = Table({"model": ["m"], "step": [None], "layer": [0], "head": [0],
    ...            "kv_head": [0], "N": [4], "n": [2], "status": ["ok"],
    ...            **{g: [0.5] for g in GEOMETRY}, "spectral_type": ["II"]})
    >>> from qkforms.behaviour.schema import BEHAVIOUR_COLUMNS
    >>> b = Table({c: [0.25] for c in BEHAVIOUR_COLUMNS} | {"model": ["m"], "step": [None],
    ...            "layer": [0], "head": [0], "kv_head": [1], "N": [4], "n": [2]})
    >>> try:
    ...     join_tables(h, b, survey_manifest=None, behaviour_manifest=None)
    ... except QKFormsError as exc:
    ...     print(str(exc).split(":")[1].strip())
    layer 0, head 0 has kv_head 0 in heads.parquet but 1 in behaviour.parquet
    """
    def single(t: Table) -> list[int]:
        steps = t.get("step")
        return [i for i in range(len(t)) if steps is None or steps[i] is None
                or (isinstance(steps[i], float) and np.isnan(steps[i]))]

    hrows = single(heads)
    brows = single(behaviour)
    survey_models = list(dict.fromkeys(str(heads["model"][i]) for i in hrows))
    scored_models = list(dict.fromkeys(str(behaviour["model"][i]) for i in brows))
    index: dict[tuple[str, int, int], int] = {}
    for i in brows:
        index[(str(behaviour["model"][i]), int(behaviour["layer"][i]),
               int(behaviour["head"][i]))] = i
    out: dict[str, list[Any]] = {c: [] for c in (*KEY_COLUMNS, *SCORE_COLUMNS, *GEOMETRY,
                                                 "spectral_type")}
    rep: dict[str, list[Any]] = {"model": [], "survey_heads": [], "behaviour_heads": [],
                                 "joined": [], "note": []}
    for model in dict.fromkeys([*survey_models, *scored_models]):
        s_rows = [i for i in hrows if str(heads["model"][i]) == model]
        b_count = sum(1 for i in brows if str(behaviour["model"][i]) == model)
        ok_rows = [i for i in s_rows if str(heads["status"][i]) == "ok"]
        note = ""
        joined = 0
        if not s_rows:
            note = "not in heads.parquet (survey it into this directory to join it)"
        elif not b_count:
            note = "not in behaviour.parquet (run `qkforms behaviour` on it to join it)"
        else:
            _check_same_files(model, survey_manifest, behaviour_manifest)
            joined = _join_model(model, ok_rows, heads, behaviour, index, out)
            failed = len(s_rows) - len(ok_rows)
            if failed:
                note = f"{failed} failed survey heads left out"
        for k, v in (("model", model), ("survey_heads", len(s_rows)),
                     ("behaviour_heads", b_count), ("joined", joined), ("note", note)):
            rep[k].append(v)
    return Table(out), Table(rep)


def relative_geometry(path: str | Path, entry: dict[str, Any],
                      displacements: Sequence[int]) -> Table:
    """The survey statistics :data:`GEOMETRY` (and ``spectral_type``) of the relative forms
    ``L(d)`` of every head in a survey factors file, at each displacement.

    Parameters
    ----------
    path : path
        ``factors/<key>.npz`` of the survey (read with ``allow_pickle=False``).
    entry : dict
        The model's survey manifest entry (RoPE settings, ``N``, ``n``, ``model``).
    displacements : sequence of int

    Returns
    -------
    Table
        ``model, layer, head, displacement`` and the statistics, one row per ok head and
        displacement.
    """
    cols: dict[str, list[Any]] = {c: [] for c in ("model", "layer", "head", "displacement",
                                                  *GEOMETRY, "spectral_type")}
    N, n = int(entry["N"]), int(entry["n"])
    with open_regular(path) as fh, np.load(fh, allow_pickle=False) as npz:
        layers = sorted(int(k[1:5]) for k in npz.files
                        if k.startswith("L") and k.endswith("_Q_red"))
        for layer in layers:
            Q = np.asarray(npz[f"L{layer:04d}_Q_red"], dtype=np.float64)
            K = np.asarray(npz[f"L{layer:04d}_K_red"], dtype=np.float64)
            ok = np.flatnonzero(np.isfinite(Q).all(axis=(1, 2)) & np.isfinite(K).all(axis=(1, 2)))
            if not ok.size:
                continue
            for d in displacements:
                L = relative_form(Q[ok], K[ok], int(d), entry)
                st = _form_statistics(L, N=N, n=n, statistics=head_statistics)
                for k, h in enumerate(ok):
                    cols["model"].append(str(entry.get("model", entry.get("name"))))
                    cols["layer"].append(layer)
                    cols["head"].append(int(h))
                    cols["displacement"].append(int(d))
                    for g in GEOMETRY:
                        cols[g].append(float(st[g][k]))
                    cols["spectral_type"].append(str(st["spectral_type"][k]))
    return Table(cols)


def _form_statistics(L: NDArray[np.float64], *, N: int, n: int,
                     statistics: Any) -> dict[str, NDArray[Any]]:
    """Every survey statistic of a batch of reduced forms ``(h, 2n, 2n)``."""
    S = 0.5 * (L + np.swapaxes(L, -1, -2))
    T = 0.5 * (L - np.swapaxes(L, -1, -2))
    eig = np.linalg.eigvalsh(S)
    sv = np.clip(np.linalg.eigvalsh(L @ np.swapaxes(L, -1, -2)), 0.0, None)[:, ::-1]
    return dict(statistics(eig, (L * L).sum(axis=(1, 2)), (T * T).sum(axis=(1, 2)),
                           np.trace(L, axis1=1, axis2=2), sv, N=N, n=n))


def join_directory(directory: str | Path, heads: Table | None = None) -> Joined | None:
    """Join a survey directory's ``behaviour.parquet`` with its ``heads.parquet`` (None
    without a behaviour table), with the relative forms of its RoPE models.

    Raises
    ------
    QKFormsError
        As :func:`join_tables`; when the table exists without its manifest.
    """
    d = Path(directory)
    found = read_behaviour(d)
    if found is None:
        return None
    behaviour, bman = found
    heads = heads if heads is not None else read_parquet(d / "heads.parquet")
    sman: dict[str, Any] = {}
    if (d / "manifest.json").is_file():
        loaded = read_json(d / "manifest.json", "survey manifest")
        sman = loaded if isinstance(loaded, dict) else {}
    joined, report = join_tables(heads, behaviour, survey_manifest=sman,
                                 behaviour_manifest=bman)
    concerns: dict[str, dict[str, int | None]] = {}
    forms = []
    for model in dict.fromkeys(str(m) for m in joined["model"]):
        bentry = _entry(bman, model) or {}
        repeat = _repeat(bentry, model)
        concerns[model] = {s.name: s.displacement_for(repeat) for s in SCORES.values()}
        sentry = _entry(sman, model)
        if sentry is None or sentry.get("positional") != "rope":
            continue
        path = factors_path(sentry, d)
        if path is None:
            continue
        wanted = sorted({*DISPLACEMENTS, *(v for v in concerns[model].values()
                                          if v is not None)})
        forms.append(relative_geometry(path, {**sentry, "model": model}, wanted))
    return Joined(joined, concat(forms) if forms else Table(), concerns, report)


def _repeat(entry: dict[str, Any], model: str) -> int:
    try:
        return int(entry["probes"]["repeated"]["repeat"])
    except (KeyError, TypeError, ValueError):
        raise QKFormsError(f"behaviour.json has no repeated probe for {model} (probes."
                           "repeated.repeat); rerun `qkforms behaviour`") from None

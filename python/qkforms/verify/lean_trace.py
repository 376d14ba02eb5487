"""The premises of each registered proof, read from a LeanDojo trace.

LeanDojo (``lean-dojo/LeanDojo``; the ``lean-dojo`` and ``lean-dojo-v2`` packages) traces
a Lean library with a Lean program of its own, ``ExtractData.lean``: it re-elaborates
each module with info trees enabled and writes, for module file ``F`` (a path relative
to the repository root), two files under ``.lake/build/ir/``:

* ``F`` with ``.ast.json`` for ``.lean``: the JSON of its structure ``Trace`` --
  ``commandASTs`` (the ``Syntax`` of every command, header first), ``tactics`` and
  ``premises``. A premise (``PremiseTrace``) is a constant that an identifier of the file
  elaborates to: ``fullName``, ``modName`` (the module declaring it), ``defPath``,
  ``defPos``/``defEndPos`` and ``pos``/``endPos`` (where it is used; ``Position`` as
  ``{"line": 1-based, "column": 0-based codepoints}``). The syntax JSON is Lean's derived
  ``ToJson``: ``{"node": {"info", "kind", "args"}}``, ``{"atom": {"info", "val"}}``,
  ``{"ident": {"info", "rawVal", "val", "preresolved"}}``, with ``info`` ``"none"`` or
  ``{"original": {"leading", "pos", "trailing", "endPos"}}`` or ``{"synthetic": {"pos",
  "endPos", "canonical"}}``; positions are UTF-8 byte offsets (an integer, or
  ``{"byteIdx": n}``, which LeanDojo-v2's own reader also accepts);
* ``F`` with ``.dep_paths`` for ``.lean``: the source paths of its imports, one a line.

Read in the release files of ``lean-dojo`` 4.20.0 (the latest ``lean-dojo`` on PyPI,
``lean_dojo-4.20.0-py3-none-any.whl``, sha256 ``247110b1c6ee...``):
``lean_dojo/data_extraction/ExtractData.lean`` (``Trace``, ``PremiseTrace``,
``visitTermInfo``, ``processFile``: where and what it writes), ``.../traced_data.py``
(``TracedFile._from_lean4_traced_file`` and ``_post_process_lean4``: how LeanDojo reads
them back), ``.../ast.py`` (``_parse_pos``, ``FileNode.from_data``: the syntax JSON) and
``lean_dojo/utils.py`` (``to_json_path``, ``to_dep_path``); and in ``lean-dojo-v2`` 1.0.9
(``lean_dojo_v2/lean_dojo/data_extraction/ExtractData.lean`` and ``lean.py``,
``LeanFile.convert_pos_value``), whose extractor is the one ported to the string API of
Lean >= v4.26 (``String.Pos`` became dependent on its string, ``leanprover/lean4#11240``,
merged 2025-11-18, before v4.27.0): the 4.20.0 extractor declares
``instance : ToJson String.Pos`` and so cannot compile at this project's Lean v4.27.0.
Both write the same format.

**What the bridge runs.** LeanDojo's ``trace()`` clones the repository, builds it again
and then runs ``ExtractData.lean`` on every file whose ``.olean`` lies at
``.lake/build/lib/lean/<path of the file>.olean``; with this library's
``srcDir := "lean"`` the olean of ``lean/QKForms/X.lean`` is
``.lake/build/lib/lean/QKForms/X.olean``, so ``trace()`` would trace nothing.
:func:`run_trace` runs the same extractor the way ``trace()`` runs it on each file
(``lake env lean --run ExtractData.lean FILE``), in the already built checkout, with
the two things it needs in place for the duration: links ``QKForms`` and
``QKForms.lean`` at the root to the sources under ``lean/`` (``Path.findLean`` maps a
module's olean to ``<root>/<module path>.lean``) and ``.lake/packages/lean4`` pointing
at the toolchain (``trace()`` copies the toolchain there). It records what it ran in
``.lake/build/ir/qkforms-trace.json`` (the sha256 of every traced source, the extractor
and its exit status), so a trace of an older source is never read as current.

**What the bridge reports** (:func:`premises_of`): for every registered declaration the
premises recorded inside the command that declares it (statement and proof; LeanDojo
records constants written in the source, not those found by automation such as a bare
``simp``), grouped as Mathlib, project, Lean core and other dependencies, and whether
any premise is ``sorryAx`` or the command's syntax holds a ``sorry``/``admit``. The
axiom audit (``#print axioms``) remains the authoritative check for ``sorryAx``; the
trace adds the list of premises. No trace (no toolchain, or LeanDojo's extractor not
installed) is ``not run``, never a pass.

Examples
--------
>>> classify("Mathlib.LinearAlgebra.Matrix.Trace", "QKForms.Basic")
'Mathlib'
>>> classify("lean.QKForms.Basic", "QKForms.Basic")   # the traced file itself
'project'
>>> classify("Init.Prelude", "QKForms.Basic"), classify("Batteries.Data.List", "QKForms.Basic")
('Lean core', 'Batteries')
"""

from __future__ import annotations

import hashlib
import json
import os
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from qkforms._fs import atomic_write, read_json
from qkforms.errors import QKFormsError
from qkforms.verify.checkout import LIBRARY
from qkforms.verify.lake import run_lake
from qkforms.verify.lean_source import Declaration
from qkforms.verify.statuses import FAIL, NOT_RUN, PASS

__all__ = [
    "TRACE_DIR",
    "MANIFEST",
    "EXTRACTOR_DIST",
    "EXTRACTOR_VERSION",
    "NO_TRACE",
    "PremiseOutcome",
    "DeclPremises",
    "TraceRun",
    "trace_json_path",
    "classify",
    "find_extractor",
    "run_trace",
    "premises_of",
]

#: where ``ExtractData.lean`` writes (``Path.toBuildDir "ir"``), relative to the root
TRACE_DIR = ".lake/build/ir"
#: what :func:`run_trace` ran, beside the trace
MANIFEST = "qkforms-trace.json"
MANIFEST_SCHEMA = "qkforms.lean-trace/1"
#: the distribution whose ``ExtractData.lean`` is written for Lean >= v4.26 (see above)
EXTRACTOR_DIST = "lean-dojo-v2"
EXTRACTOR_VERSION = "1.0.9"
EXTRACTOR_IN_DIST = "lean_dojo_v2/lean_dojo/data_extraction/ExtractData.lean"
#: source roots of the Lean toolchain itself
CORE_ROOTS = frozenset({"Init", "Lean", "Std", "Lake"})
#: atoms that mean an unfinished proof
SORRY_ATOMS = frozenset({"sorry", "admit"})

NO_TRACE = (
    "no LeanDojo trace: premises are read from the files LeanDojo's extractor writes "
    f"under {TRACE_DIR}; enable: with a Lean toolchain, `pip install --no-deps "
    f"{EXTRACTOR_DIST}=={EXTRACTOR_VERSION}` (it provides the extractor) and run "
    "`qkforms verify --lean-trace` (the GitHub Lean workflow does; docs/bridge.md)"
)


def trace_json_path(lean_file: str) -> str:
    """Where the extractor writes the trace of a module file (relative to the root).

    The extractor is run on the root-level link ``QKForms/X.lean`` (see the module doc),
    so the trace of ``lean/QKForms/X.lean`` is ``.lake/build/ir/QKForms/X.ast.json``,
    the path LeanDojo's ``to_json_path`` gives a module of a library at the root.

    Examples
    --------
    >>> trace_json_path("lean/QKForms/RankOne.lean")
    '.lake/build/ir/QKForms/RankOne.ast.json'
    """
    rel = lean_file[len("lean/"):] if lean_file.startswith("lean/") else lean_file
    return f"{TRACE_DIR}/{rel[: -len('.lean')]}.ast.json"


def _module_of_file(lean_file: str) -> str:
    rel = lean_file[len("lean/"):] if lean_file.startswith("lean/") else lean_file
    return rel[: -len(".lean")].replace("/", ".")


def classify(mod_name: str, traced_module: str) -> str:
    """Where a premise comes from: ``Mathlib``, ``project``, ``Lean core`` or the root
    name of another dependency.

    ``traced_module`` is the module of the traced file: the extractor names the main
    module after the file's real path relative to the working directory
    (``lean.QKForms.X`` for ``lean/QKForms/X.lean``), so both spellings count as the
    project.

    Examples
    --------
    >>> classify("QKForms.Basic", "QKForms.Profile"), classify("Aesop.Frontend", "QKForms.A")
    ('project', 'Aesop')
    """
    root = mod_name.split(".", 1)[0]
    if root == "Mathlib":
        return "Mathlib"
    if (root == LIBRARY or mod_name in (traced_module, f"lean.{traced_module}")
            or mod_name.startswith(f"lean.{LIBRARY}.") or mod_name == f"lean.{LIBRARY}"):
        return "project"
    if root in CORE_ROOTS:
        return "Lean core"
    return root


@dataclass(frozen=True)
class DeclPremises:
    """The premises of one declaration as recorded in the trace of its file."""

    name: str
    file: str
    status: str  # pass | fail | not run
    detail: str
    premises: dict[str, tuple[str, ...]] = field(default_factory=dict)
    sorry: tuple[str, ...] = ()

    def count(self) -> int:
        """Number of distinct premises."""
        return sum(len(v) for v in self.premises.values())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"name": self.name, "file": self.file, "status": self.status,
                "detail": self.detail,
                "premises": {k: list(v) for k, v in self.premises.items()},
                "sorry": list(self.sorry)}


@dataclass(frozen=True)
class PremiseOutcome:
    """The premise report of one result: ``pass`` (every declaration read, no sorry),
    ``fail`` (a sorry among the premises), ``not run`` (with the reason)."""

    status: str
    detail: str
    declarations: tuple[DeclPremises, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"status": self.status, "detail": self.detail,
                "declarations": [d.to_dict() for d in self.declarations]}


# ------------------------------------------------------------------------------ reading


def _walk(node: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (constructor, fields) of a syntax JSON tree, preorder."""
    todo = [node]
    while todo:
        cur = todo.pop()
        if not isinstance(cur, dict) or len(cur) != 1:
            continue  # "missing", or not syntax
        ((ctor, body),) = cur.items()
        if not isinstance(body, dict):
            continue
        yield ctor, body
        if ctor == "node":
            todo.extend(reversed(body.get("args") or []))


def _byte(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, dict):
        for key in ("byteIdx", "1"):
            if isinstance(value.get(key), int):
                return int(value[key])
        raw = value.get("raw")
        if isinstance(raw, dict) and isinstance(raw.get("byteIdx"), int):
            return int(raw["byteIdx"])
    return None


def _span(info: Any) -> tuple[int, int] | None:
    if not isinstance(info, dict):
        return None
    if "original" in info:
        body = info["original"]
    elif "synthetic" in info and isinstance(info["synthetic"], dict) and \
            info["synthetic"].get("canonical"):
        body = info["synthetic"]
    else:
        return None
    if not isinstance(body, dict):
        return None
    start, end = _byte(body.get("pos")), _byte(body.get("endPos"))
    return None if start is None or end is None else (start, end)


@dataclass(frozen=True)
class _Command:
    kind: str
    start: int  # byte offsets in the source
    end: int
    decl_id: str | None
    atoms: frozenset[str]


def _command(tree: Any) -> _Command | None:
    if not isinstance(tree, dict) or "node" not in tree:
        return None
    kind = str(tree["node"].get("kind", ""))
    starts, ends, atoms = [], [], set()
    decl_id: str | None = None
    in_decl_id = False
    for ctor, body in _walk(tree):
        span = _span(body.get("info"))
        if span is not None:
            starts.append(span[0])
            ends.append(span[1])
        if ctor == "node" and body.get("kind") == "Lean.Parser.Command.declId":
            in_decl_id = decl_id is None
        elif ctor == "ident" and in_decl_id and decl_id is None:
            decl_id = str(body.get("val", ""))
            in_decl_id = False
        elif ctor == "atom" and isinstance(body.get("val"), str):
            atoms.add(body["val"])
    if not starts:
        return None
    return _Command(kind, min(starts), max(ends), decl_id, frozenset(atoms))


def _line_offsets(source: bytes) -> list[int]:
    offsets = [0]
    for i, b in enumerate(source):
        if b == 0x0A:
            offsets.append(i + 1)
    return offsets


def _offset_of(text_lines: Sequence[str], line_starts: Sequence[int], pos: Any) -> int | None:
    """The byte offset of a ``Position`` (line 1-based, column in codepoints)."""
    if not isinstance(pos, dict):
        return None
    line, column = pos.get("line"), pos.get("column")
    if not isinstance(line, int) or not isinstance(column, int) or not 1 <= line <= len(
            line_starts) or line > len(text_lines):
        return None
    return line_starts[line - 1] + len(text_lines[line - 1][:column].encode("utf-8"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_manifest(trace_dir: Path) -> tuple[dict[str, Any] | None, str]:
    path = trace_dir / MANIFEST
    if not path.exists():
        if trace_dir.is_dir() and next(trace_dir.rglob("*.ast.json"), None) is not None:
            return None, (f"no {MANIFEST} in {trace_dir}: a LeanDojo trace not made by "
                          "`qkforms verify --lean-trace` cannot be matched to the sources; "
                          + NO_TRACE)
        return None, NO_TRACE
    try:
        data = read_json(path, "LeanDojo trace manifest")
    except QKFormsError as exc:
        return None, f"unreadable trace manifest: {exc}"
    if not isinstance(data, dict) or data.get("schema") != MANIFEST_SCHEMA or not isinstance(
            data.get("files"), dict):
        return None, f"{path}: not a {MANIFEST_SCHEMA} manifest"
    return data, ""


def _decl_premises(root: Path, trace_dir: Path, decl: Declaration, path: str,
                   manifest: Mapping[str, Any], cache: dict[str, Any]) -> DeclPremises:
    def not_run(why: str) -> DeclPremises:
        return DeclPremises(decl.name, path, NOT_RUN, why)

    entry = manifest["files"].get(path)
    if not isinstance(entry, dict):
        return not_run(f"{path} was not traced (it did not build, or the trace predates it)")
    if entry.get("returncode") != 0:
        tail = " | ".join(str(x) for x in (entry.get("output_tail") or [])[-2:])
        return not_run(f"LeanDojo's extractor failed on {path} (exit "
                       f"{entry.get('returncode')}): {tail}")
    src = root / path
    if not src.is_file() or entry.get("sha256") != _sha256(src):
        return not_run(f"the trace of {path} is stale (the source changed since it was "
                       "traced)")
    json_rel = trace_json_path(path)
    if json_rel not in cache:
        rel = json_rel[len(TRACE_DIR) + 1:]
        try:
            cache[json_rel] = read_json(trace_dir / rel, "LeanDojo trace")
        except QKFormsError as exc:
            cache[json_rel] = str(exc)
    data = cache[json_rel]
    if isinstance(data, str):
        return not_run(data)
    if not isinstance(data, dict) or not isinstance(data.get("commandASTs"), list) or \
            not isinstance(data.get("premises"), list):
        return not_run(f"{json_rel}: not a LeanDojo trace (no commandASTs/premises)")
    source = src.read_bytes()
    text_lines = source.decode("utf-8").split("\n")
    starts = _line_offsets(source)
    holder = None
    for tree in data["commandASTs"]:
        cmd = _command(tree)
        if cmd is None or cmd.decl_id is None:
            continue
        first, last = bisect_right(starts, cmd.start), bisect_right(starts, max(cmd.end - 1, 0))
        if first <= decl.line <= last:
            holder = cmd
            break
    written = holder.decl_id.removeprefix("_root_.") if holder and holder.decl_id else ""
    if holder is None or not (decl.name == written or decl.name.endswith("." + written)):
        return not_run(f"no command declaring {decl.name} at {path}:{decl.line} in the "
                       "trace (format drift?)")
    groups: dict[str, set[str]] = {}
    module = _module_of_file(path)
    for p in data["premises"]:
        if not isinstance(p, dict):
            continue
        name = p.get("fullName")
        if not isinstance(name, str) or name in ("", "[anonymous]") or name == decl.name:
            continue
        off = _offset_of(text_lines, starts, p.get("pos"))
        if off is None or not holder.start <= off < holder.end:
            continue
        groups.setdefault(classify(str(p.get("modName", "")), module), set()).add(name)
    sorry = sorted({n for names in groups.values() for n in names if n == "sorryAx"}
                   | {f"`{a}` in the proof" for a in holder.atoms & SORRY_ATOMS})
    premises = {k: tuple(sorted(v)) for k, v in sorted(groups.items())}
    n = sum(len(v) for v in premises.values())
    if sorry:
        return DeclPremises(decl.name, path, FAIL, f"{decl.name} uses {', '.join(sorry)}",
                            premises, tuple(sorry))
    return DeclPremises(decl.name, path, PASS, f"{n} premises, no sorry", premises)


def premises_of(
    root: str | Path,
    decls: Mapping[str, Sequence[tuple[str, Declaration]]],
    results: Mapping[str, Sequence[str]],
    trace_dir: str | Path | None = None,
) -> tuple[dict[str, PremiseOutcome], str]:
    """The premise report of every result, read from the trace.

    Parameters
    ----------
    root : path
        The checkout (its ``lean/`` sources are the ones the trace must match).
    decls : mapping
        Declaration name -> (file, declaration) pairs of the static scan
        (:meth:`~qkforms.verify.lean_project.LeanScan.declared`).
    results : mapping
        Result id -> its registered declarations.
    trace_dir : path, optional
        The directory holding the trace (default ``ROOT/.lake/build/ir``).

    Returns
    -------
    (dict, str)
        Result id -> :class:`PremiseOutcome`, and the reason no trace was read ("" when
        one was).

    Examples
    --------
    >>> import tempfile
    >>> out, why = premises_of(tempfile.mkdtemp(), {}, {"thm3": ("QKForms.x",)})
    >>> out["thm3"].status, why == NO_TRACE
    ('not run', True)
    """
    root = Path(root)
    tdir = Path(trace_dir) if trace_dir is not None else root / TRACE_DIR
    manifest, why = _read_manifest(tdir)
    out: dict[str, PremiseOutcome] = {}
    cache: dict[str, Any] = {}
    for rid, names in results.items():
        if manifest is None:
            out[rid] = PremiseOutcome(NOT_RUN, why)
            continue
        per: list[DeclPremises] = []
        for name in names:
            where = decls.get(name) or []
            if not where:
                per.append(DeclPremises(name, "", NOT_RUN, f"{name} is not declared in lean/"))
                continue
            path, decl = where[0]
            per.append(_decl_premises(root, tdir, decl, path, manifest, cache))
        failed = [d for d in per if d.status == FAIL]
        missing = [d for d in per if d.status == NOT_RUN]
        if failed:
            out[rid] = PremiseOutcome(FAIL, "; ".join(d.detail for d in failed), tuple(per))
        elif missing or not per:
            reasons = list(dict.fromkeys(d.detail for d in missing)) or ["no declarations"]
            out[rid] = PremiseOutcome(NOT_RUN, "; ".join(reasons), tuple(per))
        else:
            total = len({n for d in per for v in d.premises.values() for n in v})
            out[rid] = PremiseOutcome(PASS, f"{total} distinct premises, no sorry", tuple(per))
    return out, "" if manifest is not None else why


# ------------------------------------------------------------------------------ running


def find_extractor() -> Path | None:
    """LeanDojo's ``ExtractData.lean`` from an installed ``lean-dojo-v2``, or ``None``.

    Looked up in the distribution's files (it is not imported: importing it would load
    its machine-learning dependencies).

    Examples
    --------
    >>> p = find_extractor()
    >>> p is None or p.name == "ExtractData.lean"
    True
    """
    try:
        dist = metadata.distribution(EXTRACTOR_DIST)
    except metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(EXTRACTOR_IN_DIST)))
    return path if path.is_file() else None


@dataclass
class TraceRun:
    """What :func:`run_trace` ran: the extractor, one ``lake`` run per module."""

    extractor: str
    runs: dict[str, Any] = field(default_factory=dict)
    problem: str = ""

    @property
    def ok(self) -> bool:
        """Every module was traced."""
        return not self.problem and all(r["returncode"] == 0 for r in self.runs.values())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"extractor": self.extractor, "problem": self.problem or None,
                "files": self.runs}


def _link(link: Path, target: Path, made: list[Path]) -> None:
    if link.exists() or link.is_symlink():
        return
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link, target_is_directory=target.is_dir())
    made.append(link)


def run_trace(lake: str, root: str | Path, files: Sequence[str], extractor: str | Path,
              *, timeout: float = 3600.0) -> TraceRun:
    """Run LeanDojo's extractor on each module file and record the manifest.

    Parameters
    ----------
    lake : str
        The ``lake`` executable.
    root : path
        The checkout, already built (``lake build``).
    files : sequence of str
        Module files to trace (``lean/QKForms/X.lean``), those that built.
    extractor : path
        LeanDojo's ``ExtractData.lean`` (:func:`find_extractor`).
    timeout : float
        Seconds allowed for each file.

    Examples
    --------
    >>> import sys, tempfile
    >>> run = run_trace(sys.executable, tempfile.mkdtemp(), [], "/no/ExtractData.lean")
    >>> run.ok, run.problem
    (False, "LeanDojo's extractor /no/ExtractData.lean does not exist")
    """
    root = Path(root).resolve()
    extractor = Path(extractor).resolve()
    result = TraceRun(str(extractor))
    if not extractor.is_file():
        result.problem = f"LeanDojo's extractor {extractor} does not exist"
        return result
    prefix_run = run_lake(lake, ["env", "lean", "--print-prefix"], root, timeout)
    prefix = prefix_run.output.strip().splitlines()[-1:] if prefix_run.ok else []
    if not prefix or not Path(prefix[0]).is_dir():
        result.problem = ("`lake env lean --print-prefix` gave no toolchain directory: "
                          + " | ".join(prefix_run.output.strip().splitlines()[-2:]))
        return result
    made: list[Path] = []
    try:
        _link(root / ".lake" / "packages" / "lean4", Path(prefix[0]), made)
        _link(root / LIBRARY, root / "lean" / LIBRARY, made)
        _link(root / f"{LIBRARY}.lean", root / "lean" / f"{LIBRARY}.lean", made)
        for path in files:
            rel = path[len("lean/"):] if path.startswith("lean/") else path
            run = run_lake(lake, ["env", "lean", "--run", str(extractor), rel], root, timeout)
            result.runs[path] = {
                "module": _module_of_file(path),
                "sha256": _sha256(root / path),
                "returncode": run.returncode,
                "seconds": round(run.seconds, 3),
                "output_tail": run.output.strip().splitlines()[-5:],
                "trace": trace_json_path(path),
            }
            if run.ok and not (root / trace_json_path(path)).is_file():
                result.runs[path]["returncode"] = -2
                result.runs[path]["output_tail"].append(
                    f"[qkforms] the extractor exited 0 but wrote no {trace_json_path(path)}")
    finally:
        for link in reversed(made):
            link.unlink()
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "extractor": {"path": str(extractor), "sha256": _sha256(extractor)},
        "toolchain": prefix[0],
        "files": result.runs,
    }
    atomic_write(root / TRACE_DIR / MANIFEST,
                 (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode("utf-8"),
                 root=root)
    return result

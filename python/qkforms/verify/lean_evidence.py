"""The evidence recorded for each external name of the Lean sources (``lean/names.toml``).

Every declaration the library takes from Mathlib, Batteries or Lean core is read in
source, and the reading is recorded in the evidence file (see ``docs/bridge.md``,
"Evidence for external names"): ``[names."X"]`` tables (``source``, ``commit``,
``statement``, ``status``), ``[fields]`` (dot-notation field -> the full names it resolves
to) and ``[cases]`` (eliminator -> its case names). :func:`check_evidence` holds the uses
found by :func:`qkforms.verify.lean_uses.uses` against the file: every use has an entry,
every entry is well formed, and no entry is stale.

Examples
--------
>>> ev = Evidence(names={"Nat.le_succ": {}}, fields={"trans": ["LE.le.trans"]})
>>> ev.resolve("le_succ"), "trans" in ev.fields
('Nat.le_succ', True)
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qkforms._fs import read_text
from qkforms.errors import VerificationError
from qkforms.verify.lean_uses import NameUse, project_names, uses

__all__ = [
    "EVIDENCE_FILE",
    "REQUIRED_KEYS",
    "Evidence",
    "EvidenceProblem",
    "check_evidence",
    "load_evidence",
]

#: the evidence file, relative to the repository root
EVIDENCE_FILE = "lean/names.toml"


@dataclass
class Evidence:
    """The evidence file: entries per full name, dot-fields, eliminator case names."""

    names: dict[str, dict[str, str]] = field(default_factory=dict)
    fields: dict[str, list[str]] = field(default_factory=dict)
    cases: dict[str, list[str]] = field(default_factory=dict)
    pin: str = ""

    def resolve(self, name: str) -> str | None:
        """The entry key matching a name as written (exact, or as a suffix after ``.``).

        Examples
        --------
        >>> ev = Evidence(names={"Finset.sum_comm": {}})
        >>> ev.resolve("sum_comm"), ev.resolve("Finset.sum_comm"), ev.resolve("comm")
        ('Finset.sum_comm', 'Finset.sum_comm', None)
        """
        if name in self.names:
            return name
        hits = [k for k in self.names if k.endswith("." + name)]
        return sorted(hits, key=len)[0] if hits else None


REQUIRED_KEYS = ("source", "commit", "statement", "status")
#: optional keys: ``why`` and ``fallback`` (required when unsure), ``evidence`` (other
#: support), ``via`` (the notation or tactic through which the sources use the name)


def load_evidence(path: str | Path) -> Evidence:
    """Read an evidence file (TOML: ``[names."X"]`` tables, ``[fields]``, ``[cases]``).

    Raises
    ------
    qkforms.errors.VerificationError
        The file is missing or not valid TOML.
    """
    p = Path(path)
    try:
        data = tomllib.loads(read_text(p, "evidence file"))
    except FileNotFoundError as exc:
        raise VerificationError(f"{p}: evidence file is missing") from exc
    except tomllib.TOMLDecodeError as exc:
        raise VerificationError(f"{p}: not valid TOML: {exc}") from exc
    return Evidence(
        names={str(k): dict(v) for k, v in data.get("names", {}).items()},
        fields={str(k): list(v) for k, v in data.get("fields", {}).items()},
        cases={str(k): list(v) for k, v in data.get("cases", {}).items()},
        pin=str(data.get("pin", {}).get("mathlib", "")),
    )


@dataclass(frozen=True)
class EvidenceProblem:
    """A use without evidence, or a malformed entry."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else (
            f"{self.path}: {self.message}")


def _binds(statement: str, arg: str) -> bool:
    return re.search(rf"[({{⦃\[]\s*(?:[^():{{}}\[\]⦃⦄]*\s)?{re.escape(arg)}\b[^:]*:",
                     statement) is not None


def check_evidence(root: str | Path, files: Sequence[str | Path] | None = None,
                   evidence: Evidence | None = None) -> list[EvidenceProblem]:
    """Every external use in ``lean/`` has an entry; every entry is well formed.

    Parameters
    ----------
    root : path
        The repository root.
    files : sequence of paths, optional
        Lean files to check (default: every file under ``lean/QKForms``).
    evidence : Evidence, optional
        Default: ``root/lean/names.toml``.

    Returns
    -------
    list of EvidenceProblem
        Empty when every use is covered.
    """
    root = Path(root)
    lib = sorted((root / "lean" / "QKForms").rglob("*.lean"))
    all_sources = [read_text(p, "Lean source") for p in lib]
    top = root / "lean" / "QKForms.lean"
    if top.is_file():
        all_sources.append(read_text(top, "Lean source"))
    project = project_names(all_sources)
    ev = evidence if evidence is not None else load_evidence(root / EVIDENCE_FILE)
    targets = [Path(f) for f in files] if files else lib
    problems: list[EvidenceProblem] = []
    evfile = EVIDENCE_FILE
    for key, entry in ev.names.items():
        missing = [k for k in REQUIRED_KEYS if not str(entry.get(k, "")).strip()]
        if missing:
            problems.append(EvidenceProblem(evfile, 0, f"{key}: missing {', '.join(missing)}"))
        status = entry.get("status", "")
        if status not in ("read", "unsure"):
            problems.append(EvidenceProblem(
                evfile, 0, f"{key}: status must be 'read' or 'unsure', not {status!r}"))
        if status == "unsure" and not str(entry.get("why", "")).strip():
            problems.append(EvidenceProblem(evfile, 0, f"{key}: 'unsure' entries need 'why'"))
        commit = str(entry.get("commit", ""))
        if commit and not re.fullmatch(r"[0-9a-f]{40}|core|n/a", commit):
            problems.append(EvidenceProblem(
                evfile, 0, f"{key}: commit must be 40 hex digits, not {commit!r}"))
    for fname, targets_of in ev.fields.items():
        for t in targets_of:
            if ev.resolve(t) is None:
                problems.append(EvidenceProblem(
                    evfile, 0, f"[fields] {fname} -> {t}: {t} has no [names] entry"))
    used: set[str] = set()
    for path in targets:
        p = path if path.is_absolute() else (root / path)
        rel = p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p)
        for u in uses(read_text(p, "Lean source"), project=project):
            msg = _problem(u, ev)
            if msg:
                problems.append(EvidenceProblem(rel, u.line, msg))
            used.update(_keys_of(u, ev))
    if not files:
        # entries no use needs any more (only meaningful when every file was scanned);
        # entries reached through notation or a tactic say so with `via`
        for key in sorted(set(ev.names) - used):
            if not str(ev.names[key].get("via", "")).strip():
                problems.append(EvidenceProblem(
                    evfile, 0, f"{key}: no file in lean/QKForms uses it (remove it, or say "
                    "`via = \"notation …\"` if notation reaches it)"))
        for fname in sorted(set(ev.fields) - used):
            problems.append(EvidenceProblem(evfile, 0,
                                            f"[fields] {fname}: no file in lean/QKForms uses it"))
    return problems


def _keys_of(u: NameUse, ev: Evidence) -> set[str]:
    """The evidence keys (and ``[fields]`` names) a use relies on, for the stale check."""
    if u.kind == "field":
        return {u.name} | {k for t in ev.fields.get(u.name, []) if (k := ev.resolve(t))}
    if u.kind == "case":
        k = ev.resolve(u.name.split("|", 1)[0])
        return {k} if k else set()
    name = u.name.split("(", 1)[0] if u.kind == "arg" else u.name
    if name.startswith("."):
        f = name[1:].split(".")[-1]
        return {f} | {k for t in ev.fields.get(f, []) if (k := ev.resolve(t))}
    k = ev.resolve(name)
    if k:
        return {k}
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):
        k = ev.resolve(".".join(parts[:n]))
        if k:
            return {k} | set(parts[n:]) | {t for f in parts[n:] for x in ev.fields.get(f, [])
                                           if (t := ev.resolve(x))}
    return set()


def _problem(u: NameUse, ev: Evidence) -> str | None:
    if u.kind == "name":
        if ev.resolve(u.name):
            return None
        # a constant followed by field notation: `Finset.univ.val` = `Finset.univ` + `.val`
        parts = u.name.split(".")
        for k in range(len(parts) - 1, 0, -1):
            if ev.resolve(".".join(parts[:k])):
                missing = [f for f in parts[k:] if f not in ev.fields]
                if not missing:
                    return None
                return (f"no evidence for the field(s) {', '.join('.' + f for f in missing)} "
                        f"of `{'.'.join(parts[:k])}`")
        return f"no evidence for `{u.name}`"
    if u.kind == "field":
        return None if u.name in ev.fields else (
            f"no evidence for the field `.{u.name}` ([fields] {u.name} = [...])")
    if u.kind == "case":
        elim, case = u.name.split("|", 1)
        key = ev.resolve(elim)
        if key is None:
            return f"no evidence for `{elim}`"
        if case not in ev.cases.get(key, []):
            return f"case `{case}` of `{key}` is not recorded ([cases] \"{key}\")"
        return None
    func, arg = u.name[:-1].split("(", 1)
    if func.startswith("."):
        targets = ev.fields.get(func[1:].split(".")[-1], [])
        statements = [ev.names.get(ev.resolve(t) or "", {}).get("statement", "")
                      for t in targets]
        if not targets:
            return f"no evidence for the field `{func}` (named argument `{arg}`)"
    else:
        key = ev.resolve(func)
        if key is None:
            return f"no evidence for `{func}`"
        statements = [ev.names[key].get("statement", "")]
    if not any(_binds(s, arg) for s in statements):
        return f"named argument `({arg} := …)` of `{func}`: the recorded statement binds no `{arg}`"
    return None

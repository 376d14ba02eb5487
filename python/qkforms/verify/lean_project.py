"""Static checks of the Lean project, no toolchain needed.

:func:`scan` reads every ``.lean`` file under ``lean/`` once (declarations,
tags, imports, forbidden tokens); :func:`static_checks` turns the scan and the
registry into named pass/fail checks:

* ``declarations`` -- every registered declaration is declared, in its registered file
  or a project file related to it by imports (either direction);
* ``tags`` -- Lean tags and registry agree (no unknown or unregistered tag, every
  registered declaration tagged with its id, no formalized result without declarations);
* ``forbidden`` -- no ``sorry``, ``admit``, ``native_decide`` or ``axiom`` declaration;
* ``pins`` -- ``lean-toolchain``, ``lakefile.lean`` and ``lake-manifest.json`` agree
  on Lean v4.27.0 and Mathlib v4.27.0 at the pinned commit;
* ``imports`` -- ``lean/QKForms.lean`` imports every ``lean/QKForms/*.lean`` and only
  modules that exist;
* ``axioms-script`` -- ``lean/scripts/Axioms.lean`` is the one generated from the registry;
* ``house-rules`` -- ``noncomputable section`` in every module that defines something, a
  ``-- closes by:`` comment on every ``first``, scoped notation opened before use
  (:mod:`qkforms.verify.lean_rules`);
* ``evidence`` -- every external name, dot-field, named argument and case name used in
  ``lean/QKForms`` has a well-formed entry in ``lean/names.toml``
  (:mod:`qkforms.verify.lean_evidence`);
* ``import-layers`` -- the Theorem 3 chain imports no profile or accumulation module, and
  the profile chain no accumulation module (:data:`IMPORT_LAYERS`).

Examples
--------
>>> render_axioms_script([]).splitlines()[0]
'import QKForms'
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qkforms._fs import MAX_JSON_BYTES, read_text
from qkforms.errors import QKFormsError
from qkforms.registry import LEAN_FORMALIZED, Result
from qkforms.verify.checkout import LIBRARY
from qkforms.verify.lean_evidence import EVIDENCE_FILE, check_evidence
from qkforms.verify.lean_rules import house_rule_violations
from qkforms.verify.lean_source import (
    Declaration,
    ForbiddenToken,
    declarations,
    forbidden_tokens,
    imports,
    strip_lean,
    tags_in,
)

__all__ = [
    "LEAN_TOOLCHAIN",
    "MATHLIB_TAG",
    "MATHLIB_REV",
    "ALLOWED_AXIOMS",
    "AXIOMS_SCRIPT",
    "LeanFile",
    "LeanScan",
    "StaticCheck",
    "scan",
    "static_checks",
    "check_pins",
    "render_axioms_script",
    "registered_declarations",
]

LEAN_TOOLCHAIN = "leanprover/lean4:v4.27.0"
MATHLIB_TAG = "v4.27.0"
MATHLIB_REV = "a3a10db0e9d66acbebf76c5e6a135066525ac900"
#: the only axioms a registered proof may depend on
ALLOWED_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
#: the generated axiom audit script, relative to the root
AXIOMS_SCRIPT = "lean/scripts/Axioms.lean"
#: the layers of the library, lowest first; a module may import only its own or lower layers
IMPORT_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Theorem 3 chain", ("Basic", "EnergyIdentities", "RankBalance", "GramForm",
                         "BalancedSignature", "GramSpectrum", "LiveSignature")),
    ("profile chain", ("ProfileDefs", "Profile", "PairingBound", "RankOne", "ProfileFaces",
                       "ProfileFacesConverse", "RankOneRank")),
    # GramProfile uses the sorting lemmas of LobeEstimates, hence this layer
    ("accumulation (Theorem 5, Lemma 6)", ("LobeEstimates", "Accumulation",
                                           "ProportionalLobes", "GramProfile",
                                           "AccumulationEndpoints")),
)


@dataclass(frozen=True)
class LeanFile:
    """The scan of one Lean file (``path`` relative to the root, POSIX style)."""

    path: str
    module: str | None
    declarations: tuple[Declaration, ...]
    imports: tuple[str, ...]
    forbidden: tuple[ForbiddenToken, ...]
    tags: tuple[tuple[str, int], ...]


@dataclass
class LeanScan:
    """Every Lean file under ``lean/`` of a root, by relative path."""

    root: Path
    files: dict[str, LeanFile] = field(default_factory=dict)

    def declared(self) -> dict[str, list[tuple[str, Declaration]]]:
        """Map each declared name to the (file, declaration) pairs declaring it."""
        out: dict[str, list[tuple[str, Declaration]]] = {}
        for f in self.files.values():
            for d in f.declarations:
                out.setdefault(d.name, []).append((f.path, d))
        return out

    def module_file(self, module: str) -> str | None:
        """The file of a ``QKForms.*`` module, if it exists."""
        for f in self.files.values():
            if f.module == module:
                return f.path
        return None

    def related(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` are the same file or one imports the other (transitively)."""
        return a in self.import_closure(b) or b in self.import_closure(a)

    def import_closure(self, path: str) -> list[str]:
        """The file and every project file it imports, transitively."""
        seen: list[str] = []
        todo = [path]
        while todo:
            p = todo.pop()
            if p in seen or p not in self.files:
                continue
            seen.append(p)
            for mod in self.files[p].imports:
                q = self.module_file(mod)
                if q is not None:
                    todo.append(q)
        return seen


def _module_of(rel: str) -> str | None:
    parts = Path(rel).parts
    if len(parts) >= 2 and parts[0] == "lean" and rel.endswith(".lean"):
        mod = ".".join(parts[1:])[: -len(".lean")]
        if mod == LIBRARY or mod.startswith(LIBRARY + "."):
            return mod
    return None


def scan(root: str | Path) -> LeanScan:
    """Scan every ``.lean`` file under ``root/lean`` (build directories excluded).

    Examples
    --------
    >>> from qkforms.verify.checkout import find_root
    >>> s = scan(find_root())
    >>> all(p.startswith("lean/") for p in s.files)
    True
    """
    root = Path(root)
    result = LeanScan(root=root)
    lean_dir = root / "lean"
    if not lean_dir.is_dir():
        return result
    for p in sorted(lean_dir.rglob("*.lean")):
        rel = p.relative_to(root).as_posix()
        if "/.lake/" in f"/{rel}" or "/lake-packages/" in f"/{rel}":
            continue
        text = read_text(p, "Lean source")
        result.files[rel] = LeanFile(
            path=rel,
            module=_module_of(rel),
            declarations=tuple(declarations(text)),
            imports=tuple(imports(text)),
            forbidden=tuple(forbidden_tokens(text)),
            tags=tuple(tags_in(text)),
        )
    return result


@dataclass
class StaticCheck:
    """A named static check with its failure messages (``passed`` iff none)."""

    name: str
    description: str
    messages: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether the check found nothing wrong."""
        return not self.messages


def registered_declarations(results: Sequence[Result]) -> list[tuple[str, Result]]:
    """(declaration, result) pairs of the registry, in registry order.

    Examples
    --------
    >>> from qkforms.registry import Result
    >>> r = Result("x", "Lemma 0", "t", lean=("A.b",), lean_file="lean/QKForms/X.lean")
    >>> registered_declarations([r])
    [('A.b', Result(id='x', paper='Lemma 0', title='t', lean=('A.b',), \
lean_file='lean/QKForms/X.lean', check='', properties=(), docs='docs/results/x.md'))]
    """
    return [(d, r) for r in results for d in r.lean]


def check_declarations(lean: LeanScan, results: Sequence[Result]) -> StaticCheck:
    """Every registered declaration is declared in ``lean/``: in its registered file, in a
    project file that file imports (a definition in a shared ``*Defs`` file), or in one
    that imports it (a corollary stated where its last ingredient is proved)."""
    check = StaticCheck("declarations", "registered Lean declarations are declared")
    declared = lean.declared()
    for name, r in registered_declarations(results):
        where = declared.get(name)
        if not where:
            check.messages.append(
                f"{r.id}: registered declaration {name} is not declared in lean/ "
                f"(expected in {r.lean_file})"
            )
        elif r.lean_file and not any(lean.related(p, r.lean_file) for p, _ in where):
            files = ", ".join(sorted({p for p, _ in where}))
            check.messages.append(
                f"{r.id}: {name} is declared in {files}, which is neither the registered file "
                f"{r.lean_file} nor related to it by imports"
            )
    for r in results:
        if r.lean_file and not (lean.root / r.lean_file).is_file():
            check.messages.append(f"{r.id}: registered Lean file {r.lean_file} does not exist")
    return check


def check_tags(lean: LeanScan, results: Sequence[Result]) -> StaticCheck:
    """Lean ``[qkforms:<id>]`` tags and the registry agree, both ways."""
    check = StaticCheck("tags", "Lean [qkforms:<id>] tags match the registry")
    by_id = {r.id: r for r in results}
    for f in lean.files.values():
        for tag, line in f.tags:
            if tag not in by_id:
                check.messages.append(
                    f"{f.path}:{line}: tag [qkforms:{tag}] names no registered result"
                )
            elif by_id[tag].lean_status != LEAN_FORMALIZED:
                check.messages.append(
                    f"{f.path}:{line}: tag [qkforms:{tag}] but the registry says {tag} is "
                    "not formalized"
                )
        for d in f.declarations:
            for tag in d.tags:
                r = by_id.get(tag)
                if r is not None and d.name not in r.lean:
                    check.messages.append(
                        f"{f.path}:{d.line}: {d.name} is tagged [qkforms:{tag}] but is not "
                        f"registered for {tag}"
                    )
    declared = lean.declared()
    for name, r in registered_declarations(results):
        for path, d in declared.get(name, []):
            if r.id not in d.tags:
                check.messages.append(
                    f"{path}:{d.line}: {name} is registered for {r.id} but its docstring "
                    f"lacks the tag [qkforms:{r.id}]"
                )
    for r in results:
        if r.lean_status == LEAN_FORMALIZED and not r.lean:
            check.messages.append(
                f"{r.id}: registered as formalized in {r.lean_file} but names no declaration"
            )
        if r.lean and not r.lean_file:
            check.messages.append(f"{r.id}: names Lean declarations but no Lean file")
    return check


def check_forbidden(lean: LeanScan) -> StaticCheck:
    """No ``sorry``, ``admit``, ``native_decide`` or ``axiom`` declaration in ``lean/``."""
    check = StaticCheck("forbidden", "no sorry/admit/native_decide/axiom in lean/")
    for f in lean.files.values():
        for t in f.forbidden:
            check.messages.append(f"{f.path}:{t.line}: forbidden `{t.token}`: {t.text}")
    return check


def check_pins(root: str | Path) -> StaticCheck:
    """``lean-toolchain``, ``lakefile.lean`` and ``lake-manifest.json`` agree on the pins.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "lean-toolchain").write_text("leanprover/lean4:v4.26.0\\n")
    >>> msgs = check_pins(d).messages
    >>> msgs[0]
    "lean-toolchain pins 'leanprover/lean4:v4.26.0', expected 'leanprover/lean4:v4.27.0'"
    """
    root = Path(root)
    check = StaticCheck(
        "pins", f"Lean {LEAN_TOOLCHAIN}, Mathlib {MATHLIB_TAG} @ {MATHLIB_REV[:12]}"
    )
    tc = root / "lean-toolchain"
    if not tc.is_file():
        check.messages.append("lean-toolchain is missing")
    else:
        pinned = read_text(tc, "toolchain pin").strip()
        if pinned != LEAN_TOOLCHAIN:
            check.messages.append(f"lean-toolchain pins {pinned!r}, expected {LEAN_TOOLCHAIN!r}")
    check.messages.extend(_lakefile_problems(root))
    check.messages.extend(_manifest_problems(root))
    return check


_REQUIRE_OLD = re.compile(
    r'require\s+"?mathlib"?\s+from\s+git\s+"(?P<url>[^"]*)"(?:\s*@\s*"(?P<rev>[^"]*)")?'
)
_REQUIRE_NEW = re.compile(
    r'require\s+"leanprover-community"\s*/\s*"mathlib"(?:\s*@\s*(?:git\s+)?"(?P<rev>[^"]*)")?'
)


def _lakefile_problems(root: Path) -> list[str]:
    lakefile = root / "lakefile.lean"
    if not lakefile.is_file():
        extra = " (lakefile.toml is not supported: pins are read from lakefile.lean)" if (
            root / "lakefile.toml"
        ).is_file() else ""
        return ["lakefile.lean is missing" + extra]
    code = strip_lean(read_text(lakefile, "lakefile"), keep_strings=True).code
    m = _REQUIRE_OLD.search(code) or _REQUIRE_NEW.search(code)
    if m is None:
        return ["lakefile.lean does not require mathlib"]
    problems = []
    rev = m.group("rev")
    if rev != MATHLIB_TAG:
        problems.append(f"lakefile.lean requires mathlib @ {rev!r}, expected {MATHLIB_TAG!r}")
    url = m.groupdict().get("url")
    if url is not None and "leanprover-community/mathlib4" not in url:
        problems.append(f"lakefile.lean requires mathlib from {url!r}, not leanprover-community")
    return problems


def _manifest_problems(root: Path) -> list[str]:
    manifest = root / "lake-manifest.json"
    if not manifest.is_file():
        return ["lake-manifest.json is missing"]
    try:
        data = json.loads(read_text(manifest, "lake manifest", limit=MAX_JSON_BYTES))
    except json.JSONDecodeError as exc:
        return [f"lake-manifest.json is not valid JSON: {exc}"]
    packages = data.get("packages") if isinstance(data, dict) else None
    entry = None
    for p in packages or []:
        if isinstance(p, dict) and p.get("name") == "mathlib":
            entry = p
    if entry is None:
        return ["lake-manifest.json has no mathlib package"]
    problems = []
    if entry.get("inputRev") != MATHLIB_TAG:
        problems.append(
            f"lake-manifest.json mathlib inputRev is {entry.get('inputRev')!r}, "
            f"expected {MATHLIB_TAG!r}"
        )
    if entry.get("rev") != MATHLIB_REV:
        problems.append(
            f"lake-manifest.json mathlib rev is {entry.get('rev')!r}, expected {MATHLIB_REV!r}"
        )
    url = str(entry.get("url", ""))
    if "leanprover-community/mathlib4" not in url:
        problems.append(f"lake-manifest.json mathlib url is {url!r}, not leanprover-community")
    return problems


def check_imports(lean: LeanScan) -> StaticCheck:
    """``lean/QKForms.lean`` imports every library file, and every import exists."""
    check = StaticCheck("imports", f"lean/{LIBRARY}.lean imports every lean/{LIBRARY}/*.lean")
    top = f"lean/{LIBRARY}.lean"
    if top not in lean.files:
        check.messages.append(f"{top} is missing")
        return check
    imported = set(lean.files[top].imports)
    for f in lean.files.values():
        if f.module and f.module != LIBRARY and f.module not in imported:
            check.messages.append(f"{top} does not import {f.module} ({f.path})")
    for f in lean.files.values():
        for mod in f.imports:
            if (mod == LIBRARY or mod.startswith(LIBRARY + ".")) and lean.module_file(mod) is None:
                check.messages.append(f"{f.path} imports {mod}, which has no file in lean/")
    return check


def render_axioms_script(results: Sequence[Result]) -> str:
    """The axiom audit script for the registered declarations (generated, not edited).

    Examples
    --------
    >>> from qkforms.registry import Result
    >>> r = Result("thm3", "Theorem 3", "t", lean=("QKForms.a",), lean_file="lean/QKForms/X.lean")
    >>> print(render_axioms_script([r]).split("-/")[-1].strip())
    -- thm3: Theorem 3, t
    #print axioms QKForms.a
    """
    lines = [
        f"import {LIBRARY}",
        "",
        "/-!",
        "# Axiom audit of the registered results",
        "",
        "GENERATED by `qkforms verify --write-axioms-script` from `python/qkforms/registry.py`;",
        "do not edit by hand (a test checks that this file is up to date).",
        "",
        "`qkforms verify` runs it as `lake env lean lean/scripts/Axioms.lean` after `lake build`",
        "and accepts only the axioms `propext`, `Classical.choice` and `Quot.sound`.",
        "-/",
    ]
    seen: set[str] = set()
    for r in results:
        decls = [d for d in r.lean if d not in seen]
        if not decls:
            continue
        lines.append("")
        lines.append(f"-- {r.id}: {r.paper}, {r.title}")
        for d in decls:
            seen.add(d)
            lines.append(f"#print axioms {d}")
    return "\n".join(lines) + "\n"


def check_axioms_script(root: str | Path, results: Sequence[Result]) -> StaticCheck:
    """The committed ``lean/scripts/Axioms.lean`` equals the one generated from the registry."""
    check = StaticCheck("axioms-script", f"{AXIOMS_SCRIPT} is generated from the registry")
    path = Path(root) / AXIOMS_SCRIPT
    if not path.is_file():
        check.messages.append(
            f"{AXIOMS_SCRIPT} is missing; run `qkforms verify --write-axioms-script`"
        )
    elif read_text(path, "axiom script") != render_axioms_script(results):
        check.messages.append(
            f"{AXIOMS_SCRIPT} is out of date with the registry; run "
            "`qkforms verify --write-axioms-script`"
        )
    return check


def check_house_rules(lean: LeanScan) -> StaticCheck:
    """The house rules of :mod:`qkforms.verify.lean_rules` hold in every library file."""
    check = StaticCheck("house-rules", "noncomputable sections, decided `first`, scoped "
                        "notation opened")
    for path, f in sorted(lean.files.items()):
        if f.module is None or f.module == LIBRARY:
            continue
        text = read_text(lean.root / path, "Lean source")
        check.messages.extend(str(v) for v in house_rule_violations(text, path))
    return check


def check_evidence_file(root: str | Path) -> StaticCheck:
    """Every external name used in ``lean/QKForms`` has evidence in ``lean/names.toml``."""
    check = StaticCheck("evidence", f"every external name has an entry in {EVIDENCE_FILE}")
    if not (Path(root) / "lean" / LIBRARY).is_dir():
        return check
    try:
        check.messages.extend(str(p) for p in check_evidence(root))
    except QKFormsError as exc:
        check.messages.append(str(exc))
    return check


def check_import_layers(lean: LeanScan) -> StaticCheck:
    """No module imports (transitively) a module of a higher layer of :data:`IMPORT_LAYERS`."""
    check = StaticCheck("import-layers", "Theorem 3 chain < profile chain < accumulation")
    layer_of = {f"{LIBRARY}.{m}": k for k, (_, mods) in enumerate(IMPORT_LAYERS) for m in mods}
    for path, f in sorted(lean.files.items()):
        if f.module not in layer_of:
            continue
        mine = layer_of[f.module]
        for dep in lean.import_closure(path):
            mod = lean.files[dep].module
            if mod in layer_of and layer_of[mod] > mine:
                check.messages.append(
                    f"{path}: {f.module} ({IMPORT_LAYERS[mine][0]}) imports {mod} "
                    f"({IMPORT_LAYERS[layer_of[mod]][0]})")
    return check


def static_checks(root: str | Path, results: Sequence[Result], lean: LeanScan | None = None
                  ) -> list[StaticCheck]:
    """Run every static Lean check.

    Examples
    --------
    >>> from qkforms.verify.checkout import find_root
    >>> [c.name for c in static_checks(find_root(), [])]  # doctest: +NORMALIZE_WHITESPACE
    ['declarations', 'tags', 'forbidden', 'pins', 'imports', 'axioms-script', 'house-rules',
     'evidence', 'import-layers']
    """
    lean = scan(root) if lean is None else lean
    return [
        check_declarations(lean, results),
        check_tags(lean, results),
        check_forbidden(lean),
        check_pins(root),
        check_imports(lean),
        check_axioms_script(root, results),
        check_house_rules(lean),
        check_evidence_file(root),
        check_import_layers(lean),
    ]


def static_lean_problems(lean: LeanScan, result: Result) -> list[str]:
    """Problems visible without a toolchain that make a result's Lean proof invalid.

    A registered declaration that is not declared, or a forbidden token in the registered
    file, in a file declaring one of its declarations, or in any project file these import
    (transitively).
    """
    problems: list[str] = []
    declared = lean.declared()
    for name in result.lean:
        if name not in declared:
            problems.append(f"{name} is not declared in lean/")
    files = [result.lean_file] if result.lean_file else []
    files += [p for name in result.lean for p, _ in declared.get(name, [])]
    closure: list[str] = []
    for f in files:
        closure += [p for p in lean.import_closure(f) if p not in closure]
    for path in closure:
        for t in lean.files[path].forbidden:
            problems.append(f"`{t.token}` at {path}:{t.line}")
    return problems

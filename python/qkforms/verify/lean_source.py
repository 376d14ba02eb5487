"""Reading Lean 4 source without a Lean toolchain.

The bridge must answer a few questions about ``lean/`` on machines that have no
``lake``: which declarations exist (with their namespaces), which docstrings carry
a ``[qkforms:<id>]`` tag, which modules import which, and whether a forbidden
token (``sorry``, ``admit``, ``native_decide``, an ``axiom`` declaration) occurs in
*code* rather than in a comment, docstring or string literal.

This is a scanner, not a parser: it understands comments (``--`` line comments and
nested ``/- ... -/`` block comments, including ``/--`` docstrings and ``/-!`` module
docs), string and character literals, and the command-level keywords that open
and close scopes (``namespace``, ``section``, ``noncomputable section``,
``mutual``, ``end``). That is all the bridge needs, and each piece is tested.

Examples
--------
>>> src = '''namespace QKForms
... /-- Theorem 3 of the paper. [qkforms:thm3] -/
... theorem foo : True := trivial  -- a sorry in a comment is fine
... end QKForms
... '''
>>> [d.name for d in declarations(src)]
['QKForms.foo']
>>> declarations(src)[0].tags
('thm3',)
>>> forbidden_tokens(src)
[]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Comment",
    "Stripped",
    "Declaration",
    "ForbiddenToken",
    "strip_lean",
    "declarations",
    "tags_in",
    "imports",
    "forbidden_tokens",
    "TAG_RE",
]

#: the registry tag carried by docstrings of registered declarations
TAG_RE = re.compile(r"\[qkforms:([A-Za-z0-9_.\-]+)\]")

_IDENT_CHAR = re.compile(r"[\w'!?\u00b7\u2070-\u209f\u1d00-\u1dbf.]")


@dataclass(frozen=True)
class Comment:
    """One comment of a Lean file.

    ``kind`` is ``"doc"`` (``/-- -/``), ``"module"`` (``/-! -/``), ``"block"``
    (``/- -/``) or ``"line"`` (``--``); ``start``/``end`` are offsets in the source.
    """

    kind: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Stripped:
    """A Lean source with comments (and optionally string contents) blanked out.

    ``code`` has the same length and line structure as the source: every character
    inside a comment or literal is replaced by a space (newlines are kept), so
    offsets and line numbers in ``code`` are those of the source.
    """

    code: str
    comments: tuple[Comment, ...]

    def line_of(self, offset: int) -> int:
        """Return the 1-based line number of ``offset``."""
        return self.code.count("\n", 0, offset) + 1


def _blank(chars: list[str], start: int, end: int) -> None:
    for k in range(start, end):
        if chars[k] != "\n":
            chars[k] = " "


def strip_lean(source: str, *, keep_strings: bool = False) -> Stripped:
    """Blank out comments and literals of a Lean 4 source.

    Parameters
    ----------
    source : str
        The file's text.
    keep_strings : bool
        Keep string literals (their quotes and contents) in ``code``; useful for
        reading ``lakefile.lean``. Comments are always blanked.

    Returns
    -------
    Stripped
        The blanked code and the list of comments with their text.

    Examples
    --------
    >>> s = strip_lean('def x := "sorry" /- a /- nested -/ sorry -/ -- sorry\\n')
    >>> 'sorry' in s.code
    False
    >>> [c.kind for c in s.comments]
    ['block', 'line']
    >>> strip_lean('def c := \\'"\\' -- x').code.rstrip()
    'def c :='
    """
    chars = list(source)
    comments: list[Comment] = []
    n = len(source)
    i = 0
    while i < n:
        ch = source[i]
        if ch == "-" and source.startswith("--", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
            comments.append(Comment("line", i, j, source[i:j]))
            _blank(chars, i, j)
            i = j
        elif ch == "/" and source.startswith("/-", i):
            kind = "block"
            if source.startswith("/--", i) and not source.startswith("/--/", i):
                kind = "doc"
            elif source.startswith("/-!", i):
                kind = "module"
            depth = 1
            j = i + 2
            while j < n and depth:
                if source.startswith("/-", j):
                    depth += 1
                    j += 2
                elif source.startswith("-/", j):
                    depth -= 1
                    j += 2
                else:
                    j += 1
            comments.append(Comment(kind, i, j, source[i:j]))
            _blank(chars, i, j)
            i = j
        elif ch == '"' or (
            ch == "r" and re.match(r'r#*"', source[i:i + 8]) and not _ident_before(source, i)
        ):
            j = _string_end(source, i)
            if not keep_strings:
                _blank(chars, i, j)
            i = j
        elif ch == "'" and not _ident_before(source, i):
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)|[^\\'\n])'", source[i:i + 9])
            if m:
                _blank(chars, i, i + m.end())
                i += m.end()
            else:
                i += 1
        else:
            i += 1
    return Stripped("".join(chars), tuple(comments))


def _ident_before(source: str, i: int) -> bool:
    return i > 0 and bool(_IDENT_CHAR.match(source[i - 1]))


def _string_end(source: str, i: int) -> int:
    """Offset just past the string literal starting at ``i`` (``"..."`` or ``r#"..."#``)."""
    if source[i] == "r":
        m = re.match(r'r(#*)"', source[i:])
        assert m is not None
        closing = '"' + m.group(1)
        j = source.find(closing, i + m.end())
        return len(source) if j < 0 else j + len(closing)
    j = i + 1
    while j < len(source):
        if source[j] == "\\":
            j += 2
        elif source[j] == '"':
            return j + 1
        else:
            j += 1
    return len(source)


@dataclass(frozen=True)
class Declaration:
    """A declaration found in a Lean source.

    ``name`` is fully qualified with the enclosing namespaces (``_root_.`` removed);
    ``kind`` is the keyword (``theorem``, ``lemma``, ``def``, ...); ``tags`` are the
    registry ids in its docstring; ``line`` is 1-based.
    """

    name: str
    kind: str
    line: int
    tags: tuple[str, ...] = ()
    doc: str = ""


_MODIFIERS = r"(?:(?:private|protected|noncomputable|partial|unsafe|nonrec|scoped|local)\s+)*"
_ATTRS = r"(?:@\[[^\]]*\]\s*)*"
# ``open Foo in`` / ``set_option x v in`` written on the same line as the declaration
_IN_PREFIX = r"(?:(?:open|set_option)\b[^\n]*?\bin[ \t]+)*"
_DECL_KINDS = (
    "theorem|lemma|def|abbrev|structure|class\\s+inductive|class|instance|inductive|"
    "opaque|axiom|example"
)
_COMMAND_RE = re.compile(
    r"^[ \t]*(?:"
    r"(?P<scope>namespace|section|noncomputable\s+section|mutual|end)\b[ \t]*(?P<sname>[^\s]*)"
    r"|" + _IN_PREFIX + _ATTRS + _MODIFIERS + r"(?P<kind>" + _DECL_KINDS + r")\b"
    r"(?:\s*\(\s*priority\s*:=[^)]*\))?\s*(?P<name>[^\s:({\[⦃]*)"
    r")",
    re.MULTILINE,
)


def declarations(source: str) -> list[Declaration]:
    """List the declarations of a Lean source with their fully qualified names.

    Scopes are followed through ``namespace X`` / ``section`` / ``end``; a name
    starting with ``_root_.`` is absolute. Anonymous instances and ``example`` are
    skipped. The docstring immediately preceding a declaration gives its ``tags``.

    Examples
    --------
    >>> src = '''namespace A
    ... section S
    ... variable (x : Nat)
    ... @[simp] lemma l1 : x = x := rfl
    ... end S
    ... namespace B.C
    ... noncomputable def f.{u} : Nat := 0
    ... instance : Inhabited Nat := ⟨0⟩
    ... end B.C
    ... theorem _root_.g : True := trivial
    ... end A
    ... structure P where
    ...   x : Nat
    ... '''
    >>> [(d.kind, d.name) for d in declarations(src)]
    [('lemma', 'A.l1'), ('def', 'A.B.C.f'), ('theorem', 'g'), ('structure', 'P')]
    """
    stripped = strip_lean(source)
    code = stripped.code
    docs = [c for c in stripped.comments if c.kind == "doc"]
    scopes: list[tuple[str, str]] = []
    found: list[Declaration] = []
    for m in _COMMAND_RE.finditer(code):
        scope = m.group("scope")
        if scope is not None:
            scope = " ".join(scope.split())
            if scope == "end":
                if scopes:
                    scopes.pop()
            elif scope == "namespace":
                scopes.append(("namespace", m.group("sname")))
            else:
                scopes.append(("section", m.group("sname") or ""))
            continue
        kind = " ".join(m.group("kind").split())
        name = _clean_name(m.group("name") or "")
        if kind == "example" or not name:
            continue
        if name.startswith("_root_."):
            full = name[len("_root_."):]
        else:
            prefix = ".".join(s for k, s in scopes if k == "namespace" and s)
            full = f"{prefix}.{name}" if prefix else name
        doc = _doc_before(docs, code, m.start())
        found.append(
            Declaration(
                name=full,
                kind=kind,
                line=stripped.line_of(m.start("kind")),
                tags=tuple(TAG_RE.findall(doc)),
                doc=doc,
            )
        )
    return found


def _clean_name(raw: str) -> str:
    name = raw.split(".{", 1)[0]
    return name.rstrip(".").replace("«", "").replace("»", "")


def _doc_before(docs: list[Comment], code: str, offset: int) -> str:
    """The docstring that ends just before ``offset`` (only blanks in between)."""
    for c in reversed(docs):
        if c.end <= offset:
            between = code[c.end:offset]
            # attributes (``@[simp]``) and modifiers may sit between docstring and keyword
            if between.strip() == "" or re.fullmatch(r"\s*" + _ATTRS + r"\s*", between):
                return c.text
            return ""
    return ""


def tags_in(source: str) -> list[tuple[str, int]]:
    """Every ``[qkforms:<id>]`` tag in the comments of a source, with its line.

    Examples
    --------
    >>> tags_in('/-! see [qkforms:thm3] -/\\n/-- [qkforms:lemma2] -/\\ntheorem x : True := trivial')
    [('thm3', 1), ('lemma2', 2)]
    """
    stripped = strip_lean(source)
    out: list[tuple[str, int]] = []
    for c in stripped.comments:
        for m in TAG_RE.finditer(c.text):
            out.append((m.group(1), stripped.line_of(c.start + m.start())))
    return out


_IMPORT_RE = re.compile(r"^\s*import\s+([^\s]+(?:[ \t]+[^\s]+)*)", re.MULTILINE)


def imports(source: str) -> list[str]:
    """The modules imported by a Lean source (the ``import`` lines at its top).

    Examples
    --------
    >>> imports('-- c\\nimport Mathlib.Data.Real.Basic\\nimport QKForms.Basic QKForms.Profile\\n')
    ['Mathlib.Data.Real.Basic', 'QKForms.Basic', 'QKForms.Profile']
    """
    code = strip_lean(source).code
    mods: list[str] = []
    for m in _IMPORT_RE.finditer(code):
        mods.extend(m.group(1).split())
    return mods


@dataclass(frozen=True)
class ForbiddenToken:
    """A forbidden token found in Lean code (outside comments and strings)."""

    token: str
    line: int
    text: str


_FORBIDDEN_RE = re.compile(r"(?<![\w.'])(sorry|admit|native_decide)(?![\w'!?])")


def forbidden_tokens(source: str) -> list[ForbiddenToken]:
    """Find ``sorry``, ``admit``, ``native_decide`` and ``axiom`` declarations in code.

    Occurrences inside comments, docstrings and string literals are ignored.

    Examples
    --------
    >>> src = '''/-- we never use `sorry` -/
    ... theorem a : True := by
    ...   sorry
    ... axiom bad : False
    ... '''
    >>> [(t.token, t.line) for t in forbidden_tokens(src)]
    [('sorry', 3), ('axiom', 4)]
    """
    stripped = strip_lean(source)
    lines = source.splitlines()
    hits: list[ForbiddenToken] = []
    for m in _FORBIDDEN_RE.finditer(stripped.code):
        line = stripped.line_of(m.start())
        hits.append(ForbiddenToken(m.group(1), line, lines[line - 1].strip()))
    for m in _COMMAND_RE.finditer(stripped.code):
        if m.group("kind") == "axiom":
            line = stripped.line_of(m.start("kind"))
            hits.append(ForbiddenToken("axiom", line, lines[line - 1].strip()))
    hits.sort(key=lambda t: t.line)
    return hits

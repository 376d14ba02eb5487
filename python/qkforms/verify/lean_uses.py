"""The external names a Lean source uses: a scanner, not an elaborator.

The Lean library cannot be compiled where it is written (no toolchain), so every
declaration it takes from Mathlib, Batteries or Lean core is looked up in source and the
reading is recorded in ``lean/names.toml`` (:mod:`qkforms.verify.lean_evidence`; see
``docs/bridge.md``, "Evidence for external names"). This module reads a Lean file and
answers: which external names, dot-notation fields, named arguments and eliminator case
names does the code use?

A name counts as *local* when the file binds it
somewhere (a binder ``(x : T)``, ``fun x =>``, ``∀ x,``, ``intro x``, ``obtain ⟨x, hx⟩``,
``have hx :``, ``with x hx``, ...), as *project* when ``lean/`` declares it, and as
*external* otherwise (after removing keywords, tactic names and the basic logical
constants in :data:`BUILTINS`). What is used:

* ``name``: an identifier in code (``Finset.sum_comm``, ``mul_comm``, ``Matrix.rank``);
  an entry matches when its key equals the identifier or ends with ``.`` + identifier
  (``open Finset`` lets the code write ``sum_comm``);
* ``field``: generalized field notation on a local or a parenthesised term
  (``h.trans``, ``(foo x).symm``, ``.inl h``); the evidence maps each field to the full
  names it resolves to (``[fields] trans = ["LE.le.trans"]``);
* ``arg``: a named argument ``(p := e)``; the recorded statement of the function it is
  passed to must bind that name;
* ``case``: a case name of ``induction x using E with | c ...`` (e.g.
  ``Multiset.induction_on``); the evidence lists them (``[cases] "E" = ["empty", "cons"]``).

Examples
--------
>>> src = '''theorem foo (a b : ℕ) (h : a ≤ b) : a ≤ b + 1 := by
...   have key : b ≤ b + 1 := Nat.le_succ b
...   exact h.trans key
... '''
>>> sorted((u.kind, u.name) for u in uses(src))
[('field', 'trans'), ('name', 'Nat.le_succ')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from qkforms.verify.lean_source import Stripped, declarations, strip_lean

__all__ = ["BUILTINS", "NameUse", "project_names", "uses"]

#: keywords, tactics and basic constants that are not looked up as declarations
BUILTINS = frozenset(
    """
    by fun at with using only if then else do let have show from match in this calc
    theorem lemma def abbrev instance structure class inductive where example noncomputable
    section namespace end open scoped variable universe private protected local attribute
    deriving extends mutual set_option import termination_by decreasing_by
    Type Sort Prop True False And Or Not Iff Eq Ne Exists rfl trivial id
    intro intros rintro exact exacts apply refine refine' constructor use exists existsi
    simp simp_all simpa simp_rw dsimp rw rwa erw nth_rewrite nth_rw rewrite unfold delta
    change show_term linarith nlinarith positivity polyrith omega ring ring_nf ring1
    field_simp norm_num norm_cast push_cast exact_mod_cast assumption_mod_cast zify qify
    lift gcongr bound decide tauto aesop cases rcases obtain induction generalize subst
    split split_ifs by_cases by_contra push_neg contrapose exfalso absurd contradiction
    congr congrArg congrFun ext funext left right symm trans first try repeat all_goals
    any_goals focus case next done skip rename_i clear specialize set choose filter_upwards
    measurability fun_prop continuity mono convert convert_to infer_instance haveI letI
    exact? apply? suffices replace calc conv lhs rhs arg enter pattern norm_num1
    abel group noncomm_ring module interval_cases fin_cases nontriviality peel wlog
    on_goal pick_goal swap rotate_left rotate_right iterate refine_lift assumption
    conv_lhs conv_rhs linear_combination nlinarith positivity bound_tac
    sorry admit native_decide axiom
    """.split()
)

_LETTER = r"A-Za-z_\u0370-\u03ff\u1f00-\u1fff\u2100-\u214f\U0001d400-\U0001d7ff"
_SUBS = r"\u2080-\u209c\u1d62-\u1d6a\u2071\u207f"
_IDENT_PART = rf"[{_LETTER}][{_LETTER}0-9'!?{_SUBS}]*"
#: an identifier with its dotted components (numeric projections included)
_TOKEN_RE = re.compile(
    rf"(?P<dot>(?<![{_LETTER}0-9'!?{_SUBS})\]⟩])\.)?(?P<id>{_IDENT_PART}(?:\.(?:{_IDENT_PART}|[0-9]+))*)"
    rf"|(?P<post>(?<=[)\]⟩])\.)(?P<pid>{_IDENT_PART}(?:\.(?:{_IDENT_PART}|[0-9]+))*)"
)
#: notation-like tokens that lex as identifiers but are not declarations
_NOTATION = frozenset("ℝ ℕ ℤ ℚ ℂ λ Π Σ ᵀ ᴴ 𝓝 _ℝ on".split())
# λ, Π and Σ are not identifier letters in Lean; the letter class above admits the Greek
# block, so they are filtered here.


@dataclass(frozen=True)
class NameUse:
    """One use of an external name in a Lean file.

    ``kind`` is ``"name"``, ``"field"``, ``"arg"`` or ``"case"``; for ``arg`` the
    ``name`` is ``function(argument)``, for ``case`` it is ``eliminator|case``.
    """

    kind: str
    name: str
    line: int


_OPEN = {"(": ")", "{": "}", "[": "]", "⦃": "⦄", "⟨": "⟩"}
_BINDER_START = re.compile(
    r"(?<![\w.'])(?P<kw>theorem|lemma|def|abbrev|instance|example|structure|class|inductive"
    r"|variable|fun|λ|∀ᵐ|∀ᶠ|∃ᶠ|∀|∃!|∃|∑|∏|⋃|⋂|⨆|⨅|∫⁻|∫|have|haveI|let|letI|suffices"
    r"|replace)(?![\w'])"
)
_NAMED_FIRST = frozenset(
    "theorem lemma def abbrev instance structure class inductive have haveI let letI "
    "suffices replace".split()
)
_LINE_BINDERS = re.compile(
    r"(?<![\w.'])(?:intro|intros|rintro|rename_i|ext|funext|next|case\s+\S+)(?![\w'])"
    r"(?P<rest>[^\n]*)"
)


def _ident_names(text: str) -> set[str]:
    return {m.group(0) for m in re.finditer(_IDENT_PART, text) if m.group(0) != "rfl"}


def _match_close(code: str, i: int) -> int:
    """Offset just past the bracket group opening at ``code[i]``."""
    stack = [_OPEN[code[i]]]
    k = i + 1
    while k < len(code) and stack:
        ch = code[k]
        if ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch == stack[-1]:
            stack.pop()
        k += 1
    return k


def _top_level_colon(text: str) -> int:
    """Offset of the first ``:`` (not ``:=``) outside nested brackets, or -1."""
    depth = 0
    for k, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _OPEN.values():
            depth -= 1
        elif ch == ":" and depth == 0 and not text.startswith(":=", k):
            return k
    return -1


def _binder_chain(code: str, i: int, bound: set[str]) -> None:
    """Bind the names of a chain of binders starting at ``code[i]``."""
    n = len(code)
    while i < n:
        while i < n and code[i] in " \t\n":
            i += 1
        if i >= n:
            return
        ch = code[i]
        if ch in _OPEN:
            j = _match_close(code, i)
            inner = code[i + 1:j - 1]
            if ch == "⟨":
                bound.update(x for x in _ident_names(inner) if "." not in x)
            else:
                c = _top_level_colon(inner)
                if c < 0 and ch == "[":
                    i = j  # anonymous instance binder
                    continue
                if c < 0 or ":=" in inner[:c + 2] and inner.find(":=") <= c:
                    return
                head = inner[:c]
                names = head.split()
                if not names or not all(re.fullmatch(_IDENT_PART, x) for x in names):
                    return
                bound.update(names)
            i = j
            continue
        m = re.compile(_IDENT_PART).match(code, i)
        if m and "." not in m.group(0) and m.group(0) not in BUILTINS:
            bound.add(m.group(0))
            i = m.end()
            continue
        if ch == "_":
            i += 1
            continue
        return


def _bound_names(code: str) -> set[str]:
    """Names the code binds anywhere (a superset is harmless: these are not looked up)."""
    bound: set[str] = set()
    ident = re.compile(_IDENT_PART)
    for m in _BINDER_START.finditer(code):
        i = m.end()
        if m.group("kw") in _NAMED_FIRST:
            # the declared name (or a `have` name) comes first
            while i < len(code) and code[i] in " \t":
                i += 1
            nm = ident.match(code, i)
            if nm:
                if m.group("kw") in ("have", "haveI", "let", "letI", "suffices", "replace"):
                    bound.add(nm.group(0))
                i = nm.end()
        _binder_chain(code, i, bound)
    # whole-line binders: intro/rintro/ext/next/case
    for m in _LINE_BINDERS.finditer(code):
        rest = re.split(r"=>|:=|<;>|;|\busing\b", m.group("rest"))[0]
        bound.update(x for x in _ident_names(rest) if "." not in x)
    # `with` patterns (rcases/obtain/cases'/filter_upwards/lift/induction ... with)
    for m in re.finditer(r"(?<![\w.'])with(?![\w'])([^\n]*)", code):
        rest = m.group(1)
        if re.match(r"\s*$", rest):
            continue
        rest = re.split(r"=>|:=", rest)[0]
        bound.update(x for x in _ident_names(rest) if "." not in x)
    # obtain / rcases / rintro patterns before `:=` or `:`
    for m in re.finditer(r"(?<![\w.'])(?:obtain|rintro|choose!?)(?![\w'])([^\n]*)", code):
        rest = re.split(r":=|\busing\b", m.group(1))[0]
        c = _top_level_colon(rest)
        rest = rest[:c] if c >= 0 else rest
        bound.update(x for x in _ident_names(rest) if "." not in x)
    # match / induction / cases arms: `| pat =>` (label then bound names)
    for m in re.finditer(r"(?m)^\s*\|([^\n]*?)=>", code):
        arm = m.group(1).split()
        if arm and arm[0] not in BUILTINS and re.fullmatch(
            r"[^()\[\]:=]*", m.group(1).replace("::", " ")
        ):
            bound.update(x for x in _ident_names(m.group(1)) if "." not in x)
    # set-builder `{x | p}`, `{x : T | p}`, `{x ∈ s | p}`
    for m in re.finditer(rf"\{{\s*({_IDENT_PART}(?:\s+{_IDENT_PART})*)\s*(?:\||:(?!=)|∈)", code):
        bound.update(m.group(1).split())
    # tactics binding a single name: by_cases h :, by_contra h, set x := … with hx,
    # generalize hx : e = x, lift … with x hx
    for pat in (
        rf"(?<![\w.'])(?:by_cases|by_contra!?|set|generalize|wlog)\s+({_IDENT_PART})",
        rf"(?<![\w.'])generalize\s+[^\n]*?=\s*({_IDENT_PART})",
    ):
        for m in re.finditer(pat, code):
            bound.add(m.group(1))
    return bound


def project_names(sources: Iterable[str]) -> set[str]:
    """Every name declared by the project's Lean sources, with all its namespace suffixes.

    ``QKForms.Vec.l2`` contributes ``QKForms.Vec.l2``, ``Vec.l2`` and ``l2``; structure
    fields (``where`` blocks) are included.

    Examples
    --------
    >>> sorted(project_names(['namespace A.B\\ndef f : Nat := 0\\nend A.B']))
    ['A.B.f', 'B.f', 'f']
    """
    names: set[str] = set()
    for src in sources:
        for d in declarations(src):
            parts = d.name.split(".")
            for k in range(len(parts)):
                names.add(".".join(parts[k:]))
        code = strip_lean(src).code
        # structure fields and auxiliary definitions in `where` blocks
        for m in re.finditer(r"\bwhere\b((?:\n[ \t]+[^\n]*)+)", code):
            for f in re.finditer(rf"^\s+({_IDENT_PART})\s*(?:\([^)]*\)\s*)*:", m.group(1),
                                 flags=re.M):
                names.add(f.group(1))
    return names


def _skip_spans(code: str) -> str:
    """Blank the parts of the code whose identifiers are not uses of declarations."""
    chars = list(code)

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if chars[k] != "\n":
                chars[k] = " "

    patterns = [
        r"^\s*(?:open|namespace|section|noncomputable\s+section|end|universe|import)\b[^\n]*",
        r"^\s*set_option\b[^\n]*?(?=\bin\b|$)",
        r"@\[[^\]]*\]",
        r"#[A-Za-z_]+",        # commands such as #check / #print
        r"\b(?:attribute)\s*\[[^\]]*\]",
        r"(?<![\w'!?\u2080-\u209c])\?[A-Za-z_][\w']*",   # named holes ?_ / ?a
        r"\b(?:theorem|lemma|def|abbrev|instance|structure|class|inductive)\s+[^\s:({\[⦃]+",
        r"\b(?:open)\b[^\n]*?\bin\b",
    ]
    for pat in patterns:
        for m in re.finditer(pat, code, flags=re.M):
            blank(m.start(), m.end())
    return "".join(chars)


def uses(source: str, *, project: set[str] | None = None) -> list[NameUse]:
    """The external names, fields, named arguments and case names a Lean source uses.

    Parameters
    ----------
    source : str
        A Lean file's text.
    project : set of str, optional
        Names declared by the project (from :func:`project_names`); by default the
        declarations of ``source`` itself.

    Returns
    -------
    list of NameUse
        One entry per distinct (kind, name), at its first line.

    Examples
    --------
    >>> src = '''open Finset in
    ... theorem t (s : Multiset ℝ) : s.card = s.card := by
    ...   induction s using Multiset.induction_on with
    ...   | empty => rfl
    ...   | cons a s ih => rw [Multiset.filter_cons_of_neg (p := (0 < ·)) s]
    ... '''
    >>> for u in uses(src):
    ...     print(u.line, u.kind, u.name)
    2 name Multiset
    2 field card
    3 name Multiset.induction_on
    4 case Multiset.induction_on|empty
    5 case Multiset.induction_on|cons
    5 name Multiset.filter_cons_of_neg
    5 arg Multiset.filter_cons_of_neg(p)
    """
    stripped = strip_lean(source)
    code = stripped.code
    if project is None:
        project = project_names([source])
    bound = _bound_names(code)
    found = _Found(stripped)
    scan = _record_case_names(_skip_spans(code), found)
    for m in _TOKEN_RE.finditer(scan):
        _record_token(m, scan, bound, project, found)
    return found.uses()


class _Found:
    """The uses recorded so far, each at the line of its first occurrence."""

    def __init__(self, stripped: Stripped) -> None:
        self._stripped = stripped
        self._lines: dict[tuple[str, str], int] = {}

    def record(self, kind: str, name: str, offset: int) -> None:
        key = (kind, name)
        if key not in self._lines:
            self._lines[key] = self._stripped.line_of(offset)

    def uses(self) -> list[NameUse]:
        """By line, and in the order recorded within a line."""
        order = {k: i for i, k in enumerate(self._lines)}
        return [NameUse(kind, name, line) for (kind, name), line in
                sorted(self._lines.items(), key=lambda kv: (kv[1], order[kv[0]]))]


def _record_case_names(scan: str, found: _Found) -> str:
    """Record the case names of ``induction x using E with | c ...``; return ``scan`` with
    every case label blanked (a label is not a use of a name)."""
    for m in re.finditer(rf"\busing\s+({_IDENT_PART}(?:\.{_IDENT_PART})*)\s+with\b", scan):
        elim = m.group(1)
        rest = scan[m.end():]
        indent_case = re.finditer(rf"^\s*\|\s*({_IDENT_PART})", rest, flags=re.M)
        block_end = re.search(r"\n(?=\S)", rest)
        limit = block_end.start() if block_end else len(rest)
        for c in indent_case:
            if c.start() > limit:
                break
            found.record("case", f"{elim}|{c.group(1)}", m.end() + c.start(1))
    return re.sub(
        rf"(^\s*\|\s*)({_IDENT_PART})",
        lambda mm: mm.group(1) + " " * len(mm.group(2)),
        scan,
        flags=re.M,
    )


def _record_token(m: re.Match[str], scan: str, bound: set[str], project: set[str],
                  found: _Found) -> None:
    """Record what one identifier token of the code uses: a field, a named argument or a
    name (nothing when it is local, a project declaration, a keyword or notation)."""
    if m.group("post"):
        parts = [p for p in m.group("pid").split(".") if not p.isdigit()]
        for p in parts:
            found.record("field", p, m.start())
        return
    tok = m.group("id")
    start = m.start("id")
    # named argument `(name := ...)`
    before = scan[:start].rstrip()
    after = scan[m.end():].lstrip()
    if before.endswith("(") and after.startswith(":=") and "." not in tok:
        head = _head_before(scan, start - (len(scan[:start]) - len(before)) - 1, bound,
                            project)
        if head is not None:
            found.record("arg", f"{head}({tok})", start)
        return
    if m.group("dot"):
        # `.inl h`: anonymous-constructor / dot-ident notation
        for p in tok.split("."):
            if not p.isdigit():
                found.record("field", p, start)
        return
    parts = tok.split(".")
    first = parts[0]
    if first.strip("_") == "":
        return
    if first in _NOTATION or first in BUILTINS and len(parts) == 1:
        return
    is_local = first in bound or first in project or first in BUILTINS or first in _NOTATION
    if is_local and (first in bound or first in BUILTINS or len(parts) == 1
                     or tok not in project):
        if tok in project:
            return
        for p in parts[1:]:
            if not p.isdigit():
                found.record("field", p, start)
        return
    if tok in project:
        return
    found.record("name", ".".join(p for p in parts if not p.isdigit()) if parts[-1].isdigit()
                 else tok, start)


def _head_before(code: str, paren: int, bound: set[str], project: set[str]) -> str | None:
    """The function a named argument at ``code[paren] == '('`` is passed to."""
    depth = 0
    k = paren - 1
    while k >= 0:
        ch = code[k]
        if ch in ")]⟩}":
            depth += 1
        elif ch in "([⟨{":
            if depth == 0:
                return None
            depth -= 1
        elif depth == 0 and ch not in " \t\n":
            m = re.search(rf"(@?)({_IDENT_PART}(?:\.{_IDENT_PART})*)$", code[: k + 1])
            if m is None:
                return None
            tok = m.group(2)
            first = tok.split(".")[0]
            if first in bound and "." in tok:
                return "." + tok.split(".", 1)[1]
            if tok in bound or tok in BUILTINS:
                return None
            if tok not in project:
                return tok
            return None
        k -= 1
    return None

"""Hand-made LeanDojo traces of small Lean sources, for the trace reader's tests.

The format is the one LeanDojo's extractor writes for one module (read in
``lean_dojo/data_extraction/ExtractData.lean`` of ``lean-dojo`` 4.20.0 and of
``lean-dojo-v2`` 1.0.9: structures ``Trace`` and ``PremiseTrace``, the derived ``ToJson``
of ``Syntax``/``SourceInfo``/``Position``; read back by ``traced_data.py``
``TracedFile._from_lean4_traced_file`` and ``ast.py`` ``FileNode.from_data``):

* ``{"commandASTs": [header, command, ...], "tactics": [...], "premises": [...]}``;
* a syntax tree is ``{"node": {"info", "kind", "args"}}``, ``{"atom": {"info", "val"}}``
  or ``{"ident": {"info", "rawVal", "val", "preresolved"}}``, ``info`` being ``"none"``
  or ``{"original": {"leading", "pos", "trailing", "endPos"}}`` with UTF-8 byte offsets;
* a premise is ``{"fullName", "defPos", "defEndPos", "modName", "defPath", "pos",
  "endPos"}``, positions ``{"line": 1-based, "column": 0-based codepoints}``.

Simplifications, none of which the reader relies on: a command's tokens are the flat
children of one node of the command's kind (Lean nests them), comments and docstrings
are trivia (Lean keeps a docstring as a ``docComment`` node), and ``tactics`` is empty.
The kinds that matter are Lean's: ``Lean.Parser.Module.header``,
``Lean.Parser.Command.declaration`` with a ``Lean.Parser.Command.declId`` node around the
declared name, ``Lean.Parser.Command.namespace``/``end``.
"""

from __future__ import annotations

import re
from typing import Any

from qkforms.verify.lean_source import strip_lean

KEYWORDS = frozenset({
    "import", "namespace", "end", "section", "noncomputable", "theorem", "lemma", "def",
    "by", "fun", "open", "variable", "where", "at", "with", "sorry", "admit", "in",
    "private", "protected",
})
DECL_KEYWORDS = frozenset({"theorem", "lemma", "def", "abbrev", "instance"})
_TOKEN = re.compile(r"[A-Za-z_\u0370-\u03ff][\w.'!?\u2080-\u2089]*|\d+|\S")
_COMMAND_START = re.compile(
    r"^(import|namespace|end|section|noncomputable|open|variable|theorem|lemma|def|@\[|"
    r"private|protected)\b")


def _info(source: str, start: int, end: int) -> dict[str, Any]:
    b0 = len(source[:start].encode("utf-8"))
    b1 = len(source[:end].encode("utf-8"))
    return {"original": {"leading": "", "pos": b0, "trailing": " ", "endPos": b1}}


def _position(source: str, offset: int) -> dict[str, int]:
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1)
    return {"line": line, "column": column}


def _commands(code: str) -> list[tuple[int, int]]:
    """(start, end) character ranges of the top-level commands of stripped code."""
    starts = [m.start() for m in re.finditer(r"(?m)^\S", code)
              if _COMMAND_START.match(code[m.start():])]
    ranges = []
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else len(code)
        ranges.append((s, len(code[:e].rstrip())))
    return ranges


def make_trace(source: str, premises: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """The trace of ``source``: every identifier token ``t`` in ``premises`` becomes a
    premise ``premises[t] = (fullName, modName)`` at each place it is used."""
    code = strip_lean(source).code
    header_args: list[Any] = []
    commands: list[Any] = []
    found: list[dict[str, Any]] = []
    for start, end in _commands(code):
        tokens = list(_TOKEN.finditer(code, start, end))
        if not tokens:
            continue
        first = tokens[0].group()
        args: list[Any] = []
        decl_next = False
        for t in tokens:
            text = t.group()
            info = _info(source, t.start(), t.end())
            if text in KEYWORDS or not re.match(r"[A-Za-z_\u0370-\u03ff]", text):
                args.append({"atom": {"info": info, "val": text}})
                decl_next = text in DECL_KEYWORDS
                continue
            ident = {"ident": {"info": info, "rawVal": text, "val": text, "preresolved": []}}
            if decl_next:
                args.append({"node": {"info": "none", "kind": "Lean.Parser.Command.declId",
                                      "args": [ident, {"node": {"info": "none",
                                                                "kind": "null", "args": []}}]}})
                decl_next = False
                continue
            args.append(ident)
            if text in premises:
                full, mod = premises[text]
                found.append({
                    "fullName": full, "defPos": None, "defEndPos": None, "modName": mod,
                    "defPath": mod.replace(".", "/") + ".lean",
                    "pos": _position(source, t.start()), "endPos": _position(source, t.end()),
                })
        if first == "import":
            header_args.extend(args)
            continue
        kind = {
            "namespace": "Lean.Parser.Command.namespace", "end": "Lean.Parser.Command.end",
            "section": "Lean.Parser.Command.section", "open": "Lean.Parser.Command.open",
            "noncomputable": "Lean.Parser.Command.noncomputableSection",
        }.get(first, "Lean.Parser.Command.declaration")
        if kind == "Lean.Parser.Command.noncomputableSection" and not any(
                t.group() == "section" for t in tokens[:2]):
            kind = "Lean.Parser.Command.declaration"
        commands.append({"node": {"info": "none", "kind": kind, "args": args}})
    header = {"node": {"info": "none", "kind": "Lean.Parser.Module.header",
                       "args": header_args}}
    return {"commandASTs": [header, *commands], "tactics": [], "premises": found}


def byte_idx_positions(trace: Any) -> Any:
    """The same trace with every syntax position written ``{"byteIdx": n}`` (as a derived
    ``ToJson String.Pos.Raw`` would write it)."""
    if isinstance(trace, dict):
        out = {}
        for k, v in trace.items():
            if k in ("pos", "endPos") and isinstance(v, int):
                out[k] = {"byteIdx": v}
            else:
                out[k] = byte_idx_positions(v)
        return out
    if isinstance(trace, list):
        return [byte_idx_positions(x) for x in trace]
    return trace

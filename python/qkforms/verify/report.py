"""The verification report: one row per result, a verdict, and three renderings.

Per result the report says the Lean status (``built``, ``failed``, ``not checked``,
``not formalized``), the exact-check status and the property-test status
(``pass``, ``fail``, ``skipped``), and an overall verdict:

* ``DISAGREE`` -- a Python check fails for a result whose Lean proof is claimed
  (Lean ``built``, or ``not checked`` for lack of a toolchain);
* ``fail`` -- something failed (a Python check of an unformalized result, or Lean);
* ``incomplete`` -- nothing failed, but some registered part was not checked
  (no Lean toolchain, property tests skipped);
* ``pass`` -- every registered part was checked and passed.

The renderings are a terminal table (:func:`render_table`), a JSON document with
schema ``qkforms.verify/1`` (:meth:`Report.to_json`) and a Markdown page
(:func:`render_markdown`).

Examples
--------
>>> verdict("not formalized", "pass", "pass")
'pass'
>>> verdict("not checked", "pass", "skipped")
'incomplete'
>>> verdict("built", "pass", "skipped", prop_registered=False)
'pass'
>>> verdict("built", "fail", "pass")
'DISAGREE'
>>> verdict("not formalized", "fail", "skipped")
'fail'
>>> verdict("failed", "fail", "pass")
'fail'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from qkforms.registry import Result
from qkforms.verify.lean_project import StaticCheck
from qkforms.verify.python_side import FAIL, SKIPPED, ExactOutcome, NodeOutcome

__all__ = [
    "SCHEMA",
    "LeanOutcome",
    "PropertyOutcome",
    "Row",
    "Report",
    "verdict",
    "render_table",
    "render_markdown",
]

SCHEMA = "qkforms.verify/1"
LEAN_BUILT = "built"
LEAN_FAILED = "failed"
LEAN_NOT_CHECKED = "not checked"
LEAN_NOT_FORMALIZED = "not formalized"
DISAGREE = "DISAGREE"
FAILED = "fail"
INCOMPLETE = "incomplete"
PASSED = "pass"


@dataclass
class LeanOutcome:
    """Lean status of one result, its declarations' audits and a short reason."""

    status: str
    detail: str
    declarations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class PropertyOutcome:
    """Property-test status of one result and the outcome of each node id."""

    status: str
    detail: str
    tests: list[NodeOutcome] = field(default_factory=list)


def verdict(lean: str, exact: str, prop: str, *, prop_registered: bool = True) -> str:
    """The overall verdict of a row from its three statuses (see the module doc).

    ``prop_registered`` false means the result has no property tests, so their
    ``skipped`` status leaves nothing unchecked.
    """
    claimed = lean in (LEAN_BUILT, LEAN_NOT_CHECKED)  # a proof is claimed and not known broken
    python_failed = FAIL in (exact, prop)
    if python_failed and claimed:
        return DISAGREE
    if python_failed or lean == LEAN_FAILED:
        return FAILED
    if lean == LEAN_NOT_CHECKED or exact == SKIPPED or (prop == SKIPPED and prop_registered):
        return INCOMPLETE
    return PASSED


@dataclass
class Row:
    """One registered result with its three statuses and verdict."""

    result: Result
    lean: LeanOutcome
    exact: ExactOutcome
    prop: PropertyOutcome

    @property
    def verdict(self) -> str:
        """The row's verdict (see :func:`verdict`)."""
        return verdict(self.lean.status, self.exact.status, self.prop.status,
                       prop_registered=bool(self.result.property_tests))

    def problems(self) -> list[str]:
        """Human-readable reasons why this row failed (empty when it did not)."""
        out = []
        r = self.result
        if self.verdict == DISAGREE:
            out.append(
                f"{r.id}: DISAGREEMENT: the Lean proof is claimed ({self.lean.status}) but the "
                "Python side fails"
            )
        if self.lean.status == LEAN_FAILED:
            out.append(f"{r.id}: Lean failed: {self.lean.detail}")
        if self.exact.status == FAIL:
            out.append(f"{r.id}: exact check failed: {self.exact.detail}")
        if self.prop.status == FAIL:
            out.append(f"{r.id}: property tests failed: {self.prop.detail}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the row."""
        r = self.result
        return {
            "id": r.id,
            "paper": r.paper,
            "title": r.title,
            "docs": r.docs,
            "lean": {
                "status": self.lean.status,
                "file": r.lean_file,
                "detail": self.lean.detail,
                "declarations": self.lean.declarations,
            },
            "exact": {
                "status": self.exact.status,
                "check": r.check,
                "method": self.exact.method,
                "instances": self.exact.instances,
                "detail": self.exact.detail,
                "seconds": round(self.exact.seconds, 4),
                "arguments": self.exact.kwargs,
            },
            "property": {
                "status": self.prop.status,
                "detail": self.prop.detail,
                "tests": [
                    {"node_id": t.node_id, "status": t.status, "detail": t.detail,
                     "cases": t.cases}
                    for t in self.prop.tests
                ],
            },
            "verdict": self.verdict,
        }


@dataclass
class Report:
    """Everything ``qkforms verify`` found."""

    root: str
    options: dict[str, Any]
    toolchain: dict[str, Any]
    static: list[StaticCheck]
    rows: list[Row]
    global_failures: list[str] = field(default_factory=list)
    qkforms_version: str = ""
    generated_at: str = ""

    def failures(self) -> list[str]:
        """Every failure message: global ones, static checks, then rows."""
        out = list(self.global_failures)
        for c in self.static:
            out.extend(f"static check {c.name}: {m}" for m in c.messages)
        for row in self.rows:
            out.extend(row.problems())
        return out

    @property
    def exit_status(self) -> int:
        """0 when nothing failed, 1 otherwise."""
        return 1 if self.failures() else 0

    def counts(self) -> dict[str, int]:
        """Number of rows per verdict."""
        out = {v: 0 for v in (PASSED, INCOMPLETE, FAILED, DISAGREE)}
        for row in self.rows:
            out[row.verdict] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (schema ``qkforms.verify/1``)."""
        return {
            "schema": SCHEMA,
            "qkforms_version": self.qkforms_version,
            "generated": self.generated_at,
            "root": self.root,
            "options": self.options,
            "toolchain": self.toolchain,
            "static_checks": [
                {"name": c.name, "description": c.description, "passed": c.passed,
                 "messages": c.messages}
                for c in self.static
            ],
            "results": [row.to_dict() for row in self.rows],
            "summary": {
                "verdicts": self.counts(),
                "failures": self.failures(),
                "exit_status": self.exit_status,
            },
        }

    def to_json(self) -> str:
        """The JSON document as text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"


_HEADERS = ("id", "paper", "Lean", "exact", "property", "verdict")


def _cells(row: Row) -> tuple[str, ...]:
    return (row.result.id, row.result.paper, row.lean.status, row.exact.status,
            row.prop.status, row.verdict)


def _lean_column_note(report: Report) -> str:
    tc = report.toolchain
    if tc.get("mode") == "skip":
        return "Lean: not checked (--lean skip)"
    if not tc.get("lake"):
        return "Lean: not checked (no toolchain: `lake` not on PATH)"
    return f"Lean: lake build + axiom audit with {tc['lake']}"


def render_table(report: Report) -> str:
    """The terminal rendering: table, static checks, failures and a summary line."""
    rows = [_cells(r) for r in report.rows]
    widths = [max(len(h), *(len(c[i]) for c in rows)) if rows else len(h)
              for i, h in enumerate(_HEADERS)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [f"qkforms verify: {report.root}", _lean_column_note(report), ""]
    out.append(line(_HEADERS))
    out.append(line(tuple("-" * w for w in widths)))
    out.extend(line(c) for c in rows)
    out.append("")
    out.append("static Lean checks:")
    for c in report.static:
        out.append(f"  [{'ok' if c.passed else 'FAIL'}] {c.name}: {c.description}")
        out.extend(f"        {m}" for m in c.messages[:20])
        if len(c.messages) > 20:
            out.append(f"        ... and {len(c.messages) - 20} more")
    notes = [r for r in report.rows if r.verdict == INCOMPLETE]
    if notes:
        out.append("")
        out.append("not checked:")
        for r in notes:
            parts = []
            if r.lean.status == LEAN_NOT_CHECKED:
                parts.append(f"Lean ({r.lean.detail})")
            if r.exact.status == SKIPPED:
                parts.append(f"exact ({r.exact.detail})")
            if r.prop.status == SKIPPED and r.result.property_tests:
                parts.append(f"property ({r.prop.detail})")
            out.append(f"  {r.result.id}: " + "; ".join(parts))
    failures = report.failures()
    if failures:
        out.append("")
        out.append("FAILURES:")
        out.extend(f"  {m}" for m in failures)
    counts = report.counts()
    out.append("")
    out.append(
        f"{counts[PASSED]} pass, {counts[INCOMPLETE]} incomplete, {counts[FAILED]} fail, "
        f"{counts[DISAGREE]} disagree; "
        + ("verify FAILED" if failures else "verify OK (nothing failed)")
    )
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    """Escape text for a Markdown table cell or list item (pipes, angle brackets, newlines)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))


def render_markdown(report: Report) -> str:
    """A Markdown page of the report, for the docs."""
    counts = report.counts()
    out = [
        "# Verification report (`qkforms verify`)",
        "",
        f"Generated {report.generated_at} by qkforms {report.qkforms_version}; "
        f"schema `{SCHEMA}`. {_lean_column_note(report)}.",
        "",
        f"Verdicts: {counts[PASSED]} pass, {counts[INCOMPLETE]} incomplete, "
        f"{counts[FAILED]} fail, {counts[DISAGREE]} disagree. "
        + ("**Verification FAILED.**" if report.failures() else "Nothing failed."),
        "",
        "| id | result | Lean | Lean declarations | exact | property | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report.rows:
        r = row.result
        decls = "<br>".join(f"`{d}`" for d in r.lean) or "—"
        exact = row.exact.status + (f" ({row.exact.method})" if row.exact.method else "")
        out.append(
            f"| `{r.id}` | {_md(r.paper)}: {_md(r.title)} | {row.lean.status} | {decls} | "
            f"{_md(exact)} | {row.prop.status} | **{row.verdict}** |"
        )
    out += ["", "## Static Lean checks", ""]
    for c in report.static:
        out.append(f"- **{c.name}** ({_md(c.description)}): " + ("ok" if c.passed else "FAIL"))
        out.extend(f"  - {_md(m)}" for m in c.messages)
    failures = report.failures()
    if failures:
        out += ["", "## Failures", ""]
        out.extend(f"- {_md(m)}" for m in failures)
    out += [
        "",
        "Lean status: `built` (lake build and axiom audit passed), `failed`, `not checked`,",
        "`not formalized`. A `DISAGREE` verdict means a Python check fails for a result whose",
        "Lean proof is claimed.",
    ]
    return "\n".join(out) + "\n"

"""The verification report: one row per result, a verdict, and three renderings.

Per result the report says the Lean status (``built``, ``failed``, ``not run``,
``not formalized``), the exact-check status and the property status (``pass``,
``fail``, ``not run``, ``none``), and an overall verdict:

* ``DISAGREE`` -- both sides ran and differ: Lean ``built`` (build and axiom audit
  passed) but a Python check of the same result fails;
* ``fail`` -- something that ran failed (a Python check, the Lean build or audit, a
  static Lean check of the result's files);
* ``incomplete`` -- nothing failed, but some registered part did not run (``not run``:
  no Lean toolchain, Lean sources not found, a missing optional package, ...);
* ``pass`` -- every registered part ran and passed.

``not run`` always comes with the reason and how to enable the check; the summary
line counts it separately per column. The renderings are a terminal table
(:func:`render_table`), a JSON document with schema ``qkforms.verify/3``
(:meth:`Report.to_json`) and a Markdown page (:func:`render_markdown`). Beside the rows
they show the Lean build per module (when ``lake`` ran) and the premises of each
formalized result read from a LeanDojo trace (``not run`` without one; a premise that is
``sorryAx`` or a ``sorry`` in the proof makes the result's Lean status ``failed``).

Examples
--------
>>> verdict("not formalized", "pass", "pass")
'pass'
>>> verdict("not run", "pass", "pass")
'incomplete'
>>> verdict("built", "pass", "none")
'pass'
>>> verdict("built", "fail", "pass")
'DISAGREE'
>>> verdict("not run", "fail", "pass")   # Lean did not run: no disagreement, a failure
'fail'
>>> verdict("failed", "pass", "pass")
'fail'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from qkforms.registry import Result
from qkforms.verify.lean_project import StaticCheck
from qkforms.verify.lean_side import LEAN_BUILT, LEAN_FAILED, LeanOutcome
from qkforms.verify.lean_trace import PremiseOutcome
from qkforms.verify.python_side import ExactOutcome, PropertyOutcome
from qkforms.verify.statuses import FAIL, NOT_RUN, PASS

__all__ = [
    "SCHEMA",
    "Row",
    "Report",
    "verdict",
    "render_table",
    "render_markdown",
]

SCHEMA = "qkforms.verify/3"
#: the verdicts beside ``pass`` and ``fail`` (the words of :mod:`~qkforms.verify.statuses`)
DISAGREE = "DISAGREE"
INCOMPLETE = "incomplete"
COLUMNS = ("Lean", "exact", "property")


def verdict(lean: str, exact: str, prop: str) -> str:
    """The overall verdict of a row from its three statuses (see the module doc)."""
    python_failed = FAIL in (exact, prop)
    if python_failed and lean == LEAN_BUILT:
        return DISAGREE
    if python_failed or lean == LEAN_FAILED:
        return FAIL
    if NOT_RUN in (lean, exact, prop):
        return INCOMPLETE
    return PASS


@dataclass
class Row:
    """One registered result with its three statuses and verdict."""

    result: Result
    lean: LeanOutcome
    exact: ExactOutcome
    prop: PropertyOutcome
    premises: PremiseOutcome | None = None  # None: not formalized

    @property
    def verdict(self) -> str:
        """The row's verdict (see :func:`verdict`)."""
        return verdict(self.lean.status, self.exact.status, self.prop.status)

    def problems(self) -> list[str]:
        """Human-readable reasons why this row failed (empty when it did not)."""
        out = []
        r = self.result
        if self.verdict == DISAGREE:
            out.append(
                f"{r.id}: DISAGREEMENT: the Lean proof built and passed the axiom audit, but "
                "the Python side fails"
            )
        if self.lean.status == LEAN_FAILED:
            out.append(f"{r.id}: Lean failed: {self.lean.detail}")
        if self.exact.status == FAIL:
            out.append(f"{r.id}: exact check failed: {self.exact.detail}")
        if self.prop.status == FAIL:
            out.append(f"{r.id}: properties failed: {self.prop.detail}")
        return out

    def statuses(self) -> dict[str, tuple[str, str]]:
        """(status, detail) per column: ``Lean``, ``exact``, ``property``."""
        return {
            "Lean": (self.lean.status, self.lean.detail),
            "exact": (self.exact.status, self.exact.detail),
            "property": (self.prop.status, self.prop.detail),
        }

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
                "premises": self.premises.to_dict() if self.premises is not None else None,
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
                "properties": [
                    {"name": p.name, "status": p.status, "detail": p.detail,
                     "examples": p.examples, "seconds": round(p.seconds, 4)}
                    for p in self.prop.runs
                ],
            },
            "verdict": self.verdict,
        }


@dataclass
class Report:
    """Everything ``qkforms verify`` found.

    ``root`` is the checkout whose Lean sources were checked, or ``None`` when none was
    found (then ``static`` is empty and ``static_not_run`` says why).
    """

    root: str | None
    options: dict[str, Any]
    toolchain: dict[str, Any]
    static: list[StaticCheck]
    rows: list[Row]
    global_failures: list[str] = field(default_factory=list)
    qkforms_version: str = ""
    generated_at: str = ""
    static_not_run: str = ""

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
        """0 when nothing failed, 1 otherwise (``not run`` is never a failure here)."""
        return 1 if self.failures() else 0

    def counts(self) -> dict[str, int]:
        """Number of rows per verdict."""
        out = {v: 0 for v in (PASS, INCOMPLETE, FAIL, DISAGREE)}
        for row in self.rows:
            out[row.verdict] += 1
        return out

    def not_run_counts(self) -> dict[str, int]:
        """Number of rows whose Lean / exact / property part did not run."""
        return {col: sum(row.statuses()[col][0] == NOT_RUN for row in self.rows)
                for col in COLUMNS}

    def premise_counts(self) -> dict[str, int]:
        """Number of formalized rows whose premise report passed, failed or did not run."""
        out = {"pass": 0, "fail": 0, NOT_RUN: 0}
        for row in self.rows:
            if row.premises is not None:
                out[row.premises.status] = out.get(row.premises.status, 0) + 1
        return out

    def not_run_reasons(self) -> list[tuple[str, str, list[str]]]:
        """(column, reason, ids) for every distinct reason a part did not run."""
        groups: dict[tuple[str, str], list[str]] = {}
        for row in self.rows:
            for col, (status, detail) in row.statuses().items():
                if status == NOT_RUN:
                    groups.setdefault((col, detail), []).append(row.result.id)
        return [(col, reason, ids) for (col, reason), ids in groups.items()]

    def summary_line(self) -> str:
        """Verdict counts, ``not run`` counts per column, and whether verify failed.

        Examples
        --------
        >>> Report(None, {}, {}, [], []).summary_line()
        '0 pass, 0 incomplete, 0 fail, 0 disagree; not run: Lean 0, exact 0, property 0; \
verify OK (nothing failed)'
        """
        c, nr = self.counts(), self.not_run_counts()
        return (
            f"{c[PASS]} pass, {c[INCOMPLETE]} incomplete, {c[FAIL]} fail, "
            f"{c[DISAGREE]} disagree; not run: "
            + ", ".join(f"{col} {nr[col]}" for col in COLUMNS)
            + "; " + ("verify FAILED" if self.failures() else "verify OK (nothing failed)")
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (schema ``qkforms.verify/3``)."""
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
            "static_checks_not_run": self.static_not_run or None,
            "results": [row.to_dict() for row in self.rows],
            "summary": {
                "verdicts": self.counts(),
                "not_run": self.not_run_counts(),
                "not_run_reasons": [
                    {"column": col, "reason": reason, "ids": ids}
                    for col, reason, ids in self.not_run_reasons()
                ],
                "premises": self.premise_counts(),
                "failures": self.failures(),
                "exit_status": self.exit_status,
                "line": self.summary_line(),
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
    if report.root is None:
        return f"Lean: not run ({report.static_not_run})"
    if tc.get("mode") == "skip":
        return f"Lean sources: {report.root}; Lean build: not run (--lean skip)"
    if not tc.get("lake"):
        return f"Lean sources: {report.root}; Lean build: not run ({tc.get('reason', '')})"
    return f"Lean sources: {report.root}; lake build + axiom audit with {tc['lake']}"


def _short_ids(ids: list[str], limit: int = 8) -> str:
    return ", ".join(ids[:limit]) + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


def render_table(report: Report) -> str:
    """The terminal rendering: table, static checks, what did not run, failures, summary."""
    rows = [_cells(r) for r in report.rows]
    widths = [max(len(h), *(len(c[i]) for c in rows)) if rows else len(h)
              for i, h in enumerate(_HEADERS)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [f"qkforms verify {report.qkforms_version}".rstrip(), _lean_column_note(report), ""]
    out.append(line(_HEADERS))
    out.append(line(tuple("-" * w for w in widths)))
    out.extend(line(c) for c in rows)
    out.append("")
    if report.root is None:
        out.append(f"static Lean checks: not run ({report.static_not_run})")
    else:
        out.append("static Lean checks:")
    for c in report.static:
        out.append(f"  [{'ok' if c.passed else 'FAIL'}] {c.name}: {c.description}")
        out.extend(f"        {m}" for m in c.messages[:20])
        if len(c.messages) > 20:
            out.append(f"        ... and {len(c.messages) - 20} more")
    out.extend(_module_lines(report))
    out.extend(_premise_lines(report))
    reasons = report.not_run_reasons()
    if reasons:
        out.append("")
        out.append("not run (not a failure; the reason and how to enable it):")
        for col, reason, ids in reasons:
            out.append(f"  {col} of {len(ids)} result(s) ({_short_ids(ids)}): {reason}")
    failures = report.failures()
    if failures:
        out.append("")
        out.append("FAILURES:")
        out.extend(f"  {m}" for m in failures)
    out.append("")
    out.append(report.summary_line())
    return "\n".join(out) + "\n"


def _module_lines(report: Report) -> list[str]:
    """The Lean build per module (only when ``lake`` ran)."""
    modules = report.toolchain.get("modules") or []
    if not modules:
        return []
    out = ["", "Lean build per module:"]
    for m in modules:
        label = {"built": "built", "failed": "FAILED"}.get(m["status"], m["status"])
        line = f"  [{label}] {m['module']}"
        if m["status"] != "built":
            line += f": {m['detail']}"
        out.append(line)
        out.extend(f"        {e}" for e in m.get("errors", [])[1:])
    return out


def _premise_summary(p: PremiseOutcome) -> str:
    groups: dict[str, int] = {}
    for d in p.declarations:
        for kind, names in d.premises.items():
            groups[kind] = groups.get(kind, 0) + len(names)
    parts = ", ".join(f"{k} {v}" for k, v in sorted(groups.items(), key=lambda kv: -kv[1]))
    return p.detail + (f" ({parts} over its declarations)" if parts else "")


def _premise_lines(report: Report) -> list[str]:
    """One line per formalized result, or one line when no trace was read at all."""
    rows = [r for r in report.rows if r.premises is not None]
    if not rows:
        return []
    reasons = {r.premises.detail for r in rows if r.premises is not None}
    if all(r.premises is not None and r.premises.status == NOT_RUN
           and not r.premises.declarations for r in rows) and len(reasons) == 1:
        return ["", f"premises (LeanDojo trace): not run ({reasons.pop()})"]
    out = ["", "premises (LeanDojo trace):"]
    for r in rows:
        assert r.premises is not None
        out.append(f"  {r.result.id}: {r.premises.status}: {_premise_summary(r.premises)}")
    return out


def _md(text: str) -> str:
    """Escape text for a Markdown table cell or list item (pipes, angle brackets, newlines)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))


def render_markdown(report: Report) -> str:
    """A Markdown page of the report, for the docs."""
    out = [
        "# Verification report (`qkforms verify`)",
        "",
        f"Generated {report.generated_at} by qkforms {report.qkforms_version}; "
        f"schema `{SCHEMA}`. {_md(_lean_column_note(report))}.",
        "",
        _md(report.summary_line()) + ". "
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
    if report.root is None:
        out.append(f"Not run: {_md(report.static_not_run)}")
    for c in report.static:
        out.append(f"- **{c.name}** ({_md(c.description)}): " + ("ok" if c.passed else "FAIL"))
        out.extend(f"  - {_md(m)}" for m in c.messages)
    modules = report.toolchain.get("modules") or []
    if modules:
        out += ["", "## Lean build per module", "", "| module | status | detail |",
                "|---|---|---|"]
        for m in modules:
            detail = "<br>".join(_md(e) for e in m.get("errors", [])) or _md(m["detail"])
            out.append(f"| `{m['module']}` | {m['status']} | {detail} |")
    prem_rows = [r for r in report.rows if r.premises is not None]
    one_reason = _premise_lines(report)
    if len(one_reason) == 2 and one_reason[1].startswith("premises (LeanDojo trace): not run"):
        reason = prem_rows[0].premises.detail if prem_rows[0].premises else ""
        out += ["", "## Premises (LeanDojo trace)", "", f"Not run: {_md(reason)}"]
        prem_rows = []
    elif prem_rows:
        out += ["", "## Premises (LeanDojo trace)", ""]
    if prem_rows:
        for row in prem_rows:
            p = row.premises
            assert p is not None
            out.append(f"- `{row.result.id}`: {p.status}: {_md(p.detail)}")
            for d in p.declarations:
                for kind, names in d.premises.items():
                    out.append(f"  - `{d.name}`, {_md(kind)}: "
                               + ", ".join(f"`{n}`" for n in names))
    reasons = report.not_run_reasons()
    if reasons:
        out += ["", "## Not run", ""]
        out.extend(f"- {col} of {', '.join(f'`{i}`' for i in ids)}: {_md(reason)}"
                   for col, reason, ids in reasons)
    failures = report.failures()
    if failures:
        out += ["", "## Failures", ""]
        out.extend(f"- {_md(m)}" for m in failures)
    out += [
        "",
        "Lean status: `built` (lake build and axiom audit passed), `failed`, `not run`,",
        "`not formalized`. `DISAGREE` means both sides ran and differ: the Lean proof built",
        "and passed the audit, but a Python check of the same result fails. `not run` is",
        "never a pass and never a failure.",
    ]
    return "\n".join(out) + "\n"

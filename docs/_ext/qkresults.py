"""Sphinx extension: one page per registered result, and the dependency graph.

At ``builder-inited`` it writes ``results/<id>.md`` for every row of
:data:`qkforms.registry.RESULTS`: the statement and proof sketch (``docs/results.toml``,
read by :func:`qkforms.results_reference.load_page_text`),
the Lean declarations with their source (read from ``lean/``), the exact Python check
with its source, the hypothesis properties, and the status and the premises (read from
a LeanDojo trace, docs/bridge.md) recorded by the latest
``qkforms verify --json docs/_generated/verify.json`` (if any). It also writes
``results/index.md`` with a dependency graph (inline SVG, laid out here: no Graphviz).
"""

from __future__ import annotations

import html
import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Any

# conf.py puts python/ on sys.path before Sphinx loads this extension
from qkforms import properties
from qkforms.registry import RESULTS
from qkforms.results_reference import load_page_text

DECL_START = re.compile(
    r"^(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*"
    r"(?:theorem|lemma|def|abbrev|structure|instance)\s+(\S+)"
)


def lean_source(root: Path, lean_file: str | None, decl: str) -> str | None:
    """Return the source of a Lean declaration (with its docstring), or None."""
    if not lean_file or not (root / lean_file).exists():
        return None
    lines = (root / lean_file).read_text(encoding="utf-8").splitlines()
    short = decl.rsplit(".", 1)[-1]
    for i, line in enumerate(lines):
        m = DECL_START.match(line)
        if not m or m.group(1).rsplit(".", 1)[-1] != short:
            continue
        start = i
        # include a docstring directly above
        j = i - 1
        if j >= 0 and lines[j].rstrip().endswith("-/"):
            while j >= 0 and "/--" not in lines[j]:
                j -= 1
            start = max(j, 0)
        end = i + 1
        while end < len(lines):
            nxt = lines[end]
            if nxt and not nxt[0].isspace() and (
                DECL_START.match(nxt) or nxt.startswith(("/--", "/-!", "end ", "section",
                                                          "namespace", "open ", "variable"))
            ):
                break
            end += 1
        while end > i and not lines[end - 1].strip():
            end -= 1
        return "\n".join(lines[start:end])
    return None


def check_source(spec: str) -> str | None:
    if not spec or ":" not in spec:
        return None
    module, name = spec.split(":", 1)
    try:
        fn = getattr(importlib.import_module(module), name)
        return inspect.getsource(fn)
    except Exception:  # noqa: BLE001 - the page says the source is unavailable
        return None


def layered_svg(nodes: list[str], edges: list[tuple[str, str]]) -> str:
    """A left-to-right layered drawing of a DAG (edge u -> v: v uses u)."""
    level: dict[str, int] = {}

    def depth(v: str, seen: frozenset[str] = frozenset()) -> int:
        if v in level:
            return level[v]
        preds = [u for u, w in edges if w == v and u not in seen]
        level[v] = 0 if not preds else 1 + max(depth(u, seen | {v}) for u in preds)
        return level[v]

    for v in nodes:
        depth(v)
    cols: dict[int, list[str]] = {}
    for v in nodes:
        cols.setdefault(level[v], []).append(v)
    w, h, gx, gy = 120, 26, 60, 14
    pos = {}
    for c, vs in cols.items():
        for r, v in enumerate(vs):
            pos[v] = (20 + c * (w + gx), 20 + r * (h + gy))
    width = 40 + (max(cols) + 1) * (w + gx)
    height = 40 + max(len(vs) for vs in cols.values()) * (h + gy)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'class="qk-depgraph" font-family="sans-serif" font-size="12">',
        '<defs><marker id="arr" markerWidth="8" markerHeight="8" refX="8" refY="4" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>',
    ]
    for u, v in edges:
        (x1, y1), (x2, y2) = pos[u], pos[v]
        parts.append(
            f'<line x1="{x1 + w}" y1="{y1 + h / 2}" x2="{x2}" y2="{y2 + h / 2}" '
            'stroke="#555" marker-end="url(#arr)"/>'
        )
    for v, (x, y) in pos.items():
        parts.append(
            f'<a href="{html.escape(v)}.html"><rect x="{x}" y="{y}" width="{w}" height="{h}" '
            f'rx="4" fill="#eef3fb" stroke="#3b6fb6"/><text x="{x + w / 2}" y="{y + 17}" '
            f'text-anchor="middle">{html.escape(v)}</text></a>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def display_math(text: str) -> str:
    """Put every ``$$...$$`` on lines of its own (MyST needs display math as a block)."""
    return re.sub(
        r"\$\$(.+?)\$\$", lambda m: "\n\n$$\n" + m.group(1).strip() + "\n$$\n\n", text,
        flags=re.S,
    )


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        text = str(value.get("status", "?"))
        if value.get("detail"):
            text += f" ({value['detail']})"
        return text.replace("|", "\\|")
    return str(value)


def _row(verify: dict[str, Any] | None, rid: str) -> dict[str, Any] | None:
    for row in (verify or {}).get("results", []):
        if row.get("id") == rid:
            return row
    return None


def premises_of(verify: dict[str, Any] | None, rid: str) -> str:
    """The premises of ``rid``'s Lean declarations recorded by ``qkforms verify`` (schema
    qkforms.verify/3: ``results[].lean.premises``), or why there are none."""
    if verify is None:
        return "No `qkforms verify` run was recorded for this build, so no premises."
    row = _row(verify, rid)
    prem = ((row or {}).get("lean") or {}).get("premises")
    if not isinstance(prem, dict):
        return ("Not recorded (the `qkforms verify` run predates the premise report)."
                if row is not None else "This id was not in the recorded `qkforms verify` run.")
    lines = [f"Premise report: **{prem.get('status', '?')}** ({prem.get('detail', '')})."]
    for decl in prem.get("declarations", []):
        groups = decl.get("premises") or {}
        if not groups:
            continue
        lines += ["", f"`{decl.get('name')}` uses:", ""]
        for kind, names in groups.items():
            lines.append(f"* {kind}: " + ", ".join(f"`{n}`" for n in names))
    return "\n".join(lines)


def status_of(verify: dict[str, Any] | None, rid: str) -> str:
    """The row of ``rid`` in a ``qkforms verify --json`` report (schema qkforms.verify/3)."""
    if verify is None:
        return (
            "No `qkforms verify` run was recorded for this build "
            "(run `bash scripts/build-docs.sh`)."
        )
    for row in verify.get("results", []):
        if row.get("id") == rid:
            keys = ["lean", "exact", "property", "verdict"]
            lines = [
                f"Latest `qkforms verify` ({verify.get('generated', 'date unknown')}, "
                f"schema `{verify.get('schema', '?')}`):",
                "",
                "| side | status |",
                "|---|---|",
            ]
            lines += [f"| {k} | {_cell(row.get(k, '—'))} |" for k in keys]
            return "\n".join(lines)
    return "This id was not in the recorded `qkforms verify` run."


def generate(app: Any) -> None:
    """Write ``results/<id>.md`` for every registered result and ``results/index.md``."""
    src = Path(app.srcdir)
    root = src.parent
    data = load_page_text(src / "results.toml")
    verify_path = src / "_generated" / "verify.json"
    verify = json.loads(verify_path.read_text()) if verify_path.exists() else None
    out = src / "results"
    out.mkdir(exist_ok=True)
    for r in RESULTS:
        page = result_page(r, data.get(r.id, {}), root, verify)
        (out / f"{r.id}.md").write_text(page, encoding="utf-8")
    (out / "index.md").write_text(index_page(RESULTS, data), encoding="utf-8")


def result_page(r: Any, entry: dict[str, Any], root: Path, verify: dict[str, Any] | None
                ) -> str:
    """The page of one result: statement, proof sketch, Lean, Python, status, premises."""
    lines = [f"# `{r.id}` — {r.paper}", "", f"*{r.title}*", "", "## Statement", ""]
    statement = entry.get("statement", "(statement missing from docs/results.toml)")
    lines += [display_math(statement.strip())]
    proof = display_math(entry.get("proof", "(none recorded)").strip())
    lines += ["", "## Proof sketch", "", proof, ""]
    uses = entry.get("uses", [])
    if uses:
        lines += ["Uses: " + ", ".join(f"[`{u}`]({u}.md)" for u in uses), ""]
    lines += _lean_section(r, root)
    lines += _python_section(r)
    lines += ["## Status", "", status_of(verify, r.id), ""]
    if r.lean_file:
        lines += ["## Premises", "",
                  "The Mathlib and project declarations the Lean proofs name, from a "
                  "LeanDojo trace of the library (docs/bridge.md, \"Premises\"):", "",
                  premises_of(verify, r.id), ""]
    return "\n".join(lines)


def _lean_section(r: Any, root: Path) -> list[str]:
    lines = ["## Lean", ""]
    if not r.lean_file:
        return lines + ["Not formalized in Lean (Python checks only; see docs/theory.md §14).",
                        ""]
    lines += [f"File: `{r.lean_file}`", ""]
    if not r.lean:
        lines += ["No declaration is registered for this id yet.", ""]
    for decl in r.lean:
        srcs = lean_source(root, r.lean_file, decl) or next(
            (
                found
                for f in sorted((root / "lean").rglob("*.lean"))
                if (found := lean_source(root, str(f.relative_to(root)), decl))
            ),
            None,
        )
        lines += [f"### `{decl}`", ""]
        lines += (
            ["```lean", srcs, "```", ""] if srcs
            else ["(declaration not found in the file)", ""]
        )
    return lines + [
        "These proofs have **not** been compiled where this site was built "
        "(no Lean toolchain); see the status below.",
        "",
    ]


def _python_section(r: Any) -> list[str]:
    lines = ["## Python", "", f"Exact check: `{r.check}`", ""]
    code = check_source(r.check)
    if code:
        lines += ["```python", code.rstrip(), "```", ""]
    if r.properties:
        lines += ["Hypothesis properties (`qkforms.properties`, run by `qkforms verify` "
                  "and by pytest):", ""]
        for name in r.properties:
            prop = properties.all_properties().get(name)
            where = f" in `{prop.module}`" if prop else " (not defined)"
            doc = f": {prop.doc}" if prop and prop.doc else ""
            lines.append(f"* `{name}`{where}{doc}")
        lines.append("")
    return lines


def index_page(results: Any, data: dict[str, dict[str, Any]]) -> str:
    """``results/index.md``: the dependency graph and the table of every result."""
    nodes = [r.id for r in results]
    edges = [(u, r) for r in nodes for u in data.get(r, {}).get("uses", []) if u in nodes]
    index = [
        "# Results",
        "",
        "Every registered result, its Lean declarations, exact check, properties and "
        "latest verification status. Arrows point from a result to the results whose "
        "proofs use it.",
        "",
        "```{raw} html",
        layered_svg(nodes, edges),
        "```",
        "",
        "| id | paper | statement | Lean |",
        "|---|---|---|---|",
    ]
    for r in results:
        index.append(
            f"| [`{r.id}`]({r.id}.md) | {r.paper} | {r.title} | "
            f"{'`' + r.lean_file + '`' if r.lean_file else 'not formalized'} |"
        )
    index += ["", "```{toctree}", ":hidden:", ""] + [r.id for r in results] + ["```", ""]
    return "\n".join(index)


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True}

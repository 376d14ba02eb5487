"""``docs/architecture.md`` matches the code: the API tables of §3 and §6 and the light core.

Every backticked call in the first column of those tables (``name(params) -> Ret(fields)``)
is looked up in the module of the second column; its parameter names, their kinds
(positional or keyword-only after ``*``) and literal defaults must equal the code's, and a
``Ret(fields)`` return names the fields of that NamedTuple/dataclass. Every public function
of ``qkforms`` appears in §3. The import claims of §3 are checked in a fresh interpreter.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import qkforms

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
CALL = re.compile(r"`(?P<name>[A-Za-z_][\w.]*)\((?P<params>[^)`]*)\)(?:\s*->\s*(?P<ret>[^`]*))?`")


def section(number: int) -> str:
    start = re.search(rf"^## {number}\. .*$", DOC, re.M)
    assert start, f"architecture.md has no section {number}"
    nxt = re.search(r"^## \d+\. ", DOC[start.end():], re.M)
    return DOC[start.end(): start.end() + nxt.start() if nxt else len(DOC)]


def table_rows(text: str) -> list[tuple[str, str]]:
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and not set(cells[0]) <= set("-: "):
            rows.append((cells[0], cells[1]))
    return rows


def documented_calls(
    number: int, default_module: str | None
) -> list[tuple[str, Any, re.Match[str]]]:
    """(label, object, match) for every call in the first column of section ``number``."""
    out = []
    for first, second in table_rows(section(number)):
        mod_name = re.fullmatch(r"`(\w+)\.py`", second)
        module = (f"qkforms.{mod_name[1]}" if mod_name else default_module)
        for m in CALL.finditer(first):
            assert module, f"no module for {m[0]}"
            obj: Any = importlib.import_module(module)
            for part in m["name"].split("."):
                obj = getattr(obj, part)
            out.append((m["name"], obj, m))
    return out


def _literal(text: str) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False, None


def check_call(label: str, obj: Any, m: re.Match[str]) -> list[str]:
    problems = []
    params = [p for p in inspect.signature(obj).parameters.values() if p.name != "self"]
    documented = [p.strip() for p in m["params"].split(",") if p.strip()]
    names: list[str] = []
    kw_only = False
    for item in documented:
        if item == "*":
            kw_only = True
            continue
        name, _, default = item.partition("=")
        names.append(name.strip())
        actual = next((p for p in params if p.name == name.strip()), None)
        if actual is None:
            continue
        if kw_only != (actual.kind is inspect.Parameter.KEYWORD_ONLY):
            problems.append(f"{label}: {name} is {'not ' if kw_only else ''}keyword-only in code")
        ok, value = _literal(default) if default else (False, None)
        if ok and actual.default != value:
            problems.append(f"{label}: default of {name} is {actual.default!r}, doc says {default}")
    code_names = [p.name for p in params]
    # a table row may abbreviate trailing keyword parameters only with an explicit "..."
    if names != code_names and not (names == code_names[:len(names)] and "..." in m[0]):
        problems.append(f"{label}: parameters {names} in the doc, {code_names} in the code")
    ret = (m["ret"] or "").strip()
    fields = re.fullmatch(r"(?P<cls>[A-Z]\w*)\((?P<fields>[^)]*)\)", ret)
    if fields:
        cls = getattr(qkforms, fields["cls"], None) or getattr(obj, "__globals__", {}).get(
            fields["cls"])
        assert cls is not None, f"{label}: return type {fields['cls']} not found"
        have = (list(cls._fields) if hasattr(cls, "_fields")
                else [f.name for f in dataclasses.fields(cls)])
        want = [f.strip() for f in fields["fields"].split(",")]
        if have != want:
            problems.append(f"{label}: returns {fields['cls']}({', '.join(have)}), doc says "
                            f"({', '.join(want)})")
    return problems


@pytest.mark.parametrize(("number", "module"), [(3, None), (6, "qkforms.gram")])
def test_api_tables_match_the_code(number: int, module: str | None) -> None:
    calls = documented_calls(number, module)
    assert len(calls) >= (30 if number == 3 else 7)
    problems = [p for label, obj, m in calls for p in check_call(label, obj, m)]
    assert not problems, "\n".join(problems)


def test_every_public_function_is_in_the_core_table() -> None:
    documented = {label.split(".")[0] for label, _, _ in documented_calls(3, None)}
    public = {name for name in qkforms.__all__ if inspect.isfunction(getattr(qkforms, name))}
    public.add("Head")
    assert public <= documented, f"missing from architecture.md §3: {public - documented}"


def test_reduce_heads_returns_what_the_doc_says() -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((2, 2, 9))
    red = qkforms.reduce_heads(Q, K)
    assert red._fields == ("form", "basis", "Q_red", "K_red")
    assert red.basis.shape == (9, 4) and red.Q_red.shape == red.K_red.shape == (2, 4)
    np.testing.assert_allclose(red.basis.T @ red.basis, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(red.Q_red, Q @ red.basis, atol=1e-12)
    np.testing.assert_allclose(red.K_red, K @ red.basis, atol=1e-12)
    np.testing.assert_allclose(red.form, red.basis.T @ (K.T @ Q) @ red.basis, atol=1e-12)


def _third_party_after(statement: str) -> list[str]:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        f"{statement}\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "third = sorted(m for m in new if m not in sys.stdlib_module_names\n"
        "               and not m.startswith('_') and m not in ('qkforms', 'cython_runtime'))\n"
        "import json; print(json.dumps(third))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def test_the_core_imports_numpy_only() -> None:
    assert _third_party_after("import qkforms") == ["numpy"]


def test_the_other_parts_load_nothing_heavy_on_import() -> None:
    assert _third_party_after("import qkforms.exact, qkforms.checks") == ["flint", "numpy"]
    assert _third_party_after(
        "import qkforms.gram, qkforms.models, qkforms.survey, qkforms.report"
    ) == ["numpy"]
    # qkforms behaviour runs torch and transformers only when it scores a model
    assert _third_party_after(
        "import qkforms.behaviour, qkforms.behaviour.probe_run, qkforms.behaviour.command"
    ) == ["numpy"]
    # the statistics import the exact enclosures (certified tables): python-flint, a core
    # dependency; still no heavy backend
    assert _third_party_after("import qkforms.stats") == ["flint", "numpy"]


def test_records_and_mirror_names_in_the_prose() -> None:
    from qkforms import exact
    from qkforms.checks import CheckResult
    from qkforms.models.records import HeadWeights, LayerWeights

    def fields_in_doc(cls: type) -> list[str]:
        m = re.search(rf"`{cls.__name__}\((?P<body>.*?)\)`", DOC.replace("\n", " "))
        assert m, f"architecture.md does not spell out {cls.__name__}(...)"
        body = re.sub(r"\s*\([^()]*\)", "", m["body"])  # drop shapes like "(n_q, n, N)"
        return [f.strip() for f in body.split(",")]

    for cls in (HeadWeights, LayerWeights, CheckResult):
        assert fields_in_doc(cls) == [f.name for f in dataclasses.fields(cls)], cls
    mirror = re.search(r"Exact mirror: `qkforms.exact` \((?P<body>[^)]*\))", DOC)
    assert mirror
    for name in re.findall(r"`(\w+)(?:\(|`)", mirror["body"]):
        assert hasattr(exact, name), f"qkforms.exact has no {name}"

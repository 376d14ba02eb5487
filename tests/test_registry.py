"""Drift tests: the registry, the Lean sources, the checks, the tests and the docs agree.

Each test fails when one part moves without the others: an id tagged in Lean but
not registered, a registered declaration that ``lean/`` does not declare, a check
missing from ``qkforms.checks``, a registered property missing from
``qkforms.properties`` (or one defined there but not registered), a stale
``lean/scripts/Axioms.lean``, or a registry that no longer matches the Lean file layout of
``docs/architecture.md`` §2 (its table of ids, §1, is generated from the registry).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qkforms import properties, registry
from qkforms.errors import QKFormsError
from qkforms.registry import LEAN_FORMALIZED, LEAN_NOT_FORMALIZED, check_function_name
from qkforms.results_reference import PAGE_TEXT, load_page_text, page_text_problems
from qkforms.verify.checkout import find_root
from qkforms.verify.lean_project import (
    AXIOMS_SCRIPT,
    render_axioms_script,
    scan,
    static_checks,
)
from qkforms.verify.python_side import resolve_check

ROOT = find_root(Path(__file__).resolve().parent)
RESULTS = registry.RESULTS
NOT_FORMALIZED = {"cor1", "cor2", "prop5", "lemma7", "lemma8", "lemma9", "lemma1", "prop1",
                  "prop3"}


def _architecture_section(number: int) -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    m = re.search(rf"^## {number}\..*?(?=^## )", text, re.MULTILINE | re.DOTALL)
    assert m is not None, f"docs/architecture.md has no section {number}"
    return m.group(0)


def architecture_layout() -> dict[str, list[str]]:
    """Lean file -> the ids (or id patterns like ``thm4.*``) it holds, from §2."""
    out = {}
    for m in re.finditer(r"^\| `(lean/[^`]+\.lean)` \|[^|]*\|([^|]*)\|", _architecture_section(2),
                         re.MULTILINE):
        out[m.group(1)] = re.findall(r"`([^`]+)`", m.group(2))
    return out


# ---------------------------------------------------------------------- registry shape


def test_ids_are_unique() -> None:
    """(The table of ids in docs/architecture.md is generated: tests/test_results_reference.py.)"""
    ids = registry.ids()
    assert len(ids) == len(set(ids))


def test_unformalized_rows_say_so() -> None:
    unformalized = {r.id for r in RESULTS if r.lean_status == LEAN_NOT_FORMALIZED}
    assert unformalized == NOT_FORMALIZED
    for r in RESULTS:
        if r.id in NOT_FORMALIZED:
            assert r.lean == () and r.lean_file is None
        else:
            assert r.lean_status == LEAN_FORMALIZED
            assert r.lean, f"{r.id}: formalized but no Lean declaration registered"


def test_lean_files_follow_the_architecture_layout() -> None:
    layout = architecture_layout()
    for r in RESULTS:
        if r.lean_file is None:
            continue
        patterns = layout.get(r.lean_file)
        assert patterns is not None, f"{r.id}: {r.lean_file} is not in architecture.md §2"
        assert any(p == r.id or (p.endswith(".*") and r.group == p[:-2]) for p in patterns), (
            f"{r.id}: architecture.md §2 puts {patterns} in {r.lean_file}"
        )


def test_declaration_names_are_fully_qualified() -> None:
    for r in RESULTS:
        for d in r.lean:
            assert d.startswith("QKForms."), f"{r.id}: {d} is not in namespace QKForms"
            assert " " not in d


def test_check_names_follow_the_convention() -> None:
    """Each row names the module defining its check (go-to-definition from the id)."""
    for r in RESULTS:
        module, _, name = r.check.partition(":")
        assert module.startswith("qkforms.checks.") and name == check_function_name(r.id)
        func = resolve_check(r.check)
        assert func.__module__ == module, f"{r.id}: {name} is defined in {func.__module__}"


def test_select_and_get() -> None:
    thm4 = [r.id for r in registry.select(["thm4"])]
    assert thm4 == [i for i in registry.ids() if i.startswith("thm4.")]
    assert len(thm4) == 6
    assert registry.select([]) == list(RESULTS)
    with pytest.raises(QKFormsError, match="unknown result id 'thm9'"):
        registry.get("thm9")
    with pytest.raises(QKFormsError, match="unknown result id or group 'thm"):
        registry.select(["thm"])


# ------------------------------------------------------------------------ Lean sources


@pytest.mark.parametrize(
    "name", ["declarations", "tags", "forbidden", "pins", "imports", "axioms-script",
             "house-rules", "evidence", "import-layers"]
)
def test_static_lean_check_passes_on_the_repository(name: str) -> None:
    checks = {c.name: c for c in static_checks(ROOT, RESULTS)}
    assert checks[name].messages == []


def test_every_library_module_has_an_import_layer() -> None:
    from qkforms.verify.lean_project import IMPORT_LAYERS

    layered = {m for _, mods in IMPORT_LAYERS for m in mods}
    modules = {p.stem for p in (ROOT / "lean" / "QKForms").glob("*.lean")}
    assert modules == layered


def test_import_layer_check_catches_an_upward_import(tmp_path) -> None:  # noqa: ANN001
    import shutil

    from qkforms.verify.lean_project import check_import_layers

    shutil.copytree(ROOT / "lean", tmp_path / "lean")
    path = tmp_path / "lean" / "QKForms" / "RankBalance.lean"
    path.write_text(path.read_text().replace("import QKForms.Basic",
                                             "import QKForms.Basic\nimport QKForms.Profile"))
    msgs = check_import_layers(scan(tmp_path)).messages
    assert "lean/QKForms/RankBalance.lean: QKForms.RankBalance (Theorem 3 chain) imports " \
        "QKForms.Profile (profile chain)" in msgs
    assert any(m.startswith("lean/QKForms/BalancedSignature.lean") for m in msgs)


def test_every_lean_tag_names_a_registered_formalized_result() -> None:
    formalized = {r.id for r in RESULTS if r.lean_status == LEAN_FORMALIZED}
    lean = scan(ROOT)
    tagged = {tag for f in lean.files.values() for tag, _ in f.tags}
    assert tagged <= formalized, f"tags without a formalized registry row: {tagged - formalized}"
    registered = {d for r in RESULTS for d in r.lean}
    tagged_decls = {d.name for f in lean.files.values() for d in f.declarations
                    if set(d.tags) & formalized}
    assert tagged_decls == registered


def test_committed_axioms_script_is_up_to_date() -> None:
    path = ROOT / AXIOMS_SCRIPT
    assert path.read_text(encoding="utf-8") == render_axioms_script(RESULTS), (
        "regenerate with `qkforms verify --write-axioms-script`"
    )


# ------------------------------------------------------------------ Python and docs


@pytest.mark.parametrize("result_id", registry.ids())
def test_registered_check_exists(result_id: str) -> None:
    func = resolve_check(registry.get(result_id).check)
    assert callable(func)


def test_run_check_dispatcher_exists() -> None:
    checks = pytest.importorskip("qkforms.checks")
    assert callable(getattr(checks, "run_check", None))


def test_registered_properties_exist_and_are_named_for_their_id() -> None:
    defined = properties.all_properties()
    for r in RESULTS:
        for name in r.properties:
            assert name in defined, f"{r.id}: property {name} is not in qkforms.properties"
            assert name.startswith(r.id.replace(".", "_") + "_"), f"{r.id}: {name}"


def test_every_result_has_properties_and_every_property_is_registered_once() -> None:
    registered = [n for r in RESULTS for n in r.properties]
    assert len(registered) == len(set(registered))
    assert sorted(registered) == properties.names()
    assert all(r.properties for r in RESULTS)


def test_docs_pages_exist() -> None:
    """Each docs page exists, or is the generated page of an id with a docs/results.toml entry."""
    entries = load_page_text(ROOT / PAGE_TEXT)
    assert page_text_problems(entries, RESULTS) == []
    for r in RESULTS:
        page = r.docs.split("#", 1)[0]
        if page != f"docs/results/{r.id}.md":
            assert (ROOT / page).is_file(), f"{r.id}: docs page {page} does not exist"

"""Reading what ``lake`` says (``qkforms.verify.lake``): axioms and per-module errors."""

from __future__ import annotations

from qkforms.verify.lake import module_errors, parse_axioms


def test_parse_axioms_wrapped_prefixed_and_primed() -> None:
    out = (
        "lean/scripts/Axioms.lean:3:0: info: 'QKForms.long_name' depends on axioms: [propext,\n"
        " Classical.choice,\n Quot.sound]\n"
        "'QKForms.h'' depends on axioms: [sorryAx]\n"
        "info: 'QKForms.pure' does not depend on any axioms\n"
        "lean/scripts/Axioms.lean:9:15: error: unknown constant 'QKForms.gone'\n"
    )
    assert parse_axioms(out) == {
        "QKForms.long_name": ("propext", "Classical.choice", "Quot.sound"),
        "QKForms.h'": ("sorryAx",),
        "QKForms.pure": (),
    }


def test_module_errors_keep_the_first_entries_of_the_module_only() -> None:
    # Lake's log entries (`LogEntry.toString`: "error: FILE:L:C: msg", continuation lines
    # of a multi-line message after it), as `lake build +QKForms.RankBalance` prints them
    log = (
        "✔ [10/12] Built QKForms.Basic (1.1s)\n"
        "✖ [11/12] Building QKForms.RankBalance (3.2s)\n"
        "error: ././././lean/QKForms/RankBalance.lean:40:2: unsolved goals\n"
        "case h\n"
        "⊢ 0 < n\n"
        "warning: lean/QKForms/RankBalance.lean:3:0: unused variable `x`\n"
        "error: lean/QKForms/Basic.lean:1:0: not this module\n"
        "error: lean/QKForms/RankBalance.lean:77:9: unknown identifier 'foo'\n"
        "error: Lean exited with code 1\n"
        "Some required targets logged failures:\n"
        "- QKForms.RankBalance\n"
        "error: build failed\n"
    )
    assert module_errors(log, "lean/QKForms/RankBalance.lean") == (
        "error: lean/QKForms/RankBalance.lean:40:2: unsolved goals",
        "case h",
        "⊢ 0 < n",
        "error: lean/QKForms/RankBalance.lean:77:9: unknown identifier 'foo'",
    )
    assert module_errors(log, "lean/QKForms/RankBalance.lean", limit=2) == (
        "error: lean/QKForms/RankBalance.lean:40:2: unsolved goals", "case h")
    assert module_errors(log, "lean/QKForms/Profile.lean") == ()
    # a file name is matched literally, not as a pattern or a prefix
    assert module_errors(log, "lean/QKForms/Rank.lean") == ()

"""The toolchain-free Lean source reader of ``qkforms verify`` (``lean_source``)."""

from __future__ import annotations

import pytest

from qkforms.verify.lean_source import (
    declarations,
    forbidden_tokens,
    imports,
    strip_lean,
    tags_in,
)

# ---------------------------------------------------------------- comment/string stripper


def test_strip_keeps_length_and_lines() -> None:
    src = 'a /- x\n/- y -/\n -/ b -- c\n"s\\"t" d\n'
    code = strip_lean(src).code
    assert len(code) == len(src)
    assert code.count("\n") == src.count("\n")
    assert code.split() == ["a", "b", "d"]


def test_nested_block_comment_hides_everything_inside() -> None:
    src = "/- outer /- inner sorry -/ still comment sorry -/ theorem t : True := trivial"
    s = strip_lean(src)
    assert "sorry" not in s.code
    assert "theorem t" in s.code
    assert [c.kind for c in s.comments] == ["block"]


def test_comment_kinds() -> None:
    src = "/-! module -/\n/-- doc -/\n/- block -/\n-- line\n"
    assert [c.kind for c in strip_lean(src).comments] == ["module", "doc", "block", "line"]


def test_comment_markers_inside_strings_are_not_comments() -> None:
    src = 'def s := "-- not a comment /- nor this" \ndef t := 1 -- real'
    s = strip_lean(src)
    assert [c.text for c in s.comments] == ["-- real"]
    assert "def t := 1" in s.code


def test_keep_strings_keeps_literals_but_not_comments() -> None:
    src = 'require mathlib from git "u" @ "v4.27.0" -- "v0"'
    code = strip_lean(src, keep_strings=True).code
    assert '"v4.27.0"' in code and '"v0"' not in code


def test_char_literal_and_primed_identifiers() -> None:
    # '"' is a char literal (must not open a string); h' is an identifier, not a char literal
    src = "def q := '\"'\ntheorem x (h' : True) : True := h'\n-- tail"
    s = strip_lean(src)
    assert "theorem x (h' : True) : True := h'" in s.code
    assert [c.kind for c in s.comments] == ["line"]


def test_unterminated_comment_runs_to_end() -> None:
    s = strip_lean("def a := 1 /- open sorry")
    assert "sorry" not in s.code and "def a := 1" in s.code


# ------------------------------------------------------------------------ declarations


SOURCE = """\
/-
Copyright header mentions theorem fake : False
-/
import Mathlib
import QKForms.Basic

/-! # Title
[qkforms:thm3] is mentioned in the module doc. -/

namespace QKForms

open Matrix

variable {ι : Type*}

/-- Theorem 3 of the paper. [qkforms:thm3] -/
theorem signature_balanced (n : ℕ) : n = n := rfl

section Helpers

/-- a helper -/
private lemma helper' : True := trivial

@[simp] lemma helper_simp : (1 : ℕ) = 1 := rfl

end Helpers

noncomputable section

/-- Definition 6 of the paper. [qkforms:def6] -/
@[simp]
noncomputable def profile.{u} (x : ℕ) : ℕ := x

end

namespace Inner.Deep

/-- Lemma 4 of the paper. [qkforms:lemma4] [qkforms:def6] -/
protected theorem scale : True := trivial

instance (priority := 100) instNat : Inhabited ℕ := ⟨0⟩

instance : Inhabited Bool := ⟨true⟩

end Inner.Deep

theorem _root_.Matrix.outside : True := trivial

structure Pair where
  a : ℕ

example : True := trivial

end QKForms

abbrev Top := ℕ
"""


def test_declarations_with_namespaces_and_sections() -> None:
    got = [(d.kind, d.name) for d in declarations(SOURCE)]
    assert got == [
        ("theorem", "QKForms.signature_balanced"),
        ("lemma", "QKForms.helper'"),
        ("lemma", "QKForms.helper_simp"),
        ("def", "QKForms.profile"),
        ("theorem", "QKForms.Inner.Deep.scale"),
        ("instance", "QKForms.Inner.Deep.instNat"),
        ("theorem", "Matrix.outside"),
        ("structure", "QKForms.Pair"),
        ("abbrev", "Top"),
    ]


def test_declaration_tags_and_lines() -> None:
    by_name = {d.name: d for d in declarations(SOURCE)}
    assert by_name["QKForms.signature_balanced"].tags == ("thm3",)
    # an attribute between the docstring and the keyword keeps the association
    assert by_name["QKForms.profile"].tags == ("def6",)
    assert by_name["QKForms.Inner.Deep.scale"].tags == ("lemma4", "def6")
    assert by_name["QKForms.helper'"].tags == ()
    assert by_name["QKForms.helper_simp"].tags == ()  # no docstring of its own
    line = SOURCE.splitlines().index("theorem signature_balanced (n : ℕ) : n = n := rfl") + 1
    assert by_name["QKForms.signature_balanced"].line == line


def test_tags_in_collects_every_comment_tag() -> None:
    assert [t for t, _ in tags_in(SOURCE)] == ["thm3", "thm3", "def6", "lemma4", "def6"]


def test_declarations_after_open_in_and_set_option_in() -> None:
    src = (
        "namespace N\n"
        "open Matrix in\n/-- doc [qkforms:a] -/\ntheorem t1 : True := trivial\n"
        "open Matrix Finset in theorem t2 : True := trivial\n"
        "set_option maxHeartbeats 400000 in\n@[simp] lemma t3 : True := trivial\n"
        "scoped instance t4 : Inhabited Nat := ⟨0⟩\n"
        "end N\n"
    )
    got = [(d.name, d.tags) for d in declarations(src)]
    assert got == [("N.t1", ("a",)), ("N.t2", ()), ("N.t3", ()), ("N.t4", ())]


def test_generated_axiom_script_has_no_forbidden_token() -> None:
    from qkforms.registry import Result
    from qkforms.verify.lean_project import render_axioms_script

    r = Result("x", "Lemma 0", "t", lean=("QKForms.a", "QKForms.b"), lean_file="lean/X.lean")
    assert forbidden_tokens(render_axioms_script([r])) == []
    assert declarations(render_axioms_script([r])) == []


def test_commented_out_declaration_is_not_declared() -> None:
    src = "namespace A\n/- theorem gone : True := trivial -/\n-- lemma gone2 : True\nend A\n"
    assert declarations(src) == []


def test_imports() -> None:
    assert imports(SOURCE) == ["Mathlib", "QKForms.Basic"]


# ------------------------------------------------------------------------ forbidden tokens


def test_forbidden_tokens_ignore_comments_docstrings_and_strings() -> None:
    src = (
        '/-- never `sorry`, never `admit` -/\ntheorem a : True := trivial\n'
        '-- native_decide here is a comment\ndef s : String := "sorry admit axiom"\n'
        "/- axiom fake : False -/\ntheorem sorryAx_free (h_sorry : True) : True := h_sorry\n"
    )
    assert forbidden_tokens(src) == []


@pytest.mark.parametrize(
    ("snippet", "token"),
    [
        ("theorem a : True := by\n  sorry", "sorry"),
        ("theorem a : True := sorry", "sorry"),
        ("theorem a : True := by admit", "admit"),
        ("theorem a : 2 + 2 = 4 := by native_decide", "native_decide"),
        ("axiom cheat : False", "axiom"),
        ("private axiom cheat : False", "axiom"),
        ("theorem a : True := by\n  exact (sorry)", "sorry"),
    ],
)
def test_forbidden_tokens_in_code(snippet: str, token: str) -> None:
    src = "namespace X\n" + snippet + "\nend X\n"
    hits = forbidden_tokens(src)
    assert [h.token for h in hits] == [token]
    assert src.splitlines()[hits[0].line - 1].strip() == hits[0].text

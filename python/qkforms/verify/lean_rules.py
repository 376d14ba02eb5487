"""House rules of the Lean sources that a reader can check without a compiler.

Each rule targets an error that review found in this project before a build could run:

* ``noncomputable`` -- a module that defines anything (``def``, ``abbrev``,
  ``instance``) opens ``noncomputable section``: definitions over ℝ that use division,
  inverses, square roots or eigenvalues have no executable code, and a plain ``def``
  using them does not compile;
* ``first`` -- every ``first | tac₁ | tac₂`` carries a comment ``closes by: …`` naming the
  branch expected to close the goal at the pinned Mathlib (the first branch that does not
  *fail* wins, even if it leaves a goal such as ``False``, so a fallback chain must be a
  decision, not a hope);
* ``notation`` -- scoped notation is used only after its scope is opened: ``ᵀ``, ``ᴴ``,
  ``*ᵥ``, ``ᵥ*`` need ``open Matrix`` (or ``open scoped Matrix``); ``⟪x, y⟫_ℝ`` needs
  ``InnerProductSpace``; ``⟪x, y⟫`` without subscript needs ``RealInnerProductSpace``;
  ``𝓝`` needs ``Topology``. (``∀ᵐ``, ``⬝ᵥ`` and ``∑`` are global notation at the pin.)

Examples
--------
>>> [str(v) for v in house_rule_violations("def half : ℝ := 1 / 2\\n", "A.lean")]
['A.lean:1: noncomputable: the module defines `half` but does not open `noncomputable section`']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qkforms.verify.lean_source import declarations, strip_lean

__all__ = ["NOTATION_SCOPES", "RuleViolation", "house_rule_violations"]

#: scoped notation -> (a regex matching a use in code, the namespaces whose opening
#: provides it, where the scoped declaration was read)
NOTATION_SCOPES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "ᵀ": (r"ᵀ", ("Matrix",),
          "Mathlib/LinearAlgebra/Matrix/Defs.lean @02cb58e2: scoped postfix \"ᵀ\""),
    "ᴴ": (r"ᴴ", ("Matrix",),
          "Mathlib/LinearAlgebra/Matrix/ConjTranspose.lean (scope Matrix, per Defs.lean)"),
    "*ᵥ": (r"\*ᵥ", ("Matrix",), "Mathlib/Data/Matrix/Mul.lean @00364c2c: scope Matrix"),
    "ᵥ*": (r"ᵥ\*", ("Matrix",), "Mathlib/Data/Matrix/Mul.lean @00364c2c: scope Matrix"),
    "⟪x, y⟫_ℝ": (r"⟪[^⟪⟫]*⟫_ℝ", ("InnerProductSpace",),
                 "Mathlib/Analysis/InnerProductSpace/Defs.lean: scope InnerProductSpace"),
    "⟪x, y⟫": (r"⟪[^⟪⟫]*⟫(?!_)", ("RealInnerProductSpace",),
               "Mathlib/Analysis/InnerProductSpace/Defs.lean: scope RealInnerProductSpace"),
    "𝓝": (r"𝓝", ("Topology",), "Mathlib/Topology/Defs/Filter.lean: scoped[Topology] 𝓝"),
}


@dataclass(frozen=True)
class RuleViolation:
    """A house-rule violation at a line of a Lean file."""

    path: str
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.message}"


_OPEN_RE = re.compile(r"(?m)^[ \t]*open\b(?:[ \t]+scoped\b)?([^\n]*)")


def _opens(code: str) -> list[tuple[int, str]]:
    """(offset, namespace) for every namespace an ``open`` command names."""
    out: list[tuple[int, str]] = []
    for m in _OPEN_RE.finditer(code):
        names = m.group(1).split(" in")[0]
        names = re.sub(r"\([^)]*\)|hiding.*|renaming.*", " ", names)
        for ns in names.split():
            out.append((m.start(), ns))
    return out


def house_rule_violations(source: str, path: str) -> list[RuleViolation]:
    """Check a Lean source against the house rules (see the module docstring).

    Parameters
    ----------
    source : str
        The file's text.
    path : str
        The path reported in violations.

    Examples
    --------
    >>> src = '''open Filter
    ... theorem t (S : Matrix (Fin 2) (Fin 2) ℝ) : Sᵀ = Sᵀ := by
    ...   first
    ...   | rfl
    ...   | simp
    ... '''
    >>> for v in house_rule_violations(src, "B.lean"):
    ...     print(v)
    B.lean:2: notation: `ᵀ` is used but no enclosing `open` provides it (open Matrix)
    B.lean:3: first: `first` without a `-- closes by: …` comment naming the expected branch
    """
    stripped = strip_lean(source)
    code = stripped.code
    lines = source.splitlines()
    found: list[RuleViolation] = []
    defs = [d for d in declarations(source) if d.kind in ("def", "abbrev", "instance")]
    if defs and not re.search(r"(?m)^[ \t]*noncomputable[ \t]+section\b", code):
        found.append(RuleViolation(
            path, defs[0].line, "noncomputable",
            f"the module defines `{defs[0].name.split('.')[-1]}` but does not open "
            "`noncomputable section`"))
    for m in re.finditer(r"(?<![\w.'])first(?![\w'])", code):
        line = stripped.line_of(m.start())
        window = lines[max(0, line - 3):line + 1]
        if not any(re.search(r"--.*closes by:", w) for w in window):
            found.append(RuleViolation(
                path, line, "first",
                "`first` without a `-- closes by: …` comment naming the expected branch"))
    opens = _opens(code)
    for symbol, (pattern, scopes, _where) in NOTATION_SCOPES.items():
        hit = re.search(pattern, code)
        if hit is None:
            continue
        if not any(off < hit.start() and (ns in scopes or ns.split(".")[-1] in scopes)
                   for off, ns in opens):
            found.append(RuleViolation(
                path, stripped.line_of(hit.start()), "notation",
                f"`{symbol}` is used but no enclosing `open` provides it "
                f"(open {' or '.join(scopes)})"))
    found.sort(key=lambda v: v.line)
    return found

import Lake
open Lake DSL

/-!
Lake configuration of the `qkforms` Lean library (Lean 4 v4.27.0, Mathlib v4.27.0).
Build with `lake exe cache get && lake build`.
-/

package qkforms where
  -- Same option syntax as Mathlib's own lakefile (`mathlibLeanOptions`).
  leanOptions := #[
    ⟨`pp.unicode.fun, true⟩,
    ⟨`autoImplicit, false⟩
  ]

require mathlib from git "https://github.com/leanprover-community/mathlib4" @ "v4.27.0"

/-- The library `QKForms`: root module `lean/QKForms.lean`, modules `lean/QKForms/*.lean`. -/
@[default_target]
lean_lib QKForms where
  srcDir := "lean"

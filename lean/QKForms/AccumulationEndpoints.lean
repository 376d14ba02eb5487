/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.Accumulation

/-!
# The endpoints of the accumulation curve (Theorem 5 of the paper)

Theorem 5 of the paper (docs/theory.md §8) says that the limit profile
`accumulationLimit ρ = (0, 2ρ, (1-ρ)₊², (ρ-1)₊²) / (1 + ρ²)` traces the edge `{a = 0, d = 0}` of
`Δ₃` from the vertex `c = 1` (as `ρ → 0`) to the vertex `b = 1` (at `ρ = 1`), and the edge
`{a = 0, c = 0}` from `b = 1` to the vertex `d = 1` (as `ρ → ∞`). `QKForms/Accumulation.lean`
proves that the limit lies on these edges and that its `b`-coordinate is a strictly monotone
bijection on each; this file proves the endpoints.

## Main statements

* `QKForms.tendsto_accumulationLimit_zero` (`[qkforms:thm5]`): `accumulationLimit ρ → (0, 0, 1, 0)`
  as `ρ → 0⁺`.
* `QKForms.accumulationLimit_one` (`[qkforms:thm5]`): `accumulationLimit 1 = (0, 1, 0, 0)`.
* `QKForms.tendsto_accumulationLimit_atTop` (`[qkforms:thm5]`):
  `accumulationLimit ρ → (0, 0, 0, 1)` as `ρ → ∞`.

## Encoding

Points of `Δ₃` are `(a, b, c, d) : ℝ × ℝ × ℝ × ℝ` with the product topology; the vertex
`c = 1` is `(0, 0, 1, 0)` and the vertex `d = 1` is `(0, 0, 0, 1)`. "`ρ → 0⁺`" is the filter
`𝓝[>] 0` and "`ρ → ∞`" is `atTop`. The limit at `0⁺` is continuity at `0`; the limit at `∞`
uses `2ρ/(1+ρ²) = 2ρ⁻¹/(1+ρ⁻²)` (`QKForms.edgeB_inv`) and, for `ρ ≥ 1`,
`(ρ-1)²/(1+ρ²) = 1 - 2ρ/(1+ρ²)` (`QKForms.one_sub_edgeB`).
-/

open Filter Topology

noncomputable section

namespace QKForms

/-- The `c`-coordinate `(1-ρ)₊²/(1+ρ²)` of the limit is continuous. -/
theorem continuous_edgeC : Continuous (fun ρ : ℝ => max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2)) := by
  -- `Continuous.max` (Mathlib/Topology/Order/OrderClosed.lean), `Continuous.sub` and
  -- `Continuous.pow` carry `@[fun_prop]` and `@[continuity]`; both tactics close or fail
  -- closes by: `fun_prop` (first branch)
  have hf : Continuous (fun ρ : ℝ => max (1 - ρ) 0 ^ 2) := by
    first
    | fun_prop
    | continuity
  have hg : Continuous (fun ρ : ℝ => 1 + ρ ^ 2) := by fun_prop
  -- `Continuous.div` (Mathlib/Topology/Algebra/GroupWithZero.lean) concludes `Continuous (f / g)`
  exact hf.div hg fun ρ => by positivity

/-- The `d`-coordinate `(ρ-1)₊²/(1+ρ²)` of the limit is continuous. -/
theorem continuous_edgeD : Continuous (fun ρ : ℝ => max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2)) := by
  -- closes by: `fun_prop` (first branch), as in `continuous_edgeC`
  have hf : Continuous (fun ρ : ℝ => max (ρ - 1) 0 ^ 2) := by
    first
    | fun_prop
    | continuity
  have hg : Continuous (fun ρ : ℝ => 1 + ρ ^ 2) := by fun_prop
  exact hf.div hg fun ρ => by positivity

/-- **Theorem 5 of the paper, endpoint `ρ → 0⁺`**: the limit profile tends to the vertex
`c = 1` of `Δ₃`, `accumulationLimit ρ → (0, 0, 1, 0)` as `ρ → 0⁺`. Uses `Continuous.tendsto'`
(Mathlib/Topology/Continuous.lean) and `nhdsWithin_le_nhds`. [qkforms:thm5] -/
theorem tendsto_accumulationLimit_zero :
    Tendsto accumulationLimit (𝓝[>] 0) (𝓝 (0, 0, 1, 0)) := by
  have h0 : Tendsto (fun _ : ℝ => (0 : ℝ)) (𝓝[>] 0) (𝓝 0) := tendsto_const_nhds
  have hb : Tendsto (fun ρ : ℝ => 2 * ρ / (1 + ρ ^ 2)) (𝓝[>] 0) (𝓝 0) :=
    (continuous_edgeB.tendsto' 0 0 (by norm_num)).mono_left nhdsWithin_le_nhds
  have hc : Tendsto (fun ρ : ℝ => max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2)) (𝓝[>] 0) (𝓝 1) := by
    have h : (fun ρ : ℝ => max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2)) 0 = 1 := by
      show max ((1 : ℝ) - 0) 0 ^ 2 / (1 + (0 : ℝ) ^ 2) = 1
      rw [sub_zero, max_eq_left zero_le_one]
      norm_num
    exact (continuous_edgeC.tendsto' 0 1 h).mono_left nhdsWithin_le_nhds
  have hd : Tendsto (fun ρ : ℝ => max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2)) (𝓝[>] 0) (𝓝 0) := by
    have h : (fun ρ : ℝ => max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2)) 0 = 0 := by
      show max ((0 : ℝ) - 1) 0 ^ 2 / (1 + (0 : ℝ) ^ 2) = 0
      rw [max_eq_right (by norm_num : (0 : ℝ) - 1 ≤ 0)]
      norm_num
    exact (continuous_edgeD.tendsto' 0 0 h).mono_left nhdsWithin_le_nhds
  -- `accumulationLimit ρ` is by definition this quadruple
  show Tendsto (fun ρ : ℝ => ((0 : ℝ), 2 * ρ / (1 + ρ ^ 2), max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2),
      max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2))) (𝓝[>] 0) (𝓝 ((0 : ℝ), (0 : ℝ), (1 : ℝ), (0 : ℝ)))
  exact h0.prodMk_nhds (hb.prodMk_nhds (hc.prodMk_nhds hd))

/-- **Theorem 5 of the paper, the vertex `b = 1`**: at `ρ = 1` the limit profile is the vertex
`b = 1` of `Δ₃`, where the two edges meet. [qkforms:thm5] -/
theorem accumulationLimit_one : accumulationLimit 1 = (0, 1, 0, 0) := by
  show ((0 : ℝ), 2 * 1 / (1 + (1 : ℝ) ^ 2), max ((1 : ℝ) - 1) 0 ^ 2 / (1 + (1 : ℝ) ^ 2),
      max ((1 : ℝ) - 1) 0 ^ 2 / (1 + (1 : ℝ) ^ 2)) = ((0 : ℝ), (1 : ℝ), (0 : ℝ), (0 : ℝ))
  rw [sub_self, max_self]
  norm_num

/-- **Theorem 5 of the paper, endpoint `ρ → ∞`**: the limit profile tends to the vertex
`d = 1` of `Δ₃`, `accumulationLimit ρ → (0, 0, 0, 1)` as `ρ → ∞`. Uses
`tendsto_inv_atTop_zero` (Mathlib/Topology/Algebra/Order/Field.lean), `Filter.Tendsto.comp`,
`Filter.Tendsto.congr'` and `Filter.Tendsto.sub`. [qkforms:thm5] -/
theorem tendsto_accumulationLimit_atTop :
    Tendsto accumulationLimit atTop (𝓝 (0, 0, 0, 1)) := by
  have h0 : Tendsto (fun _ : ℝ => (0 : ℝ)) atTop (𝓝 0) := tendsto_const_nhds
  have h1 : Tendsto (fun _ : ℝ => (1 : ℝ)) atTop (𝓝 1) := tendsto_const_nhds
  -- `b(ρ) = b(ρ⁻¹)` for `ρ ≠ 0`, and `ρ⁻¹ → 0`
  have hinv : Tendsto (fun ρ : ℝ => 2 * ρ⁻¹ / (1 + ρ⁻¹ ^ 2)) atTop (𝓝 0) :=
    (continuous_edgeB.tendsto' 0 0 (by norm_num)).comp tendsto_inv_atTop_zero
  have hb : Tendsto (fun ρ : ℝ => 2 * ρ / (1 + ρ ^ 2)) atTop (𝓝 0) := by
    refine hinv.congr' ?_
    filter_upwards [eventually_gt_atTop 0] with ρ hρ
    exact edgeB_inv hρ.ne'
  -- `c(ρ) = 0` for `ρ ≥ 1`
  have hc : Tendsto (fun ρ : ℝ => max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2)) atTop (𝓝 0) := by
    refine h0.congr' ?_
    filter_upwards [eventually_ge_atTop 1] with ρ hρ
    show (0 : ℝ) = max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2)
    rw [max_eq_right (by linarith : 1 - ρ ≤ 0)]
    ring
  -- `d(ρ) = 1 - b(ρ)` for `ρ ≥ 1`
  have hd : Tendsto (fun ρ : ℝ => max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2)) atTop (𝓝 1) := by
    have h : Tendsto (fun ρ : ℝ => 1 - 2 * ρ / (1 + ρ ^ 2)) atTop (𝓝 (1 - 0)) := h1.sub hb
    rw [sub_zero] at h
    refine h.congr' ?_
    filter_upwards [eventually_ge_atTop 1] with ρ hρ
    show 1 - 2 * ρ / (1 + ρ ^ 2) = max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2)
    rw [max_eq_left (by linarith : (0 : ℝ) ≤ ρ - 1), one_sub_edgeB]
  -- `accumulationLimit ρ` is by definition this quadruple
  show Tendsto (fun ρ : ℝ => ((0 : ℝ), 2 * ρ / (1 + ρ ^ 2), max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2),
      max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2))) atTop (𝓝 ((0 : ℝ), (0 : ℝ), (0 : ℝ), (1 : ℝ)))
  exact h0.prodMk_nhds (hb.prodMk_nhds (hc.prodMk_nhds hd))

end QKForms

end

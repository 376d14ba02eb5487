/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.ProfileDefs

/-!
# Deterministic estimates for nearly proportional lobes (used by Theorem 5)

Let `α, β` be real vectors with `α ≥ 0`, `α ≠ 0`, let `ρ ≥ 0` and write `β = ρ α + ε`,
`δ = ‖ε‖ / ‖α‖`. The proof of Theorem 5 of the paper (docs/theory.md, "Accumulation on Θ")
rests on four deterministic estimates:

* `|⟨α, β⟩ / ‖α‖² - ρ| ≤ δ` (Cauchy–Schwarz),
* `|‖β‖² / ‖α‖² - ρ²| ≤ δ² + 2ρδ`,
* `|‖(α - β)₊‖ / ‖α‖ - (1 - ρ)₊| ≤ δ`,
* `|‖(β - α)₊‖ / ‖α‖ - (ρ - 1)₊| ≤ δ`

(`x ↦ x₊` is 1-Lipschitz and `((1 - ρ) α)₊ = (1 - ρ)₊ α` for `α ≥ 0`). From them, if `δ_n → 0`
along a sequence of lobe pairs, the three profile coordinates `2⟨α, β⟩ / (‖α‖² + ‖β‖²)`,
`‖(α - β)₊‖² / (‖α‖² + ‖β‖²)`, `‖(β - α)₊‖² / (‖α‖² + ‖β‖²)` converge to
`2ρ / (1 + ρ²)`, `(1 - ρ)₊² / (1 + ρ²)`, `(ρ - 1)₊² / (1 + ρ²)`.

## Main definitions

* `QKForms.Vec.l2 x = √(∑ i, x i ^ 2)`: the Euclidean norm of `x : ι → ℝ`.

## Main statements

* `QKForms.Vec.abs_inner_div_sub_le`, `QKForms.Vec.abs_sum_sq_div_sub_le`,
  `QKForms.Vec.abs_l2_posPart_sub_div_sub_le`, `QKForms.Vec.abs_l2_posPart_sub'_div_sub_le`:
  the four estimates above.
* `QKForms.Vec.tendsto_lobeProfile_of_tendsto`: the three coordinates converge when `δ_n → 0`.

## Sorted samples (objects of Lemma 6) and sorting facts

The second half of the file sets up the objects of Lemma 6 of the paper for a *fixed* sample
path `x, x' : ℕ → ℝ` and proves the deterministic facts about decreasing sorts used by
Theorem 5 (`QKForms/Accumulation.lean`) and Lemma 6 (`QKForms/ProportionalLobes.lean`):

* `QKForms.scaledSample c x n = {c x_0, …, c x_(n-1)}`; `QKForms.sampleLobe c x n : Fin n → ℝ`,
  its decreasing sort (`α_n` for `c = v`, `β_n` for `c = u`), through `QKForms.sortedEntry`;
  `QKForms.lobeMisfit u v x x' n = ‖β_n - (u/v) α_n‖ / ‖α_n‖`, the quantity of Lemma 6.
* `QKForms.Sorting.sortDesc_map_of_monotone`, `QKForms.Sorting.sortDesc_map_of_antitone`,
  `QKForms.Sorting.sortDesc_add_replicate_zero`: sorting commutes with monotone maps, turns
  antitone maps into reversal, and puts added zeros at the end (nonnegative multisets);
  `QKForms.Sorting.sum_fin_sortedEntry`, `QKForms.Sorting.sum_fin_sortedEntry₂`: sums over the
  zero-padded sort do not depend on the amount of padding.
* `QKForms.sum_sq_sampleLobe` (`‖α_n‖² = ∑_{i<n} (c x_i)²`), `QKForms.sampleLobe_eq_mul`
  (`sort(c x) = c · sort(x)`, `c ≥ 0`), `QKForms.lobeMisfit_eq`,
  `QKForms.tendsto_lobeMisfit_of_tendsto_sq`, `QKForms.tendsto_lobeMisfit_of_moments`: the
  deterministic reduction of Lemma 6 (the misfit tends to `0` along every sample path on which
  `(1/n) ∑ x_i² → m > 0` and `‖Y'_n - Y_n‖²/n → 0`, resp. on which `(1/n) ∑ x_i²`,
  `(1/n) ∑ x'_i²` and the sorted cross term `⟨Y_n, Y'_n⟩/n` have a common limit `m > 0`).

## Encoding

Vectors are plain functions `ι → ℝ` on a finite index type `ι` (the profile lobes of
`QKForms/ProfileDefs.lean` are functions `Fin N → ℝ`), sums are written out as `∑ i, …` and the
Euclidean norm is the explicit square root `Vec.l2`; no `EuclideanSpace` structure is used.
Vector operations are written pointwise as lambdas (`fun i => β i - ρ * α i` is `β - ρα`,
`fun i => max (α i - β i) 0` is `(α - β)₊`). In the convergence statements the vectors
`α n, β n : κ n → ℝ` may live on index types `κ n` depending on `n`.
-/

noncomputable section

open Filter Topology

namespace QKForms

namespace Vec

section Norm

variable {ι : Type*} [Fintype ι]

/-- Euclidean norm `‖x‖ = √(∑ i, x i ^ 2)` of a real vector on a finite index type. -/
noncomputable def l2 (x : ι → ℝ) : ℝ := Real.sqrt (∑ i, x i ^ 2)

theorem sum_sq_nonneg (x : ι → ℝ) : 0 ≤ ∑ i, x i ^ 2 :=
  Finset.sum_nonneg fun i _ => sq_nonneg (x i)

theorem l2_nonneg (x : ι → ℝ) : 0 ≤ l2 x := Real.sqrt_nonneg _

theorem l2_sq (x : ι → ℝ) : l2 x ^ 2 = ∑ i, x i ^ 2 := Real.sq_sqrt (sum_sq_nonneg x)

theorem l2_pos_iff (x : ι → ℝ) : 0 < l2 x ↔ 0 < ∑ i, x i ^ 2 := Real.sqrt_pos

/-- Cauchy–Schwarz: `|⟨x, y⟩| ≤ ‖x‖ ‖y‖`. Uses `Finset.sum_mul_sq_le_sq_mul_sq`
(Mathlib/Algebra/Order/BigOperators/Ring/Finset.lean). -/
theorem abs_sum_mul_le_l2_mul_l2 (x y : ι → ℝ) : |∑ i, x i * y i| ≤ l2 x * l2 y := by
  have h := Finset.sum_mul_sq_le_sq_mul_sq Finset.univ x y
  calc |∑ i, x i * y i| ≤ Real.sqrt ((∑ i, x i ^ 2) * ∑ i, y i ^ 2) := Real.abs_le_sqrt h
    _ = Real.sqrt (∑ i, x i ^ 2) * Real.sqrt (∑ i, y i ^ 2) :=
        Real.sqrt_mul (sum_sq_nonneg x) _
    _ = l2 x * l2 y := rfl

theorem sum_sq_add (x y : ι → ℝ) :
    ∑ i, (x i + y i) ^ 2 = ∑ i, x i ^ 2 + 2 * ∑ i, x i * y i + ∑ i, y i ^ 2 := by
  rw [Finset.mul_sum, ← Finset.sum_add_distrib, ← Finset.sum_add_distrib]
  exact Finset.sum_congr rfl fun i _ => by ring

/-- Triangle inequality `‖x + y‖ ≤ ‖x‖ + ‖y‖`. -/
theorem l2_add_le (x y : ι → ℝ) : l2 (fun i => x i + y i) ≤ l2 x + l2 y := by
  have hxy : ∑ i, x i * y i ≤ l2 x * l2 y :=
    le_trans (le_abs_self _) (abs_sum_mul_le_l2_mul_l2 x y)
  have hx := l2_sq x
  have hy := l2_sq y
  have key : ∑ i, (x i + y i) ^ 2 ≤ (l2 x + l2 y) ^ 2 := by
    rw [sum_sq_add]
    nlinarith [hxy, hx, hy]
  calc l2 (fun i => x i + y i) = Real.sqrt (∑ i, (x i + y i) ^ 2) := rfl
    _ ≤ Real.sqrt ((l2 x + l2 y) ^ 2) := Real.sqrt_le_sqrt key
    _ = l2 x + l2 y := Real.sqrt_sq (add_nonneg (l2_nonneg x) (l2_nonneg y))

theorem l2_sub_comm (x y : ι → ℝ) : l2 (fun i => y i - x i) = l2 (fun i => x i - y i) := by
  show Real.sqrt (∑ i, (y i - x i) ^ 2) = Real.sqrt (∑ i, (x i - y i) ^ 2)
  congr 1
  exact Finset.sum_congr rfl fun i _ => by ring

/-- Reverse triangle inequality `|‖x‖ - ‖y‖| ≤ ‖x - y‖`. -/
theorem abs_l2_sub_l2_le (x y : ι → ℝ) : |l2 x - l2 y| ≤ l2 (fun i => x i - y i) := by
  have h1 : l2 x ≤ l2 (fun i => x i - y i) + l2 y :=
    calc l2 x = l2 (fun i => (x i - y i) + y i) := by
          congr 1
          funext i
          ring
      _ ≤ l2 (fun i => x i - y i) + l2 y := l2_add_le (fun i => x i - y i) y
  have h2 : l2 y ≤ l2 (fun i => x i - y i) + l2 x :=
    calc l2 y = l2 (fun i => (y i - x i) + x i) := by
          congr 1
          funext i
          ring
      _ ≤ l2 (fun i => y i - x i) + l2 x := l2_add_le (fun i => y i - x i) x
      _ = l2 (fun i => x i - y i) + l2 x := by rw [l2_sub_comm x y]
  rw [abs_sub_le_iff]
  constructor <;> linarith

/-- Monotonicity of the norm under entrywise domination of absolute values. -/
theorem l2_le_l2_of_abs_le {x y : ι → ℝ} (h : ∀ i, |x i| ≤ |y i|) : l2 x ≤ l2 y := by
  show Real.sqrt (∑ i, x i ^ 2) ≤ Real.sqrt (∑ i, y i ^ 2)
  apply Real.sqrt_le_sqrt
  apply Finset.sum_le_sum
  intro i _
  have h1 := mul_self_le_mul_self (abs_nonneg (x i)) (h i)
  nlinarith [sq_abs (x i), sq_abs (y i), h1]

/-- The positive part is 1-Lipschitz: `‖x₊ - y₊‖ ≤ ‖x - y‖`. Uses `abs_max_sub_max_le_abs`
(Mathlib/Algebra/Order/Group/MinMax.lean). -/
theorem l2_posPart_sub_le (x y : ι → ℝ) :
    l2 (fun i => max (x i) 0 - max (y i) 0) ≤ l2 (fun i => x i - y i) :=
  l2_le_l2_of_abs_le fun i => abs_max_sub_max_le_abs (x i) (y i) 0

/-- `‖k x‖ = k ‖x‖` for `k ≥ 0`. -/
theorem l2_const_mul {k : ℝ} (hk : 0 ≤ k) (x : ι → ℝ) : l2 (fun i => k * x i) = k * l2 x := by
  have e : ∑ i, (k * x i) ^ 2 = k ^ 2 * ∑ i, x i ^ 2 := by
    rw [Finset.mul_sum]
    exact Finset.sum_congr rfl fun i _ => by ring
  show Real.sqrt (∑ i, (k * x i) ^ 2) = k * Real.sqrt (∑ i, x i ^ 2)
  rw [e, Real.sqrt_mul (sq_nonneg k), Real.sqrt_sq hk]

/-- `(c a)₊ = c₊ a` for `a ≥ 0`. -/
theorem max_mul_zero_of_nonneg (c : ℝ) {a : ℝ} (ha : 0 ≤ a) : max (c * a) 0 = max c 0 * a := by
  rcases le_total 0 c with hc | hc
  · rw [max_eq_left hc, max_eq_left (mul_nonneg hc ha)]
  · have hca : c * a ≤ 0 := by nlinarith [mul_nonneg (neg_nonneg.2 hc) ha]
    rw [max_eq_right hc, zero_mul, max_eq_right hca]

end Norm

section Estimates

variable {ι : Type*} [Fintype ι]

/-- `⟨α, β⟩ = ρ ‖α‖² + ⟨α, β - ρα⟩`. -/
theorem sum_mul_eq (ρ : ℝ) (α β : ι → ℝ) :
    ∑ i, α i * β i = ρ * ∑ i, α i ^ 2 + ∑ i, α i * (β i - ρ * α i) := by
  rw [Finset.mul_sum, ← Finset.sum_add_distrib]
  exact Finset.sum_congr rfl fun i _ => by ring

/-- `‖β‖² = ρ² ‖α‖² + 2ρ ⟨α, β - ρα⟩ + ‖β - ρα‖²`. -/
theorem sum_sq_eq (ρ : ℝ) (α β : ι → ℝ) :
    ∑ i, β i ^ 2 = ρ ^ 2 * ∑ i, α i ^ 2 + 2 * ρ * ∑ i, α i * (β i - ρ * α i)
      + ∑ i, (β i - ρ * α i) ^ 2 := by
  rw [Finset.mul_sum, Finset.mul_sum, ← Finset.sum_add_distrib, ← Finset.sum_add_distrib]
  exact Finset.sum_congr rfl fun i _ => by ring

/-- Multiplicative form of the first estimate: `|⟨α, β⟩ - ρ‖α‖²| ≤ ‖α‖ ‖β - ρα‖`. -/
theorem abs_sum_mul_sub_le (ρ : ℝ) (α β : ι → ℝ) :
    |∑ i, α i * β i - ρ * ∑ i, α i ^ 2| ≤ l2 α * l2 (fun i => β i - ρ * α i) := by
  have e : ∑ i, α i * β i - ρ * ∑ i, α i ^ 2 = ∑ i, α i * (β i - ρ * α i) := by
    rw [sum_mul_eq ρ α β]
    ring
  rw [e]
  exact abs_sum_mul_le_l2_mul_l2 α (fun i => β i - ρ * α i)

/-- Multiplicative form of the second estimate:
`|‖β‖² - ρ²‖α‖²| ≤ 2ρ ‖α‖ ‖β - ρα‖ + ‖β - ρα‖²` (for `ρ ≥ 0`). -/
theorem abs_sum_sq_sub_le {ρ : ℝ} (hρ : 0 ≤ ρ) (α β : ι → ℝ) :
    |∑ i, β i ^ 2 - ρ ^ 2 * ∑ i, α i ^ 2|
      ≤ 2 * ρ * (l2 α * l2 (fun i => β i - ρ * α i)) + l2 (fun i => β i - ρ * α i) ^ 2 := by
  have e : ∑ i, β i ^ 2 - ρ ^ 2 * ∑ i, α i ^ 2
      = 2 * ρ * ∑ i, α i * (β i - ρ * α i) + l2 (fun i => β i - ρ * α i) ^ 2 := by
    rw [sum_sq_eq ρ α β, l2_sq]
    ring
  rw [e]
  have h1 := abs_sum_mul_le_l2_mul_l2 α (fun i => β i - ρ * α i)
  obtain ⟨h2, h3⟩ := abs_le.mp h1
  have hE := sq_nonneg (l2 (fun i => β i - ρ * α i))
  have h4 := mul_le_mul_of_nonneg_left h3 hρ
  have h5 := mul_le_mul_of_nonneg_left h2 hρ
  rw [abs_le]
  -- both goals are linear in the monomials `ρ * ⟨α, β - ρα⟩`, `ρ * (‖α‖ * ‖β - ρα‖)` and
  -- `‖β - ρα‖ ^ 2` given `h4`, `h5`, `hE`; `nlinarith` only adds products to what `linarith`
  -- gets, so it is the fallback
  -- closes by: `linarith` in both goals at the pin
  constructor <;> first | linarith [h4, h5, hE] | nlinarith [h4, h5, hE]

/-- Multiplicative form of the third estimate: for `α ≥ 0`,
`|‖(α - β)₊‖ - (1 - ρ)₊ ‖α‖| ≤ ‖β - ρα‖`. -/
theorem abs_l2_posPart_sub_sub_le (ρ : ℝ) {α : ι → ℝ} (β : ι → ℝ) (hα : ∀ i, 0 ≤ α i) :
    |l2 (fun i => max (α i - β i) 0) - max (1 - ρ) 0 * l2 α|
      ≤ l2 (fun i => β i - ρ * α i) := by
  have hq : l2 (fun i => max ((1 - ρ) * α i) 0) = max (1 - ρ) 0 * l2 α := by
    rw [← l2_const_mul (le_max_right (1 - ρ) 0) α]
    congr 1
    funext i
    exact max_mul_zero_of_nonneg (1 - ρ) (hα i)
  rw [← hq]
  calc |l2 (fun i => max (α i - β i) 0) - l2 (fun i => max ((1 - ρ) * α i) 0)|
      ≤ l2 (fun i => max (α i - β i) 0 - max ((1 - ρ) * α i) 0) :=
        abs_l2_sub_l2_le (fun i => max (α i - β i) 0) (fun i => max ((1 - ρ) * α i) 0)
    _ ≤ l2 (fun i => (α i - β i) - (1 - ρ) * α i) :=
        l2_posPart_sub_le (fun i => α i - β i) (fun i => (1 - ρ) * α i)
    _ = l2 (fun i => β i - ρ * α i) := by
        rw [l2_sub_comm (fun i => (1 - ρ) * α i) (fun i => α i - β i)]
        congr 1
        funext i
        ring

/-- Multiplicative form of the fourth estimate: for `α ≥ 0`,
`|‖(β - α)₊‖ - (ρ - 1)₊ ‖α‖| ≤ ‖β - ρα‖`. -/
theorem abs_l2_posPart_sub'_sub_le (ρ : ℝ) {α : ι → ℝ} (β : ι → ℝ) (hα : ∀ i, 0 ≤ α i) :
    |l2 (fun i => max (β i - α i) 0) - max (ρ - 1) 0 * l2 α|
      ≤ l2 (fun i => β i - ρ * α i) := by
  have hq : l2 (fun i => max ((ρ - 1) * α i) 0) = max (ρ - 1) 0 * l2 α := by
    rw [← l2_const_mul (le_max_right (ρ - 1) 0) α]
    congr 1
    funext i
    exact max_mul_zero_of_nonneg (ρ - 1) (hα i)
  rw [← hq]
  calc |l2 (fun i => max (β i - α i) 0) - l2 (fun i => max ((ρ - 1) * α i) 0)|
      ≤ l2 (fun i => max (β i - α i) 0 - max ((ρ - 1) * α i) 0) :=
        abs_l2_sub_l2_le (fun i => max (β i - α i) 0) (fun i => max ((ρ - 1) * α i) 0)
    _ ≤ l2 (fun i => (β i - α i) - (ρ - 1) * α i) :=
        l2_posPart_sub_le (fun i => β i - α i) (fun i => (ρ - 1) * α i)
    _ = l2 (fun i => β i - ρ * α i) := by
        congr 1
        funext i
        ring

/-- **First estimate** (Theorem 5 of the paper, proof): `|⟨α, β⟩/‖α‖² - ρ| ≤ δ` with
`δ = ‖β - ρα‖ / ‖α‖`, for `α ≠ 0`. -/
theorem abs_inner_div_sub_le (ρ : ℝ) {α : ι → ℝ} (β : ι → ℝ) (hα : 0 < l2 α) :
    |(∑ i, α i * β i) / (∑ i, α i ^ 2) - ρ| ≤ l2 (fun i => β i - ρ * α i) / l2 α := by
  have hA : ∑ i, α i ^ 2 = l2 α ^ 2 := (l2_sq α).symm
  have hA2 : 0 < l2 α ^ 2 := pow_pos hα 2
  have hA0 : l2 α ^ 2 ≠ 0 := hA2.ne'
  have e : (∑ i, α i * β i) / (∑ i, α i ^ 2) - ρ
      = (∑ i, α i * β i - ρ * ∑ i, α i ^ 2) / l2 α ^ 2 := by
    rw [hA, sub_div, mul_div_assoc, div_self hA0, mul_one]
  rw [e, abs_div, abs_of_pos hA2]
  have h := abs_sum_mul_sub_le ρ α β
  calc |∑ i, α i * β i - ρ * ∑ i, α i ^ 2| / l2 α ^ 2
      ≤ l2 α * l2 (fun i => β i - ρ * α i) / l2 α ^ 2 := by
        gcongr <;> exact h
    _ = l2 (fun i => β i - ρ * α i) / l2 α := by
        rw [sq, mul_div_mul_left _ _ hα.ne']

/-- **Second estimate** (Theorem 5 of the paper, proof): `|‖β‖²/‖α‖² - ρ²| ≤ δ² + 2ρδ` with
`δ = ‖β - ρα‖ / ‖α‖`, for `α ≠ 0` and `ρ ≥ 0`. -/
theorem abs_sum_sq_div_sub_le {ρ : ℝ} (hρ : 0 ≤ ρ) {α : ι → ℝ} (β : ι → ℝ) (hα : 0 < l2 α) :
    |(∑ i, β i ^ 2) / (∑ i, α i ^ 2) - ρ ^ 2|
      ≤ (l2 (fun i => β i - ρ * α i) / l2 α) ^ 2
        + 2 * ρ * (l2 (fun i => β i - ρ * α i) / l2 α) := by
  have hA : ∑ i, α i ^ 2 = l2 α ^ 2 := (l2_sq α).symm
  have hA2 : 0 < l2 α ^ 2 := pow_pos hα 2
  have hA0 : l2 α ^ 2 ≠ 0 := hA2.ne'
  have hne : l2 α ≠ 0 := hα.ne'
  have e : (∑ i, β i ^ 2) / (∑ i, α i ^ 2) - ρ ^ 2
      = (∑ i, β i ^ 2 - ρ ^ 2 * ∑ i, α i ^ 2) / l2 α ^ 2 := by
    rw [hA, sub_div, mul_div_assoc, div_self hA0, mul_one]
  rw [e, abs_div, abs_of_pos hA2]
  have h := abs_sum_sq_sub_le hρ α β
  calc |∑ i, β i ^ 2 - ρ ^ 2 * ∑ i, α i ^ 2| / l2 α ^ 2
      ≤ (2 * ρ * (l2 α * l2 (fun i => β i - ρ * α i)) + l2 (fun i => β i - ρ * α i) ^ 2)
          / l2 α ^ 2 := by
        gcongr <;> exact h
    _ = (l2 (fun i => β i - ρ * α i) / l2 α) ^ 2
          + 2 * ρ * (l2 (fun i => β i - ρ * α i) / l2 α) := by
        rw [div_pow, add_div, add_comm]
        congr 1
        rw [sq (l2 α), mul_div_assoc, mul_div_mul_left _ _ hne]

/-- `|x / a - c| ≤ e / a` from `|x - c a| ≤ e`, for `a > 0`. -/
theorem abs_div_sub_le_of_abs_sub_mul_le {x a c e : ℝ} (ha : 0 < a) (h : |x - c * a| ≤ e) :
    |x / a - c| ≤ e / a := by
  have e1 : x / a - c = (x - c * a) / a := by
    rw [sub_div, mul_div_assoc, div_self ha.ne', mul_one]
  rw [e1, abs_div, abs_of_pos ha, div_eq_mul_inv, div_eq_mul_inv]
  exact mul_le_mul_of_nonneg_right h (inv_nonneg.2 ha.le)

/-- **Third estimate** (Theorem 5 of the paper, proof): for `α ≥ 0`, `α ≠ 0`,
`|‖(α - β)₊‖/‖α‖ - (1 - ρ)₊| ≤ δ` with `δ = ‖β - ρα‖ / ‖α‖`. -/
theorem abs_l2_posPart_sub_div_sub_le (ρ : ℝ) {α : ι → ℝ} (β : ι → ℝ) (hα0 : ∀ i, 0 ≤ α i)
    (hα : 0 < l2 α) :
    |l2 (fun i => max (α i - β i) 0) / l2 α - max (1 - ρ) 0|
      ≤ l2 (fun i => β i - ρ * α i) / l2 α :=
  abs_div_sub_le_of_abs_sub_mul_le hα (abs_l2_posPart_sub_sub_le ρ β hα0)

/-- **Fourth estimate** (Theorem 5 of the paper, proof): for `α ≥ 0`, `α ≠ 0`,
`|‖(β - α)₊‖/‖α‖ - (ρ - 1)₊| ≤ δ` with `δ = ‖β - ρα‖ / ‖α‖`. -/
theorem abs_l2_posPart_sub'_div_sub_le (ρ : ℝ) {α : ι → ℝ} (β : ι → ℝ) (hα0 : ∀ i, 0 ≤ α i)
    (hα : 0 < l2 α) :
    |l2 (fun i => max (β i - α i) 0) / l2 α - max (ρ - 1) 0|
      ≤ l2 (fun i => β i - ρ * α i) / l2 α :=
  abs_div_sub_le_of_abs_sub_mul_le hα (abs_l2_posPart_sub'_sub_le ρ β hα0)

end Estimates

section Limits

/-- A sequence within `g n → 0` of `L` (eventually) tends to `L`. -/
theorem tendsto_of_abs_sub_le {f g : ℕ → ℝ} {L : ℝ} (h : ∀ᶠ n in atTop, |f n - L| ≤ g n)
    (hg : Tendsto g atTop (𝓝 0)) : Tendsto f atTop (𝓝 L) := by
  have hlo : Tendsto (fun n => L - g n) atTop (𝓝 L) := by
    have h' := (tendsto_const_nhds : Tendsto (fun _ : ℕ => L) atTop (𝓝 L)).sub hg
    rwa [sub_zero] at h'
  have hhi : Tendsto (fun n => L + g n) atTop (𝓝 L) := by
    have h' := (tendsto_const_nhds : Tendsto (fun _ : ℕ => L) atTop (𝓝 L)).add hg
    rwa [add_zero] at h'
  refine tendsto_of_tendsto_of_tendsto_of_le_of_le' hlo hhi ?_ ?_
  · exact h.mono fun n hn => by
      have h2 := abs_le.mp hn
      linarith [h2.1, h2.2]
  · exact h.mono fun n hn => by
      have h2 := abs_le.mp hn
      linarith [h2.1, h2.2]

theorem tendsto_sq_add_two_mul {δ : ℕ → ℝ} (ρ : ℝ) (h : Tendsto δ atTop (𝓝 0)) :
    Tendsto (fun n => δ n ^ 2 + 2 * ρ * δ n) atTop (𝓝 0) := by
  have h2 := (h.pow 2).add (h.const_mul (2 * ρ))
  rw [show (0 : ℝ) ^ 2 + 2 * ρ * 0 = 0 by ring] at h2
  exact h2

/-- `2 (S/A) / (1 + B/A) = 2S / (A + B)` for `A > 0`, `B ≥ 0`. -/
theorem two_mul_div_one_add_div {S A B : ℝ} (hA : 0 < A) (hB : 0 ≤ B) :
    2 * (S / A) / (1 + B / A) = 2 * S / (A + B) := by
  have hA0 : A ≠ 0 := hA.ne'
  have hAB : A + B ≠ 0 := (add_pos_of_pos_of_nonneg hA hB).ne'
  have h1 : 1 + B / A = (A + B) / A := by
    rw [add_div, div_self hA0]
  rw [h1, div_div_eq_mul_div, mul_assoc, div_mul_cancel₀ S hA0]

/-- `(P/a)² / (1 + B/a²) = P² / (a² + B)` for `a > 0`, `B ≥ 0`. -/
theorem div_sq_div_one_add_div {P a B : ℝ} (ha : 0 < a) (hB : 0 ≤ B) :
    (P / a) ^ 2 / (1 + B / a ^ 2) = P ^ 2 / (a ^ 2 + B) := by
  have hA : 0 < a ^ 2 := pow_pos ha 2
  have hA0 : a ^ 2 ≠ 0 := hA.ne'
  have h1 : 1 + B / a ^ 2 = (a ^ 2 + B) / a ^ 2 := by
    rw [add_div, div_self hA0]
  rw [h1, div_pow, div_div_div_cancel_right₀ hA0]

variable {κ : ℕ → Type*} [∀ n, Fintype (κ n)]

/-- If `δ_n = ‖β_n - ρα_n‖/‖α_n‖ → 0`, then `⟨α_n, β_n⟩/‖α_n‖² → ρ`. -/
theorem tendsto_inner_div_of_tendsto {ρ : ℝ} (α β : ∀ n, κ n → ℝ)
    (hα : ∀ᶠ n in atTop, 0 < l2 (α n))
    (hδ : Tendsto (fun n => l2 (fun i => β n i - ρ * α n i) / l2 (α n)) atTop (𝓝 0)) :
    Tendsto (fun n => (∑ i, α n i * β n i) / (∑ i, α n i ^ 2)) atTop (𝓝 ρ) :=
  tendsto_of_abs_sub_le (hα.mono fun n hn => abs_inner_div_sub_le ρ (β n) hn) hδ

/-- If `δ_n → 0`, then `‖β_n‖²/‖α_n‖² → ρ²` (for `ρ ≥ 0`). -/
theorem tendsto_sum_sq_div_of_tendsto {ρ : ℝ} (hρ : 0 ≤ ρ) (α β : ∀ n, κ n → ℝ)
    (hα : ∀ᶠ n in atTop, 0 < l2 (α n))
    (hδ : Tendsto (fun n => l2 (fun i => β n i - ρ * α n i) / l2 (α n)) atTop (𝓝 0)) :
    Tendsto (fun n => (∑ i, β n i ^ 2) / (∑ i, α n i ^ 2)) atTop (𝓝 (ρ ^ 2)) :=
  tendsto_of_abs_sub_le (hα.mono fun n hn => abs_sum_sq_div_sub_le hρ (β n) hn)
    (tendsto_sq_add_two_mul ρ hδ)

/-- If `δ_n → 0` and `α_n ≥ 0`, then `‖(α_n - β_n)₊‖/‖α_n‖ → (1 - ρ)₊`. -/
theorem tendsto_l2_posPart_sub_div_of_tendsto {ρ : ℝ} (α β : ∀ n, κ n → ℝ)
    (hα0 : ∀ n i, 0 ≤ α n i) (hα : ∀ᶠ n in atTop, 0 < l2 (α n))
    (hδ : Tendsto (fun n => l2 (fun i => β n i - ρ * α n i) / l2 (α n)) atTop (𝓝 0)) :
    Tendsto (fun n => l2 (fun i => max (α n i - β n i) 0) / l2 (α n)) atTop
      (𝓝 (max (1 - ρ) 0)) :=
  tendsto_of_abs_sub_le
    (hα.mono fun n hn => abs_l2_posPart_sub_div_sub_le ρ (β n) (hα0 n) hn) hδ

/-- If `δ_n → 0` and `α_n ≥ 0`, then `‖(β_n - α_n)₊‖/‖α_n‖ → (ρ - 1)₊`. -/
theorem tendsto_l2_posPart_sub'_div_of_tendsto {ρ : ℝ} (α β : ∀ n, κ n → ℝ)
    (hα0 : ∀ n i, 0 ≤ α n i) (hα : ∀ᶠ n in atTop, 0 < l2 (α n))
    (hδ : Tendsto (fun n => l2 (fun i => β n i - ρ * α n i) / l2 (α n)) atTop (𝓝 0)) :
    Tendsto (fun n => l2 (fun i => max (β n i - α n i) 0) / l2 (α n)) atTop
      (𝓝 (max (ρ - 1) 0)) :=
  tendsto_of_abs_sub_le
    (hα.mono fun n hn => abs_l2_posPart_sub'_div_sub_le ρ (β n) (hα0 n) hn) hδ

/-- **Deterministic core of Theorem 5 of the paper.** Let `α_n ≥ 0` (eventually nonzero) and
`β_n` be lobe pairs with `δ_n = ‖β_n - ρα_n‖/‖α_n‖ → 0`, `ρ ≥ 0`. Then, with
`‖S_n‖² = ‖α_n‖² + ‖β_n‖²`,
`2⟨α_n, β_n⟩/‖S_n‖² → 2ρ/(1+ρ²)`, `‖(α_n - β_n)₊‖²/‖S_n‖² → (1-ρ)₊²/(1+ρ²)` and
`‖(β_n - α_n)₊‖²/‖S_n‖² → (ρ-1)₊²/(1+ρ²)`. -/
theorem tendsto_lobeProfile_of_tendsto {ρ : ℝ} (hρ : 0 ≤ ρ) (α β : ∀ n, κ n → ℝ)
    (hα0 : ∀ n i, 0 ≤ α n i) (hα : ∀ᶠ n in atTop, 0 < l2 (α n))
    (hδ : Tendsto (fun n => l2 (fun i => β n i - ρ * α n i) / l2 (α n)) atTop (𝓝 0)) :
    Tendsto (fun n => 2 * (∑ i, α n i * β n i) / (∑ i, α n i ^ 2 + ∑ i, β n i ^ 2)) atTop
        (𝓝 (2 * ρ / (1 + ρ ^ 2))) ∧
      Tendsto (fun n => (∑ i, max (α n i - β n i) 0 ^ 2) / (∑ i, α n i ^ 2 + ∑ i, β n i ^ 2))
        atTop (𝓝 (max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2))) ∧
      Tendsto (fun n => (∑ i, max (β n i - α n i) 0 ^ 2) / (∑ i, α n i ^ 2 + ∑ i, β n i ^ 2))
        atTop (𝓝 (max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2))) := by
  have hden : (1 + ρ ^ 2) ≠ 0 := by positivity
  have hr := tendsto_inner_div_of_tendsto α β hα hδ
  have hq := tendsto_sum_sq_div_of_tendsto hρ α β hα hδ
  have hc := tendsto_l2_posPart_sub_div_of_tendsto α β hα0 hα hδ
  have hd := tendsto_l2_posPart_sub'_div_of_tendsto α β hα0 hα hδ
  have h1 : Tendsto (fun _ : ℕ => (1 : ℝ)) atTop (𝓝 1) := tendsto_const_nhds
  have hq1 := h1.add hq
  refine ⟨?_, ?_, ?_⟩
  · refine ((hr.const_mul 2).div hq1 hden).congr' ?_
    filter_upwards [hα] with n hn
    have hA : ∑ i, α n i ^ 2 = l2 (α n) ^ 2 := (l2_sq (α n)).symm
    have hA2 : 0 < ∑ i, α n i ^ 2 := by rw [hA]; exact pow_pos hn 2
    exact two_mul_div_one_add_div (S := ∑ i, α n i * β n i) hA2 (sum_sq_nonneg (β n))
  · refine ((hc.pow 2).div hq1 hden).congr' ?_
    filter_upwards [hα] with n hn
    have key := div_sq_div_one_add_div (P := l2 (fun i => max (α n i - β n i) 0)) hn
      (sum_sq_nonneg (β n))
    -- rewrite `‖α_n‖²` and `‖(α_n - β_n)₊‖²` back into sums
    rw [l2_sq, l2_sq] at key
    exact key
  · refine ((hd.pow 2).div hq1 hden).congr' ?_
    filter_upwards [hα] with n hn
    have key := div_sq_div_one_add_div (P := l2 (fun i => max (β n i - α n i) 0)) hn
      (sum_sq_nonneg (β n))
    rw [l2_sq, l2_sq] at key
    exact key

end Limits

end Vec

/-! ## Sorted samples (the objects of Lemma 6) and deterministic sorting facts -/

/-- The multiset `{c x_0, …, c x_(n-1)}` of the first `n` scaled sample values. -/
noncomputable def scaledSample (c : ℝ) (x : ℕ → ℝ) (n : ℕ) : Multiset ℝ :=
  (Multiset.range n).map fun i => c * x i

/-- The decreasing sort of `c x_0, …, c x_(n-1)` as a vector `Fin n → ℝ` (Lemma 6 of the
paper: `α_n` for `c = v`, `β_n` for `c = u`). -/
noncomputable def sampleLobe (c : ℝ) (x : ℕ → ℝ) (n : ℕ) : Fin n → ℝ :=
  fun j => sortedEntry (scaledSample c x n) j

/-- The misfit `‖β_n - ρ α_n‖ / ‖α_n‖` of Lemma 6 of the paper, with `ρ = u / v`,
`α_n = sampleLobe v x n` and `β_n = sampleLobe u x' n`. -/
noncomputable def lobeMisfit (u v : ℝ) (x x' : ℕ → ℝ) (n : ℕ) : ℝ :=
  Vec.l2 (fun j => sampleLobe u x' n j - u / v * sampleLobe v x n j) / Vec.l2 (sampleLobe v x n)

theorem card_scaledSample (c : ℝ) (x : ℕ → ℝ) (n : ℕ) :
    Multiset.card (scaledSample c x n) = n := by
  unfold scaledSample
  rw [Multiset.card_map, Multiset.card_range]

theorem mem_scaledSample {c : ℝ} {x : ℕ → ℝ} {n : ℕ} {y : ℝ} (hy : y ∈ scaledSample c x n) :
    ∃ i, i < n ∧ c * x i = y := by
  unfold scaledSample at hy
  obtain ⟨i, hi, rfl⟩ := Multiset.mem_map.1 hy
  exact ⟨i, Multiset.mem_range.1 hi, rfl⟩

theorem pos_of_mem_scaledSample {c : ℝ} {x : ℕ → ℝ} {n : ℕ} (hc : 0 < c) (hx : ∀ i, 0 < x i)
    {y : ℝ} (hy : y ∈ scaledSample c x n) : 0 < y := by
  obtain ⟨i, _, rfl⟩ := mem_scaledSample hy
  exact mul_pos hc (hx i)

/-- `∑_{y ∈ {c x_i}} f y = ∑_{i<n} f (c x_i)`. -/
theorem sum_map_scaledSample (f : ℝ → ℝ) (c : ℝ) (x : ℕ → ℝ) (n : ℕ) :
    ((scaledSample c x n).map f).sum = ∑ i ∈ Finset.range n, f (c * x i) := by
  unfold scaledSample
  simp only [Multiset.map_map, Function.comp_def, Finset.sum_eq_multiset_sum, Finset.range_val]

namespace Sorting

/-- `(l.map f)[j] = f (l[j])` for `getD` with default `0`, when `f 0 = 0`. -/
theorem getD_map_of_map_zero {f : ℝ → ℝ} (hf : f 0 = 0) :
    ∀ (l : List ℝ) (j : ℕ), (l.map f).getD j 0 = f (l.getD j 0)
  -- In this lemma and the two after it, the second branch of each case is definitional:
  -- `List.map`, `List.replicate`, `++` and `List.getD` compute on `[]`, `a :: l` and the
  -- patterns `0`, `j + 1`, so each case is `rfl`, `hf.symm` or the recursive call up to
  -- unfolding (checked by `exact`). `(simp …; done)` fails instead of leaving a goal.
  | [], j => by
      -- closes by: the first branch (`simp`) at the pin
      first
      | (simp [hf]; done)
      | exact hf.symm
  | a :: l, 0 => by
      -- closes by: the first branch (`simp`) at the pin
      first
      | (simp; done)
      | rfl
  | a :: l, j + 1 => by
      -- closes by: the first branch (`simpa`) at the pin
      first
      | simpa using getD_map_of_map_zero hf l j
      | exact getD_map_of_map_zero hf l j

theorem getD_replicate_zero : ∀ (k j : ℕ), (List.replicate k (0 : ℝ)).getD j 0 = 0
  | 0, j => by
      -- closes by: the first branch (`simp`) at the pin
      first
      | (simp; done)
      | rfl
  | k + 1, 0 => by
      -- closes by: the first branch (`simp`) at the pin
      first
      | (simp [List.replicate_succ]; done)
      | rfl
  | k + 1, j + 1 => by
      -- closes by: the first branch (`simpa`) at the pin
      first
      | simpa [List.replicate_succ] using getD_replicate_zero k j
      | exact getD_replicate_zero k j

/-- Appending zeros does not change the `getD`-entries (default `0`). -/
theorem getD_append_replicate_zero :
    ∀ (l : List ℝ) (k j : ℕ), (l ++ List.replicate k 0).getD j 0 = l.getD j 0
  | [], k, j => by
      -- closes by: the first branch (`simpa`) at the pin
      first
      | simpa using getD_replicate_zero k j
      | exact getD_replicate_zero k j
  | a :: l, k, 0 => by
      -- closes by: the first branch (`simp`) at the pin
      first
      | (simp; done)
      | rfl
  | a :: l, k, j + 1 => by
      -- closes by: the first branch (`simpa`) at the pin
      first
      | simpa using getD_append_replicate_zero l k j
      | exact getD_append_replicate_zero l k j

/-- Entries of a reversed list (core lemmas `List.getD_eq_getElem?_getD`,
`List.getElem?_reverse`, Init/Data/List/Lemmas.lean). -/
theorem getD_reverse_of_lt (l : List ℝ) {j : ℕ} (hj : j < l.length) :
    l.reverse.getD j 0 = l.getD (l.length - 1 - j) 0 := by
  -- `getD l i d = l[i]?.getD d`; `l.reverse[j]? = l[l.length - 1 - j]?` for `j < l.length`
  rw [List.getD_eq_getElem?_getD, List.getD_eq_getElem?_getD, List.getElem?_reverse hj]

/-- `Σ_{j < length} f (l[j]) = Σ f` over the list. -/
theorem sum_range_getD_eq (f : ℝ → ℝ) :
    ∀ l : List ℝ, ∑ j ∈ Finset.range l.length, f (l.getD j 0) = (l.map f).sum
  | [] => by simp
  | a :: l => by
      rw [List.length_cons, Finset.sum_range_succ', List.map_cons, List.sum_cons,
        ← sum_range_getD_eq f l]
      -- `(a :: l).getD (j + 1) 0 = l.getD j 0` and `(a :: l).getD 0 0 = a`
      simp only [List.getD_cons_succ, List.getD_cons_zero]
      ring

/-- Past the end of a list, `getD` returns the default `0`. -/
theorem getD_eq_zero_of_length_le : ∀ (l : List ℝ) (j : ℕ), l.length ≤ j → l.getD j 0 = 0
  | [], _, _ => by simp
  | a :: l, 0, h => absurd h (by rw [List.length_cons]; omega)
  | a :: l, j + 1, h => by
      rw [List.getD_cons_succ]
      exact getD_eq_zero_of_length_le l j (by rw [List.length_cons] at h; omega)

/-- Past the end, the sorted entries are `0`. -/
theorem sortedEntry_eq_zero_of_card_le {s : Multiset ℝ} {j : ℕ} (h : Multiset.card s ≤ j) :
    sortedEntry s j = 0 := by
  have h' : (sortDesc s).length ≤ j := by rw [length_sortDesc]; exact h
  unfold sortedEntry
  exact getD_eq_zero_of_length_le (sortDesc s) j h'

/-- The decreasing sort commutes with monotone maps. -/
theorem sortDesc_map_of_monotone {f : ℝ → ℝ} (hf : Monotone f) (m : Multiset ℝ) :
    sortDesc (m.map f) = (sortDesc m).map f := by
  have hperm : (sortDesc (m.map f)).Perm ((sortDesc m).map f) := by
    -- `Multiset.map f ↑l = ↑(l.map f)` holds by `rfl` (`Multiset.map_coe`)
    have e : (((sortDesc m).map f : List ℝ) : Multiset ℝ)
        = Multiset.map f ((sortDesc m : List ℝ) : Multiset ℝ) := rfl
    rw [← Multiset.coe_eq_coe, e, coe_sortDesc, coe_sortDesc]
  have hsorted : ((sortDesc m).map f).Pairwise (· ≥ ·) := by
    rw [List.pairwise_map]
    exact (pairwise_sortDesc m).imp fun h => hf h
  exact eq_of_perm_of_pairwise_ge hperm (pairwise_sortDesc _) hsorted

/-- The decreasing sort of an antitone image is the reversed image of the decreasing sort. -/
theorem sortDesc_map_of_antitone {g : ℝ → ℝ} (hg : Antitone g) (m : Multiset ℝ) :
    sortDesc (m.map g) = (sortDesc m).reverse.map g := by
  have hperm : (sortDesc (m.map g)).Perm ((sortDesc m).reverse.map g) := by
    have e : (((sortDesc m).reverse.map g : List ℝ) : Multiset ℝ)
        = Multiset.map g (((sortDesc m).reverse : List ℝ) : Multiset ℝ) := rfl
    rw [← Multiset.coe_eq_coe, e, Multiset.coe_reverse, coe_sortDesc, coe_sortDesc]
  have hsorted : ((sortDesc m).reverse.map g).Pairwise (· ≥ ·) := by
    rw [List.pairwise_map, List.pairwise_reverse]
    exact (pairwise_sortDesc m).imp fun h => hg h
  exact eq_of_perm_of_pairwise_ge hperm (pairwise_sortDesc _) hsorted

/-- Adding zeros to a multiset of nonnegative reals appends them to its decreasing sort. -/
theorem sortDesc_add_replicate_zero {s : Multiset ℝ} (hs : ∀ y ∈ s, 0 ≤ y) (k : ℕ) :
    sortDesc (s + Multiset.replicate k 0) = sortDesc s ++ List.replicate k 0 := by
  have hperm :
      (sortDesc (s + Multiset.replicate k 0)).Perm (sortDesc s ++ List.replicate k 0) := by
    -- `Multiset.coe_add : (↑l₁ + ↑l₂ : Multiset α) = ↑(l₁ ++ l₂)`, used right to left
    rw [← Multiset.coe_eq_coe, ← Multiset.coe_add, coe_sortDesc, coe_sortDesc,
      Multiset.coe_replicate]
  have hsorted : (sortDesc s ++ List.replicate k 0).Pairwise (· ≥ ·) := by
    rw [List.pairwise_append]
    refine ⟨pairwise_sortDesc s, List.pairwise_replicate.2 (Or.inr le_rfl), ?_⟩
    intro a ha b hb
    rw [List.eq_of_mem_replicate hb]
    have ha' : a ∈ ((sortDesc s : List ℝ) : Multiset ℝ) := Multiset.mem_coe.2 ha
    rw [coe_sortDesc] at ha'
    exact hs a ha'
  exact eq_of_perm_of_pairwise_ge hperm (pairwise_sortDesc _) hsorted

theorem sortedEntry_add_replicate_zero {s : Multiset ℝ} (hs : ∀ y ∈ s, 0 ≤ y) (k j : ℕ) :
    sortedEntry (s + Multiset.replicate k 0) j = sortedEntry s j := by
  unfold sortedEntry
  rw [sortDesc_add_replicate_zero hs k, getD_append_replicate_zero]

/-- Sums over the zero-padded decreasing sort: `∑_{j<N} f (s_(j)) = ∑_{y ∈ s} f y` whenever
`f 0 = 0` and `card s ≤ N`. -/
theorem sum_fin_sortedEntry (f : ℝ → ℝ) (hf : f 0 = 0) (s : Multiset ℝ) {N : ℕ}
    (hN : Multiset.card s ≤ N) :
    ∑ j : Fin N, f (sortedEntry s j) = (s.map f).sum := by
  rw [Fin.sum_univ_eq_sum_range (fun j => f (sortedEntry s j)) N]
  obtain ⟨r, rfl⟩ := Nat.exists_eq_add_of_le hN
  rw [Finset.sum_range_add]
  have h0 : ∑ i ∈ Finset.range r, f (sortedEntry s (Multiset.card s + i)) = 0 := by
    apply Finset.sum_eq_zero
    intro i _
    rw [sortedEntry_eq_zero_of_card_le (s := s) (j := Multiset.card s + i)
      (Nat.le_add_right _ _), hf]
  rw [h0, add_zero]
  have h1 := sum_range_getD_eq f (sortDesc s)
  rw [length_sortDesc] at h1
  have e : (((sortDesc s).map f : List ℝ) : Multiset ℝ)
      = Multiset.map f ((sortDesc s : List ℝ) : Multiset ℝ) := rfl
  unfold sortedEntry
  rw [h1, ← Multiset.sum_coe, e, coe_sortDesc]

/-- Two-multiset version: sums over zero-padded sorts do not depend on the padding, when
`g 0 0 = 0`. -/
theorem sum_fin_sortedEntry₂ (g : ℝ → ℝ → ℝ) (hg : g 0 0 = 0) {A B : Multiset ℝ} {n N : ℕ}
    (hA : Multiset.card A ≤ n) (hB : Multiset.card B ≤ n) (hN : n ≤ N) :
    ∑ j : Fin N, g (sortedEntry A j) (sortedEntry B j)
      = ∑ j : Fin n, g (sortedEntry A j) (sortedEntry B j) := by
  rw [Fin.sum_univ_eq_sum_range (fun j => g (sortedEntry A j) (sortedEntry B j)) N,
    Fin.sum_univ_eq_sum_range (fun j => g (sortedEntry A j) (sortedEntry B j)) n]
  obtain ⟨r, rfl⟩ := Nat.exists_eq_add_of_le hN
  rw [Finset.sum_range_add]
  have h0 : ∑ i ∈ Finset.range r, g (sortedEntry A (n + i)) (sortedEntry B (n + i)) = 0 := by
    apply Finset.sum_eq_zero
    intro i _
    rw [sortedEntry_eq_zero_of_card_le (s := A) (j := n + i) (le_trans hA (Nat.le_add_right n i)),
      sortedEntry_eq_zero_of_card_le (s := B) (j := n + i) (le_trans hB (Nat.le_add_right n i)),
      hg]
  rw [h0, add_zero]

end Sorting

open Sorting

theorem sampleLobe_nonneg {c : ℝ} {x : ℕ → ℝ} (hc : 0 < c) (hx : ∀ i, 0 < x i) (n : ℕ)
    (j : Fin n) : 0 ≤ sampleLobe c x n j := by
  -- the sorted entries are elements of the multiset, or `0` past the end
  have hmem : ∀ (l : List ℝ) (k : ℕ), (∀ y ∈ l, 0 ≤ y) → 0 ≤ l.getD k 0 := by
    intro l
    -- second branches: `[].getD k 0` is `0`, and `(a :: l).getD` computes on `0` and `k + 1`,
    -- so `exact` takes the same terms up to unfolding
    induction l with
    | nil =>
      intro k _
      -- closes by: the first branch (`simp`) at the pin
      first
      | (simp; done)
      | exact le_rfl
    | cons a l ih =>
      intro k hl
      cases k with
      | zero =>
        -- closes by: the first branch (`simpa`) at the pin
        first
        | simpa using hl a (List.mem_cons_self ..)
        | exact hl a (List.mem_cons_self ..)
      | succ k =>
        -- closes by: the first branch (`simpa`) at the pin
        first
        | simpa using ih k fun y hy => hl y (List.mem_cons_of_mem a hy)
        | exact ih k fun y hy => hl y (List.mem_cons_of_mem a hy)
  show 0 ≤ (sortDesc (scaledSample c x n)).getD (j : ℕ) 0
  apply hmem
  intro y hy
  have hy' : y ∈ ((sortDesc (scaledSample c x n) : List ℝ) : Multiset ℝ) := Multiset.mem_coe.2 hy
  rw [coe_sortDesc] at hy'
  exact (pos_of_mem_scaledSample hc hx hy').le

/-- Sorting does not change the sum of squares: `‖α_n‖² = ∑_{i<n} (c x_i)²`. -/
theorem sum_sq_sampleLobe (c : ℝ) (x : ℕ → ℝ) (n : ℕ) :
    ∑ j, sampleLobe c x n j ^ 2 = ∑ i ∈ Finset.range n, (c * x i) ^ 2 := by
  have h := sum_fin_sortedEntry (fun y => y ^ 2) (by norm_num) (scaledSample c x n)
    (N := n) (le_of_eq (card_scaledSample c x n))
  rw [sum_map_scaledSample] at h
  exact h


/-! ### Deterministic reduction of Lemma 6

With `Y_n = sampleLobe 1 x n`, `Y'_n = sampleLobe 1 x' n` (the sorted unscaled samples),
`‖β_n - ρ α_n‖ / ‖α_n‖ = (u/v) ‖Y'_n - Y_n‖ / ‖Y_n‖` and
`‖Y'_n - Y_n‖² = ‖Y'_n‖² + ‖Y_n‖² - 2 ⟨Y_n, Y'_n⟩`. Hence Lemma 6 holds along every sample
path on which the three averages `‖Y_n‖²/n = (1/n) ∑_{i<n} x_i²`, `‖Y'_n‖²/n` and
`⟨Y_n, Y'_n⟩/n` have the same positive limit (`tendsto_lobeMisfit_of_moments`). The first two
are strong-law averages; Lemma 6 itself (`QKForms/ProportionalLobes.lean`) uses the first form,
`tendsto_lobeMisfit_of_tendsto_sq`, and a step-function discretization of the sorted samples. -/

/-- Sorting commutes with scaling by `c ≥ 0`: `sort(c x) = c · sort(x)`. -/
theorem sampleLobe_eq_mul {c : ℝ} (hc : 0 ≤ c) (x : ℕ → ℝ) (n : ℕ) (j : Fin n) :
    sampleLobe c x n j = c * sampleLobe 1 x n j := by
  have hs : scaledSample c x n = (scaledSample 1 x n).map (fun y => c * y) := by
    unfold scaledSample
    rw [Multiset.map_map]
    exact Multiset.map_congr rfl fun i _ => by
      show c * x i = c * (1 * x i)
      ring
  have hf : Monotone (fun y : ℝ => c * y) := fun a b h => mul_le_mul_of_nonneg_left h hc
  have hf0 : (fun y : ℝ => c * y) 0 = 0 := mul_zero c
  show (sortDesc (scaledSample c x n)).getD (j : ℕ) 0
    = c * (sortDesc (scaledSample 1 x n)).getD (j : ℕ) 0
  rw [hs, sortDesc_map_of_monotone hf, getD_map_of_map_zero (f := fun y : ℝ => c * y) hf0]

/-- The misfit of Lemma 6 through the unscaled sorted samples:
`‖β_n - (u/v) α_n‖ / ‖α_n‖ = (u/v) ‖Y'_n - Y_n‖ / ‖Y_n‖`. -/
theorem lobeMisfit_eq {u v : ℝ} (hu : 0 < u) (hv : 0 < v) (x x' : ℕ → ℝ) (n : ℕ) :
    lobeMisfit u v x x' n
      = u / v * (Vec.l2 (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)
        / Vec.l2 (fun j => sampleLobe 1 x n j)) := by
  have h1 : (fun j => sampleLobe u x' n j - u / v * sampleLobe v x n j)
      = fun j => u * (sampleLobe 1 x' n j - sampleLobe 1 x n j) := by
    funext j
    rw [sampleLobe_eq_mul hu.le x' n j, sampleLobe_eq_mul hv.le x n j, ← mul_assoc,
      div_mul_cancel₀ u hv.ne']
    ring
  have h2 : sampleLobe v x n = fun j => v * sampleLobe 1 x n j :=
    funext fun j => sampleLobe_eq_mul hv.le x n j
  show Vec.l2 (fun j => sampleLobe u x' n j - u / v * sampleLobe v x n j)
      / Vec.l2 (sampleLobe v x n) = _
  rw [h1, h2, Vec.l2_const_mul hu.le, Vec.l2_const_mul hv.le, mul_div_mul_comm]

/-- `‖Y' - Y‖² = ‖Y'‖² + ‖Y‖² - 2 ⟨Y, Y'⟩`. -/
theorem sum_sq_sub_eq {k : ℕ} (y y' : Fin k → ℝ) :
    ∑ j, (y' j - y j) ^ 2 = ∑ j, y' j ^ 2 + ∑ j, y j ^ 2 - 2 * ∑ j, y j * y' j := by
  rw [Finset.mul_sum, ← Finset.sum_add_distrib, ← Finset.sum_sub_distrib]
  exact Finset.sum_congr rfl fun j _ => by ring

/-- **Deterministic reduction of Lemma 6 of the paper, first form.** Let `u, v > 0`. If, along
a sample path `x, x'`, `(1/n) ∑_{i<n} x_i² → m > 0` and `‖Y'_n - Y_n‖² / n → 0` (sorted
unscaled samples), then `‖β_n - ρ α_n‖ / ‖α_n‖ → 0` (`ρ = u/v`). -/
theorem tendsto_lobeMisfit_of_tendsto_sq {u v : ℝ} (hu : 0 < u) (hv : 0 < v) {x x' : ℕ → ℝ}
    {m : ℝ} (hm : 0 < m)
    (hA : Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, x i ^ 2) / (n : ℝ)) atTop (𝓝 m))
    (hD : Tendsto
      (fun n : ℕ => (∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ))
      atTop (𝓝 0)) :
    Tendsto (lobeMisfit u v x x') atTop (𝓝 0) := by
  have hsq : ∀ n : ℕ, ∑ j, sampleLobe 1 x n j ^ 2 = ∑ i ∈ Finset.range n, x i ^ 2 := by
    intro n
    rw [sum_sq_sampleLobe]
    exact Finset.sum_congr rfl fun i _ => by ring
  have hA' : Tendsto (fun n : ℕ => (∑ j, sampleLobe 1 x n j ^ 2) / (n : ℝ)) atTop (𝓝 m) :=
    hA.congr fun n => by rw [hsq n]
  have hratio := hD.div hA' hm.ne'
  rw [zero_div] at hratio
  have hsqrt := hratio.sqrt
  rw [Real.sqrt_zero] at hsqrt
  have hmul := hsqrt.const_mul (u / v)
  rw [mul_zero] at hmul
  refine hmul.congr' ?_
  filter_upwards [eventually_ge_atTop 1] with n hn
  have hn0 : (n : ℝ) ≠ 0 := Nat.cast_ne_zero.2 (by omega)
  show u / v * Real.sqrt ((∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ)
      / ((∑ j, sampleLobe 1 x n j ^ 2) / (n : ℝ))) = lobeMisfit u v x x' n
  rw [div_div_div_cancel_right₀ hn0,
    Real.sqrt_div (Vec.sum_sq_nonneg (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)),
    lobeMisfit_eq hu hv]
  all_goals rfl

/-- **Deterministic reduction of Lemma 6 of the paper, second form.** Let `u, v > 0`. If, along
a sample path `x, x'`, the averages `(1/n) ∑_{i<n} x_i²`, `(1/n) ∑_{i<n} x'_i²` and the sorted
cross term `⟨Y_n, Y'_n⟩ / n` all converge to the same `m > 0`, then
`‖β_n - ρ α_n‖ / ‖α_n‖ → 0` (`ρ = u/v`). -/
theorem tendsto_lobeMisfit_of_moments {u v : ℝ} (hu : 0 < u) (hv : 0 < v) {x x' : ℕ → ℝ}
    {m : ℝ} (hm : 0 < m)
    (hA : Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, x i ^ 2) / (n : ℝ)) atTop (𝓝 m))
    (hB : Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, x' i ^ 2) / (n : ℝ)) atTop (𝓝 m))
    (hC : Tendsto (fun n : ℕ => (∑ j, sampleLobe 1 x n j * sampleLobe 1 x' n j) / (n : ℝ))
      atTop (𝓝 m)) :
    Tendsto (lobeMisfit u v x x') atTop (𝓝 0) := by
  have hsq : ∀ (y : ℕ → ℝ) (n : ℕ),
      ∑ j, sampleLobe 1 y n j ^ 2 = ∑ i ∈ Finset.range n, y i ^ 2 := by
    intro y n
    rw [sum_sq_sampleLobe]
    exact Finset.sum_congr rfl fun i _ => by ring
  have hA' : Tendsto (fun n : ℕ => (∑ j, sampleLobe 1 x n j ^ 2) / (n : ℝ)) atTop (𝓝 m) :=
    hA.congr fun n => by rw [hsq x n]
  have hB' : Tendsto (fun n : ℕ => (∑ j, sampleLobe 1 x' n j ^ 2) / (n : ℝ)) atTop (𝓝 m) :=
    hB.congr fun n => by rw [hsq x' n]
  have hD : Tendsto
      (fun n : ℕ => (∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ))
      atTop (𝓝 0) := by
    have h := (hB'.add hA').sub (hC.const_mul 2)
    rw [show m + m - 2 * m = 0 by ring] at h
    refine h.congr fun n => ?_
    show (∑ j, sampleLobe 1 x' n j ^ 2) / (n : ℝ) + (∑ j, sampleLobe 1 x n j ^ 2) / (n : ℝ)
        - 2 * ((∑ j, sampleLobe 1 x n j * sampleLobe 1 x' n j) / (n : ℝ))
      = (∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ)
    rw [sum_sq_sub_eq (sampleLobe 1 x n) (sampleLobe 1 x' n)]
    ring
  exact tendsto_lobeMisfit_of_tendsto_sq hu hv hm hA hD

end QKForms

end

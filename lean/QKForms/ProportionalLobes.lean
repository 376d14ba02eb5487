/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.Accumulation

/-!
# Proportional lobes (Lemma 6 of the paper)

Lemma 6 of the paper (docs/theory.md, "Accumulation on Θ"): let `X > 0` a.s. with
`0 < E X² < ∞`, `u, v > 0`, `ρ = u / v`; let `α_n` be the decreasing sort of
`v X_1, …, v X_n` and `β_n` the decreasing sort of `u X'_1, …, u X'_n` (all `X_i, X'_i`
independent copies of `X`). Then `‖β_n - ρ α_n‖ / ‖α_n‖ → 0` almost surely.

## Main statements

* `QKForms.proportionalLobes`: Lemma 6.
* `QKForms.accumulation_ae`: Theorem 5 of the paper (accumulation on `Θ`), almost surely,
  combining Lemma 6 with `QKForms.accumulation_ae_of_proportionalLobes`
  (`QKForms/Accumulation.lean`).
* `QKForms.Lemma6.tendsto_sq_div_of_averages`: its deterministic core, along one sample path.
* `QKForms.Lemma6.ae_tendsto_average`: the strong law for `g(X_i)` in the encoding below
  (from `ProbabilityTheory.strong_law_ae_real`).

## Proof (a discretization of the comonotone coupling)

With `Y_n, Y'_n` the sorted unscaled samples, `QKForms.tendsto_lobeMisfit_of_tendsto_sq`
(`QKForms/LobeEstimates.lean`) reduces Lemma 6 to `‖Y'_n - Y_n‖² / n → 0`, given
`(1/n) ∑ X_i² → E X² > 0` (strong law). For the step functions
`φ_m = ∑_{k<(m+1)²} (1/(m+1)) ψ_{(k+1)/(m+1)}`, `ψ_t = 1_{(t, ∞)}` (monotone, so sorting commutes
with them), the triangle inequality gives
`‖Y' - Y‖ ≤ ‖Y' - φ_m Y'‖ + ∑_k (1/(m+1)) ‖ψ_k Y' - ψ_k Y‖ + ‖φ_m Y - Y‖`;
`‖Y - φ_m Y‖² = ∑_i (X_i - φ_m X_i)²` (sorting does not change sums) and `ψ_t Y` is the indicator
of an initial segment of length `N_t = #{i < n : X_i > t}`, so `‖ψ_t Y' - ψ_t Y‖² = |N'_t - N_t|`.
Divided by `√n`, by the strong law the bound tends to `2 √(E (X - φ_m X)²)`, which tends to
`0` with `m` by dominated convergence (`0 ≤ X - φ_m X ≤ 1/(m+1)` on `[0, m+1]`).

## Encoding

As in docs/theory.md, "Accumulation on Θ": `X, X' : ℕ → Ω → ℝ` measurable (indices from `0`),
the family `(X_i)_i ⊔ (X'_i)_i` independent (`iIndepFun (Sum.elim X X') P`), every `X_i, X'_i`
with law `γ` (`P.map (X i) = γ`), `γ((-∞, 0]) = 0`, `y ↦ y²` γ-integrable (finite second moment) and
`0 < ∫ y² dγ`; `P` a probability measure. The conclusion is about
`lobeMisfit u v (X · ω) (X' · ω) n = ‖β_n - (u/v) α_n‖ / ‖α_n‖` (`QKForms/LobeEstimates.lean`).
Only pairwise independence within each of the two families is used.
-/

noncomputable section

open Filter Topology MeasureTheory ProbabilityTheory

namespace QKForms

namespace Lemma6

open Sorting

/-! ### Step functions -/

/-- The indicator `ψ_t(y) = 1_{t < y}`. -/
noncomputable def stepInd (t y : ℝ) : ℝ := if t < y then 1 else 0

theorem stepInd_of_lt {t y : ℝ} (h : t < y) : stepInd t y = 1 := by
  unfold stepInd
  exact if_pos h

theorem stepInd_of_le {t y : ℝ} (h : y ≤ t) : stepInd t y = 0 := by
  unfold stepInd
  exact if_neg (not_lt.2 h)

theorem stepInd_nonneg (t y : ℝ) : 0 ≤ stepInd t y := by
  by_cases h : t < y
  · simp only [stepInd_of_lt h, zero_le_one]
  · simp only [stepInd_of_le (not_lt.1 h), le_refl]

theorem monotone_stepInd (t : ℝ) : Monotone (stepInd t) := by
  intro a b hab
  by_cases ha : t < a
  · simp only [stepInd_of_lt ha, stepInd_of_lt (lt_of_lt_of_le ha hab), le_refl]
  · rw [stepInd_of_le (not_lt.1 ha)]
    exact stepInd_nonneg t b

theorem stepInd_le_one (t y : ℝ) : stepInd t y ≤ 1 := by
  by_cases h : t < y
  · exact (stepInd_of_lt h).le
  · exact (stepInd_of_le (not_lt.1 h)).le.trans zero_le_one

theorem measurable_stepInd (t : ℝ) : Measurable (stepInd t) := by
  show Measurable fun y : ℝ => if t < y then (1 : ℝ) else 0
  exact Measurable.ite measurableSet_Ioi measurable_const measurable_const

/-- The step function `∑_{k<K} h ψ_{(k+1)h}`. -/
noncomputable def stepSum (h : ℝ) (K : ℕ) (y : ℝ) : ℝ :=
  ∑ k ∈ Finset.range K, h * stepInd (((k : ℝ) + 1) * h) y

theorem stepSum_succ (h : ℝ) (K : ℕ) (y : ℝ) :
    stepSum h (K + 1) y = stepSum h K y + h * stepInd (((K : ℝ) + 1) * h) y := by
  unfold stepSum
  rw [Finset.sum_range_succ]

theorem stepSum_nonneg {h : ℝ} (hh : 0 ≤ h) (K : ℕ) (y : ℝ) : 0 ≤ stepSum h K y :=
  Finset.sum_nonneg fun _ _ => mul_nonneg hh (stepInd_nonneg _ _)

theorem stepSum_le_succ {h : ℝ} (hh : 0 ≤ h) (K : ℕ) (y : ℝ) :
    stepSum h K y ≤ stepSum h (K + 1) y := by
  rw [stepSum_succ]
  have := mul_nonneg hh (stepInd_nonneg (((K : ℝ) + 1) * h) y)
  linarith

theorem stepSum_of_lt {h : ℝ} (hh : 0 < h) :
    ∀ (K : ℕ) (y : ℝ), (K : ℝ) * h < y → stepSum h K y = K * h
  | 0, y, _ => by
      simp only [stepSum, Finset.range_zero, Finset.sum_empty, Nat.cast_zero, zero_mul]
  | K + 1, y, hy => by
      have hcast : ((K + 1 : ℕ) : ℝ) = (K : ℝ) + 1 := Nat.cast_succ K
      rw [hcast] at hy ⊢
      have hy' : (K : ℝ) * h < y := by nlinarith
      rw [stepSum_succ, stepSum_of_lt hh K y hy', stepInd_of_lt hy]
      ring

theorem stepSum_le {h : ℝ} (hh : 0 < h) :
    ∀ (K : ℕ) (y : ℝ), 0 ≤ y → stepSum h K y ≤ y
  | 0, y, hy => by
      simp only [stepSum, Finset.range_zero, Finset.sum_empty]
      exact hy
  | K + 1, y, hy => by
      have hcast : ((K + 1 : ℕ) : ℝ) = (K : ℝ) + 1 := Nat.cast_succ K
      by_cases hlt : ((K : ℝ) + 1) * h < y
      · rw [stepSum_of_lt hh (K + 1) y (by rw [hcast]; exact hlt), hcast]
        exact hlt.le
      · rw [stepSum_succ, stepInd_of_le (not_lt.1 hlt), mul_zero, add_zero]
        exact stepSum_le hh K y hy

theorem le_stepSum {h : ℝ} (hh : 0 < h) :
    ∀ (K : ℕ) (y : ℝ), 0 ≤ y → y ≤ K * h → y - h ≤ stepSum h K y
  | 0, y, _, hyK => by
      simp only [stepSum, Finset.range_zero, Finset.sum_empty]
      simp only [Nat.cast_zero, zero_mul] at hyK
      linarith
  | K + 1, y, hy0, hyK => by
      have hcast : ((K + 1 : ℕ) : ℝ) = (K : ℝ) + 1 := Nat.cast_succ K
      rw [hcast] at hyK
      have hmono := stepSum_le_succ hh.le K y
      by_cases hle : y ≤ (K : ℝ) * h
      · have := le_stepSum hh K y hy0 hle
        linarith
      · rw [stepSum_of_lt hh K y (not_le.1 hle)] at hmono
        linarith

theorem stepSum_zero_right {h : ℝ} (hh : 0 ≤ h) (K : ℕ) : stepSum h K 0 = 0 := by
  unfold stepSum
  apply Finset.sum_eq_zero
  intro k _
  have hk : (0 : ℝ) ≤ ((k : ℝ) + 1) * h := mul_nonneg (by positivity) hh
  rw [stepInd_of_le (t := ((k : ℝ) + 1) * h) (y := 0) hk, mul_zero]

theorem monotone_stepSum {h : ℝ} (hh : 0 ≤ h) (K : ℕ) : Monotone (stepSum h K) := by
  intro a b hab
  unfold stepSum
  exact Finset.sum_le_sum fun k _ => mul_le_mul_of_nonneg_left (monotone_stepInd _ hab) hh

/-- By induction on the number of steps (`Measurable.add`, `Measurable.const_mul`); this avoids
the finite-sum measurability lemma, whose name changed in 2025 (`Finset.measurable_fun_sum`). -/
theorem measurable_stepSum (h : ℝ) : ∀ K : ℕ, Measurable (stepSum h K)
  | 0 => by
      have e : stepSum h 0 = fun _ => (0 : ℝ) := by
        funext y
        simp only [stepSum, Finset.range_zero, Finset.sum_empty]
      rw [e]
      exact measurable_const
  | K + 1 => by
      have e : stepSum h (K + 1)
          = fun y => stepSum h K y + h * stepInd (((K : ℝ) + 1) * h) y := by
        funext y
        exact stepSum_succ h K y
      rw [e]
      exact (measurable_stepSum h K).add ((measurable_stepInd _).const_mul h)

/-- The step width `1/(m+1)` of the `m`-th approximation. -/
noncomputable def stepWidth (m : ℕ) : ℝ := 1 / ((m : ℝ) + 1)

/-- The number `(m+1)²` of steps of the `m`-th approximation. -/
def stepCount (m : ℕ) : ℕ := (m + 1) ^ 2

/-- The thresholds `(k+1)/(m+1)` of the `m`-th approximation. -/
noncomputable def threshold (m k : ℕ) : ℝ := ((k : ℝ) + 1) * stepWidth m

/-- The `m`-th step approximation `φ_m = ∑_{k<(m+1)²} (1/(m+1)) ψ_{(k+1)/(m+1)}`, with
`y - 1/(m+1) ≤ φ_m(y) ≤ y` on `[0, m+1]`. -/
noncomputable def stepApprox (m : ℕ) : ℝ → ℝ := stepSum (stepWidth m) (stepCount m)

theorem stepWidth_pos (m : ℕ) : 0 < stepWidth m := by
  unfold stepWidth
  positivity

theorem threshold_nonneg (m k : ℕ) : 0 ≤ threshold m k :=
  mul_nonneg (by positivity) (stepWidth_pos m).le

theorem stepCount_mul_stepWidth (m : ℕ) : (stepCount m : ℝ) * stepWidth m = (m : ℝ) + 1 := by
  have hne : (m : ℝ) + 1 ≠ 0 := by positivity
  unfold stepCount stepWidth
  rw [Nat.cast_pow, Nat.cast_succ, sq, mul_assoc, mul_one_div_cancel hne, mul_one]

theorem stepApprox_zero (m : ℕ) : stepApprox m 0 = 0 :=
  stepSum_zero_right (stepWidth_pos m).le _

theorem monotone_stepApprox (m : ℕ) : Monotone (stepApprox m) :=
  monotone_stepSum (stepWidth_pos m).le _

theorem measurable_stepApprox (m : ℕ) : Measurable (stepApprox m) :=
  measurable_stepSum _ _

theorem stepApprox_nonneg (m : ℕ) (y : ℝ) : 0 ≤ stepApprox m y :=
  stepSum_nonneg (stepWidth_pos m).le _ y

theorem stepApprox_le (m : ℕ) {y : ℝ} (hy : 0 ≤ y) : stepApprox m y ≤ y :=
  stepSum_le (stepWidth_pos m) _ y hy

/-- For `0 ≤ y ≤ m + 1`: `0 ≤ y - φ_m(y) ≤ 1/(m+1)`. -/
theorem sub_stepApprox_le (m : ℕ) {y : ℝ} (hy : 0 ≤ y) (hym : y ≤ (m : ℝ) + 1) :
    y - stepApprox m y ≤ stepWidth m := by
  have h := le_stepSum (stepWidth_pos m) (stepCount m) y hy
    (by rw [stepCount_mul_stepWidth]; exact hym)
  have h' : y - stepWidth m ≤ stepApprox m y := h
  linarith

theorem stepApprox_eq_sum (m : ℕ) (y : ℝ) :
    stepApprox m y = ∑ k ∈ Finset.range (stepCount m), stepWidth m * stepInd (threshold m k) y :=
  rfl

/-- `(y - φ_m(y))² → 0` for every `y ≥ 0`. -/
theorem tendsto_sq_sub_stepApprox {y : ℝ} (hy : 0 ≤ y) :
    Tendsto (fun m : ℕ => (y - stepApprox m y) ^ 2) atTop (𝓝 0) := by
  have hlim : Tendsto (fun m : ℕ => stepWidth m * stepWidth m) atTop (𝓝 0) := by
    -- `tendsto_one_div_add_atTop_nhds_zero_nat` is generic in the field `𝕜` (2025): fix `ℝ`
    have t : Tendsto (fun m : ℕ => 1 / ((m : ℝ) + 1)) atTop (𝓝 0) :=
      tendsto_one_div_add_atTop_nhds_zero_nat
    have h := t.mul t
    rw [mul_zero] at h
    exact h
  refine tendsto_of_tendsto_of_tendsto_of_le_of_le' tendsto_const_nhds hlim ?_ ?_
  · exact Eventually.of_forall fun m => sq_nonneg _
  filter_upwards [eventually_ge_atTop ⌈y⌉₊] with m hm
  have hm' : y ≤ (m : ℝ) + 1 := by
    have h1 := Nat.le_ceil y
    have h2 : (⌈y⌉₊ : ℝ) ≤ m := by exact_mod_cast hm
    linarith
  have h3 : 0 ≤ y - stepApprox m y := by
    have := stepApprox_le m hy
    linarith
  have h4 := sub_stepApprox_le m hy hm'
  -- `w² - d² = 2 d (w - d) + (w - d)²` with `d = y - φ_m(y) ≥ 0`, `w - d ≥ 0`
  have h5 := mul_nonneg h3 (sub_nonneg.2 h4)
  have h6 := mul_nonneg (sub_nonneg.2 h4) (sub_nonneg.2 h4)
  nlinarith [h5, h6]

/-- The domination used twice below: `‖(y - φ_m(y))²‖ ≤ y²` for `y ≥ 0`. -/
theorem norm_sq_sub_stepApprox_le (m : ℕ) {y : ℝ} (hy : 0 ≤ y) :
    ‖(y - stepApprox m y) ^ 2‖ ≤ y ^ 2 := by
  have h1 := stepApprox_le m hy
  have h2 := stepApprox_nonneg m y
  rw [Real.norm_eq_abs, abs_of_nonneg (sq_nonneg _)]
  -- `y² - (y - φ)² = φ y + φ (y - φ)` with `0 ≤ φ ≤ y`
  nlinarith [mul_nonneg h2 hy, mul_nonneg h2 (sub_nonneg.2 h1)]

/-- Dominated convergence: `∫ (y - φ_m(y))² dγ → 0` when `y > 0` γ-a.e. and `y²` is
γ-integrable. -/
theorem tendsto_integral_sq_sub_stepApprox {γ : Measure ℝ} (hpos : ∀ᵐ y ∂γ, 0 < y)
    (hint : Integrable (fun y : ℝ => y ^ 2) γ) :
    Tendsto (fun m : ℕ => ∫ y, (y - stepApprox m y) ^ 2 ∂γ) atTop (𝓝 0) := by
  have hmeas : ∀ m : ℕ, AEStronglyMeasurable (fun y : ℝ => (y - stepApprox m y) ^ 2) γ :=
    fun m => ((measurable_id.sub (measurable_stepApprox m)).pow_const 2).aestronglyMeasurable
  have hb : ∀ m : ℕ, ∀ᵐ y ∂γ, ‖(y - stepApprox m y) ^ 2‖ ≤ y ^ 2 := by
    intro m
    filter_upwards [hpos] with y hy
    exact norm_sq_sub_stepApprox_le m hy.le
  have hlim : ∀ᵐ y ∂γ, Tendsto (fun m : ℕ => (y - stepApprox m y) ^ 2) atTop (𝓝 0) :=
    hpos.mono fun y hy => tendsto_sq_sub_stepApprox hy.le
  -- `MeasureTheory.tendsto_integral_of_dominated_convergence`; `F` and `f` are read off the
  -- stated type
  have h : Tendsto (fun m : ℕ => ∫ y, (y - stepApprox m y) ^ 2 ∂γ) atTop
      (𝓝 (∫ _y, (0 : ℝ) ∂γ)) :=
    tendsto_integral_of_dominated_convergence (fun y : ℝ => y ^ 2) hmeas hint hb hlim
  rw [integral_zero] at h
  exact h

/-! ### Sorted indicator vectors -/

theorem sortedEntry_map_of_monotone {f : ℝ → ℝ} (hf : Monotone f) (hf0 : f 0 = 0)
    (s : Multiset ℝ) (j : ℕ) : sortedEntry (s.map f) j = f (sortedEntry s j) := by
  unfold sortedEntry
  rw [sortDesc_map_of_monotone hf, getD_map_of_map_zero hf0]

theorem map_stepInd_eq (t : ℝ) (s : Multiset ℝ) :
    s.map (stepInd t) = Multiset.replicate (Multiset.card (s.filter (fun y => t < y))) 1
      + Multiset.replicate (Multiset.card (s.filter (fun y => ¬ t < y))) 0 := by
  conv_lhs => rw [← Multiset.filter_add_not (p := fun y => t < y) s]
  rw [Multiset.map_add]
  congr 1
  · rw [Multiset.eq_replicate]
    refine ⟨Multiset.card_map _ _, fun b hb => ?_⟩
    obtain ⟨y, hy, rfl⟩ := Multiset.mem_map.1 hb
    exact stepInd_of_lt (Multiset.mem_filter.1 hy).2
  · rw [Multiset.eq_replicate]
    refine ⟨Multiset.card_map _ _, fun b hb => ?_⟩
    obtain ⟨y, hy, rfl⟩ := Multiset.mem_map.1 hb
    exact stepInd_of_le (not_lt.1 (Multiset.mem_filter.1 hy).2)

theorem sortDesc_map_stepInd (t : ℝ) (s : Multiset ℝ) :
    sortDesc (s.map (stepInd t))
      = List.replicate (Multiset.card (s.filter (fun y => t < y))) 1
        ++ List.replicate (Multiset.card (s.filter (fun y => ¬ t < y))) 0 := by
  have hperm : (sortDesc (s.map (stepInd t))).Perm
      (List.replicate (Multiset.card (s.filter (fun y => t < y))) 1
        ++ List.replicate (Multiset.card (s.filter (fun y => ¬ t < y))) 0) := by
    -- `Multiset.coe_add : (↑l₁ + ↑l₂ : Multiset α) = ↑(l₁ ++ l₂)`, used right to left
    rw [← Multiset.coe_eq_coe, coe_sortDesc, ← Multiset.coe_add, Multiset.coe_replicate,
      Multiset.coe_replicate]
    exact map_stepInd_eq t s
  have hsorted : (List.replicate (Multiset.card (s.filter (fun y => t < y))) (1 : ℝ)
      ++ List.replicate (Multiset.card (s.filter (fun y => ¬ t < y))) 0).Pairwise (· ≥ ·) := by
    rw [List.pairwise_append]
    refine ⟨List.pairwise_replicate.2 (Or.inr le_rfl), List.pairwise_replicate.2 (Or.inr le_rfl),
      ?_⟩
    intro a ha b hb
    rw [List.eq_of_mem_replicate ha, List.eq_of_mem_replicate hb]
    norm_num
  exact eq_of_perm_of_pairwise_ge hperm (pairwise_sortDesc _) hsorted

theorem getD_replicate_one_append (M : ℕ) :
    ∀ (N j : ℕ), (List.replicate N (1 : ℝ) ++ List.replicate M 0).getD j 0
      = if j < N then 1 else 0
  | 0, j => by
      rw [List.replicate_zero, List.nil_append, getD_replicate_zero, if_neg (Nat.not_lt_zero j)]
  | N + 1, 0 => by
      rw [List.replicate_succ, List.cons_append, List.getD_cons_zero, if_pos (by omega : 0 < N + 1)]
  | N + 1, j + 1 => by
      rw [List.replicate_succ, List.cons_append, List.getD_cons_succ,
        getD_replicate_one_append M N j]
      by_cases h : j < N
      · rw [if_pos h, if_pos (by omega : j + 1 < N + 1)]
      · rw [if_neg h, if_neg (by omega : ¬ (j + 1 < N + 1))]

theorem sortedEntry_map_stepInd (t : ℝ) (s : Multiset ℝ) (j : ℕ) :
    sortedEntry (s.map (stepInd t)) j
      = if j < Multiset.card (s.filter (fun y => t < y)) then 1 else 0 := by
  unfold sortedEntry
  rw [sortDesc_map_stepInd, getD_replicate_one_append]

theorem card_filter_le (t : ℝ) (s : Multiset ℝ) :
    Multiset.card (s.filter (fun y => t < y)) ≤ Multiset.card s := by
  have h := congrArg Multiset.card (Multiset.filter_add_not (p := fun y => t < y) s)
  rw [Multiset.card_add] at h
  rw [← h]
  exact Nat.le_add_right _ _

/-- The count of sample values above `t`, as a sum of indicators. -/
theorem card_filter_scaledSample (t : ℝ) (x : ℕ → ℝ) (n : ℕ) :
    ((Multiset.card ((scaledSample 1 x n).filter (fun y => t < y)) : ℕ) : ℝ)
      = ∑ i ∈ Finset.range n, stepInd t (x i) := by
  have h := congrArg Multiset.sum (map_stepInd_eq t (scaledSample 1 x n))
  rw [sum_map_scaledSample, Multiset.sum_add, Multiset.sum_replicate, Multiset.sum_replicate,
    smul_zero, add_zero, nsmul_eq_mul, mul_one] at h
  rw [← h]
  exact Finset.sum_congr rfl fun i _ => by rw [one_mul]

/-- `ψ_t` of the sorted sample is the indicator of an initial segment. -/
theorem stepInd_sampleLobe {t : ℝ} (ht : 0 ≤ t) (x : ℕ → ℝ) (n : ℕ) (j : Fin n) :
    stepInd t (sampleLobe 1 x n j)
      = if (j : ℕ) < Multiset.card ((scaledSample 1 x n).filter (fun y => t < y))
        then 1 else 0 := by
  show stepInd t (sortedEntry (scaledSample 1 x n) j) = _
  rw [← sortedEntry_map_of_monotone (monotone_stepInd t) (stepInd_of_le ht),
    sortedEntry_map_stepInd]

theorem sum_range_ite_lt (M : ℕ) :
    ∀ n : ℕ, ∑ j ∈ Finset.range n, (if j < M then (1 : ℝ) else 0) = ((min n M : ℕ) : ℝ)
  | 0 => by
      rw [Finset.sum_range_zero, min_eq_left (Nat.zero_le M), Nat.cast_zero]
  | n + 1 => by
      rw [Finset.sum_range_succ, sum_range_ite_lt M n]
      by_cases h : n < M
      · have h1 : n + 1 ≤ M := h
        have e : min (n + 1) M = min n M + 1 := by
          rw [min_eq_left h1, min_eq_left (Nat.le_of_lt h)]
        rw [if_pos h, e, Nat.cast_succ]
      · have h2 : M ≤ n := not_lt.1 h
        have e : min (n + 1) M = min n M := by
          rw [min_eq_right (le_trans h2 (Nat.le_succ n) : M ≤ n + 1), min_eq_right h2]
        rw [if_neg h, e, add_zero]

theorem sum_fin_ite_lt {n M : ℕ} (hM : M ≤ n) :
    ∑ j : Fin n, (if (j : ℕ) < M then (1 : ℝ) else 0) = M := by
  rw [Fin.sum_univ_eq_sum_range (fun j => if j < M then (1 : ℝ) else 0) n, sum_range_ite_lt M n,
    min_eq_right hM]

/-- Two sorted `0/1` vectors with `N` and `N'` ones are at squared distance `|N - N'|`. -/
theorem sum_sq_ite_sub_ite {n N N' : ℕ} (hN : N ≤ n) (hN' : N' ≤ n) :
    ∑ j : Fin n, ((if (j : ℕ) < N then (1 : ℝ) else 0) - (if (j : ℕ) < N' then 1 else 0)) ^ 2
      = |(N : ℝ) - N'| := by
  have hpt : ∀ j : Fin n,
      ((if (j : ℕ) < N then (1 : ℝ) else 0) - (if (j : ℕ) < N' then 1 else 0)) ^ 2
        = (if (j : ℕ) < N then (1 : ℝ) else 0) + (if (j : ℕ) < N' then 1 else 0)
          - 2 * (if (j : ℕ) < min N N' then 1 else 0) := by
    intro j
    -- the four cases of `(j < N, j < N')`; `j < min N N' ↔ j < N ∧ j < N'`
    by_cases h1 : (j : ℕ) < N <;> by_cases h2 : (j : ℕ) < N'
    · rw [if_pos h1, if_pos h2, if_pos (lt_min h1 h2)]
      norm_num
    · have h3 : ¬ (j : ℕ) < min N N' := fun h => h2 (lt_of_lt_of_le h (min_le_right N N'))
      rw [if_pos h1, if_neg h2, if_neg h3]
      norm_num
    · have h3 : ¬ (j : ℕ) < min N N' := fun h => h1 (lt_of_lt_of_le h (min_le_left N N'))
      rw [if_neg h1, if_pos h2, if_neg h3]
      norm_num
    · have h3 : ¬ (j : ℕ) < min N N' := fun h => h1 (lt_of_lt_of_le h (min_le_left N N'))
      rw [if_neg h1, if_neg h2, if_neg h3]
      norm_num
  simp only [hpt]
  rw [Finset.sum_sub_distrib, Finset.sum_add_distrib, ← Finset.mul_sum, sum_fin_ite_lt hN,
    sum_fin_ite_lt hN', sum_fin_ite_lt (le_trans (min_le_left N N') hN)]
  rcases le_total N N' with h | h
  · have h' : (N : ℝ) - N' ≤ 0 := sub_nonpos.2 (Nat.cast_le.2 h)
    rw [min_eq_left h, abs_of_nonpos h']
    ring
  · have h' : 0 ≤ (N : ℝ) - N' := sub_nonneg.2 (Nat.cast_le.2 h)
    rw [min_eq_right h, abs_of_nonneg h']
    ring

/-! ### The pathwise estimate -/

/-- `‖l2 of a finite sum‖ ≤ sum of l2`. -/
theorem l2_sum_le {ι : Type*} [Fintype ι] (f : ℕ → ι → ℝ) :
    ∀ K : ℕ, Vec.l2 (fun j => ∑ k ∈ Finset.range K, f k j) ≤ ∑ k ∈ Finset.range K, Vec.l2 (f k)
  | 0 => by
      simp only [Finset.range_zero, Finset.sum_empty]
      show Real.sqrt (∑ j : ι, (0 : ℝ) ^ 2) ≤ 0
      simp
  | K + 1 => by
      have h := Vec.l2_add_le (fun j => ∑ k ∈ Finset.range K, f k j) (f K)
      have hIH := l2_sum_le f K
      calc Vec.l2 (fun j => ∑ k ∈ Finset.range (K + 1), f k j)
          = Vec.l2 (fun j => ∑ k ∈ Finset.range K, f k j + f K j) := by
            congr 1
            funext j
            rw [Finset.sum_range_succ]
        _ ≤ Vec.l2 (fun j => ∑ k ∈ Finset.range K, f k j) + Vec.l2 (f K) := h
        _ ≤ ∑ k ∈ Finset.range K, Vec.l2 (f k) + Vec.l2 (f K) := by linarith
        _ = ∑ k ∈ Finset.range (K + 1), Vec.l2 (f k) := (Finset.sum_range_succ _ _).symm

/-- `‖Y - φ_m(Y)‖ = √(∑_{i<n} (x_i - φ_m(x_i))²)` for the sorted sample `Y`. -/
theorem l2_sub_stepApprox (m : ℕ) (x : ℕ → ℝ) (n : ℕ) :
    Vec.l2 (fun j => sampleLobe 1 x n j - stepApprox m (sampleLobe 1 x n j))
      = Real.sqrt (∑ i ∈ Finset.range n, (x i - stepApprox m (x i)) ^ 2) := by
  have h0 : (fun y : ℝ => (y - stepApprox m y) ^ 2) 0 = 0 := by
    show (0 - stepApprox m 0) ^ 2 = 0
    rw [stepApprox_zero]
    ring
  have h := sum_fin_sortedEntry (fun y : ℝ => (y - stepApprox m y) ^ 2) h0 (scaledSample 1 x n)
    (N := n) (le_of_eq (card_scaledSample 1 x n))
  rw [sum_map_scaledSample] at h
  show Real.sqrt (∑ j : Fin n, (sortedEntry (scaledSample 1 x n) j
      - stepApprox m (sortedEntry (scaledSample 1 x n) j)) ^ 2) = _
  rw [h]
  simp only [one_mul]

/-- `‖ψ_t(Y') - ψ_t(Y)‖ = √|N'_t - N_t|` for the sorted samples. -/
theorem l2_stepInd_sub {t : ℝ} (ht : 0 ≤ t) (x x' : ℕ → ℝ) (n : ℕ) :
    Vec.l2 (fun j => stepInd t (sampleLobe 1 x' n j) - stepInd t (sampleLobe 1 x n j))
      = Real.sqrt |((Multiset.card ((scaledSample 1 x' n).filter (fun y => t < y)) : ℕ) : ℝ)
          - ((Multiset.card ((scaledSample 1 x n).filter (fun y => t < y)) : ℕ) : ℝ)| := by
  have hN : Multiset.card ((scaledSample 1 x n).filter (fun y => t < y)) ≤ n := by
    have := card_filter_le t (scaledSample 1 x n)
    rwa [card_scaledSample] at this
  have hN' : Multiset.card ((scaledSample 1 x' n).filter (fun y => t < y)) ≤ n := by
    have := card_filter_le t (scaledSample 1 x' n)
    rwa [card_scaledSample] at this
  have e : (fun j => stepInd t (sampleLobe 1 x' n j) - stepInd t (sampleLobe 1 x n j))
      = fun j : Fin n =>
        (if (j : ℕ) < Multiset.card ((scaledSample 1 x' n).filter (fun y => t < y))
          then (1 : ℝ) else 0)
        - (if (j : ℕ) < Multiset.card ((scaledSample 1 x n).filter (fun y => t < y))
          then 1 else 0) := by
    funext j
    rw [stepInd_sampleLobe ht, stepInd_sampleLobe ht]
  rw [e]
  show Real.sqrt (∑ j : Fin n,
      ((if (j : ℕ) < Multiset.card ((scaledSample 1 x' n).filter (fun y => t < y))
          then (1 : ℝ) else 0)
        - (if (j : ℕ) < Multiset.card ((scaledSample 1 x n).filter (fun y => t < y))
          then 1 else 0)) ^ 2) = _
  rw [sum_sq_ite_sub_ite hN' hN]

/-- `‖φ(Y') - φ(Y)‖ ≤ ∑_k w ‖ψ_k(Y') - ψ_k(Y)‖`. -/
theorem l2_stepApprox_sub_le (m : ℕ) {n : ℕ} (Y Y' : Fin n → ℝ) :
    Vec.l2 (fun j => stepApprox m (Y' j) - stepApprox m (Y j))
      ≤ ∑ k ∈ Finset.range (stepCount m),
          stepWidth m * Vec.l2 (fun j => stepInd (threshold m k) (Y' j)
            - stepInd (threshold m k) (Y j)) := by
  have e : (fun j => stepApprox m (Y' j) - stepApprox m (Y j))
      = fun j => ∑ k ∈ Finset.range (stepCount m),
          stepWidth m * (stepInd (threshold m k) (Y' j) - stepInd (threshold m k) (Y j)) := by
    funext j
    rw [stepApprox_eq_sum, stepApprox_eq_sum, ← Finset.sum_sub_distrib]
    exact Finset.sum_congr rfl fun k _ => by ring
  rw [e]
  refine le_trans (l2_sum_le (fun k j => stepWidth m
    * (stepInd (threshold m k) (Y' j) - stepInd (threshold m k) (Y j))) (stepCount m)) ?_
  exact le_of_eq (Finset.sum_congr rfl fun k _ =>
    Vec.l2_const_mul (stepWidth_pos m).le
      (fun j => stepInd (threshold m k) (Y' j) - stepInd (threshold m k) (Y j)))

/-- **Pathwise estimate.** For every `m` and `n`:
`‖Y'_n - Y_n‖ ≤ √(∑ (x'_i - φ_m x'_i)²) + √(∑ (x_i - φ_m x_i)²) + ∑_k w_m √|N'_k - N_k|`. -/
theorem l2_sampleLobe_sub_le (m : ℕ) (x x' : ℕ → ℝ) (n : ℕ) :
    Vec.l2 (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)
      ≤ Real.sqrt (∑ i ∈ Finset.range n, (x' i - stepApprox m (x' i)) ^ 2)
        + Real.sqrt (∑ i ∈ Finset.range n, (x i - stepApprox m (x i)) ^ 2)
        + ∑ k ∈ Finset.range (stepCount m), stepWidth m * Real.sqrt
            |((Multiset.card ((scaledSample 1 x' n).filter (fun y => threshold m k < y)) : ℕ) : ℝ)
              - ((Multiset.card ((scaledSample 1 x n).filter (fun y => threshold m k < y)) : ℕ)
                : ℝ)| := by
  have hA := l2_sub_stepApprox m x' n
  have hC := l2_sub_stepApprox m x n
  have hB := l2_stepApprox_sub_le m (sampleLobe 1 x n) (sampleLobe 1 x' n)
  have hB' : ∀ k ∈ Finset.range (stepCount m),
      stepWidth m * Vec.l2 (fun j => stepInd (threshold m k) (sampleLobe 1 x' n j)
        - stepInd (threshold m k) (sampleLobe 1 x n j))
      = stepWidth m * Real.sqrt
          |((Multiset.card ((scaledSample 1 x' n).filter (fun y => threshold m k < y)) : ℕ) : ℝ)
            - ((Multiset.card ((scaledSample 1 x n).filter (fun y => threshold m k < y)) : ℕ)
              : ℝ)| := by
    intro k _
    rw [l2_stepInd_sub (threshold_nonneg m k)]
  rw [Finset.sum_congr rfl hB'] at hB
  -- split `Y' - Y = (Y' - φY') + (φY' - φY) + (φY - Y)`
  have hsplit : Vec.l2 (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)
      ≤ Vec.l2 (fun j => sampleLobe 1 x' n j - stepApprox m (sampleLobe 1 x' n j))
        + Vec.l2 (fun j => stepApprox m (sampleLobe 1 x' n j) - stepApprox m (sampleLobe 1 x n j))
        + Vec.l2 (fun j => sampleLobe 1 x n j - stepApprox m (sampleLobe 1 x n j)) := by
    have h1 := Vec.l2_add_le
      (fun j => sampleLobe 1 x' n j - stepApprox m (sampleLobe 1 x' n j))
      (fun j => stepApprox m (sampleLobe 1 x' n j) - stepApprox m (sampleLobe 1 x n j))
    have h2 := Vec.l2_add_le
      (fun j => (sampleLobe 1 x' n j - stepApprox m (sampleLobe 1 x' n j))
        + (stepApprox m (sampleLobe 1 x' n j) - stepApprox m (sampleLobe 1 x n j)))
      (fun j => stepApprox m (sampleLobe 1 x n j) - sampleLobe 1 x n j)
    have h3 := Vec.l2_sub_comm (fun j => sampleLobe 1 x n j)
      (fun j => stepApprox m (sampleLobe 1 x n j))
    have e : (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)
        = fun j => ((sampleLobe 1 x' n j - stepApprox m (sampleLobe 1 x' n j))
          + (stepApprox m (sampleLobe 1 x' n j) - stepApprox m (sampleLobe 1 x n j)))
          + (stepApprox m (sampleLobe 1 x n j) - sampleLobe 1 x n j) := by
      funext j
      ring
    rw [e]
    linarith
  linarith

/-- The normalized bound of the pathwise estimate (divided by `√n`). -/
noncomputable def lobeBound (x x' : ℕ → ℝ) (m n : ℕ) : ℝ :=
  Real.sqrt ((∑ i ∈ Finset.range n, (x' i - stepApprox m (x' i)) ^ 2) / (n : ℝ))
    + Real.sqrt ((∑ i ∈ Finset.range n, (x i - stepApprox m (x i)) ^ 2) / (n : ℝ))
    + ∑ k ∈ Finset.range (stepCount m), stepWidth m * Real.sqrt
        |(∑ i ∈ Finset.range n, stepInd (threshold m k) (x' i)) / (n : ℝ)
          - (∑ i ∈ Finset.range n, stepInd (threshold m k) (x i)) / (n : ℝ)|

/-- Deterministic core of Lemma 6: along a sample path on which the strong-law averages of
`(x_i - φ_m x_i)²` (for every `m`) and of the indicators `ψ_t(x_i)` (for every threshold `t` of
every `φ_m`) converge to the same limits for `x` and for `x'`, with `e_m → 0`, the sorted
samples satisfy `‖Y'_n - Y_n‖²/n → 0`. -/
theorem tendsto_sq_div_of_averages {x x' : ℕ → ℝ} (e : ℕ → ℝ) (he : Tendsto e atTop (𝓝 0))
    (hS : ∀ m, Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, (x i - stepApprox m (x i)) ^ 2)
      / (n : ℝ)) atTop (𝓝 (e m)))
    (hS' : ∀ m, Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, (x' i - stepApprox m (x' i)) ^ 2)
      / (n : ℝ)) atTop (𝓝 (e m)))
    (p : ℕ → ℕ → ℝ)
    (hN : ∀ m k, Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, stepInd (threshold m k) (x i))
      / (n : ℝ)) atTop (𝓝 (p m k)))
    (hN' : ∀ m k, Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, stepInd (threshold m k) (x' i))
      / (n : ℝ)) atTop (𝓝 (p m k))) :
    Tendsto (fun n : ℕ => (∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ))
      atTop (𝓝 0) := by
  have hBlim : ∀ m, Tendsto (lobeBound x x' m) atTop (𝓝 (Real.sqrt (e m) + Real.sqrt (e m))) := by
    intro m
    have h1 := ((hS' m).sqrt).add ((hS m).sqrt)
    have h2 : Tendsto (fun n : ℕ => ∑ k ∈ Finset.range (stepCount m), stepWidth m * Real.sqrt
        |(∑ i ∈ Finset.range n, stepInd (threshold m k) (x' i)) / (n : ℝ)
          - (∑ i ∈ Finset.range n, stepInd (threshold m k) (x i)) / (n : ℝ)|) atTop
        (𝓝 (∑ k ∈ Finset.range (stepCount m), stepWidth m * Real.sqrt |p m k - p m k|)) :=
      tendsto_finset_sum _ fun k _ => (((hN' m k).sub (hN m k)).abs.sqrt).const_mul _
    simp only [sub_self, abs_zero, Real.sqrt_zero, mul_zero, Finset.sum_const_zero] at h2
    have h3 := h1.add h2
    rw [add_zero] at h3
    exact h3
  -- `r n = ‖Y'_n - Y_n‖ / √n ≤ lobeBound x x' m n`
  have hbound : ∀ m n, Vec.l2 (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)
      / Real.sqrt n ≤ lobeBound x x' m n := by
    intro m n
    have hsn : 0 ≤ Real.sqrt n := Real.sqrt_nonneg _
    have hn : (0 : ℝ) ≤ n := Nat.cast_nonneg n
    have h := l2_sampleLobe_sub_le m x x' n
    calc Vec.l2 (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j) / Real.sqrt n
        ≤ (Real.sqrt (∑ i ∈ Finset.range n, (x' i - stepApprox m (x' i)) ^ 2)
            + Real.sqrt (∑ i ∈ Finset.range n, (x i - stepApprox m (x i)) ^ 2)
            + ∑ k ∈ Finset.range (stepCount m), stepWidth m * Real.sqrt
              |((Multiset.card ((scaledSample 1 x' n).filter
                  (fun y => threshold m k < y)) : ℕ) : ℝ)
                - ((Multiset.card ((scaledSample 1 x n).filter
                  (fun y => threshold m k < y)) : ℕ) : ℝ)|) / Real.sqrt n := by
          gcongr <;> exact h
      _ = lobeBound x x' m n := by
          unfold lobeBound
          rw [add_div, add_div, Finset.sum_div, ← Real.sqrt_div' _ hn, ← Real.sqrt_div' _ hn]
          congr 1
          refine Finset.sum_congr rfl fun k _ => ?_
          -- The first branch rewrites the left summand into the right one (order-sensitive:
          -- `mul_div_assoc` and `← Real.sqrt_div'` on the left, then `← sub_div` on the right);
          -- the second puts the right summand into the form `w * √|a - b| / √n` and lets
          -- `ring` close `w * √c / √n = w * (√c / √n)`.
          -- closes by: the first branch (its closing `rfl` is syntactic) at the pin
          first
          | (rw [card_filter_scaledSample, card_filter_scaledSample, mul_div_assoc,
                ← Real.sqrt_div' _ hn, ← sub_div, abs_div, abs_of_nonneg hn]
             done)
          | (rw [card_filter_scaledSample, card_filter_scaledSample, ← sub_div, abs_div,
                abs_of_nonneg hn, Real.sqrt_div' _ hn]
             ring)
  -- conclude with `r n → 0`
  have hr : Tendsto (fun n : ℕ => Vec.l2 (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)
      / Real.sqrt n) atTop (𝓝 0) := by
    rw [tendsto_order]
    refine ⟨fun a ha => Eventually.of_forall fun n => lt_of_lt_of_le ha
      (div_nonneg (Vec.l2_nonneg _) (Real.sqrt_nonneg _)), fun a ha => ?_⟩
    have hse : Tendsto (fun m => Real.sqrt (e m) + Real.sqrt (e m)) atTop (𝓝 0) := by
      have h := he.sqrt.add he.sqrt
      rw [Real.sqrt_zero, add_zero] at h
      exact h
    obtain ⟨m, hm⟩ := ((tendsto_order.1 hse).2 a ha).exists
    filter_upwards [(tendsto_order.1 (hBlim m)).2 a hm] with n hn
    exact lt_of_le_of_lt (hbound m n) hn
  have hsq := hr.pow 2
  rw [zero_pow two_ne_zero] at hsq
  refine hsq.congr fun n => ?_
  show (Vec.l2 (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j) / Real.sqrt n) ^ 2
    = (∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ)
  rw [div_pow, Vec.l2_sq, Real.sq_sqrt (Nat.cast_nonneg n)]

/-! ### The strong law along the encoding of Lemma 6 -/

/-- Strong law for `g(X_i)`: pairwise independent `X_i` with common law `γ` and `g`
γ-integrable. Uses `ProbabilityTheory.strong_law_ae_real` (Mathlib/Probability/StrongLaw.lean). -/
theorem ae_tendsto_average {Ω : Type*} [MeasurableSpace Ω] {P : Measure Ω} {X : ℕ → Ω → ℝ}
    {γ : Measure ℝ} (hXm : ∀ i, Measurable (X i))
    (hindep : Pairwise fun i j => IndepFun (X i) (X j) P) (hlaw : ∀ i, P.map (X i) = γ)
    {g : ℝ → ℝ} (hg : Measurable g) (hgi : Integrable g γ) :
    ∀ᵐ ω ∂P, Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, g (X i ω)) / (n : ℝ)) atTop
      (𝓝 (∫ y, g y ∂γ)) := by
  have hint : Integrable (g ∘ X 0) P :=
    (integrable_map_measure hg.aestronglyMeasurable (hXm 0).aemeasurable).1
      (by rw [hlaw 0]; exact hgi)
  have hind' : Pairwise fun i j => IndepFun (g ∘ X i) (g ∘ X j) P :=
    fun i j hij => (hindep hij).comp hg hg
  -- the structure `IdentDistrib` has fields `aemeasurable_fst`, `aemeasurable_snd`, `map_eq`;
  -- the type ascription fixes both measures to `P` before the `map_eq` goal is elaborated
  have hident : ∀ i, IdentDistrib (g ∘ X i) (g ∘ X 0) P P := fun i =>
    (⟨(hXm i).aemeasurable, (hXm 0).aemeasurable, by rw [hlaw i, hlaw 0]⟩ :
      IdentDistrib (X i) (X 0) P P).comp hg
  have h := strong_law_ae_real (fun i => g ∘ X i) hint hind' hident
  have hmean : ∫ ω, (g ∘ X 0) ω ∂P = ∫ y, g y ∂γ := by
    rw [← hlaw 0, integral_map (hXm 0).aemeasurable hg.aestronglyMeasurable]
    all_goals rfl
  -- closes by: the first branch at the pin; the second transports `h` along `hmean` with `▸`
  -- (no rewrite inside `h` needs the integrand to occur as written)
  first
  | (rw [hmean] at h
     exact h)
  | exact hmean ▸ h

end Lemma6

open Lemma6

/-- **Lemma 6 of the paper (proportional lobes).** Let `X, X' : ℕ → Ω → ℝ` be measurable, the
family `(X_i)_i ⊔ (X'_i)_i` independent (`iIndepFun` of `Sum.elim X X'`), each with law `γ`,
where `γ((-∞, 0]) = 0`, `y ↦ y²` is γ-integrable and `0 < ∫ y² dγ`. Let `u, v > 0`,
`α_n` the decreasing sort of `v X_1, …, v X_n` and `β_n` that of `u X'_1, …, u X'_n`. Then
almost surely `‖β_n - (u/v) α_n‖ / ‖α_n‖ → 0` (`lobeMisfit`).

*Encoding.* Indices start at `0`; finiteness of `E X²` is the γ-integrability of `y ↦ y²`.
[qkforms:lemma6] -/
theorem proportionalLobes {Ω : Type*} [MeasurableSpace Ω] {P : Measure Ω}
    [IsProbabilityMeasure P] {X X' : ℕ → Ω → ℝ} {γ : Measure ℝ}
    (hXm : ∀ i, Measurable (X i)) (hX'm : ∀ i, Measurable (X' i))
    (hindep : iIndepFun (Sum.elim X X') P)
    (hlaw : ∀ i, P.map (X i) = γ) (hlaw' : ∀ i, P.map (X' i) = γ)
    (hγ : γ (Set.Iic 0) = 0) (hint : Integrable (fun y : ℝ => y ^ 2) γ)
    (hm : 0 < ∫ y, y ^ 2 ∂γ) {u v : ℝ} (hu : 0 < u) (hv : 0 < v) :
    ∀ᵐ ω ∂P, Tendsto (lobeMisfit u v (fun i => X i ω) (fun i => X' i ω)) atTop (𝓝 0) := by
  -- pairwise independence within each family
  -- `iIndepFun.indepFun` takes the indices `{i j : ι}` implicitly; the first branch names them
  -- (`Sum.inl i`, `Sum.inl j`), the second lets the type of the `≠` proof fix them. Either
  -- result is `IndepFun (Sum.elim X X' (Sum.inl i)) …`, which is `IndepFun (X i) …` by `Sum.elim`.
  have hpair : Pairwise fun i j => IndepFun (X i) (X j) P := fun i j hij => by
    -- closes by: the first branch at the pin
    first
    | exact hindep.indepFun (i := Sum.inl i) (j := Sum.inl j)
        (fun h => hij (Sum.inl_injective h))
    | exact hindep.indepFun
        ((fun h => hij (Sum.inl_injective h)) : (Sum.inl i : ℕ ⊕ ℕ) ≠ Sum.inl j)
  have hpair' : Pairwise fun i j => IndepFun (X' i) (X' j) P := fun i j hij => by
    -- closes by: the first branch at the pin
    first
    | exact hindep.indepFun (i := Sum.inr i) (j := Sum.inr j)
        (fun h => hij (Sum.inr_injective h))
    | exact hindep.indepFun
        ((fun h => hij (Sum.inr_injective h)) : (Sum.inr i : ℕ ⊕ ℕ) ≠ Sum.inr j)
  -- `γ`-a.e. positivity
  have hposγ : ∀ᵐ y ∂γ, 0 < y := by
    rw [ae_iff]
    have e : {a : ℝ | ¬ 0 < a} = Set.Iic 0 := by
      ext a
      simp only [Set.mem_setOf_eq, Set.mem_Iic, not_lt]
    rw [e]
    exact hγ
  -- integrability of the test functions
  have hsq_meas : Measurable fun y : ℝ => y ^ 2 := measurable_id.pow_const 2
  have hS_meas : ∀ m, Measurable fun y : ℝ => (y - stepApprox m y) ^ 2 :=
    fun m => (measurable_id.sub (measurable_stepApprox m)).pow_const 2
  have hS_int : ∀ m, Integrable (fun y : ℝ => (y - stepApprox m y) ^ 2) γ := by
    intro m
    refine Integrable.mono' hint (hS_meas m).aestronglyMeasurable ?_
    filter_upwards [hposγ] with y hy
    exact norm_sq_sub_stepApprox_le m hy.le
  have hψ_int : ∀ m k, Integrable (stepInd (threshold m k)) γ := by
    intro m k
    haveI : IsProbabilityMeasure γ := by
      rw [← hlaw 0]
      -- `MeasureTheory.Measure.isProbabilityMeasure_map` (namespace `Measure` since 2025)
      exact Measure.isProbabilityMeasure_map (hXm 0).aemeasurable
    refine Integrable.mono' (integrable_const (1 : ℝ)) (measurable_stepInd _).aestronglyMeasurable
      (Eventually.of_forall fun y => ?_)
    rw [Real.norm_eq_abs, abs_of_nonneg (stepInd_nonneg _ _)]
    exact stepInd_le_one _ _
  -- the almost-sure events
  have hA := ae_tendsto_average hXm hpair hlaw hsq_meas hint
  have hS := fun m => ae_tendsto_average hXm hpair hlaw (hS_meas m) (hS_int m)
  have hS' := fun m => ae_tendsto_average hX'm hpair' hlaw' (hS_meas m) (hS_int m)
  have hN := fun m k => ae_tendsto_average hXm hpair hlaw (measurable_stepInd (threshold m k))
    (hψ_int m k)
  have hN' := fun m k => ae_tendsto_average hX'm hpair' hlaw' (measurable_stepInd (threshold m k))
    (hψ_int m k)
  have hS_all := ae_all_iff.2 hS
  have hS'_all := ae_all_iff.2 hS'
  -- The two-index events are stated with their type, so that `ae_all_iff.2` is elaborated
  -- against a known goal (no higher-order unification from an unknown expected type); the
  -- second branch unfolds the same two equivalences by `rw` and ends with `exact`.
  have hN_all : ∀ᵐ ω ∂P, ∀ m k, Tendsto (fun n : ℕ =>
      (∑ i ∈ Finset.range n, stepInd (threshold m k) (X i ω)) / (n : ℝ)) atTop
      (𝓝 (∫ y, stepInd (threshold m k) y ∂γ)) := by
    -- closes by: the first branch at the pin
    first
    | exact ae_all_iff.2 fun m => ae_all_iff.2 (hN m)
    | (rw [ae_all_iff]
       intro m
       rw [ae_all_iff]
       exact hN m)
  have hN'_all : ∀ᵐ ω ∂P, ∀ m k, Tendsto (fun n : ℕ =>
      (∑ i ∈ Finset.range n, stepInd (threshold m k) (X' i ω)) / (n : ℝ)) atTop
      (𝓝 (∫ y, stepInd (threshold m k) y ∂γ)) := by
    -- closes by: the first branch at the pin
    first
    | exact ae_all_iff.2 fun m => ae_all_iff.2 (hN' m)
    | (rw [ae_all_iff]
       intro m
       rw [ae_all_iff]
       exact hN' m)
  have he := tendsto_integral_sq_sub_stepApprox hposγ hint
  filter_upwards [hA, hS_all, hS'_all, hN_all, hN'_all] with ω hωA hωS hωS' hωN hωN'
  refine tendsto_lobeMisfit_of_tendsto_sq hu hv hm hωA ?_
  exact tendsto_sq_div_of_averages (fun m => ∫ y, (y - stepApprox m y) ^ 2 ∂γ) he hωS hωS'
    (fun m k => ∫ y, stepInd (threshold m k) y ∂γ) hωN hωN'

open scoped Matrix in
/-- **Theorem 5 of the paper (accumulation on Θ).** Let `X, X' : ℕ → Ω → ℝ` be measurable, the
family `(X_i)_i ⊔ (X'_i)_i` independent, each with law `γ`, where `γ((-∞, 0]) = 0` (`X > 0`
almost surely), `y ↦ y²` is γ-integrable and `0 < ∫ y² dγ` (finite nonzero second moment); let
`u, v > 0`, `ρ = u / v`, `N n ≥ 2n`, and let `S ω n` be symmetric `N n × N n` matrices with
eigenvalue multisets `{v X_i(ω)}_{i<n} + {-u X'_i(ω)}_{i<n} + (N n - 2n)·{0}`. Then almost surely
`profile (S ω n) → (0, 2ρ, (1-ρ)₊², (ρ-1)₊²) / (1 + ρ²)`; the limit lies in `p(Θ)`
(`QKForms.accumulationLimit_mem_mergeAB_image_Theta`) and traces the edges of `Δ`
(`QKForms.bijOn_edgeB_Ioc`, `QKForms.bijOn_edgeB_Ici`).

*Encoding.* The hypotheses on `X, X'` are exactly those of Lemma 6 (`QKForms.proportionalLobes`;
indices start at `0`); the almost-sure positivity of every `X_i, X'_i` follows from
`γ((-∞, 0]) = 0` (`QKForms.ae_forall_pos_of_map_eq`). The eigenvalue hypothesis is the equality
of multisets `eigs (S ω n) = accumulationSpectrum …` (roots of the characteristic polynomial, with
multiplicity). [qkforms:thm5] -/
theorem accumulation_ae {Ω : Type*} [MeasurableSpace Ω] {P : Measure Ω}
    [IsProbabilityMeasure P] {X X' : ℕ → Ω → ℝ} {γ : Measure ℝ}
    (hXm : ∀ i, Measurable (X i)) (hX'm : ∀ i, Measurable (X' i))
    (hindep : iIndepFun (Sum.elim X X') P)
    (hlaw : ∀ i, P.map (X i) = γ) (hlaw' : ∀ i, P.map (X' i) = γ)
    (hγ : γ (Set.Iic 0) = 0) (hint : Integrable (fun y : ℝ => y ^ 2) γ)
    (hm : 0 < ∫ y, y ^ 2 ∂γ) {u v : ℝ} (hu : 0 < u) (hv : 0 < v)
    {N : ℕ → ℕ} (hN : ∀ n, 2 * n ≤ N n)
    (S : Ω → ∀ n, Matrix (Fin (N n)) (Fin (N n)) ℝ) (hS : ∀ ω n, (S ω n)ᵀ = S ω n)
    (heigs : ∀ ω n,
      eigs (S ω n) = accumulationSpectrum u v (fun i => X i ω) (fun i => X' i ω) n (N n)) :
    ∀ᵐ ω ∂P, Tendsto (fun n => profile (S ω n)) atTop (𝓝 (accumulationLimit (u / v))) :=
  accumulation_ae_of_proportionalLobes hu hv (ae_forall_pos_of_map_eq hXm hlaw hγ)
    (ae_forall_pos_of_map_eq hX'm hlaw' hγ) hN S hS heigs
    (proportionalLobes hXm hX'm hindep hlaw hlaw' hγ hint hm hu hv)

end QKForms

end

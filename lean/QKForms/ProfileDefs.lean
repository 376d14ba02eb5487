/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.Basic

/-!
# The profile map: definitions (Definition 6 of the paper)

For `L ∈ M_N(ℝ)` with symmetric part `S`, the *lobes* of `L` are the decreasing list `α` of the
positive eigenvalues of `S` and the decreasing list `β` of the absolute values of its negative
eigenvalues, both padded with zeros. The profile is `π(L) = (a, b, c, d)` with
`a = ‖T‖²/‖L‖²`, `b = 2⟨α, β⟩/‖L‖²`, `c = ‖(α - β)₊‖²/‖L‖²`, `d = ‖(α - β)₋‖²/‖L‖²`
(THEORY §4, Definition 6).

## Main definitions

* `QKForms.sortDesc m`: the decreasing sort of a multiset of reals, as a list.
* `QKForms.sortedEntry m j`: its `j`-th entry, `0` past the end.
* `QKForms.posLobeOf k m`, `QKForms.negLobeOf k m : Fin k → ℝ`: the lobes of a multiset `m` of
  eigenvalues, padded to length `k`.
* `QKForms.posLobe L`, `QKForms.negLobe L : Fin (Fintype.card ι) → ℝ`: the lobes of `L`, i.e. of
  `eigs (symPart L)`.
* `QKForms.lobeCross α β = ∑ j, α j * β j` and `QKForms.lobeExcess α β = ∑ j, ((α j - β j)₊)²`:
  the numerators of the coordinates `b, c, d`.
* `QKForms.profileA`, `profileB`, `profileC`, `profileD`, `QKForms.profile`.

## Main statements

* `QKForms.sortDesc_eq_ofFn`: the decreasing sort of `m` is `List.ofFn μ` for any antitone
  enumeration `μ : Fin k → ℝ` of `m`.
* `QKForms.posLobeOf_eq_of_antitone`, `QKForms.negLobeOf_eq_of_antitone`: in terms of such an
  enumeration, `α j = max (μ j) 0` and `β j = max (-μ (Fin.rev j)) 0`.
* `QKForms.posLobe_eq_of_eigs`, `QKForms.profile_eq_of_isSymm`: the lobes and the profile of a
  symmetric matrix `S` are functions of the multiset `eigs S` (and of `frobSq S`, which itself
  is the sum of the squared eigenvalues, see `QKForms.frobSq_eq_sum_sq_eigs` in
  `QKForms/ProfileDefs.lean` below).

## Encoding

Following THEORY §4 (**CHOICE for Lean**), both lobes have length `N = Fintype.card ι`: they are
indexed by `Fin (Fintype.card ι)`. We sort all `N` eigenvalues of `S` decreasingly *once*
(`sortDesc`, a `Multiset.sort`), obtaining `μ₀ ≥ μ₁ ≥ … ≥ μ_{N-1}`, and put
`α j = max μ_j 0` and `β j = max (-μ_{N-1-j}) 0`. Since `x ↦ max x 0` is monotone and
`x ↦ max (-x) 0` is antitone, `α` is the decreasing sort of the multiset `{max λ 0}` and `β` the
decreasing sort of `{max (-λ) 0}` over all eigenvalues `λ` of `S`: this is exactly the zero
padding of THEORY §4 (zero eigenvalues and padding contribute `0` to every sum). The
coordinate `d` is written `∑ j ((β_j - α_j)₊)²`, which equals `‖(α - β)₋‖²`.
Each coordinate is a quotient by `frobSq L`, so Lean's convention `x / 0 = 0` gives
`profile 0 = (0, 0, 0, 0)`; every theorem about the profile assumes `L ≠ 0`.
`Multiset.sort` changed its argument order in 2025; it is only used through dot notation
(`m.sort (· ≥ ·)`) and named arguments, which work with both orders.
-/

namespace QKForms

open Matrix

section Sorting

/-- The decreasing sort of a multiset of reals (a list of length `Multiset.card m`). -/
noncomputable def sortDesc (m : Multiset ℝ) : List ℝ := m.sort (· ≥ ·)

/-- The `j`-th entry of the decreasing sort of `m`, and `0` past its end. -/
noncomputable def sortedEntry (m : Multiset ℝ) (j : ℕ) : ℝ := (sortDesc m).getD j 0

/-- The decreasing sort is a permutation of the multiset. -/
theorem coe_sortDesc (m : Multiset ℝ) : ((sortDesc m : List ℝ) : Multiset ℝ) = m := by
  unfold sortDesc
  -- `Multiset.sort_eq` (Mathlib/Data/Multiset/Sort.lean); named arguments because the order of
  -- its explicit arguments changed in 2025.
  exact Multiset.sort_eq (s := m) (r := fun a b : ℝ => a ≥ b)

/-- The decreasing sort is sorted. -/
theorem pairwise_sortDesc (m : Multiset ℝ) : (sortDesc m).Pairwise (· ≥ ·) := by
  unfold sortDesc
  -- `Multiset.pairwise_sort` (new name) / `Multiset.sort_sorted` (old name, `List.Sorted` is
  -- `List.Pairwise`), Mathlib/Data/Multiset/Sort.lean.
  first
  | exact Multiset.pairwise_sort (s := m) (r := fun a b : ℝ => a ≥ b)
  | exact Multiset.sort_sorted (s := m) (r := fun a b : ℝ => a ≥ b)

theorem length_sortDesc (m : Multiset ℝ) : (sortDesc m).length = Multiset.card m := by
  rw [← Multiset.coe_card, coe_sortDesc]

/-- Two decreasingly sorted lists with the same elements are equal. -/
theorem eq_of_perm_of_pairwise_ge : ∀ {l₁ l₂ : List ℝ}, l₁.Perm l₂ →
    l₁.Pairwise (· ≥ ·) → l₂.Pairwise (· ≥ ·) → l₁ = l₂
  | [], _, h, _, _ => h.nil_eq
  | _ :: _, [], h, _, _ => h.eq_nil
  | a :: t₁, b :: t₂, h, h₁, h₂ => by
    rw [List.pairwise_cons] at h₁ h₂
    have hb : b ∈ a :: t₁ := h.mem_iff.2 (List.mem_cons.2 (Or.inl rfl))
    have ha : a ∈ b :: t₂ := h.mem_iff.1 (List.mem_cons.2 (Or.inl rfl))
    have hba : b ≤ a := by
      rcases List.mem_cons.1 hb with hb' | hb'
      · exact le_of_eq hb'
      · exact h₁.1 b hb'
    have hab : a ≤ b := by
      rcases List.mem_cons.1 ha with ha' | ha'
      · exact le_of_eq ha'
      · exact h₂.1 a ha'
    have hEq : a = b := le_antisymm hab hba
    subst hEq
    have ht : t₁.Perm t₂ := (List.perm_cons a).1 h
    rw [eq_of_perm_of_pairwise_ge ht h₁.2 h₂.2]

/-- The multiset of values of a function on `Fin k` is the multiset of `List.ofFn`. -/
theorem map_univ_val_eq_coe_ofFn {k : ℕ} (μ : Fin k → ℝ) :
    Multiset.map μ Finset.univ.val = ((List.ofFn μ : List ℝ) : Multiset ℝ) := by
  -- `Fin.univ_val_map : univ.val.map f = List.ofFn f` (Mathlib/Algebra/BigOperators/Fin.lean)
  exact Fin.univ_val_map μ

/-- The decreasing sort of `m` is `List.ofFn μ` for any antitone enumeration `μ` of `m`. -/
theorem sortDesc_eq_ofFn {k : ℕ} (μ : Fin k → ℝ) (hμ : Antitone μ) {m : Multiset ℝ}
    (hm : Multiset.map μ Finset.univ.val = m) : sortDesc m = List.ofFn μ := by
  have hperm : (sortDesc m).Perm (List.ofFn μ) := by
    rw [← Multiset.coe_eq_coe, coe_sortDesc, ← hm, map_univ_val_eq_coe_ofFn]
  have hsorted : (List.ofFn μ).Pairwise (· ≥ ·) :=
    -- `List.pairwise_ofFn` (Mathlib/Data/List/OfFn.lean)
    List.pairwise_ofFn.2 fun i j hij => hμ (le_of_lt hij)
  exact eq_of_perm_of_pairwise_ge hperm (pairwise_sortDesc m) hsorted

theorem getD_ofFn_fin {k : ℕ} (μ : Fin k → ℝ) (j : Fin k) :
    (List.ofFn μ).getD (j : ℕ) 0 = μ j := by
  have hj : (j : ℕ) < (List.ofFn μ).length := by
    rw [List.length_ofFn]
    exact j.isLt
  -- `List.getD_eq_getElem?_getD`, `List.getElem?_eq_getElem`, `List.getElem_ofFn` (core)
  first
  | rw [List.getD_eq_getElem?_getD, List.getElem?_eq_getElem hj, Option.getD_some,
      List.getElem_ofFn]
  | simp [hj]

/-- The sorted entries in terms of an antitone enumeration. -/
theorem sortedEntry_eq_of_antitone {k : ℕ} (μ : Fin k → ℝ) (hμ : Antitone μ) {m : Multiset ℝ}
    (hm : Multiset.map μ Finset.univ.val = m) (j : Fin k) : sortedEntry m j = μ j := by
  unfold sortedEntry
  rw [sortDesc_eq_ofFn μ hμ hm, getD_ofFn_fin]

end Sorting

section Lobes

/-- The positive lobe of a multiset `m` of eigenvalues, padded to length `k`:
`α j = max μ_j 0` where `μ` is the decreasing sort of `m` (Definition 6 of the paper). -/
noncomputable def posLobeOf (k : ℕ) (m : Multiset ℝ) : Fin k → ℝ :=
  fun j => max (sortedEntry m j) 0

/-- The negative lobe of a multiset `m` of eigenvalues, padded to length `k`:
`β j = max (-μ_{k-1-j}) 0` where `μ` is the decreasing sort of `m` (Definition 6 of the
paper). -/
noncomputable def negLobeOf (k : ℕ) (m : Multiset ℝ) : Fin k → ℝ :=
  fun j => max (-sortedEntry m (Fin.rev j)) 0

/-- `⟨α, β⟩ = ∑ j, α j * β j`: half the numerator of the coordinate `b`. -/
def lobeCross {k : ℕ} (α β : Fin k → ℝ) : ℝ := ∑ j, α j * β j

/-- `‖(α - β)₊‖² = ∑ j, (max (α j - β j) 0)²`: the numerator of `c` (and, swapped, of `d`). -/
noncomputable def lobeExcess {k : ℕ} (α β : Fin k → ℝ) : ℝ := ∑ j, max (α j - β j) 0 ^ 2

theorem posLobeOf_eq_of_antitone {k : ℕ} (μ : Fin k → ℝ) (hμ : Antitone μ) {m : Multiset ℝ}
    (hm : Multiset.map μ Finset.univ.val = m) (j : Fin k) :
    posLobeOf k m j = max (μ j) 0 := by
  unfold posLobeOf
  rw [sortedEntry_eq_of_antitone μ hμ hm j]

theorem negLobeOf_eq_of_antitone {k : ℕ} (μ : Fin k → ℝ) (hμ : Antitone μ) {m : Multiset ℝ}
    (hm : Multiset.map μ Finset.univ.val = m) (j : Fin k) :
    negLobeOf k m j = max (-μ (Fin.rev j)) 0 := by
  unfold negLobeOf
  rw [sortedEntry_eq_of_antitone μ hμ hm (Fin.rev j)]

theorem posLobeOf_nonneg (k : ℕ) (m : Multiset ℝ) (j : Fin k) : 0 ≤ posLobeOf k m j :=
  le_max_right _ _

theorem negLobeOf_nonneg (k : ℕ) (m : Multiset ℝ) (j : Fin k) : 0 ≤ negLobeOf k m j :=
  le_max_right _ _

variable {ι : Type*} [Fintype ι] [DecidableEq ι]

/-- The positive lobe `α` of `L` (Definition 6 of the paper): the decreasing sort of
`max λ 0` over all eigenvalues `λ` of the symmetric part, indexed by `Fin N`. -/
noncomputable def posLobe (L : Matrix ι ι ℝ) : Fin (Fintype.card ι) → ℝ :=
  posLobeOf (Fintype.card ι) (eigs (symPart L))

/-- The negative lobe `β` of `L` (Definition 6 of the paper): the decreasing sort of
`max (-λ) 0` over all eigenvalues `λ` of the symmetric part, indexed by `Fin N`. -/
noncomputable def negLobe (L : Matrix ι ι ℝ) : Fin (Fintype.card ι) → ℝ :=
  negLobeOf (Fintype.card ι) (eigs (symPart L))

/-- Coordinate `a = ‖T‖² / ‖L‖²` of the profile (Definition 6 of the paper). -/
noncomputable def profileA (L : Matrix ι ι ℝ) : ℝ := frobSq (skewPart L) / frobSq L

/-- Coordinate `b = 2⟨α, β⟩ / ‖L‖²` of the profile (Definition 6 of the paper). -/
noncomputable def profileB (L : Matrix ι ι ℝ) : ℝ :=
  2 * lobeCross (posLobe L) (negLobe L) / frobSq L

/-- Coordinate `c = ‖(α - β)₊‖² / ‖L‖²` of the profile (Definition 6 of the paper). -/
noncomputable def profileC (L : Matrix ι ι ℝ) : ℝ :=
  lobeExcess (posLobe L) (negLobe L) / frobSq L

/-- Coordinate `d = ‖(α - β)₋‖² / ‖L‖² = ‖(β - α)₊‖² / ‖L‖²` of the profile
(Definition 6 of the paper). -/
noncomputable def profileD (L : Matrix ι ι ℝ) : ℝ :=
  lobeExcess (negLobe L) (posLobe L) / frobSq L

/-- The profile `π(L) = (a, b, c, d)` of a bilinear form (Definition 6 of the paper).
Meaningful for `L ≠ 0`; `profile 0 = (0, 0, 0, 0)` by Lean's division convention.
[qkforms:def6] -/
noncomputable def profile (L : Matrix ι ι ℝ) : ℝ × ℝ × ℝ × ℝ :=
  (profileA L, profileB L, profileC L, profileD L)

theorem posLobe_nonneg (L : Matrix ι ι ℝ) (j : Fin (Fintype.card ι)) : 0 ≤ posLobe L j :=
  posLobeOf_nonneg _ _ j

theorem negLobe_nonneg (L : Matrix ι ι ℝ) (j : Fin (Fintype.card ι)) : 0 ≤ negLobe L j :=
  negLobeOf_nonneg _ _ j

/-- The lobes of `L` depend only on the eigenvalue multiset of its symmetric part. -/
theorem posLobe_eq_of_eigs (L : Matrix ι ι ℝ) {m : Multiset ℝ} (h : eigs (symPart L) = m) :
    posLobe L = posLobeOf (Fintype.card ι) m := by
  rw [posLobe, h]

theorem negLobe_eq_of_eigs (L : Matrix ι ι ℝ) {m : Multiset ℝ} (h : eigs (symPart L) = m) :
    negLobe L = negLobeOf (Fintype.card ι) m := by
  rw [negLobe, h]

end Lobes

section Symmetric

variable {ι : Type*}

/-- A symmetric matrix is its own symmetric part. -/
theorem symPart_eq_self_of_transpose_eq {S : Matrix ι ι ℝ} (hS : Sᵀ = S) : symPart S = S := by
  ext i j
  have hji : S j i = S i j := by
    rw [← transpose_apply S i j, hS]
  rw [symPart_apply, hji]
  ring

/-- A symmetric matrix has zero skew part. -/
theorem skewPart_eq_zero_of_transpose_eq {S : Matrix ι ι ℝ} (hS : Sᵀ = S) : skewPart S = 0 := by
  ext i j
  have hji : S j i = S i j := by
    rw [← transpose_apply S i j, hS]
  rw [skewPart_apply, hji, zero_apply]
  ring

variable [Fintype ι] [DecidableEq ι]

theorem frobSq_zero_matrix : frobSq (0 : Matrix ι ι ℝ) = 0 := by
  unfold frobSq
  apply Finset.sum_eq_zero
  intro i _
  apply Finset.sum_eq_zero
  intro j _
  rw [zero_apply]
  norm_num

/-- **The profile of a symmetric matrix is a function of its eigenvalue multiset** (and of its
squared norm): if `eigs S = m` then `π(S) = (0, 2⟨α, β⟩/‖S‖², ‖(α-β)₊‖²/‖S‖², ‖(β-α)₊‖²/‖S‖²)`
with `α = posLobeOf N m`, `β = negLobeOf N m`. -/
theorem profile_eq_of_isSymm {S : Matrix ι ι ℝ} (hS : Sᵀ = S) {m : Multiset ℝ}
    (h : eigs S = m) :
    profile S =
      (0, 2 * lobeCross (posLobeOf (Fintype.card ι) m) (negLobeOf (Fintype.card ι) m) / frobSq S,
        lobeExcess (posLobeOf (Fintype.card ι) m) (negLobeOf (Fintype.card ι) m) / frobSq S,
        lobeExcess (negLobeOf (Fintype.card ι) m) (posLobeOf (Fintype.card ι) m) / frobSq S) := by
  have hm : eigs (symPart S) = m := by
    rw [symPart_eq_self_of_transpose_eq hS, h]
  have ha : profileA S = 0 := by
    rw [profileA, skewPart_eq_zero_of_transpose_eq hS, frobSq_zero_matrix, zero_div]
  simp only [profile, ha, profileB, profileC, profileD, posLobe_eq_of_eigs S hm,
    negLobe_eq_of_eigs S hm]

end Symmetric

end QKForms

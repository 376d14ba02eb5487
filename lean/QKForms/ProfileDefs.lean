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
(docs/theory.md, "The profile map"; Definition 6 of the paper).

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
  is the sum of the squared eigenvalues: `QKForms.frobSq_eq_sum_sq_eigs`).
* Spectral helpers over `ℝ`: `QKForms.spectral_real` (`S = V diag(λ) Vᵀ`, `V = eigMat hS`
  orthogonal), `QKForms.frobSq_eq_sum_sq_eigenvalues`, `QKForms.eigs_conj_diagonal`
  (`eigs (V diag(d) Vᵀ) = {d i}`), `QKForms.posLobe_eq_eigenvalues₀`,
  `QKForms.negLobe_eq_eigenvalues₀` (lobes through Mathlib's antitone `eigenvalues₀`).

## Encoding

Padding changes nothing (docs/theory.md, "The profile map"), so both lobes have length
`N = Fintype.card ι`: they are indexed by `Fin (Fintype.card ι)`. We sort all `N` eigenvalues of
`S` decreasingly *once* (`sortDesc`, a `Multiset.sort`), obtaining `μ₀ ≥ μ₁ ≥ … ≥ μ_{N-1}`, and put
`α j = max μ_j 0` and `β j = max (-μ_{N-1-j}) 0`. Since `x ↦ max x 0` is monotone and
`x ↦ max (-x) 0` is antitone, `α` is the decreasing sort of the multiset `{max λ 0}` and `β` the
decreasing sort of `{max (-λ) 0}` over all eigenvalues `λ` of `S`: this is exactly the zero
padding of Definition 6 (zero eigenvalues and padding contribute `0` to every sum). The
coordinate `d` is written `∑ j ((β_j - α_j)₊)²`, which equals `‖(α - β)₋‖²`.
Each coordinate is a quotient by `frobSq L`, so Lean's convention `x / 0 = 0` gives
`profile 0 = (0, 0, 0, 0)`; every theorem about the profile assumes `L ≠ 0`.
`Multiset.sort` changed its argument order in 2025 (`sort r s` became `sort s r`); it is only
used through dot notation (`m.sort (· ≥ ·)`), and its lemmas `Multiset.sort_eq`,
`Multiset.pairwise_sort` with both explicit arguments left to unification (`_ _`), which reads
the same under either order.
-/

noncomputable section

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
  -- `Multiset.sort_eq : ↑(sort s r) = s` (Mathlib/Data/Multiset/Sort.lean); both explicit
  -- arguments are found by unification (their order changed in 2025). `..` supplies every
  -- explicit argument as `_`, whatever their number; the second branch rewrites with the lemma
  -- and needs no arguments at all.
  -- closes by: the first branch at the pin
  first
  | exact Multiset.sort_eq ..
  | simp only [Multiset.sort_eq]

/-- The decreasing sort is sorted. -/
theorem pairwise_sortDesc (m : Multiset ℝ) : (sortDesc m).Pairwise (· ≥ ·) := by
  unfold sortDesc
  -- `Multiset.pairwise_sort : (sort s r).Pairwise r` (Mathlib/Data/Multiset/Sort.lean; the name
  -- since 2025-10, when `sort_sorted` was deprecated). `..` as in `coe_sortDesc`; the second
  -- branch is the earlier name (a deprecated alias of the same lemma at the pin; before
  -- 2025-10 it concluded `List.Sorted`, which unfolds to `List.Pairwise`).
  -- closes by: the first branch at the pin
  first
  | exact Multiset.pairwise_sort ..
  | exact Multiset.sort_sorted ..

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
    -- eliminate the variable `b` (replaced by `a`), so that `a` stays in scope
    subst b
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
  -- `List.getD_eq_getElem?_getD`, `List.getElem?_eq_getElem`, `Option.getD_some`,
  -- `List.getElem_ofFn` (core). What remains is `μ ⟨↑j, _⟩ = μ j` (structure eta), which the
  -- `rfl` of `rw` may already close; `all_goals rfl` closes it otherwise. The second branch
  -- leaves the chain to the core `simp` set (all four lemmas are `@[simp]`), with `hj`.
  -- closes by: the first branch at the pin
  first
  | (rw [List.getD_eq_getElem?_getD, List.getElem?_eq_getElem hj, Option.getD_some,
        List.getElem_ofFn]
     all_goals rfl)
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
  show max (sortedEntry m j) 0 = max (μ j) 0
  rw [sortedEntry_eq_of_antitone μ hμ hm j]

theorem negLobeOf_eq_of_antitone {k : ℕ} (μ : Fin k → ℝ) (hμ : Antitone μ) {m : Multiset ℝ}
    (hm : Multiset.map μ Finset.univ.val = m) (j : Fin k) :
    negLobeOf k m j = max (-μ (Fin.rev j)) 0 := by
  show max (-sortedEntry m (Fin.rev j)) 0 = max (-μ (Fin.rev j)) 0
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

/-- `(x₊)² + (x₋)² = x²`: the two lobes of a real number split its square (used by the
profile, `Profile.lean`, and by Lemma 2, `PairingBound.lean`). -/
theorem max_sq_add_max_neg_sq (x : ℝ) : max x 0 ^ 2 + max (-x) 0 ^ 2 = x ^ 2 := by
  rcases le_total 0 x with h | h
  · rw [max_eq_left h, max_eq_right (neg_nonpos.2 h)]
    ring
  · rw [max_eq_right h, max_eq_left (neg_nonneg.2 h)]
    ring

/-- Splitting `∑ μ_j²` into positive and (reversed) negative parts. -/
theorem sum_sq_max_add_sum_sq_max_neg_rev {k : ℕ} (μ : Fin k → ℝ) :
    ∑ j, max (μ j) 0 ^ 2 + ∑ j, max (-μ (Fin.rev j)) 0 ^ 2 = ∑ j, μ j ^ 2 := by
  -- `Equiv.sum_comp` (Mathlib/Algebra/BigOperators/Group/Finset/Basic.lean), `Fin.revPerm`
  have hrev : ∑ j, max (-μ (Fin.rev j)) 0 ^ 2 = ∑ j, max (-μ j) 0 ^ 2 :=
    Equiv.sum_comp Fin.revPerm (fun j => max (-μ j) 0 ^ 2)
  rw [hrev, ← Finset.sum_add_distrib]
  apply Finset.sum_congr rfl
  intro j _
  exact max_sq_add_max_neg_sq (μ j)

end Lobes

section Symmetric

variable {ι : Type*}

/-- A symmetric matrix is its own symmetric part. -/
theorem symPart_eq_self_of_transpose_eq {S : Matrix ι ι ℝ} (hS : Sᵀ = S) : symPart S = S := by
  ext i j
  have hji : S j i = S i j := by
    rw [← Matrix.transpose_apply S i j, hS]
  rw [symPart_apply, hji]
  ring

/-- A symmetric matrix has zero skew part. -/
theorem skewPart_eq_zero_of_transpose_eq {S : Matrix ι ι ℝ} (hS : Sᵀ = S) : skewPart S = 0 := by
  ext i j
  have hji : S j i = S i j := by
    rw [← Matrix.transpose_apply S i j, hS]
  rw [skewPart_apply, hji, Matrix.zero_apply]
  ring

variable [Fintype ι] [DecidableEq ι]

theorem frobSq_zero_matrix : frobSq (0 : Matrix ι ι ℝ) = 0 := by
  unfold frobSq
  apply Finset.sum_eq_zero
  intro i _
  apply Finset.sum_eq_zero
  intro j _
  rw [Matrix.zero_apply]
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

section Spectral

/-! ### Spectral helpers for real symmetric matrices

Mathlib's spectral theorem (`Matrix.IsHermitian.spectral_theorem`,
Mathlib/Analysis/Matrix/Spectrum.lean) is stated over `RCLike 𝕜`, with a unitary matrix of
eigenvectors; since late 2025 it is phrased with `Unitary.conjStarAlgAut`, whose application is
*definitionally* `U * A * star U` (`Unitary.conjStarAlgAut_apply` is proved by `rfl`,
Mathlib/Algebra/Star/UnitaryStarAlgAut.lean). We restate it over `ℝ` with an orthogonal matrix
and a transpose. -/

variable {ι : Type*} [Fintype ι] [DecidableEq ι]

/-- `‖X‖² = tr (Xᵀ X)`. -/
theorem frobSq_eq_trace_transpose_mul (X : Matrix ι ι ℝ) : frobSq X = trace (Xᵀ * X) := by
  unfold frobSq
  rw [Finset.sum_comm]
  unfold Matrix.trace
  apply Finset.sum_congr rfl
  intro j _
  rw [Matrix.diag_apply, Matrix.mul_apply]
  apply Finset.sum_congr rfl
  intro i _
  rw [Matrix.transpose_apply, sq]

/-- Conjugating by an orthogonal matrix preserves the trace. -/
theorem trace_conj_of_orthogonal {V : Matrix ι ι ℝ} (hV : Vᵀ * V = 1) (Y : Matrix ι ι ℝ) :
    trace (V * Y * Vᵀ) = trace Y := by
  -- `Matrix.trace_mul_comm` (Mathlib/LinearAlgebra/Matrix/Trace.lean)
  rw [Matrix.mul_assoc, Matrix.trace_mul_comm, Matrix.mul_assoc, hV, Matrix.mul_one]

/-- Conjugating by an orthogonal matrix preserves the squared Frobenius norm. -/
theorem frobSq_conj_of_orthogonal {V : Matrix ι ι ℝ} (hV : Vᵀ * V = 1) (X : Matrix ι ι ℝ) :
    frobSq (V * X * Vᵀ) = frobSq X := by
  have h : (V * X * Vᵀ)ᵀ * (V * X * Vᵀ) = V * (Xᵀ * X) * Vᵀ := by
    calc (V * X * Vᵀ)ᵀ * (V * X * Vᵀ) = V * Xᵀ * (Vᵀ * V) * X * Vᵀ := by
          simp only [Matrix.transpose_mul, Matrix.transpose_transpose, Matrix.mul_assoc]
      _ = V * (Xᵀ * X) * Vᵀ := by
          rw [hV, Matrix.mul_one, Matrix.mul_assoc V Xᵀ X]
  rw [frobSq_eq_trace_transpose_mul, frobSq_eq_trace_transpose_mul, h,
    trace_conj_of_orthogonal hV]

/-- `‖diag d‖² = ∑ i, d i ^ 2`. -/
theorem frobSq_diagonal (d : ι → ℝ) : frobSq (diagonal d) = ∑ i, d i ^ 2 := by
  unfold frobSq
  apply Finset.sum_congr rfl
  intro i _
  rw [Finset.sum_eq_single i]
  · rw [Matrix.diagonal_apply_eq]
  · intro j _ hji
    rw [Matrix.diagonal_apply_ne d (Ne.symm hji)]
    norm_num
  · intro h
    exact absurd (Finset.mem_univ i) h

/-- Conjugating by an orthogonal matrix preserves the characteristic polynomial. -/
theorem charpoly_conj_of_orthogonal {V : Matrix ι ι ℝ} (hV : Vᵀ * V = 1) (X : Matrix ι ι ℝ) :
    (V * X * Vᵀ).charpoly = X.charpoly := by
  -- `Matrix.charpoly_mul_comm` (Mathlib/LinearAlgebra/Matrix/Charpoly/, the `AB`/`BA` file;
  -- also used in the proof of `Matrix.IsHermitian.charpoly_eq`)
  rw [Matrix.charpoly_mul_comm (V * X) Vᵀ, ← Matrix.mul_assoc, hV, Matrix.one_mul]

/-- Conjugating by an orthogonal matrix preserves the eigenvalue multiset. -/
theorem eigs_conj_of_orthogonal {V : Matrix ι ι ℝ} (hV : Vᵀ * V = 1) (X : Matrix ι ι ℝ) :
    eigs (V * X * Vᵀ) = eigs X := by
  unfold eigs
  rw [charpoly_conj_of_orthogonal hV]

/-- The eigenvalues of a diagonal matrix are its diagonal entries. -/
theorem eigs_diagonal (d : ι → ℝ) : eigs (diagonal d) = Multiset.map d Finset.univ.val := by
  unfold eigs
  -- `Matrix.charpoly_diagonal` (Mathlib/LinearAlgebra/Matrix/Charpoly/Basic.lean),
  -- `Polynomial.roots_multiset_prod_X_sub_C` (Mathlib/Algebra/Polynomial/Roots.lean)
  -- The second branch uses Mathlib's lemma forwards, as a hypothesis put in the goal's form by
  -- `Multiset.map_map`, instead of rewriting the goal's right side backwards; its `exact`
  -- matches `(fun a => X - C a) ∘ d` with `fun i => X - C (d i)` up to unfolding.
  -- closes by: the first branch at the pin
  first
  | (rw [Matrix.charpoly_diagonal, Finset.prod_eq_multiset_prod,
        ← Polynomial.roots_multiset_prod_X_sub_C (Multiset.map d Finset.univ.val),
        Multiset.map_map]
     all_goals rfl)
  | (have h := Polynomial.roots_multiset_prod_X_sub_C (Multiset.map d Finset.univ.val)
     rw [Multiset.map_map] at h
     rw [Matrix.charpoly_diagonal, Finset.prod_eq_multiset_prod]
     exact h)

/-- The eigenvalues of `V diag(d) Vᵀ`, `V` orthogonal, are the entries of `d`. -/
theorem eigs_conj_diagonal {V : Matrix ι ι ℝ} (hV : Vᵀ * V = 1) (d : ι → ℝ) :
    eigs (V * diagonal d * Vᵀ) = Multiset.map d Finset.univ.val := by
  rw [eigs_conj_of_orthogonal hV, eigs_diagonal]

/-- The eigenvector matrix of a real symmetric matrix, as a real matrix. -/
noncomputable def eigMat {S : Matrix ι ι ℝ} (hS : S.IsHermitian) : Matrix ι ι ℝ :=
  (hS.eigenvectorUnitary : Matrix ι ι ℝ)

theorem star_eigMat {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    star (eigMat hS) = (eigMat hS)ᵀ := by
  -- `Matrix.star_eq_conjTranspose`, `Matrix.conjTranspose_eq_transpose_of_trivial`
  rw [Matrix.star_eq_conjTranspose, Matrix.conjTranspose_eq_transpose_of_trivial]

/-- The eigenvector matrix is orthogonal: `Vᵀ V = 1`. -/
theorem eigMat_transpose_mul {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    (eigMat hS)ᵀ * eigMat hS = 1 := by
  -- `Matrix.mem_unitaryGroup_iff'` (Mathlib/LinearAlgebra/UnitaryGroup.lean)
  have h : star (eigMat hS) * eigMat hS = 1 :=
    Matrix.mem_unitaryGroup_iff'.1 hS.eigenvectorUnitary.2
  rw [star_eigMat] at h
  exact h

/-- The eigenvector matrix is orthogonal: `V Vᵀ = 1`. -/
theorem eigMat_mul_transpose {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    eigMat hS * (eigMat hS)ᵀ = 1 := by
  have h : eigMat hS * star (eigMat hS) = 1 :=
    Matrix.mem_unitaryGroup_iff.1 hS.eigenvectorUnitary.2
  rw [star_eigMat] at h
  exact h

/-- **Real spectral theorem**: `S = V diag(λ) Vᵀ` with `λ = hS.eigenvalues`. -/
theorem spectral_real {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    S = eigMat hS * diagonal hS.eigenvalues * (eigMat hS)ᵀ := by
  -- `h : S = conjStarAlgAut ℝ _ hS.eigenvectorUnitary (diagonal (RCLike.ofReal ∘ ev))`
  have h := hS.spectral_theorem
  -- `Unitary.conjStarAlgAut_apply : conjStarAlgAut S R u x = ↑u * x * star ↑u`
  rw [Unitary.conjStarAlgAut_apply] at h
  -- `RCLike.ofReal_real_eq_id : @RCLike.ofReal ℝ _ = id` (Mathlib/Analysis/RCLike/Basic.lean)
  have hd : (RCLike.ofReal ∘ hS.eigenvalues : ι → ℝ) = hS.eigenvalues := by
    -- `RCLike.ofReal_real_eq_id` is proved by `rfl`, so `rfl` is a second proof
    -- closes by: the first branch (the `rw`s, closed by their `rfl`) at the pin
    first
    | (rw [RCLike.ofReal_real_eq_id, Function.id_comp]
       done)
    | rfl
  rw [← star_eigMat hS]
  -- `eigMat hS` is `↑hS.eigenvectorUnitary` by definition. The first branch rewrites the
  -- diagonal with `hd` (which needs `RCLike.ofReal ∘ hS.eigenvalues` to occur in `h` as in
  -- Mathlib's statement); the second is `exact h` up to the unfolding that proves `hd`.
  -- closes by: the first branch at the pin
  first
  | (rw [hd] at h
     exact h)
  | exact h

/-- For a symmetric real matrix, `‖S‖² = ∑ i, λ_i²`. -/
theorem frobSq_eq_sum_sq_eigenvalues {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    frobSq S = ∑ i, hS.eigenvalues i ^ 2 := by
  conv_lhs => rw [spectral_real hS]
  rw [frobSq_conj_of_orthogonal (eigMat_transpose_mul hS), frobSq_diagonal]

/-- For a symmetric real matrix, `‖S‖²` is the sum of the squares of `eigs S`. -/
theorem frobSq_eq_sum_sq_eigs {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    frobSq S = ((eigs S).map (· ^ 2)).sum := by
  rw [frobSq_eq_sum_sq_eigenvalues hS, eigs_eq_map_eigenvalues hS, Multiset.map_map,
    Finset.sum_eq_multiset_sum]
  all_goals rfl

/-- Reindexing the values of a function by an equivalence does not change their multiset. -/
theorem map_univ_val_comp_equiv {α β : Type*} [Fintype α] [Fintype β] (e : α ≃ β)
    (f : β → ℝ) : Multiset.map (f ∘ e) Finset.univ.val = Multiset.map f Finset.univ.val := by
  -- `Finset.map_univ_equiv`, `Finset.map_val`, `Multiset.map_map`. The second branch uses
  -- `Multiset.map_univ_val_equiv : map e univ.val = univ.val` (Mathlib/Data/Fintype/Basic.lean)
  -- after splitting `f ∘ e` with `Multiset.map_map` backwards; its closing `rfl` is syntactic.
  -- closes by: the first branch at the pin
  first
  | (conv_rhs => rw [← Finset.map_univ_equiv e, Finset.map_val, Multiset.map_map]
     all_goals rfl)
  | rw [← Multiset.map_map f e, Multiset.map_univ_val_equiv e]

/-- The equivalence `Fin N ≃ ι` through which Mathlib indexes the eigenvalues
(`Matrix.IsHermitian.eigenvalues`, Mathlib/Analysis/Matrix/Spectrum.lean). -/
noncomputable def eigIndexEquiv (ι : Type*) [Fintype ι] : Fin (Fintype.card ι) ≃ ι :=
  Fintype.equivOfCardEq (Fintype.card_fin _)

theorem eigenvalues_eq_eigenvalues₀ {S : Matrix ι ι ℝ} (hS : S.IsHermitian) (i : ι) :
    hS.eigenvalues i = hS.eigenvalues₀ ((eigIndexEquiv ι).symm i) :=
  rfl

/-- The sorted eigenvalues `eigenvalues₀` enumerate `eigs S`. -/
theorem map_eigenvalues₀_eq_eigs {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    Multiset.map hS.eigenvalues₀ Finset.univ.val = eigs S := by
  rw [eigs_eq_map_eigenvalues hS]
  have h : hS.eigenvalues = hS.eigenvalues₀ ∘ (eigIndexEquiv ι).symm := by
    funext i
    exact eigenvalues_eq_eigenvalues₀ hS i
  rw [h, map_univ_val_comp_equiv]

/-- The lobes of `L` through the sorted eigenvalues `μ = eigenvalues₀` of its symmetric part:
`α j = max (μ j) 0`. -/
theorem posLobe_eq_eigenvalues₀ (L : Matrix ι ι ℝ) (j : Fin (Fintype.card ι)) :
    posLobe L j = max ((symPart_isHermitian L).eigenvalues₀ j) 0 :=
  posLobeOf_eq_of_antitone _ (symPart_isHermitian L).eigenvalues₀_antitone
    (map_eigenvalues₀_eq_eigs (symPart_isHermitian L)) j

/-- The lobes of `L` through the sorted eigenvalues `μ = eigenvalues₀` of its symmetric part:
`β j = max (-μ (rev j)) 0`. -/
theorem negLobe_eq_eigenvalues₀ (L : Matrix ι ι ℝ) (j : Fin (Fintype.card ι)) :
    negLobe L j = max (-(symPart_isHermitian L).eigenvalues₀ (Fin.rev j)) 0 :=
  negLobeOf_eq_of_antitone _ (symPart_isHermitian L).eigenvalues₀_antitone
    (map_eigenvalues₀_eq_eigs (symPart_isHermitian L)) j

end Spectral

end QKForms

end

/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.LobeEstimates

/-!
# Proportional lobes (Lemma 6 of the paper)

Lemma 6 of the paper (THEORY §2): let `X > 0` a.s. with `0 < E X² < ∞`, `u, v > 0`,
`ρ = u / v`; let `α_n` be the decreasing sort of `v X_1, …, v X_n` and `β_n` the decreasing sort
of `u X'_1, …, u X'_n` (all `X_i, X'_i` independent copies of `X`). Then
`‖β_n - ρ α_n‖ / ‖α_n‖ → 0` almost surely.

## Status

The objects of Lemma 6 for a fixed sample path (`QKForms.scaledSample`, `QKForms.sampleLobe`,
`QKForms.lobeMisfit`) and its deterministic reduction
(`QKForms.tendsto_lobeMisfit_of_tendsto_sq`, `QKForms.tendsto_lobeMisfit_of_moments`) are in
`QKForms/LobeEstimates.lean`, where Theorem 5 (`QKForms/Accumulation.lean`) also uses them.
The almost-sure statement of Lemma 6 itself is **not** formalized in this library yet: no
declaration carries the tag of Lemma 6. What is missing is probabilistic: the strong law for
`(1/n) ∑ X_i²` (Mathlib's `ProbabilityTheory.strong_law_ae`, with the independence and
identical-distribution hypotheses transported from the encoding of THEORY §2) and, above all,
the almost-sure limit `‖Y'_n - Y_n‖² / n → 0` of the sorted samples (equivalently
`⟨Y_n, Y'_n⟩/n → E X²`, the comonotone coupling of the paper's proof). Theorem 5 is proved
from the conclusion of Lemma 6, pathwise and almost surely
(`QKForms.accumulation_of_proportionalLobes`, `QKForms.accumulation_ae_of_proportionalLobes`).
-/

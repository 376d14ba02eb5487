"""The registry of results: one row per paper result, shared by Lean, Python and docs.

Each :class:`Result` names a paper result by its id (``docs/architecture.md`` §1) and
says where it is established: the Lean declarations that prove it (fully qualified
names, in one file of ``lean/QKForms/``, each carrying the docstring tag
``[qkforms:<id>]``), the exact Python check (``module:function``), the property
tests (pytest node ids) and the docs page. ``qkforms verify`` checks every part
side by side, and ``tests/test_registry.py`` fails when any part drifts. The table of ids
in ``docs/architecture.md`` §1 is generated from :data:`RESULTS`
(:mod:`qkforms.results_reference`).

Results not formalized in Lean have no declarations; their ``lean_status`` is
``"not formalized"``.

Examples
--------
>>> from qkforms.registry import get, ids
>>> get("thm3").paper
'Theorem 3'
>>> get("thm3").check                   # the module defining it, and the function
'qkforms.checks.signature:check_thm3'
>>> get("cor1").lean_status
'not formalized'
>>> get("cor1").docs
'docs/results/cor1.md'
>>> [i for i in ids() if i.startswith("thm4.")][:2]
['thm4.simplex', 'thm4.a_face']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from qkforms.errors import QKFormsError

__all__ = [
    "Result",
    "RESULTS",
    "LEAN_FORMALIZED",
    "LEAN_NOT_FORMALIZED",
    "get",
    "ids",
    "select",
    "check_function_name",
]

LEAN_FORMALIZED = "formalized"
LEAN_NOT_FORMALIZED = "not formalized"


@dataclass(frozen=True)
class Result:
    """One registered paper result.

    Attributes
    ----------
    id : str
        The result id of ``docs/architecture.md`` §1 (``"thm3"``, ``"thm4.a_face"``).
    paper : str
        The paper number (``"Theorem 3"``, ``"Lemma 5"``).
    title : str
        A short statement.
    lean : tuple of str
        Fully qualified Lean declarations proving it (empty: not formalized).
    lean_file : str or None
        The Lean file holding them, relative to the repository root.
    check : str
        The exact Python check as ``"module:function"``: the module of
        :mod:`qkforms.checks` defining it and ``check_<id>`` (:func:`check_function_name`);
        :mod:`qkforms.checks` exports it too.
    properties : tuple of str
        Names of its hypothesis properties in :mod:`qkforms.properties` (each starting
        with the id, ``.`` replaced by ``_``).
    docs : str
        Docs page (default ``docs/results/<id>.md``, generated from the entry of the id
        in ``docs/results.toml`` by the docs build).
    """

    id: str
    paper: str
    title: str
    lean: tuple[str, ...] = ()
    lean_file: str | None = None
    check: str = ""
    properties: tuple[str, ...] = ()
    docs: str = ""

    def __post_init__(self) -> None:
        if not self.docs:  # the generated results page of this id (docs/_ext/qkresults.py)
            object.__setattr__(self, "docs", f"docs/results/{self.id}.md")

    @property
    def lean_status(self) -> str:
        """``"formalized"`` when a Lean file is registered, else ``"not formalized"``."""
        return LEAN_FORMALIZED if self.lean_file else LEAN_NOT_FORMALIZED

    @property
    def group(self) -> str:
        """The group of the id: the part before the first dot (``thm4.a_face`` -> ``thm4``)."""
        return self.id.split(".", 1)[0]


def check_function_name(result_id: str) -> str:
    """The name of the exact check of a result (``.`` replaced by ``_``).

    Examples
    --------
    >>> check_function_name("thm4.a_face")
    'check_thm4_a_face'
    """
    return "check_" + result_id.replace(".", "_")


#: Every registered result, in the order of docs/architecture.md §1.
RESULTS: tuple[Result, ...] = (
    Result(
        id="lemma5",
        paper="Lemma 5",
        title="symmetric/skew energy identities",
        lean=(
            "QKForms.frobSq_symPart_eq",
            "QKForms.frobSq_skewPart_eq",
            "QKForms.frobSq_eq_frobSq_symPart_add_frobSq_skewPart",
            "QKForms.frobSq_symPart_div_frobSq",
            "QKForms.frobSq_skewPart_div_frobSq",
            "QKForms.lemma5_energy_identities",
        ),
        lean_file="lean/QKForms/EnergyIdentities.lean",
        check="qkforms.checks.energy:check_lemma5",
        properties=(
            "lemma5_energy_identities",
            "lemma5_head_trace",
        ),
    ),
    Result(
        id="lemma3",
        paper="Lemma 3",
        title="rank balance",
        lean=(
            "QKForms.nPos_symPart_le_rank",
            "QKForms.nNeg_symPart_le_rank",
            "QKForms.nPos_symPart_le_and_nNeg_symPart_le_of_rank_le",
        ),
        lean_file="lean/QKForms/RankBalance.lean",
        check="qkforms.checks.signature:check_lemma3",
        properties=(
            "lemma3_rank_bound",
            "lemma3_float_and_exact_signatures_agree_on_known_spectra",
        ),
    ),
    Result(
        id="lemma2",
        paper="Lemma 2",
        title="pairing bound and equality case",
        lean=(
            "QKForms.pairingScoreSym_eq_one_sub_sqrt",
            "QKForms.pairingScoreSym_le_pairingBound",
            "QKForms.pairingScoreSym_eq_pairingBound_iff",
            "QKForms.lemma2_pairing_bound",
        ),
        lean_file="lean/QKForms/PairingBound.lean",
        check="qkforms.checks.pairing:check_lemma2",
        properties=(
            "lemma2_float_bound_and_closed_form",
            "lemma2_exact_bound_and_equality",
        ),
    ),
    Result(
        id="lemma10",
        paper="Lemma 10",
        title="S = 1/2 M^T J M; spectrum, signs, energies, profile from any F F^T = M M^T",
        lean=(
            "QKForms.symPart_eq_half_stacked_swap_stacked",
            "QKForms.X_pow_mul_charpoly_symPart_eq_swap_gram",
            "QKForms.filter_ne_zero_eigs_symPart_eq_swap_gram",
            "QKForms.X_pow_mul_charpoly_symPart_eq_of_gram_factor",
            "QKForms.filter_ne_zero_eigs_symPart_eq_of_gram_factor",
            "QKForms.nPos_symPart_eq_of_gram_factor",
            "QKForms.nNeg_symPart_eq_of_gram_factor",
            "QKForms.energies_eq_of_gram_eq",
            "QKForms.profile_transpose_mul_eq_of_gram_eq",
        ),
        # the identity is in GramForm.lean (imported); energies and profile in GramProfile.lean
        # (which imports this file)
        lean_file="lean/QKForms/GramSpectrum.lean",
        check="qkforms.checks.signature:check_lemma10",
        properties=(
            "lemma10_gram_route_identities",
            "lemma10_identities_hold_for_degenerate_heads",
            "lemma10_float_gram_spectrum_matches_dense",
            "lemma10_any_gram_factor_gives_the_nonzero_spectrum",
        ),
    ),
    Result(
        id="thm3",
        paper="Theorem 3",
        title="heads have balanced signature (n, n, N - 2n)",
        lean=(
            "QKForms.signature_symPart_of_surjective",
            "QKForms.signature_symPart_of_surjective_fin",
            "QKForms.signature_gram_of_surjective",
        ),
        lean_file="lean/QKForms/BalancedSignature.lean",
        check="qkforms.checks.signature:check_thm3",
        properties=(
            "thm3_surjective_heads_are_balanced",
            "thm3_degenerate_heads_are_not_balanced",
            "thm3_float_weights",
            "thm3_float_decisions_are_never_wrong",
        ),
    ),
    Result(
        id="thm3.live",
        paper="Theorem 3 (live part)",
        title="dead dimensions: signature (n', n', N - 2n') of the live rows",
        lean=(
            "QKForms.signature_symPart_of_eq_transpose_mul_of_surjective",
            "QKForms.signature_symPart_of_dead",
        ),
        lean_file="lean/QKForms/LiveSignature.lean",
        check="qkforms.checks.signature:check_thm3_live",
        properties=(
            "thm3_live_dead_rows_keep_the_live_signature",
        ),
    ),
    Result(
        id="def6",
        paper="Definition 6",
        title="profile map: scale, sign, transpose and orthogonal invariance",
        lean=(
            "QKForms.profile_coords_nonneg",
            "QKForms.profile_coords_sum_eq_one",
            "QKForms.profile_transpose",
            "QKForms.profile_conj_orthogonal",
            "QKForms.profile_neg",
            "QKForms.profile_smul_of_pos",
            "QKForms.profile",
            # the reduction keeps the profile (GramProfile.lean, which imports Profile.lean)
            "QKForms.profile_transpose_mul_eq_of_gram_eq",
        ),
        lean_file="lean/QKForms/Profile.lean",
        check="qkforms.checks.profile:check_def6",
        properties=(
            "def6_float_profile_matches_exact",
            "def6_invariances_exact",
            "def6_invariances_float",
            "def6_reduced_head_profile_matches_dense",
        ),
    ),
    Result(
        id="lemma4",
        paper="Lemma 4",
        title="profile scale",
        lean=(
            "QKForms.profile_scale",
        ),
        lean_file="lean/QKForms/Profile.lean",
        check="qkforms.checks.profile:check_lemma4",
        properties=(
            "lemma4_profile_scale_exact",
            "lemma4_profile_scale_float",
        ),
    ),
    Result(
        id="prop4",
        paper="Proposition 4",
        title="rank-one profiles and the family Theta",
        lean=(
            "QKForms.profile_of_eq_vecMulVec",
            "QKForms.profile_of_eq_vecMulVec_of_frobSq_eq_one",
            "QKForms.image_profile_rankOne_eq_Theta",
            # with `Matrix.rank L = 1` (RankOneRank.lean, which imports RankOne.lean)
            "QKForms.rank_eq_one_iff",
            "QKForms.profile_of_rank_eq_one",
            "QKForms.profile_of_rank_eq_one_of_frobSq_eq_one",
            "QKForms.image_profile_rank_eq_one_eq_Theta",
        ),
        lean_file="lean/QKForms/RankOne.lean",
        check="qkforms.checks.profile:check_prop4",
        properties=(
            "prop4_rank_one_float",
            "prop4_rank_one_exact",
            "prop4_theta_round_trip",
            "prop4_rank_one_iff_nonzero_outer_product",
        ),
    ),
    Result(
        id="thm4.simplex",
        paper="Theorem 4",
        title="profile coordinates are nonnegative and sum to 1",
        lean=(
            "QKForms.profile_mem_simplex",
        ),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check="qkforms.checks.faces:check_thm4_simplex",
        properties=(
            "thm4_simplex_float",
            "thm4_simplex_exact",
        ),
    ),
    Result(
        id="thm4.a_face",
        paper="Theorem 4 (1)",
        title="a = 0 iff symmetric, a = 1 iff antisymmetric",
        lean=(
            "QKForms.profileA_eq_zero_iff",
            "QKForms.profileA_eq_one_iff",
        ),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check="qkforms.checks.faces:check_thm4_a_face",
        properties=(
            "thm4_a_face_float",
            "thm4_a_face_exact",
        ),
    ),
    Result(
        id="thm4.b_face",
        paper="Theorem 4 (2)",
        title="b = 0 iff S semidefinite, b = 1 iff symmetric with alpha = beta",
        lean=(
            "QKForms.profileB_eq_zero_iff",
            "QKForms.profileB_eq_one_iff",
        ),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check="qkforms.checks.faces:check_thm4_b_face",
        properties=(
            "thm4_b_face_float_semidefinite",
            "thm4_b_face_exact_vertex",
        ),
    ),
    Result(
        id="thm4.d_face",
        paper="Theorem 4 (3)",
        title="d = 0 iff alpha >= beta iff S = H + P; d = 1 iff symmetric NSD",
        lean=(
            "QKForms.profileD_eq_zero_iff_lobes",
            "QKForms.exists_decomp_of_profileD_eq_zero",
            "QKForms.profileD_eq_one_iff",
            "QKForms.profileD_eq_zero_of_eq_add",
            "QKForms.profileD_eq_zero_iff_exists_decomp",
        ),
        # the converse (Weyl counting) imports ProfileFaces.lean, where the rest lives
        lean_file="lean/QKForms/ProfileFacesConverse.lean",
        check="qkforms.checks.faces:check_thm4_d_face",
        properties=(
            "thm4_d_face_exact",
            "thm4_d_face_float_vertex_and_weyl",
        ),
    ),
    Result(
        id="thm4.c_face",
        paper="Theorem 4 (4)",
        title="c = 0 iff beta >= alpha iff S = H - P; c = 1 iff symmetric PSD",
        lean=(
            "QKForms.profileC_eq_zero_iff_lobes",
            "QKForms.exists_decomp_of_profileC_eq_zero",
            "QKForms.profileC_eq_one_iff",
            "QKForms.profileC_eq_zero_of_eq_sub",
            "QKForms.profileC_eq_zero_iff_exists_decomp",
        ),
        # the converse (Weyl counting) imports ProfileFaces.lean, where the rest lives
        lean_file="lean/QKForms/ProfileFacesConverse.lean",
        check="qkforms.checks.faces:check_thm4_c_face",
        properties=(
            "thm4_c_face_float_vertex",
            "thm4_c_face_exact",
        ),
    ),
    Result(
        id="thm4.empty_edge",
        paper="Theorem 4",
        title="no L has b = 0 with c > 0 and d > 0",
        lean=(
            "QKForms.not_profileB_eq_zero_and_pos_and_pos",
        ),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check="qkforms.checks.faces:check_thm4_empty_edge",
        properties=(
            "thm4_empty_edge_float",
            "thm4_empty_edge_exact",
        ),
    ),
    Result(
        id="lemma6",
        paper="Lemma 6",
        title="proportional lobes (almost sure convergence)",
        lean=(
            "QKForms.proportionalLobes",
        ),
        lean_file="lean/QKForms/ProportionalLobes.lean",
        check="qkforms.checks.accumulation:check_lemma6",
        properties=(
            "lemma6_layer_cake_identity",
            "lemma6_sorted_pairing_is_maximal",
            "lemma6_departure_is_scale_free_and_zero_on_copies",
        ),
    ),
    Result(
        id="thm5",
        paper="Theorem 5",
        title="accumulation on Theta",
        lean=(
            "QKForms.accumulation_of_proportionalLobes",
            "QKForms.accumulation_ae_of_proportionalLobes",
            "QKForms.accumulationLimit_mem_image_theta",
            "QKForms.accumulationLimit_mem_mergeAB_image_Theta",
            "QKForms.accumulationLimit_d_eq_zero",
            "QKForms.accumulationLimit_c_eq_zero",
            "QKForms.strictMonoOn_edgeB",
            "QKForms.strictAntiOn_edgeB",
            "QKForms.bijOn_edgeB_Ioc",
            "QKForms.bijOn_edgeB_Ici",
            "QKForms.accumulation_ae",
            # the endpoints (AccumulationEndpoints.lean, which imports Accumulation.lean)
            "QKForms.tendsto_accumulationLimit_zero",
            "QKForms.accumulationLimit_one",
            "QKForms.tendsto_accumulationLimit_atTop",
        ),
        lean_file="lean/QKForms/Accumulation.lean",
        check="qkforms.checks.accumulation:check_thm5",
        properties=(
            "thm5_deterministic_estimates",
            "thm5_limit_point_float_core_and_theta",
            "thm5_profiles_of_exactly_proportional_lobes",
            "thm5_limit_tends_to_the_vertices",
        ),
    ),
    Result(
        id="cor1",
        paper="Corollary 1",
        title="iid square baseline",
        check="qkforms.checks.energy:check_cor1",
        properties=(
            "cor1_moments_any_centred_law",
        ),
    ),
    Result(
        id="cor2",
        paper="Corollary 2",
        title="random QK-product baseline",
        check="qkforms.checks.energy:check_cor2",
        properties=(
            "cor2_moments_any_centred_laws",
        ),
    ),
    Result(
        id="prop5",
        paper="Proposition 5",
        title="low-rank symmetric energy",
        check="qkforms.checks.energy:check_prop5",
        properties=(
            "prop5_symmetric_laws_conditional_ratio",
            "prop5_gaussian_mean_ratio",
        ),
    ),
    Result(
        id="lemma7",
        paper="Lemma 7",
        title="bimodal identities",
        check="qkforms.checks.pairing:check_lemma7",
        properties=(
            "lemma7_bimodal_identities",
        ),
    ),
    Result(
        id="lemma8",
        paper="Lemma 8",
        title="bimodal involution",
        check="qkforms.checks.pairing:check_lemma8",
        properties=(
            "lemma8_involution",
            "lemma8_fixed_points_have_pairing_one",
        ),
    ),
    Result(
        id="lemma9",
        paper="Lemma 9",
        title="O/E/R moments",
        check="qkforms.checks.pairing:check_lemma9",
        properties=(
            "lemma9_moments",
        ),
    ),
    Result(
        id="lemma1",
        paper="Lemma 1",
        title="biaffine decomposition",
        check="qkforms.checks.attention:check_lemma1",
        properties=(
            "lemma1_biaffine_decomposition",
        ),
    ),
    Result(
        id="prop1",
        paper="Proposition 1",
        title="RoPE-like classification",
        check="qkforms.checks.attention:check_prop1",
        properties=(
            "prop1_rope_like_iff_powers",
        ),
    ),
    Result(
        id="prop3",
        paper="Proposition 3",
        title="homogenization",
        check="qkforms.checks.attention:check_prop3",
        properties=(
            "prop3_homogenized_scores_exact",
            "prop3_float_homogenized_form",
        ),
    ),
)


def ids(results: Sequence[Result] | None = None) -> list[str]:
    """The registered ids, in registry order.

    Examples
    --------
    >>> ids()[:3]
    ['lemma5', 'lemma3', 'lemma2']
    """
    return [r.id for r in (RESULTS if results is None else results)]


def get(result_id: str, results: Sequence[Result] | None = None) -> Result:
    """The registered result with this id.

    Raises
    ------
    QKFormsError
        If the id is not registered.

    Examples
    --------
    >>> get("lemma4").lean_file
    'lean/QKForms/Profile.lean'
    """
    for r in RESULTS if results is None else results:
        if r.id == result_id:
            return r
    raise QKFormsError(
        f"unknown result id {result_id!r}; registered ids: {', '.join(ids(results))}"
    )


def select(selectors: Iterable[str], results: Sequence[Result] | None = None) -> list[Result]:
    """The results named by ids or groups (``"thm4"`` selects every ``thm4.*``).

    An empty selection selects every result. Unknown selectors raise
    :class:`~qkforms.errors.QKFormsError`.

    Examples
    --------
    >>> [r.id for r in select(["thm4"])][:3]
    ['thm4.simplex', 'thm4.a_face', 'thm4.b_face']
    >>> [r.id for r in select(["thm3", "lemma2"])]   # the group thm3 includes thm3.live
    ['lemma2', 'thm3', 'thm3.live']
    """
    pool = list(RESULTS if results is None else results)
    wanted = list(selectors)
    if not wanted:
        return pool
    chosen: set[str] = set()
    for sel in wanted:
        hits = [r.id for r in pool if r.id == sel or r.group == sel]
        if not hits:
            raise QKFormsError(
                f"unknown result id or group {sel!r}; registered ids: {', '.join(ids(pool))}"
            )
        chosen.update(hits)
    return [r for r in pool if r.id in chosen]

"""The registry of results: one row per paper result, shared by Lean, Python and docs.

Each :class:`Result` names a paper result by its id (``docs/architecture.md`` §1) and
says where it is established: the Lean declarations that prove it (fully qualified
names, in one file of ``lean/QKForms/``, each carrying the docstring tag
``[qkforms:<id>]``), the exact Python check (``module:function``), the property
tests (pytest node ids) and the docs page. ``qkforms verify`` checks every part
side by side, and ``tests/test_registry.py`` fails when any part drifts.

Results not formalized in Lean have no declarations; their ``lean_status`` is
``"not formalized"``.

Examples
--------
>>> from qkforms.registry import get, ids
>>> get("thm3").paper
'Theorem 3'
>>> get("thm3").check
'qkforms.checks:check_thm3'
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
        The exact Python check as ``"module:function"``.
    property_tests : tuple of str
        Pytest node ids (``"tests/test_x.py::test_y"``) of its property tests.
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
    property_tests: tuple[str, ...] = ()
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


def _check(result_id: str) -> str:
    return f"qkforms.checks:{check_function_name(result_id)}"


_PROPS = "tests/test_properties_"

#: Every registered result, in the order of docs/architecture.md §1.
RESULTS: tuple[Result, ...] = (
    Result(
        id="lemma5",
        paper="Lemma 5",
        title="symmetric/skew energy identities",
        lean=(
            "QKForms.frobSq_eq_frobSq_symPart_add_frobSq_skewPart",
            "QKForms.frobSq_symPart_eq",
            "QKForms.frobSq_skewPart_eq",
            "QKForms.frobSq_symPart_div_frobSq",
            "QKForms.frobSq_skewPart_div_frobSq",
            "QKForms.lemma5_energy_identities",
        ),
        lean_file="lean/QKForms/EnergyIdentities.lean",
        check=_check("lemma5"),
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
        check=_check("lemma3"),
    ),
    Result(
        id="lemma2",
        paper="Lemma 2",
        title="pairing bound and equality case",
        lean=(
            "QKForms.pairingScore_eq_one_sub_sqrt",
            "QKForms.pairingScore_le_pairingBound",
            "QKForms.pairingScore_eq_pairingBound_iff",
            "QKForms.lemma2_pairing_bound",
        ),
        lean_file="lean/QKForms/PairingBound.lean",
        check=_check("lemma2"),
    ),
    Result(
        id="lemma10",
        paper="Lemma 10",
        title="S = 1/2 M^T J M; spectrum from the 2n x 2n Gram route (identity in Lean)",
        lean=(
            "QKForms.symPart_eq_half_stacked_swap_stacked",
        ),
        lean_file="lean/QKForms/GramForm.lean",
        check=_check("lemma10"),
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
        check=_check("thm3"),
    ),
    Result(
        id="def6",
        paper="Definition 6",
        title="profile map: scale, sign, transpose and orthogonal invariance",
        lean=(),
        lean_file="lean/QKForms/Profile.lean",
        check=_check("def6"),
    ),
    Result(
        id="lemma4",
        paper="Lemma 4",
        title="profile scale",
        lean=(),
        lean_file="lean/QKForms/Profile.lean",
        check=_check("lemma4"),
    ),
    Result(
        id="prop4",
        paper="Proposition 4",
        title="rank-one profiles and the family Theta",
        lean=(),
        lean_file="lean/QKForms/RankOne.lean",
        check=_check("prop4"),
    ),
    Result(
        id="thm4.simplex",
        paper="Theorem 4",
        title="profile coordinates are nonnegative and sum to 1",
        lean=(),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check=_check("thm4.simplex"),
    ),
    Result(
        id="thm4.a_face",
        paper="Theorem 4 (1)",
        title="a = 0 iff symmetric, a = 1 iff antisymmetric",
        lean=(),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check=_check("thm4.a_face"),
    ),
    Result(
        id="thm4.b_face",
        paper="Theorem 4 (2)",
        title="b = 0 iff S semidefinite, b = 1 iff symmetric with alpha = beta",
        lean=(),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check=_check("thm4.b_face"),
    ),
    Result(
        id="thm4.d_face",
        paper="Theorem 4 (3)",
        title="d = 0 iff alpha >= beta iff S = H + P; d = 1 iff symmetric NSD",
        lean=(),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check=_check("thm4.d_face"),
    ),
    Result(
        id="thm4.c_face",
        paper="Theorem 4 (4)",
        title="c = 0 iff beta >= alpha iff S = H - P; c = 1 iff symmetric PSD",
        lean=(),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check=_check("thm4.c_face"),
    ),
    Result(
        id="thm4.empty_edge",
        paper="Theorem 4",
        title="no L has b = 0 with c > 0 and d > 0",
        lean=(),
        lean_file="lean/QKForms/ProfileFaces.lean",
        check=_check("thm4.empty_edge"),
    ),
    Result(
        id="lemma6",
        paper="Lemma 6",
        title="proportional lobes (almost sure convergence)",
        lean=(),
        lean_file="lean/QKForms/ProportionalLobes.lean",
        check=_check("lemma6"),
    ),
    Result(
        id="thm5",
        paper="Theorem 5",
        title="accumulation on Theta",
        lean=(),
        lean_file="lean/QKForms/Accumulation.lean",
        check=_check("thm5"),
    ),
    Result(
        id="cor1",
        paper="Corollary 1",
        title="iid square baseline",
        check=_check("cor1"),
    ),
    Result(
        id="cor2",
        paper="Corollary 2",
        title="random QK-product baseline",
        check=_check("cor2"),
    ),
    Result(
        id="prop5",
        paper="Proposition 5",
        title="low-rank symmetric energy",
        check=_check("prop5"),
    ),
    Result(
        id="lemma7",
        paper="Lemma 7",
        title="bimodal identities",
        check=_check("lemma7"),
    ),
    Result(
        id="lemma8",
        paper="Lemma 8",
        title="bimodal involution",
        check=_check("lemma8"),
    ),
    Result(
        id="lemma9",
        paper="Lemma 9",
        title="O/E/R moments",
        check=_check("lemma9"),
    ),
    Result(
        id="lemma1",
        paper="Lemma 1",
        title="biaffine decomposition",
        check=_check("lemma1"),
    ),
    Result(
        id="prop1",
        paper="Proposition 1",
        title="RoPE-like classification",
        check=_check("prop1"),
    ),
    Result(
        id="prop3",
        paper="Proposition 3",
        title="homogenization",
        check=_check("prop3"),
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
    >>> [r.id for r in select(["thm3", "lemma2"])]
    ['lemma2', 'thm3']
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

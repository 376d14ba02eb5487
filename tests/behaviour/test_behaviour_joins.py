"""The join of behaviour.parquet with heads.parquet, and the association tables (no torch).

The inputs are :func:`qkforms.behaviour.synthetic.write_example` directories: survey rows
computed by the survey's own statistics from random heads, RoPE factors from
``reduce_heads``, and behaviour scores with known relations (``previous_token``
decreasing in the distance to Θ, ``sink`` 0.9 exactly on head 0 of every layer).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import scipy.stats

from qkforms.behaviour.associations import (
    benjamini_hochberg,
    holm,
    spearman_tests,
    tables_from_joined,
)
from qkforms.behaviour.join import DISPLACEMENTS, GEOMETRY, join_directory, join_tables
from qkforms.behaviour.schema import BEHAVIOUR, BEHAVIOUR_COLUMNS, update_docs
from qkforms.behaviour.synthetic import MODELS, REPEAT, write_example
from qkforms.errors import QKFormsError
from qkforms.stats.table import read_parquet

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def example(tmp_path: Path) -> Path:
    return write_example(tmp_path / "survey")


def test_docs_column_table_matches_the_schema() -> None:
    assert not update_docs(ROOT / "docs" / "behaviour.md", check=True), (
        "regenerate: python -c \"from qkforms.behaviour.schema import update_docs; "
        "update_docs('docs/behaviour.md')\"")
    assert [c.name for c in BEHAVIOUR] == list(BEHAVIOUR_COLUMNS)


def test_the_join_keys_every_head_and_rebuilds_the_relative_forms(example: Path) -> None:
    joined = join_directory(example)
    assert joined is not None
    assert joined.report.to_dict()["joined"] == [12, 8]
    assert len(joined.heads) == 20
    assert joined.concerns["rope-toy"]["induction"] == REPEAT - 1
    forms = joined.forms
    wanted = sorted({*DISPLACEMENTS, 1, REPEAT - 1, REPEAT})
    assert sorted(set(forms["displacement"].tolist())) == wanted
    assert set(forms["model"].tolist()) == {"rope-toy"}
    # at d = 0 the relative form is the survey's form: the same statistics
    heads = read_parquet(example / "heads.parquet")
    at0 = forms.take(np.asarray(forms["displacement"]) == 0)
    rope = [i for i, m in enumerate(heads["model"]) if m == "rope-toy"]
    for g in GEOMETRY:
        np.testing.assert_allclose(np.asarray(at0[g], dtype=float),
                                   np.asarray(heads[g], dtype=float)[rope], rtol=1e-9,
                                   atol=1e-12)
    # and away from 0 it is another form
    at1 = forms.take(np.asarray(forms["displacement"]) == 64)
    assert not np.allclose(np.asarray(at1["a"], dtype=float), np.asarray(at0["a"], dtype=float))


def _tables(path: Path) -> tuple:
    heads = read_parquet(path / "heads.parquet")
    beh = read_parquet(path / "behaviour.parquet")
    man = json.loads((path / "manifest.json").read_text())
    bman = json.loads((path / "behaviour.json").read_text())
    return heads, beh, man, bman


def test_the_join_refuses_other_kv_heads_missing_heads_and_other_files(example: Path) -> None:
    heads, beh, man, bman = _tables(example)
    kv = beh.to_dict()
    kv["kv_head"][3] += 1
    from qkforms.stats.table import Table

    with pytest.raises(QKFormsError, match="kv_head"):
        join_tables(heads, Table(kv), survey_manifest=man, behaviour_manifest=bman)
    missing = beh.take(np.arange(1, len(beh)))
    with pytest.raises(QKFormsError, match="not in behaviour.parquet"):
        join_tables(heads, missing, survey_manifest=man, behaviour_manifest=bman)
    man["models"][0]["files"] = [{"path": "w", "sha256": "a" * 64}]
    bman["models"][0]["files"] = [{"path": "w", "sha256": "b" * 64}]
    with pytest.raises(QKFormsError, match="other files"):
        join_tables(heads, beh, survey_manifest=man, behaviour_manifest=bman)


def test_models_in_one_table_only_are_named_and_left_out(example: Path) -> None:
    heads, beh, man, bman = _tables(example)
    only_rope = beh.where("model", "rope-toy")
    joined, report = join_tables(heads, only_rope, survey_manifest=man,
                                 behaviour_manifest=bman)
    assert set(joined["model"].tolist()) == {"rope-toy"}
    assert report.where("model", "abs-toy")["note"][0].startswith("not in behaviour.parquet")


def test_benjamini_hochberg_and_holm_match_their_definitions() -> None:
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 0.2, 30)
    np.testing.assert_allclose(benjamini_hochberg(p),
                               scipy.stats.false_discovery_control(p, method="bh"))
    order = np.argsort(p)
    want = np.minimum(1, np.maximum.accumulate((30 - np.arange(30)) * p[order]))
    got = holm(p)[order]
    np.testing.assert_allclose(got, want)


def test_spearman_matches_scipy_and_permutations_respect_groups() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(60)
    Y = np.stack([x + rng.standard_normal(60), rng.standard_normal(60)], axis=1)
    Y[5, 1] = np.nan
    out = spearman_tests(x, Y, rng=np.random.default_rng(2), n_perm=2000, n_boot=300)
    assert out["spearman"][0] == pytest.approx(scipy.stats.spearmanr(x, Y[:, 0])[0])
    keep = ~np.isnan(Y[:, 1])
    assert out["spearman"][1] == pytest.approx(scipy.stats.spearmanr(x[keep], Y[keep, 1])[0])
    assert out["heads"].tolist() == [60, 59]
    assert out["p_value"][0] == pytest.approx(1 / 2001)
    assert 0.05 < out["p_value"][1] <= 1.0
    assert out["ci_low"][0] < out["spearman"][0] < out["ci_high"][0]
    # two groups whose offsets alone make x and y agree: pooled rank correlation is large,
    # but permuting within groups keeps the offsets, so it is not significant
    g = np.repeat([0, 1], 30)
    xs = g * 10 + rng.standard_normal(60)
    ys = g * 10 + rng.standard_normal(60)
    strat = spearman_tests(xs, ys, groups=g, rng=np.random.default_rng(3), n_perm=2000)
    free = spearman_tests(xs, ys, rng=np.random.default_rng(3), n_perm=2000)
    assert strat["spearman"][0] == free["spearman"][0] > 0.5
    assert free["p_value"][0] == pytest.approx(1 / 2001)
    assert strat["p_value"][0] > 0.01


def test_the_tables_find_the_planted_associations_and_classes(example: Path) -> None:
    joined = join_directory(example)
    t = tables_from_joined(joined, seed=0, n_boot=200)
    corr = t["behaviour_correlations"]
    rows = {(r["model"], r["score"], r["statistic"]): r for r in corr.rows()}
    for model in (*MODELS, "ALL"):
        r = rows[(model, "previous_token", "theta_dist")]
        if model != "ALL":
            assert r["spearman"] == pytest.approx(-1.0)
            assert r["significant"] is True
        assert r["q_bh"] >= r["p_value"]
    assert rows[("ALL", "previous_token", "theta_dist")]["spearman"] < -0.8
    assert not rows[("rope-toy", "sink", "theta_dist")]["significant"]
    strongest = t["behaviour_strongest"]
    assert strongest.row(0)["score"] == "previous_token"
    classes = t["behaviour_classes"]
    sink = classes.where("class", "sink").where("form", "L(0)")
    assert dict(zip(sink["model"].tolist(), sink["heads"].tolist(), strict=True)) == \
        {"rope-toy": 3, "abs-toy": 2, "ALL": 5}
    allrows = classes.where("class", "all").where("model", "abs-toy")
    heads = read_parquet(example / "heads.parquet").where("model", "abs-toy")
    assert allrows["theta_dist_median"][0] == pytest.approx(
        float(np.median(np.asarray(heads["theta_dist"], dtype=float))))
    # RoPE classes also get their relative form at the class's displacement
    ind = classes.where("class", "induction").where("model", "rope-toy")
    assert ind["form"].tolist() == ["L(0)", "L(T-1)"]
    assert ind["displacement"].tolist() == [0.0, float(REPEAT - 1)]
    rope = t["behaviour_rope"]
    concerned = rope.where("score", "induction").where("concerns", True)
    assert set(concerned["displacement"].tolist()) == {REPEAT - 1}
    assert set(rope["model"].tolist()) == {"rope-toy"}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qkforms", *args], capture_output=True,
                          text=True, cwd=ROOT, check=False)


def test_stats_and_report_join_the_tables_when_both_exist(example: Path) -> None:
    proc = _run("stats", str(example), "--no-fits", "--bootstrap", "50", "--no-baseline")
    assert proc.returncode == 0, proc.stderr
    stats = example / "stats"
    for name in ("behaviour_classes", "behaviour_correlations", "behaviour_rope",
                 "behaviour_strongest", "behaviour_heads"):
        assert (stats / f"{name}.csv").is_file() and (stats / f"{name}.parquet").is_file()
    md = (stats / "observations.md").read_text()
    assert "## Behaviour and geometry (associations, not causes)" in md
    proc = _run("report", str(example), "--no-png")
    assert proc.returncode == 0, proc.stderr
    page = (example / "report.html").read_text(encoding="utf-8")
    assert 'id="behaviour"' in page and "These are associations, not causes." in page
    assert 'id="fig-behaviour-simplex" class="fig" data-point-count="-1" ' \
        'data-expected-count="20"' in page
    assert "fig-behaviour-rope-0" in page


def test_stats_without_a_behaviour_table_is_unchanged(tmp_path: Path, example: Path) -> None:
    (example / "behaviour.parquet").unlink()
    proc = _run("stats", str(example), "--no-fits", "--bootstrap", "0", "--no-baseline")
    assert proc.returncode == 0, proc.stderr
    assert not list((example / "stats").glob("behaviour_*"))
    assert "Behaviour and geometry" not in (example / "stats" / "observations.md").read_text()


def test_a_bad_behaviour_table_is_one_clear_error(example: Path) -> None:
    table = pq.read_table(example / "behaviour.parquet")
    pq.write_table(table.drop(["induction"]), example / "behaviour.parquet")
    proc = _run("stats", str(example), "--no-fits", "--bootstrap", "0", "--no-baseline")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("qkforms stats: error: ")
    assert "lacks the columns ['induction']" in proc.stderr

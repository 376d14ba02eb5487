"""Issue #19, class 3: never a silently different survey.

An empty or reversed selection, a file among several, a shard outside the model
directory, a resume into another survey, an empty ``--out``, negative counts: each is a
clear error or exactly what was asked.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from reliability_helpers import assert_one_line_error, files_under  # noqa: E402

from qkforms.cli import main  # noqa: E402
from qkforms.errors import CheckpointError, QKFormsError  # noqa: E402
from qkforms.models import load  # noqa: E402
from qkforms.survey.options import parse_layers  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint  # noqa: E402


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def survey(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    return cli(capsys, "survey", *args, "--no-stats", "--no-progress")


# --------------------------------------------------------------------------- layers


@pytest.mark.parametrize("spec", [["5-2"], [","], [" "], ["3-1", "0"]])
def test_an_empty_or_reversed_layer_selection_is_an_error(spec: list[str]) -> None:
    with pytest.raises(QKFormsError, match="empty|selects no layer"):
        parse_layers(spec, 8)


def test_issue_example_layers_5_2(checkpoint: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    line = assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out),
                                        "--layers", "5-2"), "empty")
    assert "2-5" in line  # says what was probably meant
    assert not (out / "heads.parquet").exists()


def test_valid_layer_selections_are_unchanged() -> None:
    assert parse_layers(["2-5"], 8) == [2, 3, 4, 5]
    assert parse_layers(["7", "0-1", "1,3"], 8) == [0, 1, 3, 7]
    assert parse_layers(["4-4"], 8) == [4]


# --------------------------------------------------------------------------- sources


def test_a_named_safetensors_file_is_the_one_surveyed(tmp_path: Path, capsys) -> None:
    a = write_llama_checkpoint(tmp_path / "a", n_layers=2, N=32, n=4, n_q=4, n_kv=2, seed=1)
    b = write_llama_checkpoint(tmp_path / "b", n_layers=2, N=32, n=4, n_q=4, n_kv=2, seed=2)
    both = tmp_path / "both"
    shutil.copytree(a, both)
    shutil.copy(b / "model.safetensors", both / "other.safetensors")
    # naming other.safetensors reads other.safetensors (b's weights), not model.safetensors
    named = load(both / "other.safetensors")
    assert [os.path.basename(f.path) for f in named.info.files] == ["config.json",
                                                                     "other.safetensors"]
    np = pytest.importorskip("numpy")
    assert np.array_equal(named.layer(0).W_Q, load(b).layer(0).W_Q)
    assert not np.array_equal(named.layer(0).W_Q, load(a).layer(0).W_Q)
    out = tmp_path / "out"
    assert survey(capsys, str(both / "other.safetensors"), "--out", str(out))[0] == 0
    man = json.loads((out / "manifest.json").read_text())
    assert [os.path.basename(f["path"]) for f in man["models"][0]["files"]] == [
        "config.json", "other.safetensors"]
    ref = tmp_path / "ref"
    assert survey(capsys, str(b), "--out", str(ref))[0] == 0
    assert pq.read_table(out / "spectra.parquet").column("eig_S").equals(
        pq.read_table(ref / "spectra.parquet").column("eig_S"))


@pytest.mark.parametrize("shard", ["../other/model.safetensors", "/abs/model.safetensors",
                                   "sub/model.safetensors", "..", ""])
def test_a_shard_index_cannot_leave_the_model_directory(shard: str, checkpoint: Path,
                                                        tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(checkpoint, other)
    model = tmp_path / "model"
    model.mkdir()
    shutil.copy(checkpoint / "config.json", model / "config.json")
    (model / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"model.layers.0.self_attn.q_proj.weight": shard}}))
    with pytest.raises(CheckpointError, match="not a file name in the model directory"):
        load(model)


def test_issue_example_shard_index_outside(checkpoint: Path, tmp_path: Path, capsys) -> None:
    shutil.copytree(checkpoint, tmp_path / "other")
    model = tmp_path / "model"
    model.mkdir()
    shutil.copy(checkpoint / "config.json", model / "config.json")
    from qkforms.models.safetensors import read_header

    names = read_header(checkpoint / "model.safetensors")[0]
    (model / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {name: "../other/model.safetensors" for name in names}}))
    assert_one_line_error(survey(capsys, str(model), "--out", str(tmp_path / "out")),
                          "../other/model.safetensors", "not a file name")


# --------------------------------------------------------------------------- resume


def test_resume_into_another_models_output_is_refused(checkpoint: Path, tmp_path: Path,
                                                      capsys) -> None:
    other = write_llama_checkpoint(tmp_path / "other", n_layers=2, N=32, n=4, n_q=4,
                                   n_kv=2, seed=9, name="another-model")
    out = tmp_path / "out"
    assert survey(capsys, str(checkpoint), "--out", str(out))[0] == 0
    before = (out / "heads.parquet").read_bytes()
    assert_one_line_error(survey(capsys, str(other), "--out", str(out), "--resume"),
                          "--resume", "synthetic-mistral-4x4q2kv-32-4")
    assert (out / "heads.parquet").read_bytes() == before
    # adding a model to a finished survey keeps the earlier one (nothing is lost)
    assert survey(capsys, str(checkpoint), str(other), "--out", str(out), "--resume")[0] == 0
    models = set(pq.read_table(out / "heads.parquet").column("model").to_pylist())
    assert models == {"synthetic-mistral-4x4q2kv-32-4", "another-model"}
    # without --resume, replacing is what was asked
    assert survey(capsys, str(other), "--out", str(out))[0] == 0
    assert set(pq.read_table(out / "heads.parquet").column("model").to_pylist()) == {
        "another-model"}


def test_resume_refuses_parts_without_their_run_record(checkpoint: Path, tmp_path: Path,
                                                       capsys) -> None:
    out = tmp_path / "out"
    assert survey(capsys, str(checkpoint), "--out", str(out))[0] == 0
    (out / "manifest.json").unlink()
    run_json = next((out / "parts").glob("*/run.json"))
    run_json.unlink()
    assert_one_line_error(survey(capsys, str(checkpoint), "--out", str(out), "--resume"),
                          "no run.json")


# --------------------------------------------------------------------------- options


def test_issue_example_empty_out_writes_nothing_in_the_current_directory(
        checkpoint: Path, capsys) -> None:
    cwd = Path.cwd()
    code, err = survey(capsys, str(checkpoint), "--out", "")
    assert code == 2 and "--out: must name a directory" in err
    assert files_under(cwd) == []
    code, err = cli(capsys, "stats", "somewhere", "--out", "")
    assert code == 2 and "--out: must name a directory" in err
    assert files_under(cwd) == []


def test_the_api_refuses_an_empty_out(checkpoint: Path) -> None:
    from qkforms.errors import UnsafePathError
    from qkforms.survey import SurveyOptions
    from qkforms.survey import survey as run_survey

    with pytest.raises(UnsafePathError, match="--out is empty"):
        run_survey([load(checkpoint)], SurveyOptions(out="", progress=False))  # type: ignore[arg-type]
    assert files_under(Path.cwd()) == []


@pytest.mark.parametrize(("args", "needle"), [
    (["stats", "d", "--bootstrap", "-5"], "--bootstrap: must be an integer between 0"),
    (["stats", "d", "--baseline-heads", "0"], "--baseline-heads: must be an integer >= 1"),
    (["stats", "d", "--workers", "0"], "--workers: must be an integer between 1"),
    (["report", "d", "--d-max", "-5"], "--d-max: must be an integer between 0"),
    (["report", "d", "--rope-heads", "-3"], "--rope-heads: must be an integer between 0"),
    (["report", "d", "--bootstrap", "-1"], "--bootstrap: must be an integer between 0"),
    (["survey", "--workers", "0"], "--workers: must be an integer between 1"),
    (["survey", "--threads", "-2"], "--threads: must be an integer between 1"),
    (["survey", "--workers", "two"], "--workers: expected an integer, got 'two'"),
])
def test_bad_counts_are_refused(args: list[str], needle: str, capsys) -> None:
    code, err = cli(capsys, *args)
    assert code == 2 and needle in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("size", "needle"), [
    ("N=-5", "between 1 and 16"), ("trials=0", "between 1 and 100"),
    ("N=2.5", "an integer"), ("bogus=3", "unknown size 'bogus'"),
    ("thm3:grid=4", "takes no 'grid'"), ("nosuchid:N=3", "not a registered result id"),
])
def test_verify_refuses_bad_sizes_instead_of_passing(size: str, needle: str,
                                                     capsys) -> None:
    # `verify --size N=-5` used to report "pass": a check of no instance proves nothing
    code, err = cli(capsys, "verify", "--size", size, "--lean", "skip")
    assert_one_line_error((code, err), needle)

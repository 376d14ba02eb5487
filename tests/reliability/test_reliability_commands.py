"""Issue #24: every command (verify, report, stats, series) keeps the survey's promises.

One test (or parametrized case) per example of the issue, by class: unsafe writes,
hangs/crashes/orphans, silently wrong results, tracebacks and vague messages
(``docs/files.md``).
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from reliability_helpers import (  # noqa: E402
    assert_one_line_error,
    files_under,
    run_cli,
    start_cli,
    tagged_processes,
    wait_until,
)

import qkforms as qk  # noqa: E402
from qkforms.cli import main  # noqa: E402
from qkforms.errors import QKFormsError  # noqa: E402
from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint, write_series  # noqa: E402

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc (Linux)")
SMALL = {"n_layers": 2, "N": 16, "n": 2, "n_q": 2, "n_kv": 1}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()  # what earlier steps printed
    code = main(list(args))
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def survey_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("survey24")
    ckpt = write_llama_checkpoint(tmp / "ckpt", seed=3, **SMALL)
    out = tmp / "out"
    assert main(["survey", str(ckpt), "--out", str(out), "--no-stats", "--no-progress"]) == 0
    return out


def copy_survey(src: Path, dst: Path, *, stats: bool = False) -> Path:
    dst.mkdir()
    for name in ("heads.parquet", "spectra.parquet", "manifest.json"):
        (dst / name).write_bytes((src / name).read_bytes())
    if stats:
        assert main(["stats", str(dst), "--bootstrap", "0", "--no-fits", "--no-baseline"]) == 0
    return dst


def rewrite_heads(d: Path, change) -> None:  # type: ignore[no-untyped-def]
    t = pq.read_table(d / "heads.parquet")
    pq.write_table(change(t), d / "heads.parquet")


def lean_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "lean" / "QKForms").mkdir(parents=True)
    (root / "lakefile.lean").write_text("-- a stand-in checkout\n")
    return root


# ----------------------------------------------------------------- 1. unsafe writes


def test_write_axioms_script_does_not_write_through_a_linked_scripts_dir(tmp_path: Path,
                                                                         capsys) -> None:
    root = lean_checkout(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "Axioms.lean").write_text("someone else's file")
    (root / "lean" / "scripts").symlink_to(victim)
    line = assert_one_line_error(cli(capsys, "verify", "--lean-dir", str(root),
                                     "--write-axioms-script"), "symbolic link")
    assert str(root / "lean" / "scripts") in line
    assert (victim / "Axioms.lean").read_text() == "someone else's file"
    assert files_under(victim) == ["Axioms.lean"]


def test_write_axioms_script_writes_atomically(tmp_path: Path, capsys) -> None:
    root = lean_checkout(tmp_path)
    code, _ = cli(capsys, "verify", "--lean-dir", str(root), "--write-axioms-script")
    assert code == 0
    assert (root / "lean" / "scripts" / "Axioms.lean").read_text().startswith("import QKForms")
    assert files_under(root / "lean" / "scripts") == ["Axioms.lean"]


def test_report_recompute_does_not_write_through_a_linked_stats_dir(survey_dir: Path,
                                                                    tmp_path: Path,
                                                                    capsys) -> None:
    d = copy_survey(survey_dir, tmp_path / "d")
    victim = tmp_path / "victim"
    victim.mkdir()
    (d / "stats").symlink_to(victim)
    assert_one_line_error(cli(capsys, "report", str(d), "--recompute", "--no-png",
                              "--bootstrap", "0", "--no-fits"), "symbolic link", str(d / "stats"))
    assert files_under(victim) == []
    assert not (d / "report.html").exists()


def test_stats_does_not_write_through_a_linked_stats_dir(survey_dir: Path, tmp_path: Path,
                                                         capsys) -> None:
    d = copy_survey(survey_dir, tmp_path / "d")
    victim = tmp_path / "victim"
    victim.mkdir()
    (d / "stats").symlink_to(victim)
    assert_one_line_error(cli(capsys, "stats", str(d), "--bootstrap", "0", "--no-fits"),
                          "symbolic link")
    assert files_under(victim) == []


def test_report_figures_do_not_go_through_a_linked_figures_dir(survey_dir: Path,
                                                               tmp_path: Path,
                                                               capsys) -> None:
    d = copy_survey(survey_dir, tmp_path / "d", stats=True)
    victim = tmp_path / "victim"
    victim.mkdir()
    (d / "figures").symlink_to(victim)
    assert_one_line_error(cli(capsys, "report", str(d)), "symbolic link", str(d / "figures"))
    assert files_under(victim) == []


# ------------------------------------------------- 2. hangs, memory blow-ups, orphans


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_special_lean_file_is_refused_at_once(kind: str, tmp_path: Path) -> None:
    root = lean_checkout(tmp_path)
    target = root / "lean" / "QKForms" / "A.lean"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    res = run_cli(["verify", "--lean-dir", str(root), "--lean", "skip", "--no-exact-checks",
                   "--no-property-tests"], timeout=120)
    assert_one_line_error(res, str(target), "not a regular file")


def test_lean_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    """A stand-in ``lake`` that starts a child which would outlive it; both are killed."""
    from qkforms.verify.lake import run_lake

    pidfile = tmp_path / "child.pid"
    script = ("import subprocess, sys, time\n"
              "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
              f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
              "time.sleep(120)\n")
    start = time.monotonic()
    run = run_lake(sys.executable, ["-c", script], tmp_path, timeout=3)
    assert not run.ok and "timed out after 3 s" in run.output
    assert time.monotonic() - start < 60
    child = int(pidfile.read_text())

    def gone() -> bool:
        try:
            with open(f"/proc/{child}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[-1].split()[0] in (b"Z", b"X")
        except OSError:
            return True

    wait_until(gone, 30, "the child of the timed-out lake to be killed")


@pytest.mark.parametrize("damage", ["truncated", "footer", "middle"])
def test_a_damaged_spectra_file_is_one_line_and_exit_1(damage: str, survey_dir: Path,
                                                       tmp_path: Path) -> None:
    d = copy_survey(survey_dir, tmp_path / "d")
    raw = (d / "spectra.parquet").read_bytes()
    n = len(raw)
    if damage == "truncated":
        bad = raw[: n // 2] + raw[-8:]
    elif damage == "footer":
        bad = raw[: n - 200] + bytes(b ^ 0xFF for b in raw[n - 200:n - 8]) + raw[-8:]
    else:
        bad = raw[: n // 4] + bytes(b ^ 0x5A for b in raw[n // 4: 3 * n // 4]) + raw[3 * n // 4:]
    (d / "spectra.parquet").write_bytes(bad)
    for command in ("report", "stats"):
        res = run_cli([command, str(d), "--bootstrap", "0", "--no-fits"], timeout=300)
        assert_one_line_error(res, str(d / "spectra.parquet"))  # exit 1, not 134


@linux
def test_nothing_is_written_into_out_after_the_dask_driver_is_killed(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from reliability_helpers import kill_started

    from qkforms.survey import outdir
    from qkforms.survey.dask_executor import HOLD_ENV

    run = write_series(tmp_path / "run", range(0, 60, 10), n_layers=2)
    out, held = tmp_path / "out", tmp_path / "held"
    held.mkdir()
    proc = start_cli(["survey", str(run), "--out", str(out), "--executor", "dask",
                      "--workers", "2", "--no-stats", "--no-progress"],
                     **{HOLD_ENV: str(held), f"{HOLD_ENV}_S": "2"})
    cluster: list[int] = []

    def started() -> bool:
        cluster[:] = [p for p in tagged_processes(os.environ["QKFORMS_TEST_TAG"])
                      if p != proc.pid]
        return bool(list(held.glob("*.started"))) and bool(cluster)

    kill_started(proc, started, "a dask task to start")
    at_kill = files_under(out)
    wait_until(lambda: not any(outdir.process_alive(p) for p in cluster), 120,
               "the LocalCluster of the killed driver to exit")
    assert files_under(out) == at_kill  # the workers wrote nothing after the driver died
    assert len(list(held.glob("*.started"))) >= 1


def test_dask_workers_return_their_layers_and_the_tables_match_local(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from qkforms.survey.dask_executor import _run_task, LayerTask  # noqa: I001
    from qkforms.survey.layer import LayerResult, SurveyOptions

    ckpt = write_llama_checkpoint(tmp_path / "ckpt", seed=4, **SMALL)
    out = tmp_path / "never-written"
    from dataclasses import asdict

    opts = asdict(SurveyOptions(out=out, progress=False))
    opts["out"] = str(out)
    res = _run_task(LayerTask(str(ckpt), str(out), "k", "m", 1, False), opts)
    assert isinstance(res, LayerResult) and res.heads.num_rows == 2
    assert res.heads.column("layer").to_pylist() == [1, 1]
    assert not out.exists()  # the worker side writes nothing


# ------------------------------------------------------------ 3. silently wrong


def test_a_series_whose_steps_differ_in_shape_is_refused(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    write_llama_checkpoint(run / "checkpoint-10", seed=1, **{**SMALL, "N": 16})
    write_llama_checkpoint(run / "checkpoint-20", seed=2, **{**SMALL, "N": 32})
    line = assert_one_line_error(cli(capsys, "survey", str(run), "--out", str(tmp_path / "o"),
                                     "--no-stats", "--no-progress"), "step 20", "N = 32")
    assert "one architecture" in line
    assert not (tmp_path / "o" / "heads.parquet").exists()


def test_a_series_whose_steps_differ_in_architecture_is_refused(tmp_path: Path,
                                                                capsys) -> None:
    run = tmp_path / "run"
    write_llama_checkpoint(run / "checkpoint-10", seed=1, **SMALL)
    b = write_llama_checkpoint(run / "checkpoint-20", seed=2, **SMALL)
    cfg = json.loads((b / "config.json").read_text())
    cfg["model_type"] = "llama"
    cfg["architectures"] = ["LlamaForCausalLM"]
    (b / "config.json").write_text(json.dumps(cfg))
    first = json.loads((run / "checkpoint-10" / "config.json").read_text())["model_type"]
    assert first != "llama"
    assert_one_line_error(cli(capsys, "survey", str(run), "--out", str(tmp_path / "o"),
                              "--no-stats", "--no-progress"), "architecture", "'llama'")


def test_a_fifo_trainer_state_is_an_error_not_absent(tmp_path: Path) -> None:
    ck = write_llama_checkpoint(tmp_path / "run" / "checkpoint-10", seed=1, **SMALL)
    os.mkfifo(ck / "trainer_state.json")
    res = run_cli(["survey", str(tmp_path / "run"), "--out", str(tmp_path / "o"), "--no-stats",
                   "--no-progress"], timeout=120)
    assert_one_line_error(res, "trainer_state.json", "FIFO")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "malformed"])
def test_a_special_or_malformed_manifest_is_an_error(kind: str, survey_dir: Path,
                                                     tmp_path: Path) -> None:
    d = copy_survey(survey_dir, tmp_path / "d", stats=True)
    (d / "manifest.json").unlink()
    if kind == "fifo":
        os.mkfifo(d / "manifest.json")
    elif kind == "dev-zero":
        (d / "manifest.json").symlink_to("/dev/zero")
    else:
        (d / "manifest.json").write_text("{not json")
    res = run_cli(["report", str(d), "--no-png"], timeout=120)
    assert_one_line_error(res, "manifest.json")


def test_heads_with_every_row_twice_are_refused(survey_dir: Path, tmp_path: Path,
                                                capsys) -> None:
    d = copy_survey(survey_dir, tmp_path / "d")
    rewrite_heads(d, lambda t: pa.concat_tables([t, t]))
    for command in ("stats", "report"):
        assert_one_line_error(cli(capsys, command, str(d), "--bootstrap", "0", "--no-fits"),
                              "rows 0 and 4 describe the same head")


def test_nan_statistics_in_ok_rows_are_refused(survey_dir: Path, tmp_path: Path,
                                               capsys) -> None:
    d = copy_survey(survey_dir, tmp_path / "d")

    def nan(t):  # type: ignore[no-untyped-def]
        for c in ("a", "b", "c", "d", "balance"):
            t = t.set_column(t.column_names.index(c), c,
                             pa.array([math.nan] * t.num_rows, type=pa.float64()))
        return t

    rewrite_heads(d, nan)
    assert_one_line_error(cli(capsys, "stats", str(d), "--bootstrap", "0", "--no-fits"),
                          "is NaN in 4 'ok' row(s)")


def test_null_statistics_are_what_the_survey_writes_for_undefined_values(
        tmp_path: Path) -> None:
    """The writer side of the NaN rule: an undefined statistic of an ok head is null."""
    from qkforms.gram import layer_spectra
    from qkforms.survey.arrow_tables import heads_table
    from qkforms.survey.head_statistics import head_columns

    rng = np.random.default_rng(0)
    sp = layer_spectra(rng.standard_normal((2, 1, 4)), rng.standard_normal((1, 1, 4)),
                       np.array([0, 0]))
    cols = head_columns(sp, N=4, n=1)
    cols["a_over_b"][1] = np.nan  # as for an ok head with b = 0
    t = heads_table("m", 0, np.array([0, 0]), 4, 1, sp.error, cols)
    assert t.column("status").to_pylist() == ["ok", "ok"]
    assert t.column("a_over_b").to_pylist()[1] is None  # null, not NaN
    assert t.column("a_over_b").to_pylist()[0] == pytest.approx(cols["a_over_b"][0])


def test_report_over_junk_heads_does_not_use_stale_stats(survey_dir: Path, tmp_path: Path,
                                                         capsys) -> None:
    d = copy_survey(survey_dir, tmp_path / "d", stats=True)
    pq.write_table(pa.table({"x": [1, 2]}), d / "heads.parquet")
    assert_one_line_error(cli(capsys, "report", str(d), "--no-png"), "heads.parquet",
                          "lacks the column(s) model")
    assert not (d / "report.html").exists()


def test_report_recomputes_stats_of_other_heads(survey_dir: Path, tmp_path: Path,
                                                capsys) -> None:
    d = copy_survey(survey_dir, tmp_path / "d", stats=True)
    rewrite_heads(d, lambda t: t.filter(pa.compute.equal(t.column("layer"), 0)))
    code, _ = cli(capsys, "report", str(d), "--no-png", "--bootstrap", "0", "--no-fits")
    assert code == 0
    stats = pq.read_table(d / "stats" / "head_stats.parquet")
    assert stats.num_rows == 2 and set(stats.column("layer").to_pylist()) == {0}


def test_a_config_with_fewer_layers_than_the_checkpoint_is_refused(tmp_path: Path,
                                                                   capsys) -> None:
    ckpt = write_llama_checkpoint(tmp_path / "ckpt", seed=1, **{**SMALL, "n_layers": 3})
    cfg = json.loads((ckpt / "config.json").read_text())
    cfg["num_hidden_layers"] = 2
    (ckpt / "config.json").write_text(json.dumps(cfg))
    assert_one_line_error(cli(capsys, "survey", str(ckpt), "--out", str(tmp_path / "o"),
                              "--no-stats", "--no-progress"),
                          "3 layers", "declares 2", "layer 2")


# -------------------------------------------------- 4. tracebacks and vague messages


def test_a_huge_step_in_a_checkpoint_name(tmp_path: Path, capsys) -> None:
    write_llama_checkpoint(tmp_path / "run" / "checkpoint-99999999999999999999999", seed=1,
                           **SMALL)
    assert_one_line_error(cli(capsys, "survey", str(tmp_path / "run"), "--out",
                              str(tmp_path / "o"), "--no-stats", "--no-progress"),
                          "step 99999999999999999999999 is beyond")


def test_a_non_utf8_lean_file(tmp_path: Path, capsys) -> None:
    root = lean_checkout(tmp_path)
    (root / "lean" / "QKForms" / "A.lean").write_bytes(b"theorem x : True := \xff")
    assert_one_line_error(cli(capsys, "verify", "--lean-dir", str(root), "--lean", "skip",
                              "--no-exact-checks", "--no-property-tests"),
                          "A.lean", "not UTF-8", "offset 20")


@pytest.mark.parametrize("args, needle", [
    (["verify", "--lean-timeout", "nan"], "finite"),
    (["verify", "--lean-timeout", "-1"], "> 0"),
    (["verify", "--lean-timeout", "inf"], "finite"),
    (["verify", "--max-examples", "-1"], "between 1 and"),
    (["verify", "--max-examples", "0"], "between 1 and"),
    (["verify", "--seed", "-1"], "between 0 and 4294967295"),
    (["stats", "d", "--seed", "4294967296"], "between 0 and 4294967295"),
    (["report", "d", "--seed", "x"], "expected an integer"),
    (["survey", "--scheduler", "not a url", "--executor", "dask"], "tcp://HOST:PORT"),
    (["stats", "d", "--scheduler", "not a url"], "tcp://HOST:PORT"),
])
def test_cli_numbers_are_validated_by_argparse(args: list[str], needle: str,
                                               capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_valid_cli_numbers_still_parse() -> None:
    import argparse

    from qkforms.verify import configure

    p = argparse.ArgumentParser()
    configure(p)
    a = p.parse_args(["--lean-timeout", "90.5", "--max-examples", "5", "--seed", "7"])
    assert (a.lean_timeout, a.max_examples, a.seed) == (90.5, 5, 7)
    from qkforms.cli import scheduler_arg

    assert scheduler_arg("tcp://127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert scheduler_arg("localhost:8786") == "localhost:8786"


def test_the_verify_api_names_its_bad_numbers() -> None:
    from qkforms.errors import ParameterError
    from qkforms.verify import verify

    for kwargs, needle in (({"lean_timeout": float("nan")}, "lean_timeout"),
                           ({"lean_timeout": -1.0}, "lean_timeout"),
                           ({"max_examples": -1}, "max_examples"),
                           ({"seed": -1}, "seed")):
        with pytest.raises(ParameterError, match=needle):
            verify(lean="skip", property_tests=False, exact_checks=False, **kwargs)


def test_a_string_typed_balance_column(survey_dir: Path, tmp_path: Path, capsys) -> None:
    d = copy_survey(survey_dir, tmp_path / "d")
    rewrite_heads(d, lambda t: t.set_column(
        t.column_names.index("balance"), "balance",
        pa.array([str(v) for v in t.column("balance").to_pylist()])))
    for command in ("stats", "report"):
        assert_one_line_error(cli(capsys, command, str(d), "--bootstrap", "0", "--no-fits"),
                              "column 'balance' must hold numbers (double)")


def test_a_non_numeric_environment_number(tmp_path: Path, capsys,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from qkforms.survey.pipeline import DELAY_ENV

    ckpt = write_llama_checkpoint(tmp_path / "ckpt", seed=1, **SMALL)
    monkeypatch.setenv(DELAY_ENV, "soon")
    assert_one_line_error(cli(capsys, "survey", str(ckpt), "--out", str(tmp_path / "o"),
                              "--no-stats", "--no-progress"),
                          f"environment variable {DELAY_ENV}", "'soon'")


@pytest.mark.parametrize("bad, error, needle", [
    ([[1.0, 2.0], [3.0]], qk.ShapeError, "L is a ragged"),
    ([[10**400, 0], [0, 1]], qk.NonFiniteError, "beyond the float64 range"),
    (np.array([[None, 1.0], [1.0, 2.0]], dtype=object), qk.NotRealError, "None (missing)"),
    (np.array([[np.longdouble("1e4000"), 1.0], [1.0, 2.0]], dtype=np.longdouble),
     qk.NonFiniteError, "beyond the float64 range"),
])
def test_api_input_errors_name_the_argument(bad: object, error: type, needle: str) -> None:
    if isinstance(bad, np.ndarray) and bad.dtype == np.longdouble and \
            np.finfo(np.longdouble).max <= np.finfo(np.float64).max:
        pytest.skip("longdouble is float64 on this platform")
    for call in (qk.profile, qk.signature, qk.energies, qk.parts):
        with pytest.raises(error) as exc:
            call(bad)  # type: ignore[arg-type]
        assert needle in str(exc.value)
    assert "NaN or Inf" not in needle


def test_a_matrix_near_the_float64_limit_is_computed_right() -> None:
    huge = np.full((3, 3), 1.7e308)
    ones = np.ones((3, 3))
    assert qk.signature(huge) == qk.signature(ones) == qk.Signature(1, 0, 2)
    np.testing.assert_allclose(list(qk.profile(huge)), list(qk.profile(ones)), atol=1e-12)
    S, T = qk.parts(huge)
    assert np.all(S == 1.7e308) and np.all(T == 0)
    W = np.full((2, 6), 1.7e308)
    W[1] = -1.0e308
    h, unit = qk.Head(W, W), qk.Head(W / 1.7e308, W / 1.7e308)
    np.testing.assert_allclose(list(h.profile()), list(unit.profile()), atol=1e-12)


def test_exact_head_signature_of_an_object_array() -> None:
    from qkforms import exact

    with pytest.raises(QKFormsError, match="not a rational number"):
        exact.head_signature(np.array([[1, "a"]], dtype=object), np.eye(1, 2))
    with pytest.raises(QKFormsError, match="no exact rational value"):
        exact.head_signature(np.array([[object(), 1]], dtype=object), np.eye(1, 2))
    sig = exact.head_signature(np.array([[1, "1/2"]], dtype=object), np.array([[0, 1]]))
    assert sig.n_pos + sig.n_neg + sig.n_zero == 2


def test_safetensors_byte_count_overflow(tmp_path: Path, capsys) -> None:
    ckpt = write_llama_checkpoint(tmp_path / "ckpt", seed=1, **SMALL)
    path = ckpt / "model.safetensors"
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    name = next(k for k in header if k != "__metadata__")
    header[name]["shape"] = [2**32, 2**32]  # 2**64 elements: wraps to 0 in int64
    new = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(new)) + new + raw[8 + n:])
    line = assert_one_line_error(cli(capsys, "survey", str(ckpt), "--out", str(tmp_path / "o"),
                                     "--no-stats", "--no-progress"), name)
    assert "needs 0 bytes" not in line
    assert str(2**64 * 4) in line or str(2**64 * 2) in line or str(2**64 * 8) in line

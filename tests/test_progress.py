"""The progress module: plain lines off a terminal, a bar on one, callbacks, and silence."""

from __future__ import annotations

import io
import time

import pytest

from qkforms import _progress


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_quick_phase_prints_nothing() -> None:
    out = io.StringIO()
    with _progress.settings(stream=out):
        for _ in _progress.track(range(50), "quick", unit="item"):
            pass
    assert out.getvalue() == ""


def test_a_long_single_step_is_not_silent() -> None:
    """The ticker writes lines while one step runs, and the end is reported."""
    out = io.StringIO()
    with _progress.settings(stream=out, plain_after=0.1, plain_every=0.2):
        with _progress.phase("stats: family fits", total=3, unit="fit") as p:
            time.sleep(0.9)  # one long step, no update
            p.update(3)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3, lines
    assert lines[0].startswith("qkforms: stats: family fits: 0/3 fits (")
    assert lines[-1].startswith("qkforms: stats: family fits: done, 3 fits in ")
    assert all(line.startswith("qkforms: stats: family fits: ") for line in lines)


def test_lines_are_throttled() -> None:
    out = io.StringIO()
    with _progress.settings(stream=out, plain_after=0.0, plain_every=3600.0):
        for _ in _progress.track(range(1000), "many", unit="item"):
            pass
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines  # the first line (due at once) and the end
    assert lines[1].startswith("qkforms: many: done, 1000 items in ")


def test_failure_prints_no_done_line() -> None:
    out = io.StringIO()
    with _progress.settings(stream=out, plain_after=0.0, plain_every=3600.0):
        with pytest.raises(ValueError, match="boom"):
            with _progress.phase("load m", unit="file"):
                raise ValueError("boom")
    assert "done" not in out.getvalue()


def test_disabled_by_setting_and_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[_progress.ProgressEvent] = []
    out = io.StringIO()
    with _progress.settings(stream=out, plain_after=0.0, enabled=False,
                            callback=events.append):
        list(_progress.track(range(2), "off"))
    monkeypatch.setenv(_progress.ENV, "0")
    with _progress.settings(stream=out, plain_after=0.0):
        assert not _progress.current().enabled
        list(_progress.track(range(2), "off too"))
    assert out.getvalue() == ""
    assert [(e.done, e.finished) for e in events] == [(0, False), (1, False), (2, False),
                                                      (2, True)]


def test_terminal_gets_a_bar() -> None:
    pytest.importorskip("tqdm")
    term = Terminal()
    with _progress.settings(stream=term, plain_after=0.0):
        for _ in _progress.track(range(4), "survey m", unit="layer"):
            pass
    text = term.getvalue()
    assert "survey m" in text and "4/4" in text and "\r" in text
    assert "qkforms: survey m" not in text  # a bar, not plain lines


def test_format_seconds() -> None:
    assert _progress.format_seconds(0.04) == "0.0 s"
    assert _progress.format_seconds(59.94) == "59.9 s"
    assert _progress.format_seconds(60.0) == "1 min 00 s"
    assert _progress.format_seconds(7199.0) == "1 h 59 min"


def test_survey_reports_every_phase_and_the_total_time(tmp_path, capsys) -> None:
    """Opening, the layers and the statistics each report (shown at once here), and the
    last line gives the total wall time with its parts."""
    from qkforms.cli import main
    from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

    ckpt = write_llama_checkpoint(tmp_path / "ckpt", n_layers=3, N=16, n=2, n_q=2, n_kv=1)
    out = io.StringIO()
    with _progress.settings(stream=out, plain_after=0.0, plain_every=3600.0):
        assert main(["survey", str(ckpt), "--out", str(tmp_path / "out")]) == 0
    lines = out.getvalue().splitlines()
    for phase in ("open models", "survey ", "stats: baseline and family fits", "stats: tables"):
        assert any(line.startswith(f"qkforms: {phase}") and ": done, " in line
                   for line in lines), (phase, lines)
    assert any(": done, 3 layers in " in line for line in lines), lines
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("done in ") and "(open " in last and ", statistics " in last, last


def test_no_progress_silences_the_survey(tmp_path) -> None:
    from qkforms.cli import main
    from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

    ckpt = write_llama_checkpoint(tmp_path / "ckpt", n_layers=2, N=16, n=2, n_q=2, n_kv=1)
    out = io.StringIO()
    with _progress.settings(stream=out, plain_after=0.0):
        assert main(["survey", str(ckpt), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    assert out.getvalue() == ""

"""Fixtures of the report tests: one synthetic survey and its report, built once."""

from __future__ import annotations

import pytest
from report_inputs import write_survey


@pytest.fixture(scope="session")
def report_dir(tmp_path_factory):
    pytest.importorskip("plotly")
    pytest.importorskip("matplotlib")
    pytest.importorskip("pyarrow")
    from qkforms.report.build import build_report

    d = tmp_path_factory.mktemp("survey")
    facts = write_survey(d)
    path = build_report(d, n_boot=50, d_max=16, rope_heads=4)
    return d, path, facts

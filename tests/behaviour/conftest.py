"""The behaviour tests use the loader tests' tiny-model helpers (``tests/models/tiny.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

MODELS = str(Path(__file__).resolve().parents[1] / "models")
if MODELS not in sys.path:
    sys.path.insert(0, MODELS)

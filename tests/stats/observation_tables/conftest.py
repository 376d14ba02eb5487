"""The tests of ``qkforms.stats.observation_tables`` share the survey inputs of ``tests/stats``
(``stats_inputs.py``), as the other statistics tests do."""

from __future__ import annotations

import sys
from pathlib import Path

_STATS_TESTS = str(Path(__file__).resolve().parents[1])
if _STATS_TESTS not in sys.path:
    sys.path.insert(0, _STATS_TESTS)

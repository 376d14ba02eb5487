"""Shared pytest configuration: the hypothesis profiles.

Profiles: ``ci`` (default; derandomized, 100 examples, no deadline, no example
database, so every run draws the same examples) and ``dev`` (fewer examples for
quick local runs). Select another with ``HYPOTHESIS_PROFILE=dev pytest``. Keep this
file minimal; fixtures of one test area go in that area's own ``conftest.py``.
"""

from __future__ import annotations

import os

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is in the `test` extra; tests that need it import it
    settings = None

if settings is not None:
    settings.register_profile(
        "ci",
        derandomize=True,
        max_examples=100,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        "dev",
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

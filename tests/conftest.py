"""Shared pytest configuration: the hypothesis profile.

The profiles are registered by :mod:`qkforms.properties` (one definition for pytest and
``qkforms verify``): ``ci`` (default; derandomized, 100 examples, no deadline, no
example database, so every run draws the same examples) and ``dev`` (fewer examples for
quick local runs). Select another with ``HYPOTHESIS_PROFILE=dev pytest``. Keep this
file minimal; fixtures of one test area go in that area's own ``conftest.py``.
"""

from __future__ import annotations

import os

from hypothesis import settings

import qkforms.properties  # noqa: F401  (registers the profiles)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

"""The status words of ``qkforms verify``, defined once for every side and the report.

A check that ran is ``pass`` or ``fail``; one that could not run is ``not run`` (always
with the reason and how to enable it); ``none``: nothing is registered to run. A Lean
module or declaration is ``built``, ``failed`` or ``not run`` (a result without Lean
declarations is :data:`qkforms.registry.LEAN_NOT_FORMALIZED`).

Examples
--------
>>> (PASS, FAIL, NOT_RUN, NONE, BUILT, FAILED)
('pass', 'fail', 'not run', 'none', 'built', 'failed')
"""

__all__ = ["BUILT", "FAIL", "FAILED", "NONE", "NOT_RUN", "PASS"]

PASS = "pass"
FAIL = "fail"
NOT_RUN = "not run"
NONE = "none"
BUILT = "built"
FAILED = "failed"

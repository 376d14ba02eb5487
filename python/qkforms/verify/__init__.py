"""``qkforms verify``: Lean and Python checked side by side, result by result.

:func:`verify` (:mod:`~qkforms.verify.bridge`) checks every result of the registry on
the Lean side (:mod:`~qkforms.verify.lean_side`: static checks of ``lean/``, ``lake``
build and axiom audit, premises from a LeanDojo trace) and on the Python side
(:mod:`~qkforms.verify.python_side`: exact checks, hypothesis properties), and returns
the verification report (:mod:`~qkforms.verify.verification_report`); the command line
is :mod:`~qkforms.verify.command`. Below them: the checkout (:mod:`~.checkout`), the
Lean source scanner (:mod:`~.lean_source`), the static checks (:mod:`~.lean_project`,
:mod:`~.lean_rules`, :mod:`~.lean_uses`, :mod:`~.lean_evidence`), ``lake``
(:mod:`~.lake`) and the trace reader (:mod:`~.lean_trace`). See docs/bridge.md.

Examples
--------
>>> rep = verify(only=["lemma5"], lean="skip", property_tests=False)
>>> [(r.result.id, r.exact.status) for r in rep.rows]
[('lemma5', 'pass')]
"""

from qkforms.verify.bridge import verify
from qkforms.verify.checkout import locate_lean_root
from qkforms.verify.command import configure, run
from qkforms.verify.lean_side import NO_SOURCES, NO_TOOLCHAIN, write_axioms_script
from qkforms.verify.options import VerifyOptions

__all__ = [
    "NO_SOURCES",
    "NO_TOOLCHAIN",
    "VerifyOptions",
    "configure",
    "locate_lean_root",
    "run",
    "verify",
    "write_axioms_script",
]

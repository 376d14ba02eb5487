"""The options of one ``qkforms verify`` run, checked once (:class:`VerifyOptions`).

:func:`qkforms.verify.verify` takes them as keywords and hands this one frozen object to
each step (the Lean side, the premises, the Python side and the report).

Examples
--------
>>> opts = VerifyOptions(lean="skip", only=("thm3",), sizes={"N": 5})
>>> (opts.lean, opts.only, opts.property_tests)
('skip', ('thm3',), True)
>>> opts.report_options()["sizes"]
{'N': 5}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qkforms.arguments import MAX_SEED
from qkforms.errors import ParameterError, QKFormsError, format_value

__all__ = ["LEAN_MODES", "MAX_EXAMPLES", "VerifyOptions"]

#: ``--lean``: build when ``lake`` is on PATH, fail without it, or static checks only
LEAN_MODES = ("auto", "require", "skip")
#: largest ``--max-examples`` (hypothesis examples per property)
MAX_EXAMPLES = 1_000_000


@dataclass(frozen=True)
class VerifyOptions:
    """What to check and how (the keywords of :func:`qkforms.verify.verify`).

    Raises
    ------
    QKFormsError
        For a ``lean`` mode outside :data:`LEAN_MODES`.
    ParameterError
        For a timeout, seed or example budget out of range.

    Examples
    --------
    >>> VerifyOptions(seed=-1)
    Traceback (most recent call last):
    ...
    qkforms.errors.ParameterError: seed must be an integer between 0 and 4294967295, got -1
    """

    only: tuple[str, ...] = ()
    lean: str = "auto"
    lean_timeout: float = 3 * 3600.0
    lake_cache: bool = False
    seed: int = 0
    sizes: dict[str, Any] = field(default_factory=dict)
    id_sizes: dict[str, dict[str, Any]] = field(default_factory=dict)
    exact_checks: bool = True
    property_tests: bool = True
    max_examples: int | None = None
    lean_trace: bool = False
    dojo_extractor: str | Path | None = None
    trace_dir: str | Path | None = None

    def __post_init__(self) -> None:
        if self.lean not in LEAN_MODES:
            raise QKFormsError(f"--lean must be one of {', '.join(LEAN_MODES)}, "
                               f"not {self.lean!r}")
        _check_numbers(self.lean_timeout, self.seed, self.max_examples)
        # copies: the caller's dicts stay the caller's
        object.__setattr__(self, "sizes", dict(self.sizes or {}))
        object.__setattr__(self, "id_sizes", dict(self.id_sizes or {}))

    def report_options(self) -> dict[str, Any]:
        """The options recorded in the report (``options`` of schema ``qkforms.verify/3``).

        Examples
        --------
        >>> VerifyOptions(only=("thm4",), seed=3).report_options()["only"]
        ['thm4']
        """
        return {
            "seed": self.seed,
            "sizes": self.sizes,
            "id_sizes": self.id_sizes,
            "only": list(self.only),
            "exact_checks": self.exact_checks,
            "property_tests": self.property_tests,
            "max_examples": self.max_examples,
        }


def _check_numbers(lean_timeout: Any, seed: Any, max_examples: Any) -> None:
    """The ranges of the numbers (the command line checks them in argparse)."""
    if isinstance(lean_timeout, bool) or not isinstance(lean_timeout, int | float) or not (
            math.isfinite(lean_timeout) and lean_timeout > 0):
        raise ParameterError(f"lean_timeout must be a finite number of seconds > 0, got "
                             f"{format_value(lean_timeout)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ParameterError(f"seed must be an integer between 0 and {MAX_SEED}, got "
                             f"{format_value(seed)}")
    if max_examples is not None and (
            isinstance(max_examples, bool) or not isinstance(max_examples, int)
            or not 1 <= max_examples <= MAX_EXAMPLES):
        raise ParameterError(f"max_examples must be an integer between 1 and {MAX_EXAMPLES}, "
                             f"got {format_value(max_examples)}")

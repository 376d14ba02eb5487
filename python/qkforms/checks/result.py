"""The result type of a registered check and a small recorder used to build it.

Examples
--------
>>> rec = Recorder("lemma5", "exact")
>>> rec.instance()
>>> rec.require(1 + 1 == 2, "arithmetic")
True
>>> rec.result()
CheckResult(id='lemma5', passed=True, method='exact', instances=1, detail='1 instances; all passed')
"""

from __future__ import annotations

from dataclasses import dataclass

from qkforms.errors import ParameterError, format_value

__all__ = ["CheckResult", "Recorder", "METHODS"]

#: Allowed values of :attr:`CheckResult.method`.
METHODS = ("exact", "monte-carlo", "exact+monte-carlo")


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one registered check.

    Attributes
    ----------
    id : str
        The result id (``docs/architecture.md`` §1).
    passed : bool
        Whether every instance satisfied the statement.
    method : str
        ``"exact"``, ``"monte-carlo"`` or ``"exact+monte-carlo"``.
    instances : int
        Number of instances (matrices, heads, spectra, Monte Carlo batches) examined.
    detail : str
        What was checked, tolerances used, and the first failures if any.

    Examples
    --------
    >>> CheckResult("thm3", True, "exact", 4, "4 instances; all passed").passed
    True
    """

    id: str
    passed: bool
    method: str
    instances: int
    detail: str


class Recorder:
    """Collects instance counts, failures and notes while a check runs.

    Examples
    --------
    >>> rec = Recorder("thm3", "exact")
    >>> rec.require(False, "signature differs")
    False
    >>> rec.result().passed
    False
    """

    def __init__(self, result_id: str, method: str) -> None:
        if method not in METHODS:
            raise ParameterError(f"method must be one of {format_value(METHODS)}, "
                                 f"got {format_value(method)}")
        self.id = result_id
        self.method = method
        self.instances = 0
        self.failures: list[str] = []
        self.notes: list[str] = []

    def instance(self, count: int = 1) -> None:
        """Count ``count`` more instances."""
        self.instances += count

    def require(self, condition: bool, message: str) -> bool:
        """Record a failure with ``message`` unless ``condition`` holds; return it."""
        ok = bool(condition)
        if not ok:
            self.failures.append(message)
        return ok

    def note(self, message: str) -> None:
        """Add a line to the detail (tolerances, statistics)."""
        self.notes.append(message)

    def result(self) -> CheckResult:
        """The :class:`CheckResult` so far (at most 5 failures are spelled out)."""
        passed = not self.failures and self.instances > 0
        head = f"{self.instances} instances; " + (
            "all passed" if passed else f"{len(self.failures)} failures"
        )
        lines = [head, *self.notes]
        if self.instances == 0:
            lines.append("no instance was examined")
        lines += [f"FAIL: {m}" for m in self.failures[:5]]
        return CheckResult(self.id, passed, self.method, self.instances, "; ".join(lines))

"""The Python side of ``qkforms verify``: exact checks and hypothesis properties.

Exact checks are the registered ``module:function`` callables (``qkforms.checks``),
run in process with a seed and optional sizes. Properties are the registered names of
:mod:`qkforms.properties`, run in process with the ``ci`` hypothesis profile (the same
definitions pytest collects from ``tests/properties/test_properties.py``).

Statuses: ``pass`` and ``fail`` only for a check that ran; ``not run`` (with the reason
and how to enable it) for one that could not run, e.g. because an optional package is
missing; ``none`` when nothing is registered.

Examples
--------
>>> parse_sizes(["n=4", "thm3:N=9"])
({'n': 4}, {'thm3': {'N': 9}})
"""

from __future__ import annotations

import importlib
import inspect
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from qkforms.errors import QKFormsError, VerificationError
from qkforms.registry import Result
from qkforms.verify.options import VerifyOptions
from qkforms.verify.statuses import FAIL, NONE, NOT_RUN, PASS

__all__ = [
    "PASS",
    "FAIL",
    "NOT_RUN",
    "NONE",
    "NO_EXACT_CHECKS",
    "NO_PROPERTY_TESTS",
    "ExactOutcome",
    "PropertyOutcome",
    "SIZE_LIMITS",
    "check_sizes",
    "PropertyRun",
    "missing_package",
    "parse_sizes",
    "resolve_check",
    "exact_outcome",
    "property_outcome",
    "registered_property_runs",
    "run_exact",
    "run_properties",
]

#: why a column did not run when its option turned it off
NO_EXACT_CHECKS = "--no-exact-checks"
NO_PROPERTY_TESTS = "--no-property-tests"


def missing_package(exc: BaseException) -> str | None:
    """The top-level name of the third-party package whose absence raised ``exc``, if any.

    A missing ``qkforms`` module is a broken install or registry, not a missing optional
    package, so it gives ``None`` (and the check fails).

    Examples
    --------
    >>> missing_package(ModuleNotFoundError("No module named 'torch.nn'", name="torch.nn"))
    'torch'
    >>> missing_package(ModuleNotFoundError("x", name="qkforms.nope")) is None
    True
    >>> missing_package(ValueError("x")) is None
    True
    """
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.split(".", 1)[0]
    return None if top == "qkforms" else top


def _install_hint(package: str) -> str:
    return (f"needs the package `{package}`, which is not installed "
            f"(enable: `pip install {package}`, or the qkforms extra that provides it)")


def _number(text: str) -> int | float | str:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


#: the sizes ``--size`` accepts, with their ranges ``(low, high)`` (docs/bridge.md): integers
#: from 1 for counts and dimensions, floats for the two distribution parameters. Beyond
#: these the exact checks run for many minutes or exhaust memory (Lemma 1 at N = 16, the
#: slowest, takes about a minute on one core).
SIZE_LIMITS: dict[str, tuple[int | float, int | float]] = {
    "N": (1, 16), "n": (1, 16), "m": (1, 16), "k": (1, 64), "ell": (1, 16),
    "dense_N": (1, 64), "trials": (1, 100), "terms": (1, 32), "grid": (1, 64),
    "runs": (1, 1000), "samples": (1, 100_000), "shape": (0.1, 100.0), "rho": (0.0, 100.0),
}


def check_sizes(sizes: dict[str, Any], id_sizes: dict[str, dict[str, Any]],
                results: Sequence[Any] | None = None) -> None:
    """Refuse sizes that are unknown, of the wrong type, or outside :data:`SIZE_LIMITS`.

    With ``results`` (registry rows), an ``ID:KEY`` must name a registered id whose check
    takes ``KEY``. A size that no check would use, or a zero or negative count (which
    would make a check pass vacuously), is never silently accepted.

    Raises
    ------
    QKFormsError
        Naming the option and the accepted range.

    Examples
    --------
    >>> check_sizes({"N": 5}, {})
    >>> try:
    ...     check_sizes({"N": 100000000}, {})
    ... except QKFormsError as exc:
    ...     print(exc)
    --size N=100000000: N must be an integer between 1 and 16 (docs/bridge.md, sizes)
    """
    def check(label: str, key: str, value: Any) -> None:
        if key not in SIZE_LIMITS:
            raise QKFormsError(f"--size {label}: unknown size {key!r}; the checks take "
                               f"{', '.join(sorted(SIZE_LIMITS))} (docs/bridge.md, sizes)")
        low, high = SIZE_LIMITS[key]
        integer = isinstance(low, int)
        ok_type = (isinstance(value, int) if integer else isinstance(value, int | float)) \
            and not isinstance(value, bool)
        if not ok_type or not low <= value <= high:
            what = "an integer" if integer else "a number"
            raise QKFormsError(f"--size {label}: {key} must be {what} between {low} and "
                               f"{high} (docs/bridge.md, sizes)")

    for key, value in sizes.items():
        check(f"{key}={value}", key, value)
    known = {r.id: r for r in results} if results is not None else None
    for rid, kv in id_sizes.items():
        if known is not None and rid not in known:
            raise QKFormsError(f"--size {rid}:...: {rid!r} is not a registered result id")
        accepted: set[str] | None = None
        if known is not None and getattr(known[rid], "check", None):
            try:
                params = inspect.signature(resolve_check(known[rid].check)).parameters
                accepted = set(params) - {"seed"}
            except (VerificationError, ImportError, TypeError, ValueError):
                accepted = None  # reported when the check runs
        for key, value in kv.items():
            check(f"{rid}:{key}={value}", key, value)
            if accepted is not None and key not in accepted:
                raise QKFormsError(f"--size {rid}:{key}={value}: the check of {rid} takes "
                                   f"no {key!r} (it takes {', '.join(sorted(accepted))})")


def parse_sizes(specs: Iterable[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Parse ``KEY=VALUE`` (every check) and ``ID:KEY=VALUE`` (one check) size options.

    Raises
    ------
    QKFormsError
        On a malformed option, or a size outside :data:`SIZE_LIMITS` (:func:`check_sizes`).

    Examples
    --------
    >>> parse_sizes(["trials=20", "thm4.a_face:n=3"])
    ({'trials': 20}, {'thm4.a_face': {'n': 3}})
    """
    common: dict[str, Any] = {}
    per_id: dict[str, dict[str, Any]] = {}
    for spec in specs:
        m = re.fullmatch(r"(?:(?P<id>[\w.]+):)?(?P<key>[A-Za-z_]\w*)=(?P<value>.+)", spec)
        if m is None:
            raise QKFormsError(f"bad --size {spec!r}; expected KEY=VALUE or ID:KEY=VALUE")
        value = _number(m.group("value"))
        if m.group("id"):
            per_id.setdefault(m.group("id"), {})[m.group("key")] = value
        else:
            common[m.group("key")] = value
    check_sizes(common, per_id)
    return common, per_id


def resolve_check(spec: str) -> Callable[..., Any]:
    """Import the callable named by ``"module:function"``.

    Raises
    ------
    VerificationError
        If the module or the function does not exist.
    ModuleNotFoundError
        If importing the module needs a third-party package that is not installed.

    Examples
    --------
    >>> resolve_check("qkforms.registry:check_function_name")("thm3")
    'check_thm3'
    """
    module_name, _, func_name = spec.partition(":")
    if not module_name or not func_name:
        raise VerificationError(f"check {spec!r} is not of the form 'module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if missing_package(exc):
            raise  # an optional package is missing: the caller reports "not run"
        raise VerificationError(f"check module {module_name} cannot be imported: {exc}") from exc
    func = getattr(module, func_name, None)
    if not callable(func):
        raise VerificationError(f"check {func_name} is missing from {module_name}")
    return func


@dataclass(frozen=True)
class ExactOutcome:
    """The outcome of one exact check: ``status`` in ``pass``/``fail``/``not run``/``none``."""

    status: str
    method: str | None
    instances: int | None
    detail: str
    seconds: float
    kwargs: dict[str, Any] = field(default_factory=dict)


def _accepted(func: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return dict(kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return dict(kwargs)
    names = {p.name for p in params}
    return {k: v for k, v in kwargs.items() if k in names}


def run_exact(
    result_id: str,
    spec: str,
    *,
    seed: int = 0,
    sizes: dict[str, Any] | None = None,
    id_sizes: dict[str, Any] | None = None,
) -> ExactOutcome:
    """Run the exact check of one result and judge it.

    ``sizes`` go to every check that accepts them; ``id_sizes`` are passed as given.
    An exception, a missing check or ``passed`` false is a ``fail``; a check that cannot
    be imported or run because a third-party package is missing is ``not run``.

    Examples
    --------
    >>> run_exact("x", "qkforms.registry:get").status   # not a check: raises -> fail
    'fail'
    """
    if not spec:
        return ExactOutcome(NONE, None, None, "no exact check registered", 0.0)
    start = time.perf_counter()
    try:
        func = resolve_check(spec)
    except VerificationError as exc:
        return ExactOutcome(FAIL, None, None, str(exc), time.perf_counter() - start)
    except ModuleNotFoundError as exc:
        pkg = missing_package(exc)
        if pkg is None:  # a qkforms module is missing: a broken install, not an optional one
            return ExactOutcome(FAIL, None, None, f"{spec} raised ModuleNotFoundError: {exc}",
                                time.perf_counter() - start)
        return ExactOutcome(NOT_RUN, None, None, f"{spec} {_install_hint(pkg)}",
                            time.perf_counter() - start)
    kwargs = {**_accepted(func, dict(sizes or {})), **dict(id_sizes or {})}
    try:
        out = func(seed=seed, **kwargs)
    except ModuleNotFoundError as exc:
        pkg = missing_package(exc)
        if pkg is None:
            return ExactOutcome(FAIL, None, None, f"{spec} raised ModuleNotFoundError: {exc}",
                                time.perf_counter() - start, kwargs)
        return ExactOutcome(NOT_RUN, None, None, f"{spec} {_install_hint(pkg)}",
                            time.perf_counter() - start, kwargs)
    except Exception as exc:  # a crashing check is a failing check, reported with its error
        return ExactOutcome(
            FAIL, None, None, f"{spec} raised {type(exc).__name__}: {exc}",
            time.perf_counter() - start, kwargs,
        )
    seconds = time.perf_counter() - start
    passed = getattr(out, "passed", None)
    if not isinstance(passed, bool):
        return ExactOutcome(FAIL, None, None, f"{spec} returned {type(out).__name__}, not a "
                            "CheckResult with a boolean `passed`", seconds, kwargs)
    detail = str(getattr(out, "detail", "") or "")
    got_id = getattr(out, "id", result_id)
    if got_id != result_id:
        return ExactOutcome(FAIL, getattr(out, "method", None), getattr(out, "instances", None),
                            f"{spec} reported id {got_id!r}, expected {result_id!r}", seconds,
                            kwargs)
    return ExactOutcome(
        PASS if passed else FAIL,
        getattr(out, "method", None),
        getattr(out, "instances", None),
        detail,
        seconds,
        kwargs,
    )


@dataclass(frozen=True)
class PropertyRun:
    """The outcome of one registered property: ``pass``, ``fail`` or ``not run``."""

    name: str
    status: str
    detail: str
    seconds: float = 0.0
    examples: int | None = None


def _failure_detail(exc: BaseException) -> str:
    """First line of the error and hypothesis' falsifying example (from its notes)."""
    head = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    notes = [n for n in getattr(exc, "__notes__", []) if n.strip()]
    example = next((n for n in notes if n.lstrip().startswith(("Falsifying", "Failing"))), None)
    detail = head.rstrip(": ")
    if example:
        detail += " | " + " ".join(example.split())
    return detail[:600]


def run_properties(
    names: Sequence[str], *, max_examples: int | None = None
) -> dict[str, PropertyRun]:
    """Run registered properties of :mod:`qkforms.properties` in process.

    Each runs with the ``ci`` profile (derandomized: the same examples every run) and
    its own example budget, or ``max_examples`` for all. A property that raises is a
    ``fail`` with hypothesis' falsifying example; one that needs a missing third-party
    package, or all of them when ``hypothesis`` itself is missing, is ``not run`` with
    the reason; an unknown name is a ``fail`` (the registry is out of date).

    Examples
    --------
    >>> out = run_properties(["prop4_theta_round_trip", "no_such_property"], max_examples=5)
    >>> [(k, v.status) for k, v in out.items()]
    [('prop4_theta_round_trip', 'pass'), ('no_such_property', 'fail')]
    """
    unique = list(dict.fromkeys(names))
    try:  # here, not at the top: a missing hypothesis makes the properties `not run`
        from hypothesis import reporting, settings

        from qkforms import properties
    except ModuleNotFoundError as exc:
        pkg = missing_package(exc)
        if pkg is None:
            raise
        reason = _install_hint(pkg)
        if pkg == "hypothesis":
            reason = ("hypothesis is not installed (it is a dependency of qkforms; enable: "
                      "`pip install hypothesis`)")
        return {n: PropertyRun(n, NOT_RUN, reason) for n in unique}
    defined = properties.all_properties()
    parent = settings.get_profile(properties.PROFILE)
    out: dict[str, PropertyRun] = {}
    for name in unique:
        prop = defined.get(name)
        if prop is None:
            out[name] = PropertyRun(name, FAIL, "no such property in qkforms.properties")
            continue
        budget = prop.max_examples if max_examples is None else max_examples
        budget = parent.max_examples if budget is None else budget
        start = time.perf_counter()
        try:
            with reporting.with_reporter(lambda _msg: None):  # keep the table readable
                prop.check(parent=parent, max_examples=budget)
        except ModuleNotFoundError as exc:
            pkg = missing_package(exc)
            status, detail = ((NOT_RUN, _install_hint(pkg)) if pkg
                              else (FAIL, _failure_detail(exc)))
            out[name] = PropertyRun(name, status, detail, time.perf_counter() - start)
            continue
        except Exception as exc:  # a failing property, reported with its counterexample
            out[name] = PropertyRun(name, FAIL, _failure_detail(exc),
                                    time.perf_counter() - start, budget)
            continue
        out[name] = PropertyRun(name, PASS, f"passed (up to {budget} examples)",
                                time.perf_counter() - start, budget)
    return out


# ------------------------------------------------------------------------ the row columns


def exact_outcome(r: Result, options: VerifyOptions) -> ExactOutcome:
    """The exact column of ``r``: its check run with the options' seed and sizes.

    Examples
    --------
    >>> from qkforms.registry import get
    >>> exact_outcome(get("thm3"), VerifyOptions(exact_checks=False)).detail
    '--no-exact-checks'
    """
    if not options.exact_checks:
        return ExactOutcome(NOT_RUN, None, None, NO_EXACT_CHECKS, 0.0)
    return run_exact(r.id, r.check, seed=options.seed, sizes=options.sizes,
                     id_sizes=options.id_sizes.get(r.id))


def registered_property_runs(results: Sequence[Result],
                             options: VerifyOptions) -> dict[str, PropertyRun] | None:
    """Run the properties registered for ``results`` (``None`` when the options turn the
    properties off).

    Examples
    --------
    >>> registered_property_runs([], VerifyOptions(property_tests=False)) is None
    True
    """
    if not options.property_tests:
        return None
    names = [n for r in results for n in r.properties]
    return run_properties(names, max_examples=options.max_examples) if names else {}


@dataclass
class PropertyOutcome:
    """Property status of one result and the outcome of each registered property."""

    status: str
    detail: str
    runs: list[PropertyRun] = field(default_factory=list)


def property_outcome(r: Result, runs: dict[str, PropertyRun] | None) -> PropertyOutcome:
    """The property column of ``r`` from the runs of :func:`registered_property_runs`.

    Examples
    --------
    >>> from qkforms.registry import get
    >>> property_outcome(get("thm3"), None)
    PropertyOutcome(status='not run', detail='--no-property-tests', runs=[])
    """
    if not r.properties:
        return PropertyOutcome(NONE, "no properties registered")
    if runs is None:
        return PropertyOutcome(NOT_RUN, NO_PROPERTY_TESTS)
    mine = [runs[n] for n in r.properties]
    failed = [p for p in mine if p.status == FAIL]
    if failed:
        return PropertyOutcome(FAIL, "; ".join(f"{p.name}: {p.detail}" for p in failed), mine)
    if all(p.status == PASS for p in mine):
        return PropertyOutcome(PASS, f"{len(mine)} properties passed", mine)
    reasons = list(dict.fromkeys(p.detail for p in mine if p.status != PASS))
    return PropertyOutcome(NOT_RUN, "; ".join(reasons), mine)

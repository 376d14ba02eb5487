"""Hypothesis property tests of every registered result, shipped with the package.

Each property is a plain function of drawn examples, declared once with :func:`prop`
(its strategies and, if it differs from the profile, its number of examples) in one of
the topic modules (:mod:`~qkforms.properties.signature`, ``energy``, ``pairing``,
``profile``, ``faces``, ``accumulation``, ``attention``; shared strategies in
:mod:`~qkforms.properties.strategies`). A property's name starts with the id of the
result it tests (``thm3_surjective_heads_are_balanced`` belongs to ``thm3``), and the
registry (:mod:`qkforms.registry`, field ``properties``) lists the names per result.

Two runners use the same definitions: ``qkforms verify`` runs them in process
(:func:`qkforms.verify.python_side.run_properties`, profile ``ci``) and pytest collects
them from ``tests/properties/test_properties.py`` (one parametrized test, profile chosen by
``HYPOTHESIS_PROFILE``, default ``ci``).

Profiles registered here: ``ci`` (derandomized, 100 examples, no deadline, no example
database: every run draws the same examples) and ``dev`` (15 examples, random).

This module imports ``hypothesis`` (a core dependency); ``import qkforms`` does not
import it.

Examples
--------
>>> p = get("thm3_surjective_heads_are_balanced")
>>> (p.module, p.max_examples)
('qkforms.properties.signature', None)
>>> p.check(max_examples=5)   # raises on a counterexample; returns None otherwise
>>> len(names()) >= 25
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings

from qkforms.errors import QKFormsError

__all__ = ["TOPICS", "PROFILE", "Property", "prop", "all_properties", "names", "get"]

#: the topic modules holding the property functions
TOPICS = ("signature", "energy", "pairing", "profile", "faces", "accumulation", "attention")
#: the hypothesis profile ``qkforms verify`` runs with
PROFILE = "ci"

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

_DEFINED: dict[str, Property] = {}


@dataclass(frozen=True)
class Property:
    """One property: a function of drawn examples, its strategies and example budget."""

    name: str
    module: str
    func: Callable[..., None]
    strategies: tuple[Any, ...] = ()
    kw_strategies: dict[str, Any] = field(default_factory=dict)
    max_examples: int | None = None

    @property
    def doc(self) -> str:
        """The first line of the function's docstring (empty when it has none)."""
        return (self.func.__doc__ or "").strip().split("\n", 1)[0]

    def hypothesis_test(self, *, parent: settings | None = None,
                        max_examples: int | None = None) -> Callable[[], None]:
        """A fresh ``@settings @given`` test of this property.

        ``parent`` defaults to the active hypothesis profile; ``max_examples`` (when
        given) overrides the property's own budget.
        """
        test = given(*self.strategies, **self.kw_strategies)(self.func)
        budget = self.max_examples if max_examples is None else max_examples
        chosen = settings(parent) if budget is None else settings(parent, max_examples=budget)
        return chosen(test)

    def check(self, *, parent: settings | None = None, max_examples: int | None = None) -> None:
        """Run the property; raise (with hypothesis' falsifying example) if it fails."""
        self.hypothesis_test(parent=parent, max_examples=max_examples)()


def prop(*strategies: Any, max_examples: int | None = None, **kw_strategies: Any
         ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Declare a property: like ``hypothesis.given``, but the function stays plain.

    The function is returned unchanged and recorded under its name; the runners build
    the hypothesis test with :meth:`Property.hypothesis_test`.
    """

    def register(func: Callable[..., None]) -> Callable[..., None]:
        name = func.__name__
        if name in _DEFINED and _DEFINED[name].module != func.__module__:
            raise QKFormsError(f"property {name} is defined twice "
                               f"({_DEFINED[name].module} and {func.__module__})")
        _DEFINED[name] = Property(name, func.__module__, func, tuple(strategies),
                                  dict(kw_strategies), max_examples)
        return func

    return register


def all_properties() -> dict[str, Property]:
    """Every property defined in the topic modules, by name (imports them)."""
    for topic in TOPICS:
        importlib.import_module(f"qkforms.properties.{topic}")
    return dict(_DEFINED)


def names() -> list[str]:
    """The names of every defined property, sorted."""
    return sorted(all_properties())


def get(name: str) -> Property:
    """The property called ``name``.

    Raises
    ------
    QKFormsError
        If no topic module defines it.
    """
    found = all_properties().get(name)
    if found is None:
        raise QKFormsError(f"no property {name!r} in qkforms.properties "
                           f"({len(_DEFINED)} defined)")
    return found

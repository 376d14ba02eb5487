"""The hypothesis properties of every registered result, collected from the package.

The properties are defined once, in :mod:`qkforms.properties` (shipped with the
package); ``qkforms verify`` runs the same definitions in process. Here each one is a
parametrized case named after the property, run with the active hypothesis profile
(``HYPOTHESIS_PROFILE``, default ``ci``: derandomized, 100 examples).
"""

from __future__ import annotations

import pytest

from qkforms import properties


@pytest.mark.parametrize("name", properties.names())
def test_property(name: str) -> None:
    properties.get(name).check()

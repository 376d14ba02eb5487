"""The error contract: bad input raises a ``QKFormsError`` subclass with a readable message.

Two halves. A static walk over the package source fails on a ``raise`` of a built-in
exception class (``raise ValueError(...)`` and the like), except where the raise line
(or the comment block right above it) carries an ``# error-contract: <reason>`` comment;
the exemptions are honoured exactly (such a comment on a line that raises nothing of the
kind is itself an error). A behavioural
half feeds bad input — with NumPy-typed values — to public functions and checks the class
and the message (numbers print as ``1.0``, never ``np.float64(1.0)``).
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import qkforms
from qkforms import errors

PACKAGE = Path(qkforms.__file__).resolve().parent
EXEMPT = re.compile(r"#\s*error-contract:\s*(?P<reason>\S.*)$")
#: Built-in exceptions that are control flow, not errors: raising them is always fine.
CONTROL_FLOW = {"SystemExit", "KeyboardInterrupt", "GeneratorExit", "StopIteration",
                "StopAsyncIteration"}
BUILTIN_EXCEPTIONS = {
    name for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
} - CONTROL_FLOW


def _raised_name(node: ast.Raise) -> str | None:
    exc = node.exc
    if exc is None:  # bare re-raise inside an except block
        return None
    target = exc.func if isinstance(exc, ast.Call) else exc
    return target.id if isinstance(target, ast.Name) else None


def _module_names(tree: ast.Module) -> set[str]:
    """Names a module binds itself (a local class ``ValueError`` would shadow the built-in)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            out.add(node.name)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


def scan(root: Path) -> tuple[list[str], dict[str, str], list[str]]:
    """Return (violations, exemptions ``path:line -> reason``, stale exemption comments).

    An exemption is an ``# error-contract: <reason>`` comment on a line of the raise
    statement or in the comment block directly above it.
    """
    violations: list[str] = []
    exemptions: dict[str, str] = {}
    used: set[tuple[Path, int]] = set()
    comments: dict[tuple[Path, int], str] = {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            m = EXEMPT.match(tok.string) if tok.type == tokenize.COMMENT else None
            if m:
                comments[(path, tok.start[0])] = m["reason"].strip()
        tree = ast.parse(text, filename=str(path))
        local = _module_names(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise):
                continue
            name = _raised_name(node)
            if name is None or name not in BUILTIN_EXCEPTIONS or name in local:
                continue
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            above = node.lineno - 1  # the comment block right above the raise counts too
            while above >= 1 and lines[above - 1].lstrip().startswith("#"):
                above -= 1
            span = range(above + 1, (node.end_lineno or node.lineno) + 1)
            hit = next(((path, i) for i in span if (path, i) in comments), None)
            if hit is None:
                violations.append(f"{where}: raise {name}(...)")
            else:
                used.add(hit)
                exemptions[where] = comments[hit]
    stale = [f"{p.relative_to(root.parent)}:{i}" for (p, i) in comments if (p, i) not in used]
    return violations, exemptions, stale


def test_no_bare_builtin_raise_in_the_package() -> None:
    violations, exemptions, stale = scan(PACKAGE)
    assert not violations, (
        "raise a qkforms.errors class (QKFormsError subclass) on bad input, or justify an "
        "internal invariant inline with '# error-contract: <reason>':\n" + "\n".join(violations)
    )
    assert not stale, f"'# error-contract:' comments on lines raising no built-in: {stale}"
    for where, reason in exemptions.items():
        assert len(reason.split()) >= 3, f"{where}: give the exemption a real reason"


def test_the_scan_catches_what_it_should(tmp_path: Path) -> None:
    """The walker itself: a bare raise is caught, a justified one and our classes are not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        "from qkforms.errors import ParameterError\n"
        "def f(x):\n"
        "    if x:\n"
        "        raise ValueError('bad')\n"
        "    if x is None:\n"
        "        raise KeyError\n"
        "    if x == 2:\n"
        "        raise ParameterError('fine')\n"
        "    if x == 3:\n"
        "        raise RuntimeError(  # error-contract: unreachable internal state\n"
        "            'never')\n"
        "    raise SystemExit(0)\n"
        "# error-contract: dangling comment on no raise\n"
    )
    violations, exemptions, stale = scan(pkg)
    assert [v.split(": ", 1)[1] for v in violations] == ["raise ValueError(...)",
                                                        "raise KeyError(...)"]
    assert list(exemptions.values()) == ["unreachable internal state"]
    assert stale == ["pkg/m.py:13"]


# --- behaviour: class and message of bad input -------------------------------------

NUMPY_REPR = re.compile(r"np\.\w+\(|array\(|dtype=")

BAD_INPUT: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("theta(2)", lambda: qkforms.theta(np.float64(2.0)), errors.ParameterError,
     r"-1 <= t <= 1, got t = 2\.0$"),
    ("theta(nan)", lambda: qkforms.theta(float("nan")), errors.ParameterError, r"got t = nan"),
    ("theta('x')", lambda: qkforms.theta("x"), errors.NotRealError, r"t must be a real"),
    ("theta_p(-1)", lambda: qkforms.theta_p(np.float32(-1.0)), errors.ParameterError,
     r"rho = -1\.0\b"),
    ("pairing_bound(-0.5)", lambda: qkforms.pairing_bound(np.array([-0.5, 1.0])),
     errors.ParameterError, r"rho = \[-0\.5, 1\.0\]$"),
    ("count_signs tol<0", lambda: qkforms.count_signs([1.0, -1.0], tol=np.float64(-1e-3)),
     errors.ParameterError, r"got -0\.001$"),
    ("classify_profile off the simplex",
     lambda: qkforms.classify_profile(np.array([0.5, 0.5, 0.5, 0.0])), errors.ParameterError,
     r"^\(0\.5, 0\.5, 0\.5, 0\.0\) is not a point of the 3-simplex \(within tol=0\.0\)$"),
    ("classify_profile 3 coords", lambda: qkforms.classify_profile((1.0, 0.0, 0.0)),
     errors.ShapeError, r"4 coordinates, got shape \(3,\)"),
    ("profile(0)", lambda: qkforms.profile(np.zeros((2, 2))), errors.ZeroFormError, r"."),
    ("profile('ab')", lambda: qkforms.profile("ab"), errors.NotRealError, r"real numeric"),
    ("profile non-square", lambda: qkforms.profile(np.ones((2, 3))), errors.ShapeError,
     r"square"),
    ("profile NaN", lambda: qkforms.profile(np.array([[np.nan, 0], [0, 1]])),
     errors.NonFiniteError, r"first at index \(0, 0\)"),
    ("Head mismatched", lambda: qkforms.Head(np.ones((2, 5)), np.ones((3, 5))),
     errors.ShapeError, r"."),
    ("spectral_type bad radius point", lambda: qkforms.spectral_type((1.0, 0.0)),
     errors.ShapeError, r"4 coordinates"),
]


@pytest.mark.parametrize("case", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_raises_a_readable_qkforms_error(case: tuple[Any, ...]) -> None:
    _, call, cls, pattern = case
    with pytest.raises(cls) as info:
        call()
    assert isinstance(info.value, qkforms.QKFormsError)
    message = str(info.value)
    assert re.search(pattern, message), message
    assert not NUMPY_REPR.search(message), message


def test_more_bad_input_in_the_exact_mirror_stats_and_checks() -> None:
    from qkforms import exact
    from qkforms.checks import run_check
    from qkforms.stats.fits import fit_gamma
    from qkforms.stats.table import Table

    with pytest.raises(errors.ParameterError, match=r"unknown method 'svd'"):
        exact.head_signature([[1, 0]], [[0, 1]], method="svd")
    with pytest.raises(errors.ParameterError, match=r"sign must be \+1 or -1, got 0"):
        exact.hp_decomposition([[1, 0], [0, 1]], sign=np.int64(0))
    with pytest.raises(exact.NotRationalError) as info:
        exact.to_fraction(object())
    assert "has no exact rational value" in str(info.value)
    with pytest.raises(errors.ShapeError, match=r"shape \(heads, m\), got shape|got \(2, 2, 2\)"):
        fit_gamma(np.ones((2, 2, 2)))
    with pytest.raises(errors.ParameterError, match="finite positive"):
        fit_gamma(np.array([1.0, -1.0, 2.0]))
    with pytest.raises(errors.ParameterError, match=r"accepts the sizes"):
        run_check("lemma5", bogus=1)
    table = Table({"x": np.arange(3)})
    with pytest.raises(errors.MissingColumnError) as missing:
        table["y"]
    assert isinstance(missing.value, KeyError)  # mapping-style lookups keep their meaning
    assert str(missing.value) == "no column 'y'; columns are ['x']"


def test_error_classes_keep_their_builtin_meaning() -> None:
    """Callers that catch the built-in meaning keep working."""
    assert issubclass(errors.ParameterError, ValueError)
    assert issubclass(errors.LayerIndexError, IndexError)
    assert issubclass(errors.LayerIndexError, errors.ParameterError)
    assert issubclass(errors.MissingColumnError, KeyError)
    assert issubclass(errors.MissingTensorError, KeyError)
    every = [getattr(errors, name) for name in errors.__all__ if name[0].isupper()]
    assert all(issubclass(cls, errors.QKFormsError) for cls in every)
    assert {name for name in errors.__all__ if name[0].isupper()} <= set(qkforms.__all__)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.float64(1.0), "1.0"),
        (np.float32(0.5), "0.5"),
        (np.int64(-3), "-3"),
        (np.bool_(True), "True"),
        (1e-9, "1e-09"),
        ("svd", "'svd'"),
        ((np.float64(0.25),), "(0.25,)"),
        ([np.int32(1), 2.5], "[1, 2.5]"),
        (np.array(2.0), "2.0"),
        (np.array([[1, 2], [3, 4]]), "[[1, 2], [3, 4]]"),
        (np.arange(10), "[0, 1, 2, 3, 4, 5, 6, 7, ...] (shape (10,))"),
        (list(range(10)), "[0, 1, 2, 3, 4, 5, 6, 7, ... (10 items)]"),
        ({"k": np.float64(2.0)}, "{'k': 2.0}"),
        (Path("/tmp/x"), "/tmp/x"),
    ],
)
def test_format_value(value: Any, text: str) -> None:
    assert errors.format_value(value) == text

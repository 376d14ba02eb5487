"""The table of result ids in the docs, generated from the registry.

Every registered result is listed once, in :data:`qkforms.registry.RESULTS`. This module
renders the rows as the table of ``docs/architecture.md`` §1 (id, paper result, Lean
file, exact check), the block between ``<!-- results:table -->`` and
``<!-- /results:table -->``. The page text of each result -- statement, proof sketch and
the ids its proof uses, which the registry does not hold -- is ``docs/results.toml``
(read by :func:`load_page_text`; the docs build, ``docs/_ext/qkresults.py``, makes one
page per result from both); :func:`page_text_problems` says where it and the registry
disagree. ``python -m qkforms.results_reference`` rewrites the table in a checkout;
``--check`` only reports a stale table (the tests run it), and both report the
disagreements of ``docs/results.toml``.

Examples
--------
>>> from qkforms.registry import get
>>> print(table([get("thm3"), get("cor1")]), end="")
| id | paper result | Lean | exact check |
|---|---|---|---|
| `thm3` | Theorem 3, heads have balanced signature (n, n, N - 2n) | \
`lean/QKForms/BalancedSignature.lean` | `qkforms.checks.signature:check_thm3` |
| `cor1` | Corollary 1, iid square baseline | not formalized | \
`qkforms.checks.energy:check_cor1` |
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qkforms._fs import atomic_write, read_text
from qkforms.errors import QKFormsError
from qkforms.registry import RESULTS, Result

__all__ = ["BLOCK", "PAGE", "PAGE_TEXT", "load_page_text", "main", "page_text_problems",
           "render_page", "table"]

#: the page holding the generated table, and the page text of the results (both in docs/)
PAGE = "docs/architecture.md"
PAGE_TEXT = "docs/results.toml"
#: the markers around the generated table
BLOCK = ("<!-- results:table -->", "<!-- /results:table -->")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(results: Sequence[Result] | None = None) -> str:
    """The Markdown table of the results (default: the registry), in registry order.

    Examples
    --------
    >>> len(table().splitlines()) == 2 + len(RESULTS)   # header, rule, one row per result
    True
    """
    lines = ["| id | paper result | Lean | exact check |", "|---|---|---|---|"]
    for r in RESULTS if results is None else results:
        lean = f"`{r.lean_file}`" if r.lean_file else "not formalized"
        lines.append(f"| `{r.id}` | {_cell(r.paper)}, {_cell(r.title)} | {lean} | "
                     f"`{r.check}` |")
    return "\n".join(lines) + "\n"


def render_page(text: str, results: Sequence[Result] | None = None) -> str:
    """``text`` with its generated table brought up to date.

    Raises
    ------
    QKFormsError
        When the markers of :data:`BLOCK` are missing.

    Examples
    --------
    >>> from qkforms.registry import get
    >>> page = "intro\\n<!-- results:table -->\\nold\\n<!-- /results:table -->\\nrest\\n"
    >>> print(render_page(page, [get("lemma4")]), end="")  # doctest: +NORMALIZE_WHITESPACE
    intro
    <!-- results:table -->
    | id | paper result | Lean | exact check |
    |---|---|---|---|
    | `lemma4` | Lemma 4, profile scale | `lean/QKForms/Profile.lean` |
      `qkforms.checks.profile:check_lemma4` |
    <!-- /results:table -->
    rest
    """
    begin, end = BLOCK
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise QKFormsError(f"no block {begin} ... {end}")
    block = f"{begin}\n{table(results)}{end}"
    return pattern.sub(lambda _m: block, text)


def load_page_text(path: str | Path) -> dict[str, dict[str, Any]]:
    """The page text of every result in ``docs/results.toml``, by id.

    Raises
    ------
    QKFormsError
        If the file cannot be read or is not TOML.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "results.toml"
    >>> _ = p.write_text('[thm3]\\nstatement = "S"\\nproof = "P"\\nuses = ["lemma10"]\\n')
    >>> load_page_text(p)["thm3"]["uses"]
    ['lemma10']
    """
    try:
        data = tomllib.loads(read_text(path, "results page text"))
    except tomllib.TOMLDecodeError as exc:
        raise QKFormsError(f"{path}: not valid TOML: {exc}") from exc
    return {str(k): dict(v) for k, v in data.items() if isinstance(v, dict)}


def page_text_problems(entries: Mapping[str, Mapping[str, Any]],
                       results: Sequence[Result] | None = None) -> list[str]:
    """Where the page text and the registry disagree: an id without an entry (when its
    page is the generated one), an entry of no registered id, a ``uses`` of no registered
    id.

    Examples
    --------
    >>> from qkforms.registry import get
    >>> page_text_problems({"thm3": {"uses": ["thm9"]}, "old": {}}, [get("thm3"), get("cor1")])
    ['cor1: no entry in docs/results.toml', 'old: an entry in docs/results.toml, but no \
registered result', 'thm3: uses thm9, which is not registered']
    """
    rows = list(RESULTS if results is None else results)
    ids = {r.id for r in rows}
    problems = [f"{r.id}: no entry in {PAGE_TEXT}" for r in rows
                if r.docs == f"docs/results/{r.id}.md" and r.id not in entries]
    problems += [f"{k}: an entry in {PAGE_TEXT}, but no registered result"
                 for k in entries if k not in ids]
    problems += [f"{k}: uses {u}, which is not registered" for k, v in entries.items()
                 for u in v.get("uses", []) if u not in ids]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the table of :data:`PAGE` under ``--root`` (default: the current
    directory); with ``--check`` print whether it is stale and return 1 instead. Either
    way, print the disagreements of :data:`PAGE_TEXT` with the registry (exit status 1).
    """
    p = argparse.ArgumentParser(prog="python -m qkforms.results_reference",
                                description="regenerate the table of result ids in docs/")
    p.add_argument("--root", type=Path, default=Path("."), help="the checkout")
    p.add_argument("--check", action="store_true", help="only report a stale table")
    args = p.parse_args(argv)
    path = args.root / PAGE
    old = read_text(path, "docs page")
    new = render_page(old)
    status = 0
    if new != old:
        if args.check:
            print(f"stale table of result ids in {PAGE} (run python -m "
                  "qkforms.results_reference)", file=sys.stderr)
            status = 1
        else:
            atomic_write(path, new.encode("utf-8"))
    for problem in page_text_problems(load_page_text(args.root / PAGE_TEXT)):
        print(problem, file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

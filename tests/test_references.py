"""Every reference in the repository resolves inside the repository.

Code, error messages, Lean docstrings and docs cite the numbered sections of the docs
pages (``docs/theory.md §12.3``, ``architecture.md §5``), section titles
(``docs/theory.md, "Signature"``) and anchors (``theory.md#3-signature``). This test
fails on

* any mention of the mathematical specification the package was written from
  (``THEORY``, ``../shared``): users do not have it;
* a ``§N`` citation whose page has no section numbered ``N`` — the page is the nearest
  ``<name>.md`` named before the ``§`` in the same passage, or, inside a docs page, the
  page itself (code and Lean must name the page);
* a quoted title or an ``#anchor`` that matches no heading of the page it names, and a
  Markdown link to a page that does not exist.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Where citations are checked (the brief of issue 16): the package, docs, Lean, README.
CITING_GLOBS = ("python/qkforms/**/*.py", "docs/**/*.md", "docs/**/*.py", "docs/*.toml",
                "lean/**/*.lean", "lean/**/*.md", "README.md")
#: Mentions of the private specification are refused in every tracked text file.
SPEC_MENTION = re.compile(r"\bTHEORY\b|\.\./shared\b|/work/shared\b|\bLEAN\.md\b")
PAGE = re.compile(r"(?P<page>[\w./-]*?[\w-]+\.md)\b")
SECTION = re.compile(r"§\s*(?P<num>\d+(?:\.\d+)*)")
TITLE = re.compile(r"(?P<page>[\w./-]*[\w-]+\.md)`?,\s*[\"*](?P<title>[^\"*\n]+)[\"*]")
ANCHOR = re.compile(r"(?P<page>[\w./-]*[\w-]+\.md)#(?P<anchor>[\w-]+)")
MD_LINK = re.compile(r"\]\((?P<target>[^)#\s]+\.md)(?:#[^)\s]*)?\)")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
NUMBERED = re.compile(r"^(?P<num>\d+(?:\.\d+)*)\.?\s+(?P<title>.*)$")
#: How far back (characters) a ``§`` looks for the page it belongs to.
LOOKBACK = 160


@dataclass(frozen=True)
class Page:
    numbers: frozenset[str]
    titles: tuple[str, ...]
    anchors: frozenset[str]


def slug(text: str) -> str:
    """The heading anchor MyST (``myst_heading_anchors``) and GitHub generate."""
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@cache
def page(path: Path) -> Page:
    numbers: set[str] = set()
    titles: list[str] = []
    anchors: set[str] = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if not m:
            continue
        text = m["text"]
        anchors.add(slug(text))
        n = NUMBERED.match(text)
        if n:
            numbers.add(n["num"])
            titles.append(n["title"])
        else:
            titles.append(text)
    return Page(frozenset(numbers), tuple(titles), frozenset(anchors))


def resolve(name: str, citing: Path) -> Path | None:
    """The page a citation names: relative to the citing file, the repository, or docs/."""
    for base in (citing.parent, ROOT, ROOT / "docs"):
        cand = (base / name).resolve()
        if cand.is_file():
            return cand
    return None


def citing_files() -> list[Path]:
    out: set[Path] = set()
    for pattern in CITING_GLOBS:
        out.update(p for p in ROOT.glob(pattern) if ".egg-info" not in str(p)
                   and "_build" not in p.parts and ".lake" not in p.parts)
    return sorted(out)


def tracked_text_files() -> list[Path]:
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an sdist)
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
                 and ".git" not in p.parts]
    out = []
    for name in names:
        path = ROOT / name
        if path.suffix in {".py", ".md", ".lean", ".toml", ".sh", ".txt", ".cfg", ".yml",
                           ".yaml", ".json", ".js", ".html", ".css", ".ini", ""} \
                and path.is_file():
            out.append(path)
    return out


def _listing(numbers: frozenset[str]) -> str:
    ordered = sorted(numbers, key=lambda n: [int(x) for x in n.split(".")])
    return ", ".join(ordered) or "none"


def check_text(text: str, citing: Path) -> list[str]:
    """Every unresolved reference of one file, as ``path:line: message``."""
    problems: list[str] = []
    rel = citing.relative_to(ROOT) if citing.is_relative_to(ROOT) else citing
    is_doc = citing.suffix == ".md"

    def where(pos: int) -> str:
        return f"{rel}:{text.count(chr(10), 0, pos) + 1}"

    for m in SECTION.finditer(text):
        before = text[max(0, m.start() - LOOKBACK):m.start()]
        names = list(PAGE.finditer(before))
        if names:
            target = resolve(names[-1]["page"], citing)
            label = names[-1]["page"]
        elif is_doc:
            target, label = citing, citing.name
        else:
            problems.append(f"{where(m.start())}: §{m['num']} names no page "
                            "(write e.g. 'docs/theory.md §12.3')")
            continue
        if target is None:
            problems.append(f"{where(m.start())}: §{m['num']} cites {label}, which does not exist")
        elif m["num"] not in page(target).numbers:
            problems.append(f"{where(m.start())}: {label} has no section §{m['num']} "
                            f"(its sections: {_listing(page(target).numbers)})")
    for m in TITLE.finditer(text):
        target = resolve(m["page"], citing)
        if target is None:
            problems.append(f"{where(m.start())}: {m['page']} does not exist")
        elif not any(t.startswith(m["title"].strip()) for t in page(target).titles):
            problems.append(f"{where(m.start())}: {m['page']} has no section titled "
                            f"{m['title']!r}")
    for m in ANCHOR.finditer(text):
        target = resolve(m["page"], citing)
        if target is None:
            problems.append(f"{where(m.start())}: {m['page']} does not exist")
        elif m["anchor"] not in page(target).anchors:
            problems.append(f"{where(m.start())}: {m['page']} has no anchor #{m['anchor']}")
    if is_doc:
        for m in MD_LINK.finditer(text):
            if "://" not in m["target"] and resolve(m["target"], citing) is None:
                problems.append(f"{where(m.start())}: link to missing page {m['target']}")
    return problems


def test_no_mention_of_the_private_specification() -> None:
    me = Path(__file__).resolve()
    hits = []
    for path in tracked_text_files():
        if path.resolve() == me:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if SPEC_MENTION.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    assert not hits, ("cite the docs (e.g. 'docs/theory.md §12.3'), not the private "
                      "specification:\n" + "\n".join(hits))


def test_every_section_title_and_anchor_citation_resolves() -> None:
    files = citing_files()
    assert len(files) > 50  # the globs found the package, the docs and the Lean files
    problems = [p for f in files for p in check_text(f.read_text(encoding="utf-8"), f)]
    assert not problems, "unresolved references:\n" + "\n".join(problems)


def test_theory_sections_are_numbered_and_cover_what_the_code_cites() -> None:
    theory = page(ROOT / "docs" / "theory.md")
    # the survey methodology, the observations, the Lean scope and the models are there
    assert {"1", "3.1", "5.1", "7.1", "12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "13",
            "14", "15"} <= theory.numbers
    tops = sorted(int(n) for n in theory.numbers if "." not in n)
    assert tops == list(range(1, len(tops) + 1)), "top-level sections numbered 1, 2, 3, ..."


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("see docs/theory.md §12.3 and §12.9", ["no section §12.9"]),
        ("(``docs/theory.md`` §12.3–§12.6, §13)", []),
        ("the rule of §7.5", ["names no page"]),
        ("see docs/nonexistent.md §1", ["does not exist"]),
        ('(docs/theory.md, "Signature")', []),
        ('(docs/theory.md, "Sig nature")', ["no section titled"]),
        ("[x](theory.md#3-signature--lemma3-lemma10-thm3)", []),
        ("[x](theory.md#no-such-anchor)", ["no anchor"]),
    ],
)
def test_the_checker_itself(text: str, expect: list[str]) -> None:
    got = check_text(text, ROOT / "python" / "qkforms" / "example.py")
    assert len(got) == len(expect), got
    for problem, want in zip(got, expect, strict=True):
        assert want in problem
    assert SPEC_MENTION.search("see THEORY §3") and SPEC_MENTION.search("../shared/x")

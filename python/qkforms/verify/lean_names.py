"""``python -m qkforms.verify.lean_names``: the external names of the Lean sources that
lack evidence.

The Lean engineers' tool beside ``qkforms verify`` (whose static check ``evidence`` runs
the same :func:`~qkforms.verify.lean_evidence.check_evidence`): it reads
``lean/names.toml`` and the fragments ``lean/names.d/*.toml`` of work in progress, and
lists every use in ``lean/QKForms`` (or in the files given) without an entry; ``--all``
lists every use, covered or not (:mod:`qkforms.verify.lean_uses`). See
``docs/bridge.md``, "Evidence for external names".

No module of the package imports this one, so ``python -m`` runs it exactly once.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from qkforms._fs import read_text
from qkforms.verify.checkout import find_root
from qkforms.verify.lean_evidence import EVIDENCE_FILE, Evidence, check_evidence, load_evidence
from qkforms.verify.lean_uses import project_names, uses

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m qkforms.verify.lean_names [--all] [FILES]``: list uses lacking evidence.

    With ``--all`` every use is listed (covered or not). Exit status 1 when a use lacks
    evidence.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    show_all = "--all" in args
    args = [a for a in args if a != "--all"]
    root = find_root()
    if show_all:
        lib = sorted((root / "lean" / "QKForms").rglob("*.lean"))
        project = project_names(read_text(p, "Lean source") for p in lib)
        for f in args or [str(p) for p in lib]:
            for u in uses(read_text(f, "Lean source"), project=project):
                print(f"{f}:{u.line}: {u.kind} {u.name}")
        return 0
    ev_path = root / EVIDENCE_FILE
    ev = load_evidence(ev_path) if ev_path.is_file() else Evidence()
    extra = sorted((root / "lean" / "names.d").glob("*.toml"))
    for frag in extra:
        more = load_evidence(frag)
        ev.names.update(more.names)
        for k, v in more.fields.items():
            ev.fields.setdefault(k, [])
            ev.fields[k] += [t for t in v if t not in ev.fields[k]]
        for k, v in more.cases.items():
            ev.cases.setdefault(k, [])
            ev.cases[k] += [t for t in v if t not in ev.cases[k]]
    problems = check_evidence(root, args or None, evidence=ev)
    for pr in problems:
        print(pr)
    print(f"{len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

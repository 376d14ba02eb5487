"""``qkforms verify``: the command line of the bridge (:func:`qkforms.verify.verify`).

:func:`configure` adds the arguments, :func:`run` runs :func:`~qkforms.verify.verify`
with them, prints the table (:func:`~qkforms.verify.verification_report.render_table`)
and writes the JSON (schema ``qkforms.verify/3``) and Markdown renderings when asked;
``--write-axioms-script`` regenerates ``lean/scripts/Axioms.lean`` from the registry
instead. The exit status is 0 unless something that ran failed (docs/bridge.md).

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser()
>>> configure(p)
>>> a = p.parse_args(["--lean", "skip", "--no-property-tests", "--only", "thm3"])
>>> (a.lean, a.property_tests, a.only, a.lean_dir, a.lean_trace)
('skip', False, ['thm3'], None, False)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from qkforms._fs import atomic_write
from qkforms.arguments import bounded_int, seconds_arg, seed_arg
from qkforms.errors import QKFormsError
from qkforms.verify import lean_trace as _trace
from qkforms.verify.bridge import verify
from qkforms.verify.checkout import locate_lean_root
from qkforms.verify.lean_project import AXIOMS_SCRIPT
from qkforms.verify.lean_side import NO_SOURCES, write_axioms_script
from qkforms.verify.options import LEAN_MODES, MAX_EXAMPLES
from qkforms.verify.python_side import parse_sizes
from qkforms.verify.verification_report import render_markdown, render_table

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``qkforms verify`` arguments to ``parser``.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> p.parse_args(["--size", "thm3:N=9", "--seed", "7"]).size
    ['thm3:N=9']
    """
    parser.add_argument("--lean-dir", "--root", dest="lean_dir", type=Path, default=None,
                        metavar="DIR",
                        help="a qkforms checkout holding lean/ and lakefile.lean (default: "
                             "the checkout containing the current directory or the "
                             "installed package, if any)")
    parser.add_argument("--lean", choices=LEAN_MODES, default="auto",
                        help="auto: build when lake is on PATH; require: fail without it; "
                             "skip: static checks only (default: auto)")
    parser.add_argument("--lean-timeout", type=seconds_arg, default=3 * 3600.0,
                        metavar="SECONDS",
                        help="timeout of each lake command (default: 10800)")
    parser.add_argument("--lake-cache", action="store_true",
                        help="run `lake exe cache get` before `lake build`")
    parser.add_argument("--lean-trace", action="store_true",
                        help="after the build, trace the modules that built with LeanDojo's "
                             "extractor (premises of every result; needs lake and "
                             f"{_trace.EXTRACTOR_DIST} {_trace.EXTRACTOR_VERSION} installed "
                             "without its dependencies, or an extractor file given by the "
                             "option below)")
    parser.add_argument("--dojo-extractor", type=Path, default=None, metavar="FILE",
                        help="LeanDojo's ExtractData.lean (default: the one of the installed "
                             f"{_trace.EXTRACTOR_DIST})")
    parser.add_argument("--trace-dir", type=Path, default=None, metavar="DIR",
                        help=f"read the LeanDojo trace from DIR (default: ROOT/{_trace.TRACE_DIR})")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the exact checks")
    parser.add_argument("--size", action="append", default=[], metavar="[ID:]KEY=VALUE",
                        help="size passed to the checks (all that accept KEY, or only ID)")
    parser.add_argument("--only", action="append", default=[], metavar="ID",
                        help="restrict the rows to these ids or groups (e.g. thm4)")
    parser.add_argument("--no-exact-checks", dest="exact_checks", action="store_false",
                        help="skip the exact Python checks")
    parser.add_argument("--no-property-tests", "--no-properties", dest="property_tests",
                        action="store_false", help="do not run the registered properties")
    parser.add_argument("--max-examples", type=bounded_int(1, MAX_EXAMPLES), default=None,
                        metavar="N",
                        help="hypothesis examples per property (default: each property's "
                             "own budget, 100 for most)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="write the report as JSON (schema qkforms.verify/3)")
    parser.add_argument("--markdown", type=Path, default=None, metavar="PATH",
                        help="write the report as a Markdown page")
    parser.add_argument("--write-axioms-script", action="store_true",
                        help=f"regenerate {AXIOMS_SCRIPT} from the registry and exit")


def run(args: argparse.Namespace) -> int:
    """Run ``qkforms verify`` with parsed arguments; return the exit status.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "lakefile.lean").write_text("")
    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> run(p.parse_args(["--lean-dir", str(root), "--write-axioms-script"]))  # doctest: +ELLIPSIS
    wrote .../lean/scripts/Axioms.lean
    0
    """
    if args.write_axioms_script:
        root = locate_lean_root(args.lean_dir)
        if root is None:
            raise QKFormsError(f"--write-axioms-script: {NO_SOURCES}")
        path = write_axioms_script(root)
        print(f"wrote {path}")
        return 0
    sizes, id_sizes = parse_sizes(args.size)
    report = verify(
        args.lean_dir,
        only=args.only,
        lean=args.lean,
        lean_timeout=args.lean_timeout,
        lake_cache=args.lake_cache,
        seed=args.seed,
        sizes=sizes,
        id_sizes=id_sizes,
        exact_checks=args.exact_checks,
        property_tests=args.property_tests,
        max_examples=args.max_examples,
        lean_trace=args.lean_trace,
        dojo_extractor=args.dojo_extractor,
        trace_dir=args.trace_dir,
    )
    sys.stdout.write(render_table(report))
    if args.json is not None:
        atomic_write(args.json, report.to_json().encode("utf-8"))
        print(f"wrote {args.json}")
    if args.markdown is not None:
        atomic_write(args.markdown, render_markdown(report).encode("utf-8"))
        print(f"wrote {args.markdown}")
    return report.exit_status

"""Allow ``python -m qkforms``."""

from qkforms.cli import main

raise SystemExit(main())

"""The files a behaviour run writes into its directory (``docs/behaviour.md``).

Examples
--------
>>> from qkforms.behaviour.files import BEHAVIOUR_FILE, MANIFEST_FILE
>>> BEHAVIOUR_FILE, MANIFEST_FILE
('behaviour.parquet', 'behaviour.json')
"""

from __future__ import annotations

__all__ = ["BEHAVIOUR_FILE", "MANIFEST_FILE"]

#: the table and the manifest a behaviour run writes into DIR
BEHAVIOUR_FILE = "behaviour.parquet"
MANIFEST_FILE = "behaviour.json"

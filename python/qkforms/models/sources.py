"""Where a checkpoint comes from: paths, short names, hub ids, and the files' checksums.

:func:`resolve` turns what the user typed into an existing local path: an existing file
or directory as it is, a short name (:mod:`qkforms.models.short_names`) to the files of
its installed package, and, with ``huggingface_hub`` installed, a hub id to a snapshot
in the local cache (downloaded only when asked). :func:`source_files` records the files
read, with sizes and (streamed) sha256.

Examples
--------
>>> from qkforms.models.sources import resolve
>>> try:
...     resolve("/no/such/checkpoint", download=False)
... except Exception as exc:
...     print(type(exc).__name__)
ModelNotFoundError
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from qkforms._fs import open_regular
from qkforms.errors import ModelNotFoundError
from qkforms.models.records import SourceFile
from qkforms.models.short_names import SHORT_NAMES, resolve_short_name

__all__ = ["resolve", "resolve_hub", "sha256", "source_files"]

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_CHUNK = 1 << 20


def sha256(path: str) -> str:
    """The sha256 of a file, read 1 MiB at a time.

    Examples
    --------
    >>> import tempfile, os
    >>> from qkforms.models.sources import sha256
    >>> p = os.path.join(tempfile.mkdtemp(), "x")
    >>> _ = open(p, "wb").write(b"abc")
    >>> sha256(p)[:12]
    'ba7816bf8f01'
    """
    digest = hashlib.sha256()
    with open_regular(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def source_files(paths: Iterable[str], checksum: bool) -> tuple[SourceFile, ...]:
    """:class:`~qkforms.models.records.SourceFile` records: size and mtime (a ``stat``),
    and the sha256 of the whole file only if ``checksum`` (a full read).

    Examples
    --------
    >>> import tempfile, os
    >>> from qkforms.models.sources import source_files
    >>> p = os.path.join(tempfile.mkdtemp(), "x")
    >>> _ = open(p, "wb").write(b"abc")
    >>> source_files([p], checksum=False)[0].size
    3
    """
    out = []
    for p in paths:
        st = os.stat(p)
        out.append(SourceFile(os.path.abspath(p), st.st_size, sha256(p) if checksum else None,
                              st.st_mtime_ns))
    return tuple(out)


def resolve(source: str | os.PathLike[str], download: bool) -> tuple[str, str | None]:
    """Turn a source into an existing path (and a display name when known).

    Raises
    ------
    ModelNotFoundError
        When the source is no existing path, no short name, and not a hub id that can
        be had (see :func:`resolve_hub`).
    """
    text = os.fspath(source)
    if os.path.exists(text):
        return text, None
    short = resolve_short_name(text)
    if short is not None:
        return short
    looks_like_path = (os.path.isabs(text) or text.startswith((".", "~"))
                       or text.count("/") > 1 or os.sep != "/" and os.sep in text
                       or Path(text).suffix in (".gguf", ".safetensors", ".json", ".bin"))
    if looks_like_path or not _HUB_ID.match(text):
        raise ModelNotFoundError(f"no such file or directory: {text!r} (and not a short "
                                 f"name: {', '.join(sorted(SHORT_NAMES))})")
    return resolve_hub(text, download), text


def resolve_hub(repo_id: str, download: bool, *, revision: str | None = None) -> str:
    """A local snapshot of a hub repository (from the cache unless download=True).

    ``revision`` (a branch, tag or commit, e.g. a training run's ``step1000``) selects
    the snapshot; default: the repository's default branch.

    Raises
    ------
    ModelNotFoundError
        Without ``huggingface_hub``, or when the snapshot is neither cached nor fetched.
    """
    try:
        import huggingface_hub
    except ImportError:
        raise ModelNotFoundError(
            f"{repo_id!r} is not an existing path nor a short name "
            f"({', '.join(sorted(SHORT_NAMES))}); reading it as a Hugging Face hub id needs "
            "huggingface_hub (pip install huggingface_hub)") from None
    # Hugging Face names its weights model.safetensors / model-0000k-of-0000m.safetensors;
    # other safetensors in a repository (e.g. Mistral's consolidated.safetensors) are
    # duplicates in another layout and are not fetched.
    patterns = ["config.json", "model*.safetensors", "model.safetensors.index.json",
                "trainer_state.json"]
    try:
        return str(huggingface_hub.snapshot_download(repo_id, allow_patterns=patterns,
                                                     revision=revision,
                                                     local_files_only=not download))
    except Exception as exc:
        hint = ("it is not in the local Hugging Face cache; pass download=True to fetch "
                "it (needs network)" if not download else "the download failed")
        at = f" at revision {revision!r}" if revision is not None else ""
        raise ModelNotFoundError(f"{repo_id!r} is not an existing path nor a short name "
                                 f"({', '.join(sorted(SHORT_NAMES))}), and as a hub id{at} "
                                 f"{hint}: {type(exc).__name__}: {exc}") from exc


"""Resumable storage of survey results: one atomic part per (model, layer), then a merge.

Layout inside the output directory ``DIR``::

    DIR/parts/<model>/run.json               what the parts were computed with
    DIR/parts/<model>/layer-0007.heads.parquet
    DIR/parts/<model>/layer-0007.spectra.parquet
    DIR/parts/<model>/layer-0007.factors.npz   (RoPE models only)

Every file is written to a temporary name in the same directory and moved into
place with :func:`os.replace` (atomic on POSIX; :func:`qkforms._fs.atomic_write`), the
heads part last: a layer counts as done exactly when its heads part exists (and is
readable), so a run killed at any instant (even ``kill -9``) leaves only complete
layers plus temporary files, which the next run deletes. Directories below ``DIR``
are entered without following links, and only the files named above (and their
temporaries) are ever deleted, one by one (``docs/survey.md``, "What the survey writes
and deletes"). Files are not fsync'ed: the guarantee is against a killed process, not
against a power failure.

Examples
--------
>>> import tempfile, pathlib
>>> from qkforms.survey.store import PartStore, model_key
>>> model_key("HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1)")
'HuggingFaceTB_SmolLM2-135M-Instruct_GGUF_Q4_1'
>>> store = PartStore(pathlib.Path(tempfile.mkdtemp()), "m")
>>> store.done_layers()
[]
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from qkforms._fs import (
    AtomicFile,
    atomic_write,
    ensure_dir,
    is_temporary,
    open_regular,
    read_json,
    remove_files,
)
from qkforms.errors import QKFormsError

__all__ = ["PART_NAME", "FactorsStream", "PartStore", "atomic_write_bytes", "atomic_write_table",
           "model_key"]

#: the names of the files a part directory holds (``run.json`` and the layer parts)
PART_NAME = re.compile(r"^(run\.json|layer-\d{4,}\.(heads|spectra)\.parquet|"
                       r"layer-\d{4,}\.factors\.npz)$")


def model_key(name: str) -> str:
    """A file-system safe key for a model name.

    Examples
    --------
    >>> from qkforms.survey.store import model_key
    >>> model_key("org/model v2")
    'org_model_v2'
    """
    key = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.")
    return key or "model"


def atomic_write_bytes(path: Path, data: bytes, *, root: Path | None = None) -> None:
    """Write ``data`` to ``path`` atomically (:func:`qkforms._fs.atomic_write`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from qkforms.survey.store import atomic_write_bytes
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> atomic_write_bytes(p, b"hi"); p.read_bytes()
    b'hi'
    """
    atomic_write(path, data, root=root)


def atomic_write_table(path: Path, table: Any, *, root: Path | None = None) -> None:
    """Write a pyarrow table as parquet atomically.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> from qkforms.survey.store import atomic_write_table
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.parquet"
    >>> atomic_write_table(p, pa.table({"x": [1, 2]}))
    >>> pq.read_table(p).column("x").to_pylist()
    [1, 2]
    """
    import pyarrow.parquet as pq

    atomic_write(path, lambda f: pq.write_table(table, f), root=root)


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **arrays)  # float arrays only: never pickle
    return buf.getvalue()


def _readable_part(path: Path) -> bool:
    """Whether a part file can be read back (parquet footer / npz directory intact)."""
    try:
        with open_regular(path) as f:
            if path.suffix == ".npz":
                with zipfile.ZipFile(f) as zf:
                    return zf.testzip() is None and bool(zf.namelist())
            import pyarrow.parquet as pq

            pq.ParquetFile(f).metadata  # noqa: B018 - reads and checks the footer
            return True
    except Exception:  # noqa: BLE001 - any failure means "not a usable part"
        return False


class PartStore:
    """The per-layer parts of one model inside an output directory.

    Parameters
    ----------
    out : Path
        The survey output directory (the root below which no link is followed).
    key : str
        The model's key (:func:`model_key`).
    """

    def __init__(self, out: Path, key: str) -> None:
        self.root = Path(out)
        self.key = key
        self.dir = self.root / "parts" / key

    @property
    def factors_path(self) -> Path:
        """Where the merged RoPE factors of the model go: ``factors/<key>.npz``."""
        return self.root / "factors" / f"{self.key}.npz"

    def _path(self, layer: int, kind: str) -> Path:
        ext = "npz" if kind == "factors" else "parquet"
        return self.dir / f"layer-{layer:04d}.{kind}.{ext}"

    # -- run fingerprint -------------------------------------------------------
    def read_run(self) -> dict[str, Any] | None:
        """The ``run.json`` of existing parts, or None.

        Raises
        ------
        QKFormsError
            If it exists but cannot be read or is not a JSON object.
        """
        p = self.dir / "run.json"
        if not os.path.lexists(p):
            return None
        run = read_json(p, "run record of earlier parts")
        if not isinstance(run, dict):
            raise QKFormsError(f"{p}: corrupt run record of earlier parts (not a JSON "
                               "object); rerun without --resume to start over")
        return run

    def has_parts(self) -> bool:
        """Whether any layer part (complete or not) exists."""
        return self.dir.is_dir() and any(
            name.startswith("layer-") for name in os.listdir(self.dir))

    def clean_temporaries(self) -> list[str]:
        """Delete the temporary files of interrupted writes; return their names."""
        return remove_files(self.dir, is_temporary, root=self.root)

    def start(self, run: dict[str, Any], *, resume: bool) -> None:
        """Prepare the directory; without ``resume`` the earlier parts are deleted.

        Only the files this store writes (``run.json``, ``layer-*`` parts, their
        temporaries) are deleted, one by one, without following links; anything else
        in the directory is left alone.
        """
        ensure_dir(self.dir, root=self.root)
        if not resume:
            remove_files(self.dir, lambda name: bool(PART_NAME.match(name)), root=self.root)
        self.clean_temporaries()
        atomic_write_bytes(self.dir / "run.json", json.dumps(run, indent=1).encode(),
                           root=self.root)

    def drop_temporaries(self) -> int:
        """Delete temporary files left by killed writers (e.g. a lost dask worker).

        Returns the number of files deleted (:meth:`clean_temporaries`).
        """
        return len(self.clean_temporaries())

    # -- layers ----------------------------------------------------------------
    def done_layers(self, *, factors: bool = False) -> list[int]:
        """Layers whose parts are complete and readable.

        A part that exists but cannot be read back (damaged after it was written) does
        not count: that layer is computed again (and said so on stderr).
        """
        if not self.dir.is_dir():
            return []
        done = []
        for p in self.dir.glob("layer-*.heads.parquet"):
            m = re.fullmatch(r"layer-(\d+)\.heads\.parquet", p.name)
            if m is None:
                continue
            layer = int(m.group(1))
            need = [p, self._path(layer, "spectra")]
            if factors:
                need.append(self._path(layer, "factors"))
            if not all(q.is_file() and not q.is_symlink() for q in need):
                continue
            bad = [q for q in need if not _readable_part(q)]
            if bad:
                print(f"qkforms survey: {', '.join(map(str, bad))} cannot be read back; "
                      f"layer {layer} is computed again", file=sys.stderr)
                continue
            done.append(layer)
        return sorted(done)

    def write_layer(
        self, layer: int, heads: Any, spectra: Any, factors: dict[str, np.ndarray] | None
    ) -> None:
        """Write the parts of one layer; the heads part goes last (the done marker)."""
        if factors is not None:
            atomic_write_bytes(self._path(layer, "factors"), _npz_bytes(factors),
                               root=self.root)
        atomic_write_table(self._path(layer, "spectra"), spectra, root=self.root)
        atomic_write_table(self._path(layer, "heads"), heads, root=self.root)

    def read_layer(self, layer: int, kind: str) -> Any:
        """Read one part back (a pyarrow table, or a dict of arrays for factors).

        Raises
        ------
        QKFormsError
            Naming the part, if it cannot be read.
        """
        path = self._path(layer, kind)
        try:
            with open_regular(path) as f:
                if kind == "factors":
                    with np.load(f, allow_pickle=False) as z:
                        return {k: z[k] for k in z.files}
                import pyarrow.parquet as pq

                return pq.read_table(f)
        except QKFormsError:
            raise
        except Exception as exc:  # noqa: BLE001 - OSError, ArrowInvalid, BadZipFile, ...
            raise QKFormsError(f"{path}: cannot read the survey part ({type(exc).__name__}: "
                               f"{exc}); rerun without --resume to recompute it") from exc

    def merge_factors(self, layers: list[int]) -> None:
        """Concatenate the per-layer factor parts into one ``.npz`` (streamed, atomic).

        Keys are ``L<layer>_Q_red`` and ``L<layer>_K_red`` (arrays ``(n_q, n, 2n)``; NaN
        for failed heads), at :attr:`factors_path`. A :class:`FactorsStream` writes the same
        file while the layers are computed.
        """
        def write(f: Any) -> None:
            with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED,
                                 allowZip64=True) as zf:
                for layer in layers:
                    _write_factor_members(zf, layer, self.read_layer(layer, "factors"))

        atomic_write(self.factors_path, write, root=self.root)

    def factors_stream(self) -> FactorsStream:
        """A :class:`FactorsStream` onto :attr:`factors_path`."""
        return FactorsStream(self.factors_path, root=self.root)


def _write_factor_members(zf: zipfile.ZipFile, layer: int, arrays: dict[str, np.ndarray]) -> None:
    """Add one layer's factors to the merged file (``L<layer:04d>_<name>.npy`` members)."""
    for name, arr in arrays.items():
        with zf.open(f"L{layer:04d}_{name}.npy", "w", force_zip64=True) as g:
            np.lib.format.write_array(g, np.ascontiguousarray(arr), allow_pickle=False)


class FactorsStream:
    """The merged factors file of one model, written layer by layer as they are computed.

    The same file as :meth:`PartStore.merge_factors` of those layers, but written while
    the survey runs (by its writer thread) instead of read back from the parts and
    written again at the end. It lives under a temporary name until :meth:`commit`;
    :meth:`discard` removes it (an interrupted run leaves a temporary that the next run
    in that directory deletes, docs/survey.md).

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from pathlib import Path
    >>> from qkforms.survey.store import PartStore
    >>> store = PartStore(Path(tempfile.mkdtemp()), "m")
    >>> stream = store.factors_stream()
    >>> stream.add(0, {"Q_red": np.ones((1, 1, 2)), "K_red": np.zeros((1, 1, 2))})
    >>> stream.layers, store.factors_path.exists()
    ([0], False)
    >>> stream.commit()
    >>> sorted(np.load(store.factors_path).files)
    ['L0000_K_red', 'L0000_Q_red']
    """

    def __init__(self, path: Path, *, root: Path) -> None:
        self._file = AtomicFile(path, root=root)
        self._zip = zipfile.ZipFile(self._file.file, "w", compression=zipfile.ZIP_STORED,
                                    allowZip64=True)
        #: the layers written so far, in order
        self.layers: list[int] = []

    def add(self, layer: int, arrays: dict[str, np.ndarray]) -> None:
        """Append the factors of ``layer``."""
        _write_factor_members(self._zip, layer, arrays)
        self.layers.append(layer)

    def close(self) -> None:
        """Finish writing (the file stays under its temporary name; no descriptor kept)."""
        try:
            self._zip.close()
            self._file.close()
        except BaseException:
            self._file.discard()
            raise

    def commit(self) -> None:
        """Finish the file and move it into place."""
        self.close()
        self._file.commit()

    def discard(self) -> None:
        """Remove the unfinished file; a no-op after :meth:`commit` or :meth:`discard`."""
        try:
            self._zip.close()
        except (OSError, ValueError):  # best effort: the temporary goes anyway
            pass
        self._file.discard()

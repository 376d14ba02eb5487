"""Resumable storage of survey results: one atomic part per (model, layer), then a merge.

Layout inside the output directory ``DIR``::

    DIR/parts/<model>/run.json               what the parts were computed with
    DIR/parts/<model>/layer-0007.heads.parquet
    DIR/parts/<model>/layer-0007.spectra.parquet
    DIR/parts/<model>/layer-0007.factors.npz   (RoPE models only)

Every file is written to a temporary name in the same directory and moved into
place with :func:`os.replace` (atomic on POSIX), the heads part last: a layer counts
as done exactly when its heads part exists, so a run killed at any instant (even
``kill -9``) leaves only complete layers plus temporary files, which a resumed run
deletes. Files are not fsync'ed: the guarantee is against a killed process, not
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
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["PartStore", "atomic_write_bytes", "atomic_write_table", "model_key"]

_TMP_MARK = ".tmp-"


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


def _tmp_path(path: Path) -> Path:
    return path.with_name(f"{path.name}{_TMP_MARK}{os.getpid()}")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file + ``os.replace``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from qkforms.survey.store import atomic_write_bytes
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> atomic_write_bytes(p, b"hi"); p.read_bytes()
    b'hi'
    """
    tmp = _tmp_path(path)
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def atomic_write_table(path: Path, table: Any) -> None:
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

    tmp = _tmp_path(path)
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


class PartStore:
    """The per-layer parts of one model inside an output directory.

    Parameters
    ----------
    out : Path
        The survey output directory.
    key : str
        The model's key (:func:`model_key`).
    """

    def __init__(self, out: Path, key: str) -> None:
        self.dir = Path(out) / "parts" / key

    def _path(self, layer: int, kind: str) -> Path:
        ext = "npz" if kind == "factors" else "parquet"
        return self.dir / f"layer-{layer:04d}.{kind}.{ext}"

    # -- run fingerprint -------------------------------------------------------
    def read_run(self) -> dict[str, Any] | None:
        """The ``run.json`` of existing parts, or None."""
        p = self.dir / "run.json"
        if not p.exists():
            return None
        return json.loads(p.read_text(encoding="utf-8"))

    def start(self, run: dict[str, Any], *, resume: bool) -> None:
        """Prepare the directory; without ``resume`` existing parts are deleted."""
        if not resume and self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        for stale in self.dir.glob(f"*{_TMP_MARK}*"):
            stale.unlink()
        atomic_write_bytes(self.dir / "run.json", json.dumps(run, indent=1).encode())

    def drop_temporaries(self) -> int:
        """Delete temporary files left by killed writers (e.g. a lost dask worker).

        Returns the number of files deleted.
        """
        stale = list(self.dir.glob(f"*{_TMP_MARK}*")) if self.dir.exists() else []
        for p in stale:
            p.unlink(missing_ok=True)
        return len(stale)

    # -- layers ----------------------------------------------------------------
    def done_layers(self, *, factors: bool = False) -> list[int]:
        """Layers whose parts are complete."""
        if not self.dir.exists():
            return []
        done = []
        for p in self.dir.glob("layer-*.heads.parquet"):
            layer = int(p.name.split(".")[0].split("-")[1])
            if self._path(layer, "spectra").exists() and (
                not factors or self._path(layer, "factors").exists()
            ):
                done.append(layer)
        return sorted(done)

    def write_layer(
        self, layer: int, heads: Any, spectra: Any, factors: dict[str, np.ndarray] | None
    ) -> None:
        """Write the parts of one layer; the heads part goes last (the done marker)."""
        if factors is not None:
            atomic_write_bytes(self._path(layer, "factors"), _npz_bytes(factors))
        atomic_write_table(self._path(layer, "spectra"), spectra)
        atomic_write_table(self._path(layer, "heads"), heads)

    def read_layer(self, layer: int, kind: str) -> Any:
        """Read one part back (a pyarrow table, or a dict of arrays for factors)."""
        path = self._path(layer, kind)
        if kind == "factors":
            with np.load(path) as z:
                return {k: z[k] for k in z.files}
        import pyarrow.parquet as pq

        return pq.read_table(path)

    def merge_factors(self, layers: list[int], path: Path) -> None:
        """Concatenate the per-layer factor parts into one ``.npz`` (streamed, atomic).

        Keys are ``L<layer>_Q_red`` and ``L<layer>_K_red`` (arrays ``(n_q, n, 2n)``; NaN
        for failed heads).
        """
        tmp = _tmp_path(path)
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for layer in layers:
                for name, arr in self.read_layer(layer, "factors").items():
                    with zf.open(f"L{layer:04d}_{name}.npy", "w", force_zip64=True) as f:
                        np.lib.format.write_array(f, np.ascontiguousarray(arr))
        os.replace(tmp, path)

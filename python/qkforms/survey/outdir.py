"""The survey's output directory: what it holds, who owns it, and its check on start.

``qkforms survey --out DIR`` writes only the entries listed in :data:`FILES` and
:data:`DIRECTORIES` (the contract is ``docs/survey.md``, "What the survey writes and
deletes"). On start the survey

1. refuses an empty ``--out`` or one that exists and is not a directory
   (:func:`check_out`);
2. takes the lock ``DIR/.qkforms-survey.lock`` (:class:`OutputLock`): a second live
   survey into the same directory is refused, and worker processes left by an
   earlier run that was killed are waited for (they die with their parent) before
   anything is written;
3. checks the tree (:func:`sanitize`): a symbolic link, or an entry of the wrong kind,
   where the survey keeps its files is an error (nothing is followed, replaced or
   deleted); temporary files of interrupted writes are deleted.

Examples
--------
>>> import pathlib, tempfile
>>> from qkforms.survey.outdir import OutputLock, sanitize
>>> out = pathlib.Path(tempfile.mkdtemp())
>>> with OutputLock(out):
...     sanitize(out)
[]
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qkforms._fs import file_kind, read_json, remove_files
from qkforms.errors import OutputError, QKFormsError, SurveyLockedError, UnsafePathError
from qkforms.survey.store import PART_NAME

__all__ = [
    "DIRECTORIES",
    "FILES",
    "LOCK_NAME",
    "OutputLock",
    "check_out",
    "check_resume_models",
    "open_output",
    "process_alive",
    "process_start_time",
    "sanitize",
]

#: the lock file of a survey in its output directory
LOCK_NAME = ".qkforms-survey.lock"
#: the top-level files a survey writes
FILES = ("heads.parquet", "spectra.parquet", "manifest.json", "summary.md")
#: the directories a survey writes into (parts/<model>/, factors/, stats/)
DIRECTORIES = ("parts", "factors", "stats")
#: seconds to wait for the worker processes of a killed earlier run to die
LEFTOVER_WAIT = 15.0

_TEMP = re.compile(r"^(?P<base>.+)\.tmp-\d+(-\d+)?$")


def check_out(out: str | os.PathLike[str]) -> Path:
    """Validate an output directory argument; return it as a Path.

    Raises
    ------
    UnsafePathError
        If it is empty, or exists and is not a directory.

    Examples
    --------
    >>> try:
    ...     check_out("")
    ... except UnsafePathError as exc:
    ...     print(str(exc).split(";")[0])
    --out is empty
    """
    text = os.fspath(out)
    if not str(text).strip():
        raise UnsafePathError("--out is empty; name the output directory (e.g. --out "
                              "survey-out), it is never the current directory by default")
    path = Path(text)
    if os.path.lexists(path) and not path.is_dir():
        kind = file_kind(os.lstat(path).st_mode)
        raise UnsafePathError(f"--out {path} exists and is a {kind}, not a directory")
    return path


@contextmanager
def open_output(out: str | os.PathLike[str]) -> Iterator[OutputLock]:
    """The start of every survey run into ``out``: check, create, lock, sanitize.

    :func:`check_out`, then the directory is created, the :class:`OutputLock` taken and
    the tree checked (:func:`sanitize`); the lock is held until the block ends (however
    it ends). Both the local survey and the training-run/dask driver start this way.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "survey-out"
    >>> with open_output(out) as lock:
    ...     (out / LOCK_NAME).exists()
    True
    >>> (out / LOCK_NAME).exists()
    False
    """
    path = check_out(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the output directory {path} "
                          f"({exc.strerror or exc})") from exc
    with OutputLock(path) as lock:
        sanitize(path)
        yield lock


def check_resume_models(out: str | os.PathLike[str], keys: Sequence[str],
                        names: Sequence[str]) -> None:
    """Refuse ``--resume`` when it would drop a model of the survey finished in ``out``.

    Without this, resuming into another survey's directory would silently replace its
    ``heads.parquet`` with a survey of different models. Adding models is allowed (the
    earlier ones are kept from their parts).

    Raises
    ------
    QKFormsError
        Naming the models that would be dropped.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (out / "manifest.json").write_text(json.dumps({"models": [{"key": "a", "model": "A"}]}))
    >>> check_resume_models(out, ["a", "b"], ["A", "B"])  # adding B: fine
    >>> try:
    ...     check_resume_models(out, ["b"], ["B"])
    ... except QKFormsError as exc:
    ...     print(str(exc).split(";")[0])  # doctest: +ELLIPSIS
    --resume: ... holds a survey of A, and resuming with B would replace it without A
    """
    path = Path(out) / "manifest.json"
    if not path.exists():
        return
    man = read_json(path, "survey manifest")
    try:
        before = [str(m["key"]) for m in man["models"]]
        before_names = [str(m.get("model", m["key"])) for m in man["models"]]
    except (KeyError, TypeError) as exc:
        raise QKFormsError(f"{path}: not a survey manifest (no models list: {exc}); "
                           "rerun without --resume to start over") from None
    dropped = [name for key, name in zip(before, before_names, strict=True) if key not in keys]
    if dropped:
        raise QKFormsError(
            f"--resume: {Path(out)} holds a survey of {', '.join(before_names)}, and resuming "
            f"with {', '.join(names)} would replace it without {', '.join(dropped)}; "
            "resume with the same sources, choose another --out, or rerun without "
            "--resume to replace it on purpose")


# --------------------------------------------------------------------------- processes


def process_start_time(pid: int) -> str | None:
    """The start time of a process (Linux: ``/proc/<pid>/stat`` field 22), or None.

    With the pid it identifies a process even after the pid is reused.

    Examples
    --------
    >>> import os
    >>> process_start_time(os.getpid()) is None or process_start_time(os.getpid()).isdigit()
    True
    """
    try:
        with open(f"/proc/{int(pid)}/stat", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def process_alive(pid: int, start: str | None = None) -> bool:
    """Whether process ``pid`` (started at ``start``, when known) is still running.

    A zombie (dead, not yet reaped) counts as not running.

    Examples
    --------
    >>> import os
    >>> process_alive(os.getpid(), process_start_time(os.getpid()))
    True
    """
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OSError, ValueError, OverflowError):
        return False
    try:
        with open(f"/proc/{int(pid)}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[-1].split()
        if fields and fields[0] in ("Z", "X"):
            return False
    except OSError:
        pass
    now = process_start_time(pid)
    return start is None or now is None or now == start


class OutputLock:
    """The lock of a survey's output directory (``DIR/.qkforms-survey.lock``).

    Held with ``flock`` for the whole run, so that it is released when the process
    dies however it dies; the file records the owner and its worker processes
    (``{"pid", "start", "workers": [[pid, start], ...]}``). Taking it refuses while
    another live process holds it, and waits (at most :data:`LEFTOVER_WAIT` seconds)
    for the recorded workers of an earlier, killed owner to die. A run that ends
    (normally, by an error or by Ctrl-C) removes the file; one killed by ``kill -9``
    leaves it, for the next run to check.

    Parameters
    ----------
    out : Path
        The output directory (created if missing).

    Examples
    --------
    >>> import json, os, pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> with OutputLock(out) as lock:
    ...     json.loads((out / LOCK_NAME).read_text())["pid"] == os.getpid()
    True
    """

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        self.path = self.out / LOCK_NAME
        self._fd: int | None = None

    def _read(self, fd: int) -> dict[str, Any]:
        os.lseek(fd, 0, os.SEEK_SET)
        raw = b""
        while chunk := os.read(fd, 65536):
            raw += chunk
        try:
            rec = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            return {}
        return rec if isinstance(rec, dict) else {}

    def _write(self, rec: dict[str, Any]) -> None:
        assert self._fd is not None
        data = json.dumps(rec).encode()
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, data)

    def acquire(self) -> OutputLock:
        """Take the lock (see the class docstring).

        Raises
        ------
        SurveyLockedError
            If another live survey holds it, or workers of an earlier run survive.
        UnsafePathError
            If the lock file is a link or not a regular file.
        """
        self.out.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(self.path):
            mode = os.lstat(self.path).st_mode
            if not stat.S_ISREG(mode):
                raise UnsafePathError(f"{self.path} is a {file_kind(mode)}; the survey's lock "
                                      "file must be a regular file (remove it)")
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        for _attempt in range(20):
            fd = os.open(self.path, flags, 0o666)
            try:
                old = self._lock(fd)
                # the owner before us may have removed the file while we waited for it:
                # then our lock is on a dead inode and we start over with the new file
                try:
                    same = os.fstat(fd).st_ino == os.lstat(self.path).st_ino
                except FileNotFoundError:
                    same = False
                if not same:
                    os.close(fd)
                    continue
                self._fd = fd
                self._wait_for_leftovers(old)
                self._write({"pid": os.getpid(), "start": process_start_time(os.getpid()),
                             "workers": []})
            except BaseException:
                self._fd = None
                os.close(fd)
                raise
            return self
        raise SurveyLockedError(f"could not take the lock {self.path} (it keeps being "
                                "replaced by another process)")

    def _lock(self, fd: int) -> dict[str, Any]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: liveness of the recorded pid
            old = self._read(fd)
            if old.get("pid") not in (None, os.getpid()) and process_alive(
                    old["pid"], old.get("start")):
                raise SurveyLockedError(self._busy(old)) from None
            return old
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SurveyLockedError(self._busy(self._read(fd))) from None
        return self._read(fd)

    def _busy(self, rec: dict[str, Any]) -> str:
        who = f"pid {rec['pid']}" if rec.get("pid") else "another process"
        return (f"another qkforms survey ({who}) is writing to {self.out}; wait for it to "
                "finish or choose another --out")

    def _wait_for_leftovers(self, old: dict[str, Any]) -> None:
        workers = [(int(w[0]), w[1]) for w in old.get("workers") or []
                   if isinstance(w, list | tuple) and len(w) == 2]
        deadline = time.monotonic() + LEFTOVER_WAIT
        alive = [w for w in workers if process_alive(*w)]
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [w for w in alive if process_alive(*w)]
        if alive:
            pids = ", ".join(str(p) for p, _ in alive)
            raise SurveyLockedError(
                f"worker processes of an earlier survey into {self.out} are still running "
                f"(pid {pids}) although their parent ended; they stop by themselves "
                f"within seconds, else end them (kill {pids.replace(',', '')}) and rerun")

    def record_workers(self, pids: list[int]) -> None:
        """Record the worker processes of this run (checked by the next owner)."""
        if self._fd is None:
            return
        self._write({"pid": os.getpid(), "start": process_start_time(os.getpid()),
                     "workers": [[int(p), process_start_time(int(p))] for p in pids]})

    def release(self) -> None:
        """Remove the lock file and release the lock (a clean run leaves no lock file)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if os.fstat(fd).st_ino == os.lstat(self.path).st_ino:
                os.unlink(self.path)  # still ours: remove it before letting go
        except OSError:
            pass
        os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


# --------------------------------------------------------------------------- sanitize


def _temp_base(name: str) -> str | None:
    m = _TEMP.match(name)
    return m.group("base") if m else None


def _check_entry(path: Path, want: str) -> bool:
    """Whether ``path`` exists; raise if it is a link or not of kind ``want``."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(mode):
        raise UnsafePathError(f"{path} is a symbolic link inside the output directory; the "
                              "survey never writes or deletes through links it did not "
                              "create. Remove the link or choose another --out")
    ok = stat.S_ISDIR(mode) if want == "dir" else stat.S_ISREG(mode)
    if not ok:
        raise UnsafePathError(f"{path} is a {file_kind(mode)} where the survey keeps a "
                              f"{'directory' if want == 'dir' else 'file'}; remove it or "
                              "choose another --out")
    return True


def sanitize(out: str | os.PathLike[str]) -> list[str]:
    """Check the entries the survey manages in ``out``; delete stale temporaries.

    Call it while holding the :class:`OutputLock` (no other live survey writes there
    then, so every temporary file is a leftover of an interrupted write).

    Raises
    ------
    UnsafePathError
        Where a managed entry is a symbolic link or of the wrong kind.

    Returns
    -------
    list of str
        The temporary files deleted (paths relative to ``out``).

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> os.makedirs(out / "parts" / "m")
    >>> _ = (out / "parts" / "m" / "layer-0001.heads.parquet.tmp-99-0").write_bytes(b"")
    >>> sanitize(out)
    ['parts/m/layer-0001.heads.parquet.tmp-99-0']
    >>> os.symlink(tempfile.mkdtemp(), out / "factors")
    >>> try:
    ...     sanitize(out)
    ... except UnsafePathError as exc:
    ...     print("symbolic link" in str(exc))
    True
    """
    out = Path(out)
    removed: list[str] = []

    def clean(directory: Path, keep: Any) -> None:
        def select(name: str) -> bool:
            base = _temp_base(name)
            return base is not None and bool(keep(base))

        names = remove_files(directory, select, root=out)
        removed.extend(str((directory / n).relative_to(out)) for n in names)

    for name in FILES:
        _check_entry(out / name, "file")
    clean(out, lambda base: base in FILES)
    if _check_entry(out / "parts", "dir"):
        for entry in sorted(os.scandir(out / "parts"), key=lambda e: e.name):
            path = out / "parts" / entry.name
            if entry.is_symlink():
                _check_entry(path, "dir")  # raises
            if not entry.is_dir(follow_symlinks=False):
                continue  # not ours: left alone
            for sub in sorted(os.scandir(path), key=lambda e: e.name):
                base = _temp_base(sub.name)
                if sub.is_symlink() or PART_NAME.match(sub.name) or (
                        base is not None and PART_NAME.match(base)):
                    _check_entry(path / sub.name, "file")
            clean(path, lambda base: bool(PART_NAME.match(base)))
    for directory in ("factors", "stats"):
        if _check_entry(out / directory, "dir"):
            for sub in os.scandir(out / directory):
                if sub.is_symlink():
                    _check_entry(out / directory / sub.name, "file")  # raises
            clean(out / directory, lambda base: True)
    return removed

"""Safe file-system primitives: how qkforms reads, writes and deletes files.

One implementation of each rule, used by every command (contract: ``docs/survey.md``,
"What the survey writes and deletes"):

* **Reading** opens regular files only (:func:`open_regular`, :func:`require_regular`):
  a FIFO, device or socket given where a checkpoint, config or table is expected is
  refused at once instead of blocking forever. Reads follow symbolic links (model
  files are links in the Hugging Face cache). Files read whole into memory (JSON
  records, Lean sources, tables) are read with a size bound (:func:`read_bytes`,
  :func:`read_text`): a file larger than its kind can be is refused before it is read.
* **Writing** is atomic (:func:`atomic_write`): the data go to a new temporary file
  created with ``O_EXCL | O_NOFOLLOW`` next to the target, which is then moved into
  place with ``os.replace`` (a link at the target is replaced, never written through).
  Directories below the output root are entered without following links
  (:func:`ensure_dir`), so a link planted inside the output tree can neither redirect
  a write nor a delete. On any failure (disk full, permission, Ctrl-C) the temporary
  file is removed and the error names the file (:class:`~qkforms.errors.OutputError`).
* **Deleting** removes single regular files by name inside such a directory
  (:func:`remove_files`), never a whole tree and never through a link.

Examples
--------
>>> import pathlib, tempfile
>>> from qkforms._fs import atomic_write, open_regular, remove_files
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write(root / "sub" / "x.txt", b"hello", root=root)
>>> with open_regular(root / "sub" / "x.txt") as f:
...     f.read()
b'hello'
>>> remove_files(root / "sub", lambda name: name.endswith(".txt"), root=root)
['x.txt']
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from qkforms.errors import OutputError, ParameterError, QKFormsError, UnsafePathError

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_TABLE_BYTES",
    "MAX_TEXT_BYTES",
    "TMP_MARK",
    "AtomicFile",
    "atomic_write",
    "describe_os_error",
    "ensure_dir",
    "file_kind",
    "is_temporary",
    "open_regular",
    "read_bytes",
    "read_json",
    "read_text",
    "remove_files",
    "require_regular",
]

#: size bound of a JSON record (manifest, run record, trainer state, config)
MAX_JSON_BYTES = 64 * 2**20
#: size bound of a text source (a Lean file, a TOML table)
MAX_TEXT_BYTES = 16 * 2**20
#: size bound of a table read whole (heads.parquet, spectra.parquet, stats tables)
MAX_TABLE_BYTES = 8 * 2**30

#: marks a temporary file: ``<name>.tmp-<pid>-<n>`` (removed on failure, stale ones on start)
TMP_MARK = ".tmp-"

_COUNTER = itertools.count()
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def file_kind(mode: int) -> str:
    """A readable name of the file type in ``mode`` (from ``stat``).

    Examples
    --------
    >>> import stat
    >>> file_kind(stat.S_IFIFO), file_kind(stat.S_IFLNK), file_kind(stat.S_IFREG)
    ('FIFO (named pipe)', 'symbolic link', 'regular file')
    """
    for test, name in ((stat.S_ISREG, "regular file"), (stat.S_ISDIR, "directory"),
                       (stat.S_ISLNK, "symbolic link"), (stat.S_ISFIFO, "FIFO (named pipe)"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def describe_os_error(exc: OSError) -> str:
    """One line naming the file(s) and the problem of an ``OSError``.

    Examples
    --------
    >>> describe_os_error(PermissionError(13, "Permission denied", "/x/out"))
    '/x/out: Permission denied'
    >>> describe_os_error(OSError(28, "No space left on device"))
    'No space left on device'
    """
    if not isinstance(exc, OSError) or type(exc).__str__ is not OSError.__str__:
        return str(exc)
    what = exc.strerror or str(exc)
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{' -> '.join(names)}: {what}" if names else what


def _not_regular(path: str | os.PathLike[str], mode: int) -> UnsafePathError:
    return UnsafePathError(
        f"{os.fspath(path)}: is a {file_kind(mode)}, not a regular file; qkforms reads "
        "only regular files (a pipe or device would block or never end)")


def require_regular(path: str | os.PathLike[str]) -> int:
    """Check that ``path`` is (a link to) a regular file; return its size.

    For libraries that open a path themselves (memory maps); prefer
    :func:`open_regular`, which checks the file it actually opened.

    Raises
    ------
    UnsafePathError
        For a FIFO, device, socket or directory.
    FileNotFoundError
        If it does not exist.

    Examples
    --------
    >>> import os, tempfile
    >>> fifo = os.path.join(tempfile.mkdtemp(), "pipe.gguf"); os.mkfifo(fifo)
    >>> try:
    ...     require_regular(fifo)
    ... except UnsafePathError as exc:
    ...     print("FIFO" in str(exc))
    True
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    return int(st.st_size)


def open_regular(path: str | os.PathLike[str], mode: str = "rb", *,
                 encoding: str | None = None) -> IO[Any]:
    """Open a regular file for reading (links followed); never block on a special file.

    The file is opened non-blocking, checked with ``fstat`` (so the check concerns the
    file actually opened), then switched back to blocking reads.

    Parameters
    ----------
    path
        The file.
    mode : {"rb", "r"}
        Binary or text.
    encoding
        Text encoding (text mode).

    Raises
    ------
    UnsafePathError
        If ``path`` is not a regular file (FIFO, device, socket, directory).
    OSError
        If it cannot be opened (missing, permission).

    Examples
    --------
    >>> import os, tempfile
    >>> fifo = os.path.join(tempfile.mkdtemp(), "model.safetensors"); os.mkfifo(fifo)
    >>> try:
    ...     open_regular(fifo)
    ... except UnsafePathError as exc:
    ...     print(str(exc).endswith("never end)"))
    True
    """
    if mode not in ("rb", "r"):
        raise ParameterError(f"open_regular reads only ('rb' or 'r'), got mode {mode!r}")
    fd = os.open(path, os.O_RDONLY | _O_CLOEXEC | _O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        if _O_NONBLOCK:
            import fcntl

            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~_O_NONBLOCK)
        return os.fdopen(fd, mode, encoding=encoding)
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str], what: str = "file", *,
               limit: int = MAX_JSON_BYTES) -> bytes:
    """Read a regular file whole, refusing one larger than ``limit`` bytes.

    The size is checked on the opened file before reading, and the read itself stops
    after ``limit + 1`` bytes (a file that grows while read is refused too).

    Raises
    ------
    UnsafePathError
        If it is not a regular file.
    QKFormsError
        If it is larger than ``limit`` or cannot be read (naming the file).
    FileNotFoundError
        If it does not exist.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "big.json")
    >>> _ = open(p, "wb").write(b"x" * 100)
    >>> read_bytes(p, limit=100)[:3]
    b'xxx'
    >>> try:
    ...     read_bytes(p, "run record", limit=10)
    ... except Exception as exc:
    ...     print(str(exc).split(": ", 1)[1])
    the run record is 100 bytes, more than a run record can be (10 bytes); refused
    """
    def too_big(size: int) -> QKFormsError:
        return QKFormsError(f"{os.fspath(path)}: the {what} is {size} bytes, more than a "
                            f"{what} can be ({limit} bytes); refused")

    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise too_big(size)
            data: bytes = f.read(limit + 1)
    except (UnsafePathError, QKFormsError, FileNotFoundError):
        raise
    except OSError as exc:
        raise QKFormsError(f"{os.fspath(path)}: cannot read the {what} "
                           f"({exc.strerror or exc})") from exc
    if len(data) > limit:
        raise too_big(len(data))
    return data


def read_text(path: str | os.PathLike[str], what: str = "file", *,
              limit: int = MAX_TEXT_BYTES) -> str:
    """Read a regular UTF-8 text file whole (bounded as :func:`read_bytes`).

    Raises
    ------
    UnsafePathError
        If it is not a regular file.
    QKFormsError
        If it is too large, cannot be read, or is not UTF-8 (naming the byte offset).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "A.lean")
    >>> _ = open(p, "wb").write(b"theorem x " + bytes([255]))
    >>> try:
    ...     read_text(p, "Lean source")
    ... except Exception as exc:
    ...     print(str(exc).split(": ", 1)[1])
    the Lean source is not UTF-8 text (byte 0xff at offset 10)
    """
    data = read_bytes(path, what, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise QKFormsError(f"{os.fspath(path)}: the {what} is not UTF-8 text (byte "
                           f"0x{data[exc.start]:02x} at offset {exc.start})") from None


def read_json(path: str | os.PathLike[str], what: str = "JSON file", *,
              limit: int = MAX_JSON_BYTES) -> Any:
    """Read a JSON file (regular files of bounded size only), any failure as one clear error.

    Raises
    ------
    UnsafePathError
        If it is not a regular file.
    QKFormsError
        If it is too large, cannot be read or is not valid JSON (naming the file).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "run.json")
    >>> _ = open(p, "w").write("{not json")
    >>> try:
    ...     read_json(p, "run record")
    ... except Exception as exc:
    ...     print(str(exc).split(":")[1].strip())
    corrupt run record (not valid JSON
    """
    try:
        data = read_bytes(path, what, limit=limit)
    except FileNotFoundError as exc:
        raise QKFormsError(f"{os.fspath(path)}: cannot read the {what} "
                           f"({exc.strerror or exc})") from exc
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise QKFormsError(f"{os.fspath(path)}: corrupt {what} (not valid JSON: {exc})") from exc


# --------------------------------------------------------------------------- directories


def _link_error(path: Path, root: Path | None = None) -> UnsafePathError:
    where = "the output directory" if root is None else f"the output directory {root}"
    return UnsafePathError(
        f"{path} is a symbolic link inside {where}; qkforms never writes or deletes "
        "through links it did not create. Remove the link or choose another output "
        "directory")


def _open_dir(path: Path, root: Path, *, create: bool) -> int:
    """A descriptor of directory ``path``, reached from ``root`` without following links.

    ``root`` itself is opened as given (it is the user's choice, and may be a link);
    every component below it must be a real directory (created when ``create``).
    """
    path, root = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise UnsafePathError(f"{path} is outside the output directory {root}") from None
    if create:
        root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    here = root
    try:
        for part in rel.parts:
            here = here / part
            flags = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
            try:
                nfd = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                nfd = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    st = os.lstat(part, dir_fd=fd)
                    if stat.S_ISLNK(st.st_mode):
                        raise _link_error(here, root) from None
                    raise UnsafePathError(f"{here} exists and is a {file_kind(st.st_mode)}, "
                                          "not a directory") from None
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def ensure_dir(path: str | os.PathLike[str], *, root: str | os.PathLike[str]) -> Path:
    """Create directory ``path`` below ``root`` (and the missing ones between).

    Raises
    ------
    UnsafePathError
        If a component below ``root`` is a link or not a directory, or ``path`` is not
        below ``root``.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> ensure_dir(root / "a" / "b", root=root).is_dir()
    True
    >>> os.symlink(tempfile.mkdtemp(), root / "parts")
    >>> try:
    ...     ensure_dir(root / "parts" / "m", root=root)
    ... except UnsafePathError as exc:
    ...     print("symbolic link" in str(exc))
    True
    """
    try:
        os.close(_open_dir(Path(path), Path(root), create=True))
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise OutputError(f"{os.fspath(path)}: cannot create the directory "
                          f"({exc.strerror or exc})") from exc
    return Path(path)


def is_temporary(name: str) -> bool:
    """Whether a file name is one of :func:`atomic_write`'s temporaries.

    Examples
    --------
    >>> is_temporary("heads.parquet.tmp-123-0"), is_temporary("heads.parquet")
    (True, False)
    """
    return TMP_MARK in name


def atomic_write(path: str | os.PathLike[str], data: bytes | Callable[[IO[bytes]], Any], *,
                 root: str | os.PathLike[str] | None = None) -> None:
    """Write ``path`` atomically: a new temporary file next to it, then ``os.replace``.

    Parameters
    ----------
    path
        The file to (re)place.
    data
        The bytes, or a function writing them to the given binary file object (e.g.
        ``lambda f: pyarrow.parquet.write_table(table, f)``).
    root
        The output root: directories between it and ``path`` are created as needed and
        entered without following links (default: ``path``'s directory).

    Raises
    ------
    OutputError
        When writing fails (disk full, permission, ...), naming ``path``; the temporary
        file is removed and an earlier version of ``path`` is untouched.
    UnsafePathError
        If a directory below ``root`` is a link or not a directory.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> atomic_write(p, b"hi"); atomic_write(p, lambda f: f.write(b"ho")); p.read_bytes()
    b'ho'
    """
    out = AtomicFile(path, root=root)
    try:
        if callable(data):
            data(out.file)
        else:
            out.file.write(data)
    except BaseException as exc:
        out.discard()
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise out._error(exc) from exc
        raise
    out.commit()


class AtomicFile:
    """A file written in steps under a temporary name next to ``path``, then moved there.

    The temporary is created exclusively (no link followed below ``root``, as in
    :func:`atomic_write`, which is this class written in one step); :meth:`commit` moves
    it into place with ``os.replace``, :meth:`discard` removes it, and until one of them
    an earlier version of ``path`` is untouched. :meth:`close` finishes the writing
    early (no descriptor is held after it). A temporary left by a killed process is
    recognised by :func:`is_temporary`.

    Raises
    ------
    OutputError
        When the temporary cannot be created or moved into place, naming ``path``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.bin"
    >>> f = AtomicFile(p); _ = f.file.write(b"a"); _ = f.file.write(b"b")
    >>> f.close(); p.exists()
    False
    >>> f.commit(); p.read_bytes()
    b'ab'
    """

    def __init__(self, path: str | os.PathLike[str], *,
                 root: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path)
        self._root = Path(root) if root is not None else self.path.parent
        self._tmp = f"{self.path.name}{TMP_MARK}{os.getpid()}-{next(_COUNTER)}"
        # the directory is held open from here to commit/discard (as atomic_write always
        # did), so a directory swapped for another meanwhile changes nothing; close()
        # lets it go, and commit/discard then reach it again without following links
        self._dfd: int | None = self._dir()
        try:
            fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW
                         | _O_CLOEXEC, 0o666, dir_fd=self._dfd)
        except OSError as exc:
            os.close(self._dfd)
            raise self._error(exc) from exc
        #: the temporary file, open for binary writing until :meth:`close`
        self.file: IO[bytes] = os.fdopen(fd, "wb")
        self._state = "open"

    def _dir(self) -> int:
        """A descriptor of the target's directory (reached without following links)."""
        try:
            return _open_dir(self.path.parent, self._root, create=True)
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise OutputError(f"{self.path}: cannot write ({describe_os_error(exc)})") from exc

    def _error(self, exc: OSError) -> OutputError:
        return OutputError(f"{self.path}: cannot write ({exc.strerror or exc}); nothing was "
                           "replaced and the temporary file was removed")

    def _release(self) -> None:
        if self._dfd is not None:
            os.close(self._dfd)
            self._dfd = None

    def close(self) -> None:
        """Close the temporary file (it stays, not yet in place) and let the directory go."""
        if self._state == "open":
            try:
                self.file.close()
            except BaseException:
                self.discard()
                raise
            self._state = "closed"
            self._release()

    def commit(self) -> None:
        """Close the temporary and move it to ``path`` (replacing an earlier version)."""
        if self._state == "done":
            raise OutputError(f"{self.path}: already committed or discarded")
        try:
            if self._state == "open":
                self.file.close()
                self._state = "closed"
            if self._dfd is None:
                self._dfd = self._dir()
            os.replace(self._tmp, self.path.name, src_dir_fd=self._dfd, dst_dir_fd=self._dfd)
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError) and not isinstance(exc, OutputError):
                raise self._error(exc) from exc
            raise
        self._state = "done"
        self._release()

    def discard(self) -> None:
        """Remove the temporary (``path`` stays as it was); a no-op once done.

        Best effort: a temporary that cannot be reached any more (its directory moved)
        stays, for :func:`is_temporary` to find, and the error that led here is kept.
        """
        if self._state == "done":
            return
        if self._state == "open":
            try:
                self.file.close()
            except OSError:  # pragma: no cover - closing a file we could not write
                pass
        self._state = "done"
        try:
            if self._dfd is None:
                self._dfd = self._dir()
            os.unlink(self._tmp, dir_fd=self._dfd)
        except (OSError, QKFormsError):
            pass
        finally:
            self._release()


def remove_files(directory: str | os.PathLike[str], select: Callable[[str], bool], *,
                 root: str | os.PathLike[str]) -> list[str]:
    """Delete the regular files of ``directory`` whose names ``select`` accepts.

    Only single files are deleted, by name, in a directory reached from ``root``
    without following links; a missing directory deletes nothing.

    Raises
    ------
    UnsafePathError
        If a selected entry is a link, a directory or a special file (nothing is
        deleted then), or a directory on the way is a link.

    Returns
    -------
    list of str
        The names deleted.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("a.tmp-1-0", "keep.txt"):
    ...     _ = (d / name).write_text("x")
    >>> remove_files(d, is_temporary, root=d), sorted(os.listdir(d))
    (['a.tmp-1-0'], ['keep.txt'])
    """
    directory = Path(directory)
    try:
        dfd = _open_dir(directory, Path(root), create=False)
    except FileNotFoundError:
        return []
    try:
        chosen = []
        with os.scandir(dfd) as it:
            for entry in it:
                if not select(entry.name):
                    continue
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise _link_error(directory / entry.name)
                if not stat.S_ISREG(st.st_mode):
                    raise UnsafePathError(f"{directory / entry.name} is a "
                                          f"{file_kind(st.st_mode)} where qkforms keeps a "
                                          "file; remove it or choose another --out")
                chosen.append(entry.name)
        removed = []
        for name in sorted(chosen):
            try:
                os.unlink(name, dir_fd=dfd)
            except FileNotFoundError:
                continue
            removed.append(name)
        return removed
    finally:
        os.close(dfd)

"""Progress of the long phases: a bar on a terminal, plain lines otherwise, or a callback.

Every phase of a command that can take more than a few seconds (opening a model,
surveying its layers, the exact and certified checks, the baseline, the bootstrap, the
family fits, building a report) reports through this one module, so that what a user
sees while waiting is decided in one place:

* on a terminal (``stream.isatty()``) a ``tqdm`` bar per phase (``tqdm`` is in the
  ``survey`` extra; without it the plain lines below are used);
* otherwise (a log file, CI, a pipe) **plain lines**, ``"qkforms: <phase>: 3/12 layers
  (14 s)"``, but only once a phase has run for :attr:`ProgressSettings.plain_after`
  seconds, then at most every :attr:`ProgressSettings.plain_every` seconds, and one line
  when such a phase ends -- a quick command prints nothing extra, and a failing one
  still prints its one error line;
* a background ticker (one daemon thread while phases are open) redraws bars and writes
  the plain lines even while a single long step runs, so no phase longer than
  ``plain_every`` seconds is silent;
* a **callback** (:func:`settings` ``callback=``) receives every :class:`ProgressEvent`,
  for programs that show progress their own way (and for tests);
* :func:`settings` ``enabled=False`` (the commands' ``--no-progress``) or the
  environment variable ``QKFORMS_PROGRESS=0`` silences everything but the callback.

Use :func:`phase` for work counted by hand and :func:`track` for a loop.

Examples
--------
>>> from qkforms import _progress
>>> events = []
>>> with _progress.settings(enabled=False, callback=events.append):
...     for layer in _progress.track(range(3), "survey m", unit="layer"):
...         pass
>>> [(e.done, e.total, e.finished) for e in events]
[(0, 3, False), (1, 3, False), (2, 3, False), (3, 3, False), (3, 3, True)]
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, TypeVar

__all__ = [
    "ENV",
    "Phase",
    "ProgressEvent",
    "ProgressSettings",
    "current",
    "format_seconds",
    "phase",
    "settings",
    "track",
]

T = TypeVar("T")

#: environment variable: ``0`` (or ``off``, ``no``, ``false``) turns progress output off
ENV = "QKFORMS_PROGRESS"


@dataclass(frozen=True)
class ProgressEvent:
    """One report of a phase: its name, how far it is, and whether it just ended.

    Examples
    --------
    >>> ProgressEvent("stats: bootstrap", 2, 8, "table", 1.5, False).fraction
    0.25
    """

    desc: str
    done: int
    total: int | None
    unit: str
    elapsed: float
    finished: bool

    @property
    def fraction(self) -> float | None:
        """``done / total`` (``None`` without a total)."""
        return None if not self.total else self.done / self.total


@dataclass(frozen=True)
class ProgressSettings:
    """How progress is shown (see :func:`settings`).

    Attributes
    ----------
    enabled
        Bars or plain lines at all (``False``: only the callback is told).
    stream
        Where bars and lines go (``None``: ``sys.stderr`` at the time of writing).
    plain_after
        Seconds a phase runs before its first plain line.
    plain_every
        Seconds between plain lines of one phase (and the ticker's period bound).
    callback
        Called with every :class:`ProgressEvent` (on the thread that made it, or the
        ticker's); exceptions it raises propagate.

    Examples
    --------
    >>> ProgressSettings().plain_after
    5.0
    """

    enabled: bool = True
    stream: IO[str] | None = None
    plain_after: float = 5.0
    plain_every: float = 10.0
    callback: Callable[[ProgressEvent], None] | None = None


def _env_enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "no", "false")


_SETTINGS = ProgressSettings()
_LOCK = threading.RLock()


def current() -> ProgressSettings:
    """The settings in force (``enabled`` also honours ``QKFORMS_PROGRESS``).

    Examples
    --------
    >>> with settings(plain_every=3.0):
    ...     current().plain_every
    3.0
    """
    s = _SETTINGS
    if s.enabled and not _env_enabled():
        return dataclasses.replace(s, enabled=False)
    return s


@contextlib.contextmanager
def settings(**changes: Any) -> Iterator[ProgressSettings]:
    """Change the progress settings inside a ``with`` block (process-wide).

    Parameters
    ----------
    **changes
        Fields of :class:`ProgressSettings` (``enabled``, ``stream``, ``plain_after``,
        ``plain_every``, ``callback``).

    Examples
    --------
    >>> with settings(enabled=False):
    ...     current().enabled
    False
    >>> current().enabled == _env_enabled()
    True
    """
    global _SETTINGS
    with _LOCK:
        previous = _SETTINGS
        _SETTINGS = dataclasses.replace(previous, **changes)
    try:
        yield _SETTINGS
    finally:
        with _LOCK:
            _SETTINGS = previous


def format_seconds(seconds: float) -> str:
    """A duration as users read it: ``"8.2 s"``, ``"3 min 05 s"``, ``"1 h 02 min"``.

    Examples
    --------
    >>> format_seconds(8.24), format_seconds(185.0), format_seconds(3725.0)
    ('8.2 s', '3 min 05 s', '1 h 02 min')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(round(seconds))
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class Phase:
    """One phase of work being reported; make it with :func:`phase`.

    Examples
    --------
    >>> events = []
    >>> with settings(enabled=False, callback=events.append):
    ...     with phase("stats: family fits", total=2, unit="fit") as p:
    ...         p.update()
    ...         p.update()
    >>> events[-1].done, events[-1].finished
    (2, True)
    """

    def __init__(self, desc: str, total: int | None, unit: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.desc = desc
        self.total = total
        self.unit = unit
        self.done = 0
        self._clock = clock
        self._start = clock()
        self._last_line: float | None = None
        self._closed = False
        self._settings = current()
        self._bar: Any = None
        if self._settings.enabled and _isatty(self._stream()):
            self._bar = _tqdm_bar(desc, total, unit, self._stream())
        self._emit(False)

    # -- what is shown ------------------------------------------------------------
    def _stream(self) -> IO[str]:
        return self._settings.stream if self._settings.stream is not None else sys.stderr

    @property
    def elapsed(self) -> float:
        """Seconds since the phase began."""
        return self._clock() - self._start

    def event(self, finished: bool = False) -> ProgressEvent:
        """The phase's state as a :class:`ProgressEvent`."""
        return ProgressEvent(self.desc, self.done, self.total, self.unit, self.elapsed,
                             finished)

    def line(self, finished: bool = False) -> str:
        """The plain line of the phase's state.

        Examples
        --------
        >>> with settings(enabled=False):
        ...     p = Phase("survey m", 12, "layer", clock=iter([0.0, 14.0, 20.0]).__next__)
        >>> p.done = 3
        >>> p.line(), p.line(finished=True)
        ('qkforms: survey m: 3/12 layers (14.0 s)', 'qkforms: survey m: done, 3 layers in 20.0 s')
        """
        took = format_seconds(self.elapsed)
        if finished:
            units = self.unit if self.done == 1 else self.unit + "s"
            return f"qkforms: {self.desc}: done, {self.done} {units} in {took}"
        units = self.unit if (self.total if self.total is not None else self.done) == 1 \
            else self.unit + "s"
        count = f"{self.done}/{self.total}" if self.total is not None else str(self.done)
        return f"qkforms: {self.desc}: {count} {units} ({took})"

    def _emit(self, finished: bool) -> None:
        s = self._settings
        if s.callback is not None:
            s.callback(self.event(finished))
        if not s.enabled:
            return
        if self._bar is not None:
            if finished:
                self._bar.close()
            return
        if finished:
            if self._last_line is not None or self.elapsed >= s.plain_after:
                self._print(finished=True)
        else:
            self._emit_plain_only()

    # -- what callers do ----------------------------------------------------------
    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        if self._closed:
            return
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        self._emit(False)

    def tick(self) -> None:
        """Redraw (the ticker calls this while a long step runs)."""
        if self._closed:
            return
        if self._bar is not None:
            self._bar.refresh()
        elif self._settings.enabled:
            self._emit_plain_only()

    def _emit_plain_only(self) -> None:
        """A plain line if one is due (the first after ``plain_after`` seconds)."""
        s = self._settings
        now = self.elapsed
        if (now >= s.plain_after if self._last_line is None
                else now - self._last_line >= s.plain_every):
            self._print(finished=False)

    def _print(self, finished: bool) -> None:
        text = self.line(finished)
        with _LOCK:
            print(text, file=self._stream(), flush=True)
        self._last_line = self.elapsed

    def close(self) -> None:
        """End the phase (idempotent)."""
        if self._closed:
            return
        self._closed = True
        _TICKER.remove(self)
        self._emit(True)

    def __enter__(self) -> Phase:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc and exc[0] is not None:  # failed: no "done" line, only close a bar
            self._closed = True
            _TICKER.remove(self)
            if self._bar is not None:
                self._bar.close()
            return
        self.close()


def _isatty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _tqdm_bar(desc: str, total: int | None, unit: str, stream: IO[str]) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is in the survey extra; plain lines instead
        return None
    return tqdm(total=total, desc=desc, unit=unit, file=stream, dynamic_ncols=True)


class _Ticker:
    """One daemon thread ticking the open phases (started with the first one)."""

    def __init__(self) -> None:
        self._phases: list[Phase] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, p: Phase) -> None:
        with self._lock:
            self._phases.append(p)
            if self._thread is None or not self._thread.is_alive():
                self._wake.clear()
                self._thread = threading.Thread(target=self._run, name="qkforms-progress",
                                                daemon=True)
                self._thread.start()

    def remove(self, p: Phase) -> None:
        with self._lock:
            if p in self._phases:
                self._phases.remove(p)
            if not self._phases:
                self._wake.set()

    def _run(self) -> None:
        while True:
            with self._lock:
                phases = list(self._phases)
                if not phases:
                    self._thread = None
                    return
            period = min(1.0, min(p._settings.plain_every for p in phases) / 2)
            if self._wake.wait(max(0.05, period)):
                with self._lock:
                    if not self._phases:
                        self._thread = None
                        return
                    self._wake.clear()
            for p in phases:
                with contextlib.suppress(Exception):  # a display problem never stops work
                    p.tick()


_TICKER = _Ticker()


def phase(desc: str, total: int | None = None, *, unit: str = "step") -> Phase:
    """Start reporting a phase; use it as a context manager and call ``update()``.

    Parameters
    ----------
    desc
        What is done, e.g. ``"survey smollm2"`` or ``"stats: family fits"``.
    total
        How many units there are (``None`` when unknown).
    unit
        The unit counted (``"layer"``, ``"fit"``, ...), singular.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with settings(stream=out, plain_after=0.0, plain_every=3600.0):
    ...     with phase("report: figures", total=2, unit="figure") as p:
    ...         p.update(2)
    >>> out.getvalue().splitlines()[0]
    'qkforms: report: figures: 0/2 figures (0.0 s)'
    >>> out.getvalue().splitlines()[-1].startswith("qkforms: report: figures: done, 2 figures")
    True
    """
    p = Phase(desc, total, unit)
    if p._settings.enabled:
        _TICKER.add(p)
    return p


def track(items: Iterable[T], desc: str, total: int | None = None, *,
          unit: str = "step") -> Iterator[T]:
    """Iterate over ``items`` reporting each one as a unit of the phase ``desc``.

    ``total`` defaults to ``len(items)`` when it has one. The phase ends when the loop
    does (not when it is left by ``break`` or an exception: then no "done" line).

    Examples
    --------
    >>> with settings(enabled=False):
    ...     list(track("abc", "letters", unit="letter"))
    ['a', 'b', 'c']
    """
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    p = phase(desc, total, unit=unit)
    ok = False
    try:
        for item in items:
            yield item
            p.update()
        ok = True
    finally:
        if ok:
            p.close()
        else:
            p.__exit__(GeneratorExit, None, None)

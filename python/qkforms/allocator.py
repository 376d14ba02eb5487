"""The memory-allocator policy of the survey's processes: freed memory is kept for reuse.

The survey allocates the same large arrays for every layer (its decoded weights, their
rescaled copies, the Gram blocks and eigenproblem matrices of each slice of heads) and
frees them when the layer is done. glibc's ``malloc`` serves a block above its mmap
threshold (128 KiB at first, rising to at most 32 MiB as such blocks are freed) by
``mmap`` and unmaps it when it is freed, trims the free top of its heap, and gives each
thread other than the main one an arena of its own that does the same; so every layer's
arrays are page-faulted and zeroed afresh: about 350,000 minor page faults and 5-12 s of
system time in a 24B-shaped survey of 20 s (``benchmarks/survey_bench.py``).
:func:`keep_freed_memory` asks glibc (``mallopt``) to serve every block from one heap
and to keep what is freed, so that the next layer's arrays reuse it (about 50,000
faults, 7x fewer; README, "Performance"). :func:`release_freed_memory` hands the free
pages back when a model is done, so a survey of several models holds no more than its
largest one needs.

It changes the whole process, so qkforms sets it only in processes of its own -- the
``qkforms survey`` command (and the statistics process it forks at its start, which
inherits it) and the survey's worker processes -- never on import: a library must not
change its host program's allocator. The cost is memory the process holds after use:
its peak resident size rises by the fragmentation of the one heap (measured: about
50 MiB on the 24B-shaped survey). With one arena the threads share one lock for their
allocations; that was measured on 2 cores only (the survey's large arrays are few per
layer). Elsewhere than on glibc it does nothing, and a ``malloc`` replaced through
``LD_PRELOAD`` (jemalloc, ...) ignores it.

Examples
--------
>>> from qkforms.allocator import POLICY
>>> [value for _, value in POLICY]
[1, 0, 2147483647]
"""

from __future__ import annotations

import ctypes
import platform

__all__ = ["POLICY", "keep_freed_memory", "release_freed_memory"]

# mallopt parameters of glibc's <malloc.h>
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8

#: the settings: one arena (threads share the main heap), no block served by mmap (so
#: none is unmapped when freed), the heap's top trimmed only beyond 2 GiB - 1 free bytes
POLICY: tuple[tuple[int, int], ...] = (
    (_M_ARENA_MAX, 1),
    (_M_MMAP_MAX, 0),
    (_M_TRIM_THRESHOLD, 2**31 - 1),
)


def _glibc() -> ctypes.CDLL | None:
    """The C library of this process when it is glibc, else None."""
    if platform.libc_ver()[0] != "glibc":
        return None
    return ctypes.CDLL(None)


def keep_freed_memory() -> bool:
    """Make glibc keep freed memory for reuse in this process (see the module docstring).

    Call it early, before the threads that allocate start (a thread keeps the arena it
    first allocated from).

    Returns
    -------
    bool
        True when glibc took every setting; False when this is not glibc (nothing done)
        or a setting was refused (the others are still tried).
    """
    libc = _glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    took = [mallopt(param, value) == 1 for param, value in POLICY]
    return all(took)


def release_freed_memory() -> bool:
    """Return the free pages of the heap to the kernel (glibc ``malloc_trim(0)``).

    Harmless with or without :func:`keep_freed_memory`: memory in use is untouched.

    Returns
    -------
    bool
        True when some memory was released; False when none was, or not on glibc.

    Examples
    --------
    >>> import numpy as np
    >>> from qkforms.allocator import release_freed_memory
    >>> a = np.arange(3.0)
    >>> released = release_freed_memory()     # after a model: free pages go back
    >>> a.tolist()                            # memory in use is untouched
    [0.0, 1.0, 2.0]
    """
    libc = _glibc()
    if libc is None:
        return False
    trim = libc.malloc_trim
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return bool(trim(0))

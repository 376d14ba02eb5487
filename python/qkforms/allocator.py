"""The memory-allocator policy of the survey's processes: freed memory is kept for reuse.

The survey allocates the same large arrays for every layer (its decoded weights, their
rescaled copies, the Gram blocks and eigenproblem matrices of each slice of heads) and
frees them when the layer is done. glibc's ``malloc`` hands blocks of more than a few
MiB back to the kernel as they are freed (``munmap``, heap trimming), and blocks of
threads other than the main one live in per-thread arenas that do the same, so every
layer's arrays are page-faulted and zeroed afresh: about 350,000 minor page faults and
5-12 s of system time in a 24B-shaped survey of 20 s (``benchmarks/survey_bench.py``).
:func:`keep_freed_memory` asks glibc (``mallopt``) to serve every block from one heap
and to keep what is freed, so that the next layer's arrays reuse it (about 50,000
faults; README, "Performance").

It changes the whole process, so qkforms calls it only in processes of its own -- the
``qkforms survey`` command and the survey's worker processes -- never on import: a
library must not change its host program's allocator. The cost is memory the process
holds after use: its peak resident size rises by the fragmentation of the one heap
(measured: about 80 MiB on the 24B-shaped survey). Elsewhere than on glibc it does
nothing.

Examples
--------
>>> from qkforms.allocator import keep_freed_memory
>>> callable(keep_freed_memory)
True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

__all__ = ["keep_freed_memory"]

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


def keep_freed_memory() -> bool:
    """Make glibc keep freed memory for reuse in this process (see the module docstring).

    Call it early, before the threads that allocate start (a thread keeps the arena it
    first allocated from).

    Returns
    -------
    bool
        True when glibc took every setting; False when this is not glibc (nothing done).
    """
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # pragma: no cover - glibc always has mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return all(mallopt(param, value) == 1 for param, value in POLICY)

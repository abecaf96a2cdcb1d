"""Memory for the runtime's arrays: small pages, and freed blocks kept for reuse.

numpy asks Linux for transparent huge pages (madvise(MADV_HUGEPAGE)) on every
allocation of 4 MB or more. The runtime allocates and frees such arrays all the
time (sorted batches, join output, merged trace segments), and with the kernel's
usual `defrag=madvise` setting a fault in a madvised region compacts memory on
the spot to find a free 2 MB page. On this project's benchmark machine that made a
fresh 400 MB array cost 0.7-0.8 s to fill instead of 0.15 s, and the 3.55M-row TC
batch spent 3.6 s of system time (6.7 s wall) instead of 1.6 s (5.2 s wall). The
TLB misses huge pages save are small beside that for arrays touched once or twice,
which is why databases (Redis, MongoDB, Oracle) also ask for THP to be off.

glibc's malloc serves every block above its mmap threshold (at most 32 MB) with a
fresh mapping and unmaps it when freed, so each such array -- a round's join output,
a sort's buffers, a batch of millions of updates -- is faulted in page by page
again, at ~3 us a page here and more the more memory the process holds. Told not to
map blocks of their own and not to give freed memory back below 2 GB at the top of
its heap, glibc serves them from memory the process already touched: tc-5k's batch
(15.9M answer rows) 12.95 -> 9.38 s with 2.65M -> 1.39M page faults and peak RSS
+1.4%, tc-2k's 2.47-2.58 -> 2.13-2.19 s for +14% peak RSS. The cost: freed memory goes
back to the system only when more than 2 GB of it lies free at the top of the heap, so a
process stays near its peak size after a large answer.

Both are settings of the whole process. A user who has chosen -- NUMPY_MADVISE_HUGEPAGE,
or glibc's MALLOC_MMAP_MAX_, MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES -- is left alone;
so is any C library but glibc.

A trace's blocks of 16 MB or more (runtime.trace.spine) are `address_space`: room for as
many updates as the machine has memory for, of which only the pages written take memory,
so a store never grows again. A store that grows copies what it holds into fresh pages,
and on this project's benchmark machine (a virtual machine) a fresh page cost 2-11 us:
tc-5k's 1% update spent 3.2 s copying 28.9M updates into a grown store.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys


try:
    from numpy._core.multiarray import _get_madvise_hugepage as _madvise_hugepage
    from numpy._core.multiarray import _set_madvise_hugepage
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import _get_madvise_hugepage as _madvise_hugepage
    from numpy.core.multiarray import _set_madvise_hugepage

import numpy as np


def use_small_pages() -> None:
    """Stop numpy from madvising huge pages, unless the environment chose."""
    if "NUMPY_MADVISE_HUGEPAGE" not in os.environ:
        _set_madvise_hugepage(False)


_M_TRIM_THRESHOLD = -1  # mallopt's parameters (malloc.h)
_M_MMAP_MAX = -4
_ALLOCATOR_SETTINGS = ("MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


def keep_freed_memory() -> None:
    """Have glibc's malloc reuse freed memory instead of mapping fresh pages, unless the
    environment chose."""
    if any(name in os.environ for name in _ALLOCATOR_SETTINGS):
        return
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # glibc's alone
    except (OSError, AttributeError, TypeError):  # where the process's own symbols cannot be opened (Windows)
        return
    libc.mallopt(_M_MMAP_MAX, 0)
    libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)


_MAP_NORESERVE = 0x4000  # Linux's mmap flag (not in Python's mmap module before 3.13)


def physical_memory() -> int:
    """The machine's memory in bytes (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def address_space(rows: int, capacity: int) -> np.ndarray | None:
    """An uninitialised C-ordered (rows, capacity) int64 array over a private anonymous mapping
    that reserves no memory: a page takes memory when first written. None where the system
    will not map it (then the caller allocates as usual)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        mapping = mmap.mmap(-1, rows * capacity * 8, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
    except (OSError, ValueError, OverflowError):
        return None
    return np.frombuffer(mapping, np.int64).reshape(rows, capacity)

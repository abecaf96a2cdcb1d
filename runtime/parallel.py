"""Two cores: a large kernel call split in two halves that run on two threads at once,
and large trace inserts done on the second core while the first goes on.

Kernels release the GIL (runtime.jit), so two calls over disjoint halves of
one input -- keys split where the key changes, so no key straddles the
halves -- run on both of the machine's cores. Only large inputs are split:
starting a thread's share costs tens of microseconds, which a small batch
would not earn back, and small batches are what single updates are made of.
A half is never split again (there are two cores, and one thread to lend).

The pool has two threads, so that a half handed over while a trace insert
runs starts at once (sharing the cores for a while) instead of queueing behind
it and leaving this thread to wait: tc-2k's batch 3.5-4.0 -> 3.0-3.2 s against
one thread. A half that no thread has taken when the first half is done is
done by the thread that split the call, so nothing waits for work queued behind
other work, and the pool's own threads split work too (a trace insert's large
merges: runtime.trace.spine).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

SPLIT = 100_000  # inputs from this many columns on are split
_WORKERS = min(2, os.cpu_count() or 1)
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="deltalog-core") if _WORKERS > 1 else None
_halves = threading.local()  # .active: this thread is running a half


def split_point(key: np.ndarray, smallest: int | None = None) -> int | None:
    """Where to split the columns of sorted `key` (k, n) in two halves without splitting a key,
    or None when the input is too small to be worth two threads (under `smallest` columns,
    SPLIT unless given) or there is one core."""
    n = key.shape[1]
    if n < (SPLIT if smallest is None else smallest) or not splittable():
        return None
    mid = n // 2
    if key.shape[0] == 0:
        return None  # one key: nothing to split
    window = key[:, mid:]
    changed = np.flatnonzero(np.any(window != key[:, mid - 1 : mid], axis=0))
    return mid + int(changed[0]) if len(changed) else None


def both(first, second):
    """first() here and second() on the other core; both results."""

    def half(fn):
        _halves.active = True
        try:
            return fn()
        finally:
            _halves.active = False

    later = _pool.submit(half, second)
    done = half(first)
    if later.cancel():  # no thread has taken it (both are busy): done here rather than waited for
        return done, half(second)
    return done, later.result()


def splittable() -> bool:
    """A second core is there to take half of a call made from this thread."""
    return _pool is not None and not getattr(_halves, "active", False)


_outstanding: list = []  # futures of work handed over by in_background, not yet waited for here


def in_background(fn):
    """Start fn() on the other core; its future, or None when there is one core (the caller
    then does the work itself)."""
    if _pool is None:
        return None
    future = _pool.submit(fn)
    _outstanding.append(future)
    return future


def finish_background() -> None:
    """Wait for all the work handed over by in_background (its errors are raised here)."""
    while _outstanding:
        _outstanding.pop().result()

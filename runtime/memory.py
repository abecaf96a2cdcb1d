"""Memory for the runtime's arrays: small pages, not transparent huge pages.

numpy asks Linux for transparent huge pages (madvise(MADV_HUGEPAGE)) on every
allocation of 4 MB or more. The runtime allocates and frees such arrays all the
time (sorted batches, join output, merged trace segments), and with the kernel's
usual `defrag=madvise` setting a fault in a madvised region compacts memory on
the spot to find a free 2 MB page. On this project's benchmark machine that made a
fresh 400 MB array cost 0.7-0.8 s to fill instead of 0.15 s, and the 3.55M-row TC
batch spent 3.6 s of system time (6.7 s wall) instead of 1.6 s (5.2 s wall). The
TLB misses huge pages save are small beside that for arrays touched once or twice,
which is why databases (Redis, MongoDB, Oracle) also ask for THP to be off.

A user who sets NUMPY_MADVISE_HUGEPAGE has chosen: the runtime leaves it alone.
"""

from __future__ import annotations

import os


try:
    from numpy._core.multiarray import _get_madvise_hugepage as _madvise_hugepage
    from numpy._core.multiarray import _set_madvise_hugepage
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import _get_madvise_hugepage as _madvise_hugepage
    from numpy.core.multiarray import _set_madvise_hugepage


def use_small_pages() -> None:
    """Stop numpy from madvising huge pages, unless the environment chose."""
    if "NUMPY_MADVISE_HUGEPAGE" not in os.environ:
        _set_madvise_hugepage(False)

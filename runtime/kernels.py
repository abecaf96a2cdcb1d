"""Compiled kernels for arranged data: hashing, sorting, merging, lookups.

Arranging, merging and probing batches are per-row loops with data-dependent
control flow; done with numpy they take a dozen calls each, which dominates when
a handful of keys changed. Each kernel here does its work in one compiled pass
(numba, cached on disk). Layout "A" signatures accept any strides, so one
compiled specialisation serves C- and F-ordered blocks alike.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types as nt

# Any layout: numpy's fancy indexing yields both C- and F-ordered blocks, and one
# compiled specialisation (cached on disk) serves them all.
V = nt.Array(nt.int64, 1, "A")
M = nt.Array(nt.int64, 2, "A")
I = nt.int64


@numba.njit(cache=True, nogil=True)
def same_columns(a, i, b, j):
    """Column i of a equals column j of b."""
    for r in range(a.shape[0]):
        if a[r, i] != b[r, j]:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def _seek(keyhash, h, lo):
    """The first position of hash h in sorted `keyhash`, searching from `lo`.

    Probes usually come sorted: gallop forward from the last position.
    """
    n = keyhash.shape[0]
    if lo < n and keyhash[lo] < h:
        step = 1
        while lo + step < n and keyhash[lo + step] < h:
            lo += step
            step *= 2
        return lo + np.searchsorted(keyhash[lo:min(lo + step + 1, n)], h)
    if lo > 0 and keyhash[lo - 1] >= h:
        return np.searchsorted(keyhash[:lo], h)
    return lo


@numba.njit([(V, M, V, M)], cache=True, nogil=True)
def lookup_positions(keyhash, key, probe_hash, probe_key):
    """(probe index, batch position) for every batch update whose key equals a probe's."""
    n = keyhash.shape[0]
    cap = max(16, probe_hash.shape[0])
    owner = np.empty(cap, np.int64)
    pos = np.empty(cap, np.int64)
    m = 0
    lo = 0
    for i in range(probe_hash.shape[0]):
        h = probe_hash[i]
        lo = _seek(keyhash, h, lo)
        j = lo
        while j < n and keyhash[j] == h:
            if same_columns(key, j, probe_key, i):
                if m == cap:
                    cap *= 2
                    owner = np.concatenate((owner, np.empty(cap - m, np.int64)))
                    pos = np.concatenate((pos, np.empty(cap - m, np.int64)))
                owner[m] = i
                pos[m] = j
                m += 1
            j += 1
    return owner[:m], pos[:m]


@numba.njit([(V, M, M, M, V, V, M, V, M, M, V, I)], cache=True, nogil=True)
def lookup_into(keyhash, key, val, time, diff, probe_hash, probe_key, out_owner, out_val, out_time, out_diff, at):
    """`lookup_positions`, with the matching updates' probe, value, time and diff
    written into the out_* arrays from column `at` on.

    Returns the end of what was written, or minus the end it would need when
    the out_* arrays are too small (then what was written is garbage). The
    caller owns the output arrays: returning fresh arrays would cost more to
    hand back to Python (a few microseconds each) than a small lookup costs.
    """
    n = keyhash.shape[0]
    room = out_diff.shape[0]
    m = at
    lo = 0
    for i in range(probe_hash.shape[0]):
        h = probe_hash[i]
        lo = _seek(keyhash, h, lo)
        j = lo
        while j < n and keyhash[j] == h:
            if same_columns(key, j, probe_key, i):
                if m < room:
                    out_owner[m] = i
                    for c in range(val.shape[0]):
                        out_val[c, m] = val[c, j]
                    for c in range(time.shape[0]):
                        out_time[c, m] = time[c, j]
                    out_diff[m] = diff[j]
                m += 1
            j += 1
    return m if m <= room else -m


# -- sorting and consolidation of arranged batches -------------------------------
#
# An arranged batch is ordered by (keyhash, key columns, value columns); within
# a run of equal (key, value) its times are sorted and distinct. Ordering the
# runs ignores time, so advancing times (compaction) never disturbs it: merging
# two batches is a linear merge of runs plus a per-run consolidation.


@numba.njit(cache=True, nogil=True)
def _less(cols, i, j):
    """Row i of cols < row j lexicographically (cols is (c, n))."""
    for r in range(cols.shape[0]):
        a = cols[r, i]
        b = cols[r, j]
        if a != b:
            return a < b
    return False


@numba.njit(cache=True, nogil=True)
def _merge_runs(order, buffer, lo, mid, hi, first, rows):
    """Merge the sorted runs order[lo:mid] and order[mid:hi] in place (stable).

    Order by `first`, then the rows of `rows`; an empty `first` orders by rows alone.
    """
    by_first = first.shape[0] > 0
    i, j, k = lo, mid, lo
    while i < mid and j < hi:
        a = order[i]
        b = order[j]
        if by_first and first[b] != first[a]:
            b_first = first[b] < first[a]
        else:
            b_first = _less(rows, b, a)
        if b_first:
            buffer[k] = b
            j += 1
        else:
            buffer[k] = a
            i += 1
        k += 1
    while i < mid:
        buffer[k] = order[i]
        i += 1
        k += 1
    while j < hi:
        buffer[k] = order[j]
        j += 1
        k += 1
    order[lo:hi] = buffer[lo:hi]


@numba.njit(cache=True, nogil=True)
def _sort_range(order, lo, hi, cols, buffer):
    """Stable sort of order[lo:hi] by the rows of `cols` (insertion, then bottom-up merges)."""
    width = 16
    for start in range(lo, hi, width):
        end = min(start + width, hi)
        for i in range(start + 1, end):
            x = order[i]
            j = i - 1
            while j >= start and _less(cols, x, order[j]):
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = x
    if width < hi - lo:
        no_first = np.empty(0, np.int64)
    while width < hi - lo:
        for left in range(lo, hi, 2 * width):
            _merge_runs(order, buffer, left, min(left + width, hi), min(left + 2 * width, hi), no_first, cols)
        width *= 2


@numba.njit([(V,)], cache=True, nogil=True)
def radix_argsort(a):
    """Stable argsort of int64 values: LSD radix sort, 11 bits a pass.

    Passes over digits on which every value agrees are skipped, so small
    integer keys (node ids) take two or three passes; a full 64-bit hash six.
    Several times faster than a comparison sort on millions of rows.
    """
    n = a.shape[0]
    order = np.arange(n)
    if n < 2:
        return order
    bias = np.uint64(1) << np.uint64(63)  # signed order as unsigned
    keys = np.empty(n, np.uint64)
    for i in range(n):
        keys[i] = np.uint64(a[i]) ^ bias
    varying = np.uint64(0)
    for i in range(n):
        varying |= keys[i] ^ keys[0]
    tmp_order = np.empty(n, np.int64)
    tmp_keys = np.empty(n, np.uint64)
    mask = np.uint64(0x7FF)
    for shift in range(0, 64, 11):
        sh = np.uint64(shift)
        if (varying >> sh) & mask == 0:
            continue
        counts = np.zeros(2049, np.int64)
        for i in range(n):
            counts[np.int64((keys[i] >> sh) & mask) + 1] += 1
        for b in range(2048):
            counts[b + 1] += counts[b]
        for i in range(n):
            digit = np.int64((keys[i] >> sh) & mask)
            at = counts[digit]
            counts[digit] = at + 1
            tmp_order[at] = order[i]
            tmp_keys[at] = keys[i]
        order, tmp_order = tmp_order, order
        keys, tmp_keys = tmp_keys, keys
    return order


def radix_lexsort(keys) -> np.ndarray:
    """`np.lexsort(keys)` for int64 keys (the last is the primary), by stable radix passes.

    One radix pass per key, least significant first: several times faster than
    numpy's comparison-based lexsort on millions of rows.
    """
    order = radix_argsort(np.ascontiguousarray(keys[0], dtype=np.int64))
    for key in keys[1:]:
        order = order[radix_argsort(np.ascontiguousarray(key, dtype=np.int64)[order])]
    return order


@numba.njit(cache=True, nogil=True)
def _sorted_prefix(first, rows, start):
    """The end of the sorted run of (first, rows) columns that begins at `start`."""
    for i in range(start + 1, first.shape[0]):
        if first[i] < first[i - 1] or (first[i] == first[i - 1] and _less(rows, i, i - 1)):
            return i
    return first.shape[0]


_MERGE_RUNS = 8  # more sorted runs than this: radix sort instead


@numba.njit([(V, M)], cache=True, nogil=True)
def sort_rows(first, rows):
    """Permutation sorting by `first`, then each row of `rows` in order (stable).

    Input made of a few sorted runs (an arranged batch, or such batches one
    after the other) is merged run by run in linear passes instead.
    """
    n = first.shape[0]
    bounds = [0]
    while bounds[-1] < n and len(bounds) <= _MERGE_RUNS:
        bounds.append(_sorted_prefix(first, rows, bounds[-1]))
    if bounds[-1] == n:
        order = np.arange(n)
        buffer = np.empty(n, np.int64)
        while len(bounds) > 2:
            merged = [0]
            for r in range(0, len(bounds) - 2, 2):
                _merge_runs(order, buffer, bounds[r], bounds[r + 1], bounds[r + 2], first, rows)
                merged.append(bounds[r + 2])
            if len(bounds) % 2 == 0:  # an odd run count: the last run waits
                merged.append(bounds[-1])
            bounds = merged
        return order
    order = radix_argsort(first)
    if rows.shape[0]:
        buffer = np.empty(n, np.int64)
        i = 0
        while i < n:
            j = i + 1
            while j < n and first[order[j]] == first[order[i]]:
                j += 1
            if j - i > 1:
                _sort_range(order, i, j, rows, buffer)
            i = j
    return order


@numba.njit(cache=True, nogil=True)
def _consolidate_runs(keyhash, cols, time, diff, order):
    """Walk `order` (sorted by keyhash, cols); within each run sort times, sum, drop zeros.

    Returns (positions, summed diffs) in arranged order.
    """
    n = order.shape[0]
    out_pos = np.empty(n, np.int64)
    out_diff = np.empty(n, np.int64)
    buffer = np.empty(n, np.int64)
    m = 0
    i = 0
    while i < n:
        j = i + 1
        while j < n and keyhash[order[j]] == keyhash[order[i]] and same_columns(cols, order[i], cols, order[j]):
            j += 1
        if j - i > 1:
            _sort_range(order, i, j, time, buffer)
        k = i
        while k < j:
            total = diff[order[k]]
            q = k + 1
            while q < j and same_columns(time, order[k], time, order[q]):
                total += diff[order[q]]
                q += 1
            if total != 0:
                out_pos[m] = order[k]
                out_diff[m] = total
                m += 1
            k = q
        i = j
    return out_pos[:m], out_diff[:m]


@numba.njit([(V, M)], cache=True, nogil=True)
def dense_rows(first, rows):
    """Number the distinct (first, rows) columns 0, 1, ... in sorted order.

    Returns (ids, representatives): ids[i] is column i's number and column
    representatives[j] is the first (in input order) with number j.
    """
    n = first.shape[0]
    order = sort_rows(first, rows)
    ids = np.empty(n, np.int64)
    reps = np.empty(n, np.int64)
    m = -1
    for k in range(n):
        i = order[k]
        if k == 0 or first[i] != first[order[k - 1]] or not same_columns(rows, i, rows, order[k - 1]):
            m += 1
            reps[m] = i
        ids[i] = m
    return ids, reps[:m + 1]


@numba.njit([(M, M)], cache=True, nogil=True)
def in_advance_product(frontier, times):
    """For each column of `times`: is some column of `frontier` <= it in every coordinate?"""
    n = times.shape[1]
    out = np.zeros(n, np.bool_)
    for i in range(n):
        for f in range(frontier.shape[1]):
            below = True
            for k in range(times.shape[0]):
                if frontier[k, f] > times[k, i]:
                    below = False
                    break
            if below:
                out[i] = True
                break
    return out


@numba.njit([(V, M, M, V)], cache=True, nogil=True)
def arrange_order(keyhash, cols, time, diff):
    """Sort updates into arranged order and consolidate: (positions, diffs)."""
    return _consolidate_runs(keyhash, cols, time, diff, sort_rows(keyhash, cols))


@numba.njit([(V, M, M, V, I)], cache=True, nogil=True)
def merge_order(keyhash, cols, time, diff, split):
    """Like `arrange_order` for the concatenation of two arranged batches [0, split) and [split, n)."""
    n = keyhash.shape[0]
    order = np.empty(n, np.int64)
    i, j, k = 0, split, 0
    while i < split and j < n:
        if keyhash[j] < keyhash[i] or (keyhash[j] == keyhash[i] and _less(cols, j, i)):
            order[k] = j
            j += 1
        else:
            order[k] = i
            i += 1
        k += 1
    while i < split:
        order[k] = i
        i += 1
        k += 1
    while j < n:
        order[k] = j
        j += 1
        k += 1
    return _consolidate_runs(keyhash, cols, time, diff, order)


@numba.njit([(M, M)], cache=True, nogil=True)
def advance_product(times, since):
    """advance_by(t, since) under the product order: per coordinate, min over f of max(t, f)."""
    if since.shape[1] == 0:
        return times
    out = np.empty(times.shape, np.int64)
    for i in range(times.shape[1]):
        for k in range(times.shape[0]):
            best = np.iinfo(np.int64).max
            for f in range(since.shape[1]):
                best = min(best, max(times[k, i], since[k, f]))
            out[k, i] = best
    return out


@numba.njit([(V, M, M, M, V, V, M, M, M, V, M)], cache=True, nogil=True)
def merge_arranged(kh_a, key_a, val_a, time_a, diff_a, kh_b, key_b, val_b, time_b, diff_b, since):
    """Two arranged batches merged into one, times advanced by `since` (product order).

    Returns the merged batch's (keyhash, key, val, time, diff).
    """
    keyhash = np.concatenate((kh_a, kh_b))
    key = np.concatenate((key_a, key_b), axis=1)
    val = np.concatenate((val_a, val_b), axis=1)
    time = advance_product(np.concatenate((time_a, time_b), axis=1), since)
    diff = np.concatenate((diff_a, diff_b))
    pos, summed = merge_order(keyhash, np.concatenate((key, val), axis=0), time, diff, kh_a.shape[0])
    return keyhash[pos], key[:, pos], val[:, pos], time[:, pos], summed


@numba.njit([(M,)], cache=True, nogil=True)
def hash_columns(block):
    """A 64-bit mix of each column of a (k, n) block (splitmix64 finaliser per word)."""
    n = block.shape[1]
    out = np.empty(n, np.int64)
    for i in range(n):
        h = np.uint64(0x2545F4914F6CDD1D)
        for r in range(block.shape[0]):
            h = (h ^ np.uint64(block[r, i])) * np.uint64(0x9E3779B97F4A7C15)
            h ^= h >> np.uint64(31)
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
        out[i] = np.int64(h)
    return out


@numba.njit([(M,)], cache=True, nogil=True)
def minimal_pairs(times):
    """The minimal antichain of (1, n) or (2, n) times under the product order.

    A staircase peeled one step a pass: the least x (with its least y) is
    minimal; the next minimal time is the least x among times with smaller y.
    Cost: n times the antichain's size, which is small (iterations in flight).
    """
    d, n = times.shape
    if n == 0:
        return times[:, :0].copy()
    if d == 1:
        out = np.empty((1, 1), np.int64)
        out[0, 0] = times[0].min()
        return out
    big = np.iinfo(np.int64).max
    out = np.empty((2, 8), np.int64)
    m = 0
    bound = big
    while True:
        bx = big
        by = big
        found = False
        for i in range(n):
            y = times[1, i]
            if y < bound:
                x = times[0, i]
                if not found or x < bx or (x == bx and y < by):
                    bx = x
                    by = y
                    found = True
        if not found:
            break
        if m == out.shape[1]:
            out = np.concatenate((out, np.empty((2, m), np.int64)), axis=1)
        out[0, m] = bx
        out[1, m] = by
        m += 1
        bound = by
    return out[:, :m].copy()

"""Compiled kernels for arranged data: hashing, sorting, merging, lookups.

Arranging, merging and probing batches are per-row loops with data-dependent
control flow; done with numpy they take a dozen calls each, which dominates when
a handful of keys changed. Each kernel here does its work in one compiled pass
(a `runtime.jit` kernel: compiled at first call, cached on disk). Layout "A"
signatures accept any strides, so one compiled specialisation serves C- and
F-ordered blocks alike.
"""

from __future__ import annotations

import numpy as np
from numba import types as nt

from runtime.jit import borrowed, helper, kernel

# Any layout: numpy's fancy indexing yields both C- and F-ordered blocks, and one
# compiled specialisation (cached on disk) serves them all.
V = nt.Array(nt.int64, 1, "A")
M = nt.Array(nt.int64, 2, "A")
I = nt.int64


@helper
def same_columns(a, i, b, j):
    """Column i of a equals column j of b."""
    for r in range(a.shape[0]):
        if a[r, i] != b[r, j]:
            return False
    return True


@helper
def _column_less(a, i, b, j):
    """Column i of a < column j of b, compared row by row (lexicographically)."""
    for r in range(a.shape[0]):
        if a[r, i] != b[r, j]:
            return a[r, i] < b[r, j]
    return False


@kernel(V, I)
def grown_row(row, size):
    """A row with room for at least `size` entries, contents kept (a loop: numba's
    concatenate and slice assignment cost a first run more to compile). A kernel, as
    grown_block: a helper would be compiled again for a size numba types as a constant."""
    more = np.empty(max(size, 2 * row.shape[0]), np.int64)
    for c in range(row.shape[0]):
        more[c] = row[c]
    return more


@kernel(M, I)
def grown_block(block, size):
    """A (r, room) block with room for at least `size` columns, contents kept."""
    more = np.empty((block.shape[0], max(size, 2 * block.shape[1])), np.int64)
    for r in range(block.shape[0]):
        for c in range(block.shape[1]):
            more[r, c] = block[r, c]
    return more


@helper
def _before(lead, key, j, h, probe_key, i):
    """Update j's key sorts before probe i's: (lead, key columns) compared in order."""
    if lead[j] != h:
        return lead[j] < h
    return _column_less(key, j, probe_key, i)


@helper
def _seek(lead, key, probe_lead, probe_key, i, lo):
    """The first position whose key is not before probe i's, searching from `lo`.

    Probes usually come sorted: gallop forward from the last position; a probe
    before it is found by binary search of the prefix.
    """
    n = lead.shape[0]
    h = probe_lead[i]
    if lo < n and _before(lead, key, lo, h, probe_key, i):
        step = 1
        while lo + step < n and _before(lead, key, lo + step, h, probe_key, i):
            lo += step
            step *= 2
        lo, hi = lo + 1, min(lo + step, n)
    elif lo > 0 and not _before(lead, key, lo - 1, h, probe_key, i):
        lo, hi = 0, lo - 1
    else:
        return lo
    while lo < hi:
        mid = (lo + hi) >> 1
        if _before(lead, key, mid, h, probe_key, i):
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(V, M, V, M)
def lookup_positions(lead, key, probe_lead, probe_key):
    """(probe index, batch position) for every batch update whose key equals a probe's."""
    lead, key, probe_lead, probe_key = borrowed(lead), borrowed(key), borrowed(probe_lead), borrowed(probe_key)
    n = lead.shape[0]
    owner = np.empty(max(16, probe_lead.shape[0]), np.int64)
    pos = np.empty(owner.shape[0], np.int64)
    m = 0
    lo = np.int64(0)  # not the literal 0: a helper called with it would be compiled for it too
    for i in range(probe_lead.shape[0]):
        lo = _seek(lead, key, probe_lead, probe_key, i, lo)
        j = lo
        while j < n and lead[j] == probe_lead[i] and same_columns(key, j, probe_key, i):
            if m == owner.shape[0]:
                owner, pos = grown_row(owner, m + 1), grown_row(pos, m + 1)
            owner[m] = i
            pos[m] = j
            m += 1
            j += 1
    return owner[:m], pos[:m]


# -- sorting and consolidation of arranged batches -------------------------------
#
# An arranged batch is ordered by (lead, key columns, value columns); within
# a run of equal (key, value) its times are sorted and distinct. Ordering the
# runs ignores time, so advancing times (compaction) never disturbs it: merging
# two batches is a linear merge of runs plus a per-run consolidation.


@helper
def _less(cols, i, j):
    """Row i of cols < row j lexicographically (cols is (c, n))."""
    return _column_less(cols, i, cols, j)


@helper
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
    for i in range(lo, hi):  # a loop: a slice assignment compiles numba's shape-error formatting (a second)
        order[i] = buffer[i]


@helper
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


_INSERTION = 24  # rows up to which an insertion sort beats radix passes' bucket counts
_DIGIT = 11  # bits per radix pass at most (2,048 buckets)
_DIGIT_WIDE = 9  # ... and from _WIDE_FROM rows on (see _radix_passes)
_WIDE_FROM = 1 << 17  # alternating tests: narrower digits paid from 300k rows on, not at 100k


@helper
def _span(col):
    """(minimum, bits needed for col - minimum) of a non-empty column: those of its range,
    found in one pass (the highest bit any col - minimum sets is max - min's)."""
    least = col[0]
    most = col[0]
    for i in range(1, col.shape[0]):
        v = col[i]
        least = min(least, v)
        most = max(most, v)
    varying = np.uint64(most) - np.uint64(least)  # exact: the range fits in 64 bits
    bits = 0
    while bits < 64 and (varying >> np.uint64(bits)) != 0:
        bits += 1
    return least, bits


@helper
def _radix_passes(keys, order, bits):
    """Sort `keys` (uint64, below 2**bits) stably, carrying `order` along: LSD
    counting passes of up to 11 bits, and from _WIDE_FROM rows on one more pass where
    that leaves more than _DIGIT_WIDE bits a pass (a pass scatters into as many places
    as its digit has values, and 2,048 of them, twice over for keys and `order`, miss
    the caches). 2M rows: 22-bit keys 27.6 -> 22.2 ns a row in three passes rather than
    two, 32-bit 29.3 -> 22.8 in four rather than three; 26-bit ones keep three passes of
    9 bits (20.5 ns; four passes: 25.9). Returns (keys, order)."""
    n = keys.shape[0]
    if bits == 0:
        return keys, order
    passes = (bits + _DIGIT - 1) // _DIGIT
    if n >= _WIDE_FROM and (bits + passes - 1) // passes > _DIGIT_WIDE:
        passes += 1
    width = (bits + passes - 1) // passes
    mask = np.uint64((1 << width) - 1)
    counts = np.empty((1 << width) + 1, np.int64)
    spare_keys = np.empty(n, np.uint64)
    spare = np.empty(n, np.int64)
    for p in range(passes):
        shift = np.uint64(p * width)
        counts[:] = 0
        for i in range(n):
            counts[np.int64((keys[i] >> shift) & mask) + 1] += 1
        for b in range(1 << width):
            counts[b + 1] += counts[b]
        for i in range(n):
            digit = np.int64((keys[i] >> shift) & mask)
            at = counts[digit]
            counts[digit] = at + 1
            spare[at] = order[i]
            spare_keys[at] = keys[i]
        order, spare = spare, order
        keys, spare_keys = spare_keys, keys
    return keys, order


@helper
def _lex_less(first, rows, time, i, j):
    """Row i < row j in (first, rows, time) order; an empty `first` is left out."""
    if first.shape[0] and first[i] != first[j]:
        return first[i] < first[j]
    for r in range(rows.shape[0]):
        if rows[r, i] != rows[r, j]:
            return rows[r, i] < rows[r, j]
    for r in range(time.shape[0]):
        if time[r, i] != time[r, j]:
            return time[r, i] < time[r, j]
    return False


@helper
def _first_is_lead(first, rows):
    """`first` is given and equals rows[0]: an arrangement's leading key column, no sort key of its own."""
    if not first.shape[0] or not rows.shape[0]:
        return False
    for i in range(first.shape[0]):
        if first[i] != rows[0, i]:
            return False
    return True


@helper
def _identity(n):
    """0, 1, ..., n - 1 (np.arange, compiled by numba, costs a first run more)."""
    order = np.empty(n, np.int64)
    for i in range(n):
        order[i] = i
    return order


@kernel(V, M, M, I)
def _sort_column(first, rows, time, c):
    """Sort column c, least significant first: time rows from the last, then rows
    from the last, then `first`. (A kernel: its callers pass arrays of either
    layout, and a helper would be compiled for each.)"""
    if c < time.shape[0]:
        return time[time.shape[0] - 1 - c]
    c -= time.shape[0]
    if c < rows.shape[0]:
        return rows[rows.shape[0] - 1 - c]
    return first


@helper
def _unfold(keys, col, least, shift, width):
    """Column values back from the `width` bits at `shift` of packed keys."""
    # Shifts by 64 are undefined (x86 takes them as shifts by 0), so neither a full-width
    # column's mask nor a constant column sitting at bit 64 may be computed by one.
    if width == 0:  # a constant column: its minimum
        mask, sh = np.uint64(0), np.uint64(0)
    elif width >= 64:
        mask, sh = ~np.uint64(0), np.uint64(0)
    else:
        mask, sh = (np.uint64(1) << np.uint64(width)) - np.uint64(1), np.uint64(shift)
    base = np.uint64(least)
    for i in range(keys.shape[0]):
        col[i] = np.int64(((keys[i] >> sh) & mask) + base)


@helper
def _sorted_keys(first, rows, time, use_first, payload):
    """(fits, keys, payload, least, bits): when the sort columns' ranges fit in 64
    bits together, their packed keys (the primary in the top bits) sorted by radix
    passes, with `payload` (one value per row: the identity permutation, or the
    diffs themselves, which then need no gather afterwards) carried into the same
    order; and each sort column's minimum and bit width (see `_sort_column`). One
    helper, not one per step: each compiled helper costs a first run a fixed part of
    a second."""
    n = max(first.shape[0], rows.shape[1], time.shape[1])
    order = payload
    count = time.shape[0] + rows.shape[0] + (1 if use_first else 0)
    least = np.empty(count, np.int64)
    bits = np.empty(count, np.int64)
    total = np.int64(0)  # not the literal 0: _radix_passes would be compiled for it too
    for c in range(count):
        least[c], bits[c] = _span(_sort_column(first, rows, time, c))
        total += bits[c]
    if total > 64:
        return False, np.empty(0, np.uint64), order, least, bits
    keys = np.zeros(n, np.uint64)
    shift = 0
    for c in range(count):
        if shift < 64:  # a constant column after 64 bits of others adds nothing (and << 64 is undefined)
            col = _sort_column(first, rows, time, c)
            base = np.uint64(least[c])
            sh = np.uint64(shift)
            for i in range(n):
                keys[i] |= (np.uint64(col[i]) - base) << sh
        shift += bits[c]
    keys, order = _radix_passes(keys, order, total)
    return True, keys, order, least, bits


@kernel(V, M, M)
def lex_order(first, rows, time):
    """Stable permutation sorting by `first` (if not empty), then the rows of
    `rows`, then those of `time`: by the values themselves, with no hash and no
    comparisons. Columns whose ranges fit in 64 bits together are packed into
    one key and radix-sorted in a pass or two; otherwise one column at a time
    from the least significant. Tiny inputs take an insertion sort. A `first`
    equal to rows[0] (an arrangement's leading key column) is no extra key.
    """
    first, rows, time = borrowed(first), borrowed(rows), borrowed(time)
    n = max(first.shape[0], rows.shape[1], time.shape[1])
    if n <= _INSERTION:
        order = _identity(n)
        for i in range(1, n):
            x = order[i]
            j = i - 1
            while j >= 0 and _lex_less(first, rows, time, x, order[j]):
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = x
        return order
    use_first = first.shape[0] > 0 and not _first_is_lead(first, rows)
    fits, _, order, _, _ = _sorted_keys(first, rows, time, use_first, _identity(n))
    return order if fits else _column_passes(first, rows, time, use_first, order)


@helper
def _column_passes(first, rows, time, use_first, order):
    """Sort `order` stably by the columns one at a time, least significant first
    (ranges too wide to pack)."""
    keys = np.empty(order.shape[0], np.uint64)
    for c in range(time.shape[0] + rows.shape[0] + (1 if use_first else 0)):
        col = _sort_column(first, rows, time, c)
        least, bits = _span(col)
        base = np.uint64(least)
        for i in range(order.shape[0]):
            keys[i] = np.uint64(col[order[i]]) - base
        order = _radix_passes(keys, order, bits)[1]
    return order


def radix_lexsort(keys) -> np.ndarray:
    """`np.lexsort(keys)` for int64 keys (the last is the primary), by radix passes."""
    rows = np.stack([np.asarray(k, dtype=np.int64) for k in keys[::-1]])
    return lex_order(rows[0, :0], rows, rows[:0])


@helper
def _sorted_prefix(first, rows, start):
    """The end of the sorted run of (first, rows) columns that begins at `start`."""
    for i in range(start + 1, first.shape[0]):
        if first[i] < first[i - 1] or (first[i] == first[i - 1] and _less(rows, i, i - 1)):
            return i
    return first.shape[0]


_MERGE_RUNS = 8  # more sorted runs than this: radix sort instead


@kernel(V, M)
def sort_rows(first, rows):
    """Permutation sorting by `first`, then each row of `rows` in order (stable).

    Input made of a few sorted runs (an arranged batch, or such batches one
    after the other) is merged run by run in linear passes instead.
    """
    first, rows = borrowed(first), borrowed(rows)
    n = first.shape[0]
    bounds = [0]
    while bounds[-1] < n and len(bounds) <= _MERGE_RUNS:
        bounds.append(_sorted_prefix(first, rows, bounds[-1]))
    if bounds[-1] == n:
        order = _identity(n)
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
    return lex_order(first, rows, rows[:0])


@kernel(V, M)
def dense_rows(first, rows):
    """Number the distinct (first, rows) columns 0, 1, ... in sorted order.

    Returns (ids, representatives): ids[i] is column i's number and column
    representatives[j] is the first (in input order) with number j.
    """
    first, rows = borrowed(first), borrowed(rows)
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


@kernel(M, M)
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


@helper
def _sum_equal_runs(first, cols, time, diff, order):
    """Walk `order`, sorted by (first, cols, time); sum the diffs of equal updates, drop zeros.

    Returns (positions, summed diffs) in that order.
    """
    n = order.shape[0]
    out_pos = np.empty(n, np.int64)
    out_diff = np.empty(n, np.int64)
    m = 0
    k = 0
    while k < n:
        a = order[k]
        total = diff[a]
        q = k + 1
        while q < n:
            b = order[q]
            if first[b] != first[a] or not same_columns(cols, a, cols, b) or not same_columns(time, a, time, b):
                break
            total += diff[b]
            q += 1
        if total != 0:
            out_pos[m] = a
            out_diff[m] = total
            m += 1
        k = q
    return out_pos[:m], out_diff[:m]


@helper
def _unfolded_block(keys, sums, least, bits, count, c, t):
    """`arrange`'s block from the packed keys of consolidated updates (sorted; the first `count`
    of `least` and `bits` describe their sort columns, as `_sort_column` orders them; a lead
    column beyond c + t is unfolded and dropped) and their summed diffs."""
    m = keys.shape[0]
    # The block's rows as C-ordered arrays (reshaped slices of one buffer), as _sort_column
    # and _unfold are compiled for: views of a 2-D block would compile them again.
    buffer = np.empty((c + t + 1) * m, np.int64)
    out_cols = buffer[: c * m].reshape((c, m))
    out_time = buffer[c * m : (c + t) * m].reshape((t, m))
    out_lead = np.empty(m if count > c + t else 0, np.int64)
    shift = np.int64(0)  # not the literal 0, for which _unfold would be compiled too
    for s in range(count):
        _unfold(keys, _sort_column(out_lead, out_cols, out_time, s), least[s], shift, bits[s])
        shift += bits[s]
    at = (c + t) * m
    for j in range(m):
        buffer[at + j] = sums[j]
    return buffer.reshape((c + t + 1, m))


@kernel(V, M, M, V)
def arrange(lead, cols, time, diff):
    """The updates sorted into arranged order (by `lead`, then the columns, then time) and
    consolidated, as one new block whose rows are the columns, the time coordinates and
    the diff; not the lead, which callers have as a column or as zeros (one array: each
    array handed back to Python costs ~0.4 us to box, which a loop round's small batches feel).

    When the sort columns pack into 64 bits, equal updates are runs of equal
    sorted keys and the columns are rebuilt from those keys in sequential
    passes, so only the diffs are gathered; otherwise a sort of positions
    (`lex_order`) and a gather of every column.
    """
    lead, cols, time, diff = borrowed(lead), borrowed(cols), borrowed(time), borrowed(diff)
    n = diff.shape[0]
    use_first = not _first_is_lead(lead, cols)
    if n > _INSERTION:
        fits, keys, sorted_diff, least, bits = _sorted_keys(lead, cols, time, use_first, diff.copy())
        if fits:
            run_keys = np.empty(n, np.uint64)
            run_diff = np.empty(n, np.int64)
            m = 0
            k = 0
            while k < n:
                key = keys[k]
                total = sorted_diff[k]
                q = k + 1
                while q < n and keys[q] == key:
                    total += sorted_diff[q]
                    q += 1
                if total != 0:
                    run_keys[m] = key
                    run_diff[m] = total
                    m += 1
                k = q
            return _unfolded_block(run_keys[:m], run_diff, least, bits, bits.shape[0], cols.shape[0], time.shape[0])
        # Ranges too wide to pack: the packing's spans are not computed a second time.
        pos, summed = _sum_equal_runs(lead, cols, time, diff, _column_passes(lead, cols, time, use_first, _identity(n)))
    else:
        pos, summed = _sum_equal_runs(lead, cols, time, diff, lex_order(lead, cols, time))
    c, t = cols.shape[0], time.shape[0]
    out = np.empty((c + t + 1, pos.shape[0]), np.int64)
    for k in range(pos.shape[0]):
        i = pos[k]
        for r in range(c):
            out[r, k] = cols[r, i]
        for r in range(t):
            out[c + r, k] = time[r, i]
        out[c + t, k] = summed[k]
    return out


@kernel(V, M, M, V)
def column_ranges(lead, cols, time, diff):
    """The least and the greatest value of each sort column, in `_sort_column`'s order (the
    lead only when it is not cols[0]), then of the diffs: the ranges `packed_words` packs by."""
    lead, cols, time, diff = borrowed(lead), borrowed(cols), borrowed(time), borrowed(diff)
    count = time.shape[0] + cols.shape[0] + (0 if _first_is_lead(lead, cols) else 1)
    least = np.empty(count + 1, np.int64)
    most = np.empty(count + 1, np.int64)
    for c in range(count + 1):
        col = diff if c == count else _sort_column(lead, cols, time, c)
        lo = col[0]
        hi = col[0]
        for v in col:
            lo = min(lo, v)
            hi = max(hi, v)
        least[c] = lo
        most[c] = hi
    return least, most


@kernel(V, M, M, V, V, V, nt.boolean, I, nt.Array(nt.uint64, 1, "A"))
def packed_words(lead, cols, time, diff, least, bits, by_position, start, packed):
    """Each update as one uint64 word, written to packed[start:]: its sort columns less their
    least values, packed with the primary in the top bits, and in the low bits its diff less
    the least diff, or (`by_position`) its position start + i. (`least` and `bits` hold the
    columns' then the payload's, as `column_ranges` orders them.)"""
    lead, cols, time, diff = borrowed(lead), borrowed(cols), borrowed(time), borrowed(diff)
    least, bits, packed = borrowed(least), borrowed(bits), borrowed(packed)
    n = diff.shape[0]
    count = least.shape[0] - 1
    if by_position:
        for i in range(n):
            packed[start + i] = np.uint64(start + i)
    else:
        base = np.uint64(least[count])
        for i in range(n):
            packed[start + i] = np.uint64(diff[i]) - base
    shift = bits[count]
    for c in range(count):
        if bits[c] and shift < 64:
            col = _sort_column(lead, cols, time, c)
            base = np.uint64(least[c])
            sh = np.uint64(shift)
            for i in range(n):
                packed[start + i] |= (np.uint64(col[i]) - base) << sh
        shift += bits[c]
    return 0


@kernel(nt.Array(nt.uint64, 1, "A"), V, V, nt.boolean, V, I, I)
def unpacked_runs(packed, least, bits, by_position, diff, c, t):
    """`packed_words`' words, sorted, back to `arrange`'s block: equal updates (runs of equal
    words above the payload) summed, zero sums dropped, the columns unfolded from the words."""
    packed, least, bits, diff = borrowed(packed), borrowed(least), borrowed(bits), borrowed(diff)
    n = packed.shape[0]
    count = least.shape[0] - 1
    payload = np.uint64(bits[count])
    low = (np.uint64(1) << payload) - np.uint64(1)
    base = least[count]
    keys = np.empty(n, np.uint64)
    sums = np.empty(n, np.int64)
    m = 0
    k = 0
    while k < n:
        key = packed[k] >> payload
        total = 0
        while k < n and packed[k] >> payload == key:
            total += diff[np.int64(packed[k] & low)] if by_position else np.int64(packed[k] & low) + base
            k += 1
        if total != 0:
            keys[m] = key
            sums[m] = total
            m += 1
    return _unfolded_block(keys[:m], sums, least, bits, count, c, t)


_NUMPY_SORT_FROM = 1024  # rows from which packed words sorted by numpy beat radix passes


def arranged(lead, cols, time, diff):
    """`arrange`'s block taken apart: the sorted, consolidated (cols, time, diff), views of it."""
    return arranged_parts([(lead, cols, time, diff)])[:3]


def arranged_parts(parts, bounds=None):
    """`arranged` of the parts' updates together, (lead, cols, time, diff) each, without
    concatenating them first (a join's output comes in parts: runtime.operators.join), and
    the block they are views of. `bounds`: None, or per part its Batch.bounds (None where
    not known), given only where the lead is the first column."""
    block = _numpy_sorted(parts, bounds) if sum(len(p[3]) for p in parts) >= _NUMPY_SORT_FROM else None
    if block is None:
        lead, cols, time, diff = parts[0] if len(parts) == 1 else (np.concatenate(x, axis=-1) for x in zip(*parts))
        block = arrange(lead, cols, time, diff)
    c, last = parts[0][1].shape[0], block.shape[0] - 1
    return block[:c], block[c:last], block[last], block


def _numpy_sorted(parts, bounds=None):
    """`arrange`'s block, sorted by numpy as packed words (`packed_words`): numpy's sort of
    64-bit integers uses the processor's vector units (on this machine's AVX-512, 2M words
    in 10-12 ns a row, where radix passes scatter at 60-90). None when the sort columns and
    positions do not fit in a word together, or the parts do not agree on the lead."""
    if bounds is not None and all(b is not None for b in bounds):
        ranges = [_ranges_of_bounds(b, p[1].shape[0], p[2].shape[0]) for b, p in zip(bounds, parts)]
    else:
        ranges = [column_ranges(*p) for p in parts]
    if len({len(least) for least, _ in ranges}) > 1:
        return None  # one part's lead is its first column, another's is not
    least = np.min([r[0] for r in ranges], axis=0)
    most = np.max([r[1] for r in ranges], axis=0)
    bits = np.array([(int(hi) - int(lo)).bit_length() for lo, hi in zip(least, most)], np.int64)
    n = sum(len(p[3]) for p in parts)
    columns = int(bits[:-1].sum())
    by_position = bool(columns + bits[-1] > 64 or bits[-1] == 64)  # (a shift by 64 is undefined)
    if by_position:
        least[-1], bits[-1] = 0, (n - 1).bit_length()
        if columns + bits[-1] > 64:
            return None
    packed = np.empty(n, np.uint64)
    start = 0
    for p in parts:
        packed_words(*p, least, bits, by_position, start, packed)
        start += len(p[3])
    packed.sort()
    diff = parts[0][3] if len(parts) == 1 or not by_position else np.concatenate([p[3] for p in parts])
    return unpacked_runs(packed, least, bits, by_position, diff, parts[0][1].shape[0], parts[0][2].shape[0])


def _ranges_of_bounds(bounds, c, t):
    """`column_ranges` of a part whose lead is its first column, from Batch.bounds (rows:
    its c columns, its t time rows, the diff): time rows from the last, columns from the
    last, then the diff. (Without a key the lead is a column of zeros, which column_ranges
    compares with the first column: not known from the bounds.)"""
    order = [c + t - 1 - i for i in range(t)] + [c - 1 - i for i in range(c)] + [c + t]
    return bounds[0, order], bounds[1, order]


@kernel(M)
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


@kernel(M)
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
            out = grown_block(out, 2 * m)  # (np.concatenate would compile seconds of code)
        out[0, m] = bx
        out[1, m] = by
        m += 1
        bound = by
    return out[:, :m].copy()

"""Compiled loops over a trace's storage: lookups in every segment, merges of two.

A trace keeps its updates in one C-ordered (width, capacity) int64 block whose
rows are the key columns, the value columns, the time coordinates and the
diff, and whose used part is cut into *segments*, each sorted by (key, value,
time) and consolidated (runtime.trace.spine). Beside it, *fences*: the key of
every FENCE-th position, a small array that stays in cache. These kernels take
the block, the fences and the segments' ends, so a lookup in a whole trace,
however many segments it has, is one call: what a single update pays most for
is the number of calls, not the rows they touch.

Probes come sorted, mostly. A probe is sought in each segment from where the
previous probe was found: a few steps forward (dense probes), else by galloping
over the fences and a binary search within one fence block, so a sparse probe
into a large segment touches a cache line or two of the block rather than one
per binary search step.
"""

from __future__ import annotations

import numpy as np
from numba import types as nt

from runtime.jit import borrowed, helper, inlined, kernel
from runtime.kernels import I, M, V

FENCE_SHIFT = 5
FENCE = 1 << FENCE_SHIFT  # positions between fences
# The last two segments merge when the newer is at least 1/MERGE_RATIO of the older: each
# update is rewritten about log_4 n times instead of log_2 n, for up to three segments of
# a size instead of one. Measured on 1% TC and Andersen updates, whose inserts into
# traces of millions of updates were half trace merges at ratio 2: 12-25% less CPU,
# single reachability updates level.
MERGE_RATIO = 4
# Positions tried one by one before galloping: dense sorted probes (a first load's rounds) are
# mostly within 16 of the last one found (tc-2k batch CPU -5% against 8; single updates level).
_STEPS = 16
NO_ROOM = -(1 << 40)  # settle's answer when the trace's arrays are to grow first

C = nt.Array(nt.int64, 2, "C")  # a trace's block or fences: C-ordered, so rows are contiguous


@inlined
def _key_less(store, j, probe, i, k):
    """Row j's key sorts before probe i's."""
    for c in range(k):
        a = store[c, j]
        b = probe[c, i]
        if a != b:
            return a < b
    return False


@inlined
def _key_equal(store, j, probe, i, k):
    for c in range(k):
        if store[c, j] != probe[c, i]:
            return False
    return True


def _seek_from(store, fence, k, start, end, probe, i, lo):
    """The first position in [start, end) whose key is not before probe i's, looking
    from `lo` (where the previous probe was found)."""
    if lo > start and not _key_less(store, lo - 1, probe, i, k):
        lo = start  # the probe is before the previous one
    if lo + _STEPS > end or not _key_less(store, lo + _STEPS - 1, probe, i, k):
        for _ in range(_STEPS):  # within _STEPS positions: one by one
            if lo >= end or not _key_less(store, lo, probe, i, k):
                return lo
            lo += 1
    else:
        lo += _STEPS  # farther: one comparison rules out the near positions
    # Gallop over the fences after lo for the first whose key is not before the probe.
    qend = ((end - 1) >> FENCE_SHIFT) + 1
    q = (lo >> FENCE_SHIFT) + 1
    step = 1
    top = qend
    while True:
        p = q + step - 1
        if p >= qend:
            break
        if not _key_less(fence, p, probe, i, k):
            top = p
            break
        q = p + 1
        step *= 2
    while q < top:
        mid = (q + top) >> 1
        if _key_less(fence, mid, probe, i, k):
            q = mid + 1
        else:
            top = mid
    # Fence q - 1 (or lo) is before the probe; fence q, if in the segment, is not.
    left = max(lo, (q - 1) << FENCE_SHIFT)
    hi = end if q >= qend else q << FENCE_SHIFT
    while left < hi:
        mid = (left + hi) >> 1
        if _key_less(store, mid, probe, i, k):
            left = mid + 1
        else:
            hi = mid
    return left


# One signature for every caller (inlined everywhere, it was typed again at every call site),
# and inlined where a call costs most: distinct_fused seeks every key in every segment
# (10-13% of its time in captured tc-2k and Andersen update runs).
_seek = kernel(C, C, I, I, I, M, I, I)(_seek_from)
_seek_inlined = inlined(_seek_from)


@inlined
def _probe_less(probe, i, store, j, k):
    """Probe i's key sorts before row j's."""
    for c in range(k):
        a = probe[c, i]
        b = store[c, j]
        if a != b:
            return a < b
    return False


@helper
def _probes_sorted(probe, k):
    for i in range(1, probe.shape[1]):
        if _probe_less(probe, i, probe, i - 1, k):
            return False
    return True


@inlined
def _skip_probes(probe, i, store, j, k):
    """The first probe index after i whose key is not before row j's (galloping)."""
    n = probe.shape[1]
    step = 1
    lo = i + 1
    hi = n
    while True:
        p = lo + step - 1
        if p >= n:
            break
        if not _probe_less(probe, p, store, j, k):
            hi = p
            break
        lo = p + 1
        step *= 2
    while lo < hi:
        mid = (lo + hi) >> 1
        if _probe_less(probe, mid, store, j, k):
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(C, C, V, I, M, V, M, I)
def lookup_segments(store, fence, ends, k, probe, out_owner, out_rows, at):
    """Every update whose key (the first k rows of `store`) equals a probe's, in every
    segment: the probe's index into out_owner, and the update's value, time and diff
    (store rows k..) into out_rows, from column `at` on.

    Sorted probes meet each segment like a zipper: whichever side is behind gallops
    to the other's key, so a few probes in a large segment and many probes in a small
    one both cost about the smaller side's length times a logarithm. Unsorted probes
    are sought one by one.

    Returns the end of what was written, or minus the end it would need when the
    out arrays are too small (what was written is then garbage). The caller owns
    the out arrays: handing fresh arrays back to Python costs more than a small
    lookup.
    """
    store, fence, ends, probe = borrowed(store), borrowed(fence), borrowed(ends), borrowed(probe)
    out_owner, out_rows = borrowed(out_owner), borrowed(out_rows)
    room = out_owner.shape[0]
    width = store.shape[0]
    n = probe.shape[1]
    zipper = _probes_sorted(probe, k)
    m = at
    start = 0
    for s in range(ends.shape[0]):
        end = ends[s]
        i = 0
        j = start
        while i < n:
            # The rows [j, stop) of the segment match probe i.
            if zipper:
                if j >= end:
                    break
                if _key_less(store, j, probe, i, k):
                    j = _seek(store, fence, k, start, end, probe, i, j + 1)
                    continue
                if _probe_less(probe, i, store, j, k):
                    i = _skip_probes(probe, i, store, j, k)
                    continue
            else:  # probes in no order: each sought alone
                j = _seek(store, fence, k, start, end, probe, i, j)
            stop = j
            while stop < end and _key_equal(store, stop, probe, i, k):
                stop += 1
            for r in range(j, stop):  # written out here: see runtime.operators.join_kernels
                if m < room:
                    out_owner[m] = i
                    for c in range(k, width):
                        out_rows[c - k, m] = store[c, r]
                m += 1
            i += 1
            if zipper and (i >= n or not _key_equal(store, j, probe, i, k)):
                j = stop  # the next probe's key differs: the segment moves on
        start = end
    return m if m <= room else -m


@kernel(C, C, V, I, M)
def count_segments(store, fence, ends, k, probe):
    """For each probe, how many updates of all segments have its key (the end of a
    key's updates found by galloping, so a hub key is counted without walking them)."""
    store, fence, ends, probe = borrowed(store), borrowed(fence), borrowed(ends), borrowed(probe)
    counts = np.zeros(probe.shape[1], np.int64)
    start = 0
    for s in range(ends.shape[0]):
        end = ends[s]
        lo = start
        for i in range(probe.shape[1]):
            lo = _seek(store, fence, k, start, end, probe, i, lo)
            step = 1
            past = lo
            while past + step - 1 < end and _key_equal(store, past + step - 1, probe, i, k):
                past += step
                step *= 2
            hi = min(past + step - 1, end)
            while past < hi:
                mid = (past + hi) >> 1
                if _key_equal(store, mid, probe, i, k):
                    past = mid + 1
                else:
                    hi = mid
            counts[i] += past - lo
        start = end
    return counts


@helper
def _consolidate_runs(out, start, m, kv):
    """In out[:, start:m], sorted by the first kv rows: sort the times within each run of
    equal (key, value), sum the diffs of equal times, drop zeros; in place. Returns the new end."""
    dr = out.shape[0] - 1
    w = start
    i = start
    while i < m:
        j = i + 1
        while j < m and _rows_equal(out, j, i, kv):
            j += 1
        if j - i == 1:
            if out[dr, i] != 0:
                if w != i:
                    for x in range(dr + 1):
                        out[x, w] = out[x, i]
                w += 1
            i = j
            continue
        for p in range(i + 1, j):  # insertion sort by time: runs are short
            q = p
            while q > i and _time_less(out, q, q - 1, kv, dr):
                for x in range(kv, dr + 1):
                    out[x, q], out[x, q - 1] = out[x, q - 1], out[x, q]
                q -= 1
        p = i
        while p < j:
            total = out[dr, p]
            q = p + 1
            while q < j and not _time_less(out, p, q, kv, dr):
                total += out[dr, q]
                q += 1
            if total != 0:
                for x in range(dr):
                    out[x, w] = out[x, p]
                out[dr, w] = total
                w += 1
            p = q
        i = j
    return w


@inlined
def _rows_equal(block, a, b, n):
    for c in range(n):
        if block[c, a] != block[c, b]:
            return False
    return True


@inlined
def _time_less(block, a, b, t0, t1):
    for x in range(t0, t1):
        if block[x, a] != block[x, b]:
            return block[x, a] < block[x, b]
    return False


_NO_LEAST = np.iinfo(np.int64).min


@helper
def least_coordinates(since, depth):
    """Per time coordinate, the least of the frontier `since`'s elements (int64's minimum
    when it has none). Advancing a time by `since` in the product order -- the meet of its
    joins with the elements, per coordinate the least over f of max(t, f) -- is
    max(t, least) per coordinate: one comparison, whatever the frontier's size."""
    least = np.full(depth, _NO_LEAST, np.int64)
    for x in range(depth):
        for f in range(since.shape[1]):
            least[x] = since[x, f] if f == 0 else min(least[x], since[x, f])
    return least


@inlined
def _advancing(store, a, c, kv, since):
    """since's element count, or 0 when advancing by it leaves every time of store[:, a:c]
    as it is: in each coordinate some element is at or below every time's (a first load's
    rounds, compacted only from the next epoch on), so the merge need not look."""
    nf = since.shape[1]
    if nf == 0:
        return 0
    least = least_coordinates(since, store.shape[0] - 1 - kv)
    for x in range(kv, store.shape[0] - 1):
        bound = least[x - kv]
        for j in range(a, c):
            if store[x, j] < bound:
                return nf
    return 0


@kernel(C, I, I, I, I, M, C)
def merge_segments(store, a, b, c, kv, since, spare):
    """Merge the segments store[:, a:b] and store[:, b:c] into store[:, a:a + m], in
    place, and return m; spare[:, :c - b] holds a copy of the newer segment meanwhile.

    The result is sorted by (key and value: the first kv rows, time) and
    consolidated, with every time advanced by `since` under the product order
    (per coordinate, the least over since's elements of max(t, f)). Advancing
    keeps the (key, value) order, so this is one linear merge (`merge_into`).
    """
    store, since, spare = borrowed(store), borrowed(since), borrowed(spare)
    newer = c - b
    for r in range(store.shape[0]):
        for j in range(newer):
            spare[r, j] = store[r, b + j]
    return merge_into(store, spare, a, b, a, 0, 0, newer, c, kv, _advancing(store, a, c, kv, since), since)


@kernel(C, C, I, I, I, I, I, I, I, I, I, M)
def merge_into(store, spare, a, b, cut, at, n0, n1, top, kv, nf, since):
    """Merge an older run of updates, positions [a, b), with a newer one, spare[:, n0:n1],
    into store[:, top - (b - a) - (n1 - n0) : top], and consolidate: returns m, the
    updates now at the bottom of that range, [bottom, bottom + m). Older position p is
    store[:, p] from `cut` on, spare[:, at + p - a] below it (where a caller that writes
    over store[:, a:cut] meanwhile has copied those rows). `nf`: since's element count,
    or 0 when advancing leaves every time as it is (`_advancing`).

    Written from the top down: every row taken lands at or after the older run's unread
    rows in the store, so nothing unread is overwritten and no block the size of the store
    is needed (nor the fresh pages one would fault in). Where it put two updates of one
    (key, value) next to each other with equal or out-of-order times, it marks the place;
    a second pass visits the marked runs, sorts their times and sums equal ones (updates
    summing to zero go), and moves the rows between them down over what went.
    """
    store, spare, since = borrowed(store), borrowed(spare), borrowed(since)
    bottom = top - (b - a) - (n1 - n0)
    marks = np.empty(2 * (n1 - n0) + 64, np.int64)  # the rows to consolidate (from the top down), while there is room
    # (next older position, next newer, where the next row lands, marks made, lowest mark, side and move of the last row)
    state = (b - 1, n1 - 1, top - 1, 0, top, -1, False)
    least = least_coordinates(since, store.shape[0] - 1 - kv)  # (read only when nf)
    state = _merge_rows(store, store, 0, cut, False, spare, n0, bottom, top, kv, nf, least, marks, state)  # older rows in place
    state = _merge_rows(store, spare, at - a, a, True, spare, n0, bottom, top, kv, nf, least, marks, state)  # those copied aside
    n_marks = state[3]
    lowest = state[4]
    if lowest == top:
        return top - bottom
    if n_marks > marks.shape[0]:  # too many to visit one by one: one pass from the lowest
        while lowest > bottom and _rows_equal(store, lowest - 1, lowest, kv):
            lowest -= 1
        return _consolidate_runs(store, lowest, top, kv) - bottom
    return _consolidate_marked(store, marks, n_marks, bottom, top, kv) - bottom


_MERGE_STATE = nt.Tuple((I, I, I, I, I, I, nt.boolean))  # merge_into's state (see there)


@kernel(C, C, I, I, nt.boolean, C, I, I, I, I, I, V, V, _MERGE_STATE)
def _merge_rows(store, older, shift, floor, last, spare, n0, bottom, top, kv, nf, least, marks, state):
    """merge_into's rows while the next older row is at or above position `floor` (older
    position p is older[:, p + shift]: the store itself when shift is 0 and not `last`), and
    when this is the `last` part of the older rows, on to the bottom; when `nf`, every time
    coordinate x is advanced to at least least[x]. Returns the state (see merge_into) to go
    on from. (A kernel: merge_into calls it twice, with constants numba would compile
    a helper for twice.)"""
    i, j, w, n_marks, lowest, last_side, last_moved = state
    width = store.shape[0]
    dr = width - 1
    o = i + shift  # older position i's column in `older`
    o_floor = floor + shift
    moves = last or shift != 0  # a row taken from `older` moves (in place, unless it lands where it is)
    while w >= bottom:
        if o < o_floor:
            if not last:
                break  # the older rows below are the next part's
            side = 1
        elif j < n0:
            side = 0
        else:
            side = -1
            for x in range(kv):
                p = older[x, o]
                q = spare[x, j]
                if p != q:
                    side = 0 if p > q else 1
                    break
            if side < 0:
                # One (key, value): the later time (as advanced) lands above, so that a run of
                # it comes out in time order, and consolidating it only sums equal times.
                # (Placed newer-above whatever their times, the runs of 1,000 batched
                # reachability updates came out shuffled and were sorted again: half of
                # the inserts' time.)
                side = 1
                for x in range(kv, dr):
                    p = max(older[x, o], least[x - kv]) if nf else older[x, o]
                    q = max(spare[x, j], least[x - kv]) if nf else spare[x, j]
                    if p != q:
                        side = 0 if p > q else 1
                        break
        if side == 0:
            if moves or w != o:
                for x in range(width):
                    store[x, w] = older[x, o]
            o -= 1
        else:
            for x in range(width):
                store[x, w] = spare[x, j]
            j -= 1
        moved = False
        if nf:
            for x in range(kv, dr):
                t = store[x, w]
                best = max(t, least[x - kv])
                if best != t:
                    store[x, w] = best
                    moved = True
        # Two updates of one (key, value) next to each other need consolidating when their
        # times are equal or out of order, which they can be when they come from different
        # runs or advancing moved a time; within one run, unmoved, they are sorted and distinct.
        if (w < top - 1 and (side != last_side or moved or last_moved) and _rows_equal(store, w, w + 1, kv)
                and not _time_less(store, w, w + 1, kv, dr)):
            if n_marks < marks.shape[0]:
                marks[n_marks] = w
            n_marks += 1
            lowest = w
        last_side = side
        last_moved = moved
        w -= 1
    return o - shift, j, w, n_marks, lowest, last_side, last_moved


@kernel(C, I, I, I, I, M)
def merge_split(store, a, b, c, kv, since):
    """Where to cut the merge of store[:, a:b] and store[:, b:c] in two halves that share no
    (key, value): (i, j, nf), the older segment's first position of the upper half (near its
    middle) and the newer's count of rows before it, or i = -1 when the older segment's upper
    half is one (key, value); nf as merge_into takes it."""
    store, since = borrowed(store), borrowed(since)
    i = a + max((b - a) >> 1, 1)
    while i < b and _rows_equal(store, i, i - 1, kv):
        i += 1
    if i >= b:
        return -1, 0, 0
    lo = b
    hi = c
    while lo < hi:
        mid = (lo + hi) >> 1
        before = False  # row mid's (key, value) sorts before row i's
        for x in range(kv):
            if store[x, mid] != store[x, i]:
                before = store[x, mid] < store[x, i]
                break
        if before:
            lo = mid + 1
        else:
            hi = mid
    return i, lo - b, _advancing(store, a, c, kv, since)


@kernel(C, I, I, I)
def move_down(store, source, target, n):
    """store[:, source:source + n] to store[:, target:target + n], target < source (the
    ranges may overlap: copied from the bottom up)."""
    store = borrowed(store)
    for r in range(store.shape[0]):
        for j in range(n):
            store[r, target + j] = store[r, source + j]


@helper
def _consolidate_marked(store, marks, n_marks, a, c, kv):
    """Consolidate (`_consolidate_runs`) the runs of equal (key, value) in store[:, a:c] that
    hold the positions marks[:n_marks] (descending), and move the rows between them down
    over what consolidating dropped; the rows below the lowest run stay where they are.
    Returns the new end. (One pass over every row from the lowest mark, as merges did
    before, cost more than the merge itself: a small segment merged into a large one marks
    a few runs spread over all of it.)"""
    width = store.shape[0]
    w = -1  # where the next kept row goes (before the first run: nothing has moved)
    done = a  # rows from here on are as the merge left them
    for k in range(n_marks - 1, -1, -1):
        q = marks[k]
        if q < done:
            continue  # in a run consolidated already
        start = q
        while start > done and _rows_equal(store, start - 1, start, kv):
            start -= 1
        end = q + 1
        while end < c and _rows_equal(store, end, end - 1, kv):
            end += 1
        if w < 0:
            w = start
        elif w < done:
            for x in range(width):
                for r in range(start - done):
                    store[x, w + r] = store[x, done + r]
            w += start - done
        else:
            w = start
        kept = _consolidate_runs(store, start, end, kv)
        if w < start:
            for x in range(width):
                for r in range(kept - start):
                    store[x, w + r] = store[x, start + r]
        w += kept - start
        done = end
    if w < done:
        for x in range(width):
            for r in range(c - done):
                store[x, w + r] = store[x, done + r]
    return w + c - done


@kernel(C, C, V, I, I, M, C, M, M, M, V, V, I, C)
def settle(store, spare, ends, count, kv, since, fence, key, val, time, diff, inserted, limit, whole):
    """Append an arranged batch as the newest segment and merge as the spine asks.

    The batch (key, val, time, diff columns) is copied in after the `count`
    segments whose ends are ends[:count]; then, while the last segment is at
    least 1/MERGE_RATIO the size of the one before it, the two merge in place
    (`merge_segments`, the newer copied aside into `spare`), up to a merge of `limit`
    updates or more, which is left to the caller (runtime.trace.spine splits it between
    the two cores): then it returns ~count, the segments' count complemented. When
    `whole` holds the batch's rows as one block (key, val, time and diff rows: an
    arrangement's sorted batch) and the batch's first merge is due, the batch is merged
    from there, neither copied in nor copied aside (a (width, 0) block: not given). The fences
    of every rewritten position are written again. Returns the number of segments, or
    NO_ROOM, having done nothing, when the store, `spare` (the used size past the
    first segment: the most a merge's newer segment can hold), `ends` or `fence` is
    too small: the caller grows them and calls again. (Checked here: the checks
    cost more in Python than the copy of a small batch.) `inserted` (the least diff,
    then the greatest time coordinates, of every batch inserted) takes in the batch's.
    """
    store, spare, ends, since, fence = borrowed(store), borrowed(spare), borrowed(ends), borrowed(since), borrowed(fence)
    key, val, time, diff, inserted = borrowed(key), borrowed(val), borrowed(time), borrowed(diff), borrowed(inserted)
    k = key.shape[0]
    v = val.shape[0]
    d = time.shape[0]
    at = ends[count - 1] if count else 0
    n = diff.shape[0]
    first = ends[0] if count else at + n
    if (at + n > store.shape[1] or at + n - first > spare.shape[1] or count >= ends.shape[0]
            or (at + n + FENCE - 1) >> FENCE_SHIFT > fence.shape[1]):
        return NO_ROOM
    a = ends[count - 2] if count >= 2 else 0
    if count and whole.shape[1] == n and at - a <= MERGE_RATIO * n and at + n - a < limit:
        for j in range(n):
            for c in range(d):
                inserted[1 + c] = max(inserted[1 + c], time[c, j])
            inserted[0] = min(inserted[0], diff[j])
        nf = max(_advancing(store, a, at, kv, since), _advancing(whole, 0, n, kv, since))
        m = merge_into(store, whole, a, at, a, 0, 0, n, at + n, kv, nf, since)
        ends[count - 1] = a + m
        if m == 0:
            count -= 1
        changed = a
    else:
        for j in range(n):
            for c in range(k):
                store[c, at + j] = key[c, j]
            for c in range(v):
                store[k + c, at + j] = val[c, j]
            for c in range(d):
                store[k + v + c, at + j] = time[c, j]
                inserted[1 + c] = max(inserted[1 + c], time[c, j])
            store[k + v + d, at + j] = diff[j]
            inserted[0] = min(inserted[0], diff[j])
        ends[count] = at + n
        count += 1
        changed = at
    left = False  # a merge of `limit` updates or more is due
    while count >= 2:
        a = ends[count - 3] if count >= 3 else 0
        b = ends[count - 2]
        c = ends[count - 1]
        if b - a > MERGE_RATIO * (c - b):
            break
        if c - a >= limit:
            left = True
            break
        m = merge_segments(store, a, b, c, kv, since, spare)
        count -= 1
        ends[count - 1] = a + m
        if m == 0:
            count -= 1
        changed = a
    used = ends[count - 1] if count else 0
    first = (changed + FENCE - 1) >> FENCE_SHIFT
    for q in range(first, (used + FENCE - 1) >> FENCE_SHIFT):
        for c in range(k):
            fence[c, q] = store[c, q << FENCE_SHIFT]
    return ~count if left else count

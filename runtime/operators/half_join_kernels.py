"""The compiled loop of half joins: probes looked up in traces as of their own times.

A half join (runtime.operators.half_join) pairs each stream update -- a
*probe* -- with the updates of an arrangement that have the probe's key and a
time <= the probe's (< when strict); an extension intersects several such
lookups that all supply the same new columns. `extend_segments` does a chunk
of probes in one call, walking each trace's segments in place
(runtime.trace.kernels: the block, its fences, the segments' ends), probe by
probe: it finds the probe's run of updates in every lookup (binary searches,
galloping over a hub key's run without walking it), lets the lookup with the
shortest run propose, checks each proposed update's time, looks its values up
in the other lookups' runs, and writes what survives straight out as output
updates. Nothing the time rules out is ever copied, no candidate is gathered
twice, and a single update costs one call, not a numpy pass per step.

A probe is sought in each segment from where the previous probe was found
(runtime.trace.kernels._seek), so sorted probes, and a probe with the key of
the one before it, cost a few comparisons.

Times: `layers` has one entry per time coordinate, 1 where the coordinate is
an AltNeu flag. Coordinates compare one by one (epochs and iterations: the
product order), except that a flag decides only between times whose outer
coordinates are equal, and is ignored otherwise (runtime.times).
"""

from __future__ import annotations

import numpy as np

from numba import types as nt

from runtime.jit import borrowed, inlined, kernel
from runtime.kernels import I, M, V
from runtime.trace.kernels import C, _key_equal, _key_less, _seek


@inlined
def _time_prefix_equal(store, r, j, time, i, n):
    """The first n coordinates of trace update j's time (rows r, r + 1, ... of the store)
    equal those of probe i's time (a column of `time`)."""
    for x in range(n):
        if store[r + x, j] != time[x, i]:
            return False
    return True


@inlined
def _as_of(store, r, j, time, i, layers, strict):
    """Trace update j's time (rows r, r + 1, ... of the store) is <= probe i's time (a
    column of `time`), or < when `strict`, under the lattice `layers` describes."""
    d = time.shape[0]
    if strict and _time_prefix_equal(store, r, j, time, i, d):
        return False
    x = d - 1
    while x > 0:  # innermost coordinate first, as Lattice.le recurses
        if layers[x] != 0:
            if _time_prefix_equal(store, r, j, time, i, x):  # a flag decides between equal outer times only
                return store[r + x, j] <= time[x, i]
        elif store[r + x, j] > time[x, i]:
            return False
        x -= 1
    return store[r, j] <= time[0, i]


@inlined
def _gallop(store, lo, end, probe, i, w, less):
    """The first position from lo on (before end) whose first w rows no longer sort before
    (`less`) -- or no longer equal (not `less`) -- probe i's first w rows, given that the
    positions before lo do. Galloping from lo: the position sought is usually near, and a
    hub key's run of updates is measured without walking it."""
    hi = end
    step = 1
    while True:
        p = lo + step - 1
        if p >= end:
            break
        if not (_key_less(store, p, probe, i, w) if less else _key_equal(store, p, probe, i, w)):
            hi = p
            break
        lo = p + 1
        step *= 2
    while lo < hi:
        mid = (lo + hi) >> 1
        if _key_less(store, mid, probe, i, w) if less else _key_equal(store, mid, probe, i, w):
            lo = mid + 1
        else:
            hi = mid
    return lo


LOOKUPS = 4  # arrangements one extension intersects at most (the tuples' length)
S = nt.UniTuple(C, LOOKUPS)
E = nt.UniTuple(nt.Array(nt.int64, 1, "C"), LOOKUPS)


@kernel(V, M, M, V, S, S, E, I, M, V, M, V, V, I, M, M, V)
def extend_segments(ready, data, time, diff, stores, fences, ends, lookups, keys, key_len, places, strict, layers, fuel,
                    out_data, out_time, out_diff):
    """Extend the probes ready[0], ready[1], ... (columns of data, time and diff) by the
    new columns that each of `lookups` traces proposes, as of each probe's time.

    Lookup c is the trace (stores[c], fences[c], ends[c]) keyed by the probe's columns
    keys[c, :key_len[c]]; its value column x is new column places[c, x]; it counts
    updates at times <= the probe's, or < when strict[c]. For each probe, the lookup
    with the fewest updates under the probe's key proposes: each of those updates
    in time gives the new columns w and the multiplicity diff * its diff, which is
    multiplied by what each other lookup gives (key, w) as of the probe's time (the
    sum of those diffs); nonzero results are written out as the probe's columns,
    then w, the probe's time and the multiplicity, probe by probe.

    Probes go in order while the proposers' updates counted stay within `fuel` (at
    least one probe). Returns (probes done, outputs written), or minus the number of
    outputs needed when the out arrays are too small (what was written is then
    garbage; the same call with room enough does the same probes)."""
    ready, data, time, diff = borrowed(ready), borrowed(data), borrowed(time), borrowed(diff)
    keys, key_len, places, strict, layers = borrowed(keys), borrowed(key_len), borrowed(places), borrowed(strict), borrowed(layers)
    out_data, out_time, out_diff = borrowed(out_data), borrowed(out_time), borrowed(out_diff)
    room = out_diff.shape[0]
    arity = data.shape[0]
    width = places.shape[1]
    depth = time.shape[0]
    most = 0
    for c in range(lookups):
        most = max(most, ends[c].shape[0])
    at = np.zeros((lookups, most), np.int64)  # per lookup and segment: where the previous probe was found
    lo = np.zeros((lookups, most), np.int64)  # ... and the current probe's run of updates
    hi = np.zeros((lookups, most), np.int64)
    for c in range(lookups):
        for s in range(1, ends[c].shape[0]):
            at[c, s] = ends[c][s - 1]
    probe = np.zeros((keys.shape[1] + width, lookups), np.int64)  # column c: lookup c's key, then values
    value = np.zeros(width, np.int64)
    m = 0
    spent = 0
    done = 0
    for i in range(ready.shape[0]):
        src = ready[i]
        proposer = 0
        least = -1
        for c in range(lookups):
            store = stores[c]
            k = key_len[c]
            for x in range(k):
                probe[x, c] = data[keys[c, x], src]
            count = 0
            for s in range(ends[c].shape[0]):
                start = ends[c][s - 1] if s else 0
                end = ends[c][s]
                a = _seek(store, fences[c], k, start, end, probe, c, at[c, s])
                at[c, s] = a
                lo[c, s] = a
                hi[c, s] = _gallop(store, a, end, probe, c, k, False)
                count += hi[c, s] - a
            if least < 0 or count < least:
                proposer = c
                least = count
        if i and spent + least > fuel:
            break
        spent += least
        done = i + 1
        store = stores[proposer]
        k = key_len[proposer]
        dr = store.shape[0] - 1
        for s in range(ends[proposer].shape[0]):
            for j in range(lo[proposer, s], hi[proposer, s]):
                if not _as_of(store, k + width, j, time, src, layers, strict[proposer]):
                    continue
                mult = diff[src] * store[dr, j]
                for x in range(width):
                    value[places[proposer, x]] = store[k + x, j]
                for v in range(lookups):
                    if v == proposer or mult == 0:
                        continue
                    other = stores[v]
                    kv = key_len[v]
                    for x in range(width):
                        probe[kv + x, v] = value[places[v, x]]
                    held = 0
                    for t in range(ends[v].shape[0]):
                        q = _gallop(other, lo[v, t], hi[v, t], probe, v, kv + width, True)
                        while q < hi[v, t] and _key_equal(other, q, probe, v, kv + width):
                            if _as_of(other, kv + width, q, time, src, layers, strict[v]):
                                held += other[other.shape[0] - 1, q]
                            q += 1
                    mult *= held
                if mult != 0:
                    if m < room:
                        for c in range(arity):
                            out_data[c, m] = data[c, src]
                        for x in range(width):
                            out_data[arity + x, m] = value[x]
                        for c in range(depth):
                            out_time[c, m] = time[c, src]
                        out_diff[m] = mult
                    m += 1
    return done, (m if m <= room else -m)

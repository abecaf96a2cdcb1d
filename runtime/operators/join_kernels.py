"""The compiled loop of `join`: a batch of updates against a whole trace, output written directly.

A join's new output is each arriving batch against the other side's trace
(runtime.operators.join). For epoch and iteration times (the product order,
where the join of two times is their coordinate-wise maximum) one kernel does
it all: the batch's keys, in order, meet every segment of the trace in place
like a zipper (runtime.trace.kernels; keys in no order are sought one by one),
and each match is written straight out
as an output update -- key, both sides' values (or the columns a select after
the join keeps), joined time, multiplied diff -- so no intermediate list of
matches is built and gathered again.
"""

from __future__ import annotations

from runtime.jit import borrowed, inlined, kernel
from runtime.kernels import I, M, V
from runtime.trace.kernels import C, _key_equal, _key_less, _probe_less, _probes_sorted, _seek, _skip_probes


@kernel(M, M, M, V, C, C, V, I, I, V, M, M, V, V, M)
def join_segments(dkey, dval, dtime, ddiff, store, fence, ends, k, delay, dest, out_data, out_time, out_diff, at, bounds):
    """The delta updates (keys sorted) joined with every update of the trace with an equal
    key, as output updates at the times' coordinate-wise maximum with the product of the
    diffs, written to the out arrays: of the joined row's columns (key, delta values, trace
    values), column c goes to out_data's row dest[c] (none when -1: a select after the join,
    done as it writes). The trace's times are read with `delay` added to their last
    coordinate (runtime.trace.delayed). Returns how many were written. `bounds` (2, rows of
    out_data, out_time and out_diff together) is lowered and raised to the least and the
    greatest value written to each row (runtime.batch.Batch.bounds).

    `at` is where the walk starts and, on return, where it stopped: (segment, delta update,
    trace position, trace position of the last seek, room needed). A walk starts at
    (0, 0, 0, 0). When the next delta update's matches do not fit in what is left of the
    out arrays, the walk stops before writing them, and a call with `at` as it was left
    and new out arrays (room for at least at[4] updates) goes on from there: the join
    comes in parts, none of its work done twice. When every segment is done, at[0] is
    their number."""
    dkey, dval, dtime, ddiff = borrowed(dkey), borrowed(dval), borrowed(dtime), borrowed(ddiff)
    store, fence, ends = borrowed(store), borrowed(fence), borrowed(ends)
    dest, out_data, out_time, out_diff, at = borrowed(dest), borrowed(out_data), borrowed(out_time), borrowed(out_diff), borrowed(at)
    bounds = borrowed(bounds)
    room = out_diff.shape[0]
    n = dkey.shape[1]
    v1 = dval.shape[0]
    d = dtime.shape[0]
    v2 = store.shape[0] - k - d - 1
    arity = out_data.shape[0]
    zipper = _probes_sorted(dkey, k)
    m = 0
    s, i, j, lo = at[0], at[1], at[2], at[3]
    start = ends[s - 1] if s else 0
    while s < ends.shape[0]:
        end = ends[s]
        while i < n:
            # The rows [j, stop) of the segment match delta update i.
            if zipper:
                if j >= end:
                    break
                if _key_less(store, j, dkey, i, k):
                    j = _seek(store, fence, k, start, end, dkey, i, j + 1)
                    continue
                if _probe_less(dkey, i, store, j, k):
                    i = _skip_probes(dkey, i, store, j, k)
                    continue
            else:  # keys in no order: each sought alone
                lo = _seek(store, fence, k, start, end, dkey, i, lo)
                j = lo
            stop = j
            while stop < end and _key_equal(store, stop, dkey, i, k):
                stop += 1
            if m + stop - j > room:
                at[0], at[1], at[2], at[3], at[4] = s, i, j, lo, stop - j
                return m
            # Written out here, not by a helper: a helper taking this many arrays costs
            # more per row than the row's work.
            if stop > j:
                # The delta update's own columns: one value for all its rows.
                for c in range(k):
                    if dest[c] >= 0:
                        _widen(bounds, dest[c], dkey[c, i])
                for c in range(v1):
                    if dest[k + c] >= 0:
                        _widen(bounds, dest[k + c], dval[c, i])
            for r in range(j, stop):
                for c in range(k):
                    if dest[c] >= 0:
                        out_data[dest[c], m] = dkey[c, i]
                for c in range(v1):
                    if dest[k + c] >= 0:
                        out_data[dest[k + c], m] = dval[c, i]
                for c in range(v2):
                    if dest[k + v1 + c] >= 0:
                        value = store[k + c, r]
                        out_data[dest[k + v1 + c], m] = value
                        _widen(bounds, dest[k + v1 + c], value)
                for c in range(d - 1):
                    value = max(dtime[c, i], store[k + v2 + c, r])
                    out_time[c, m] = value
                    _widen(bounds, arity + c, value)
                value = max(dtime[d - 1, i], store[k + v2 + d - 1, r] + delay)
                out_time[d - 1, m] = value
                _widen(bounds, arity + d - 1, value)
                value = ddiff[i] * store[k + v2 + d, r]
                out_diff[m] = value
                _widen(bounds, arity + d, value)
                m += 1
            i += 1
            if zipper and (i >= n or not _key_equal(store, j, dkey, i, k)):
                j = stop  # the next delta key differs: the segment moves on
        start = end
        s += 1
        i, j, lo = 0, start, start
    at[0] = s
    return m


@inlined
def _widen(bounds, row, value):
    """bounds[:, row], widened to hold value."""
    if value < bounds[0, row]:
        bounds[0, row] = value
    if value > bounds[1, row]:
        bounds[1, row] = value

"""The compiled loop of `join`: a batch of updates against a whole trace, output written directly.

A join's new output is each arriving batch against the other side's trace
(runtime.operators.join). For epoch and iteration times (the product order,
where the join of two times is their coordinate-wise maximum) one kernel does
it all: the batch's keys, in order, meet every segment of the trace in place
like a zipper (runtime.trace.kernels; keys in no order are sought one by one),
and each match is written straight out
as an output update -- key, both sides' values, joined time, multiplied diff --
so no intermediate list of matches is built and gathered again.
"""

from __future__ import annotations

from runtime.jit import inlined, kernel
from runtime.kernels import I, M, V
from runtime.trace.kernels import C, _key_equal, _key_less, _probe_less, _probes_sorted, _seek, _skip_probes


@inlined
def _write(dkey, dval, dtime, ddiff, i, store, j, k, delta_first, out_data, out_time, out_diff, m):
    """Output update m: delta update i joined with trace row j."""
    v1 = dval.shape[0]
    d = dtime.shape[0]
    v2 = store.shape[0] - k - d - 1
    for c in range(k):
        out_data[c, m] = dkey[c, i]
    if delta_first:
        for c in range(v1):
            out_data[k + c, m] = dval[c, i]
        for c in range(v2):
            out_data[k + v1 + c, m] = store[k + c, j]
    else:
        for c in range(v2):
            out_data[k + c, m] = store[k + c, j]
        for c in range(v1):
            out_data[k + v2 + c, m] = dval[c, i]
    for c in range(d):
        out_time[c, m] = max(dtime[c, i], store[k + v2 + c, j])
    out_diff[m] = ddiff[i] * store[k + v2 + d, j]


@kernel(M, M, M, V, C, C, V, I, I, M, M, V)
def join_segments(dkey, dval, dtime, ddiff, store, fence, ends, k, delta_first, out_data, out_time, out_diff):
    """The delta updates (keys sorted) joined with every update of the trace with an equal
    key, as output updates (key, delta values, trace values) -- or (key, trace values,
    delta values) when not `delta_first` -- at the times' coordinate-wise maximum with
    the product of the diffs, written to the out arrays. Returns how many, or minus the
    number needed when the out arrays are too small (what was written is then garbage)."""
    room = out_diff.shape[0]
    n = dkey.shape[1]
    zipper = _probes_sorted(dkey, k)
    m = 0
    start = 0
    for s in range(ends.shape[0]):
        end = ends[s]
        if not zipper:  # keys in no order: each sought alone
            lo = start
            for i in range(n):
                lo = _seek(store, fence, k, start, end, dkey, i, lo)
                r = lo
                while r < end and _key_equal(store, r, dkey, i, k):
                    if m < room:
                        _write(dkey, dval, dtime, ddiff, i, store, r, k, delta_first, out_data, out_time, out_diff, m)
                    m += 1
                    r += 1
            start = end
            continue
        i = 0
        j = start
        while i < n and j < end:
            if _key_less(store, j, dkey, i, k):
                j = _seek(store, fence, k, start, end, dkey, i, j + 1)
            elif _probe_less(dkey, i, store, j, k):
                i = _skip_probes(dkey, i, store, j, k)
            else:
                stop = j
                while stop < end and _key_equal(store, stop, dkey, i, k):
                    stop += 1
                while i < n and _key_equal(store, j, dkey, i, k):  # every delta update with this key
                    for r in range(j, stop):
                        if m < room:
                            _write(dkey, dval, dtime, ddiff, i, store, r, k, delta_first, out_data, out_time, out_diff, m)
                        m += 1
                    i += 1
                j = stop
        start = end
    return m if m <= room else -m

"""Join: pair updates of two arrangements that share a key.

When batches dA and dB arrive, the new output is
    dA x B_now + A_now x dB - dA x dB,
where A_now and B_now are the traces, which already contain dA and dB: each pair
of batches meets exactly once. Output times are the join (least upper bound) of
the two input times and diffs multiply. Each side's trace handle is held at the
frontier of the *other* input, the earliest time at which it will be probed, so
the trace may compact everything before it.

Semijoin is a join with an arrangement of keys only (no values).
"""

from __future__ import annotations

import numpy as np

from runtime.batch import Batch
from runtime.operators.arrange import Arranged
from runtime.operators.join_kernels import join_segments
from runtime.parallel import both, split_point
from runtime.trace import ArrangedBatch, Trace
from runtime.worker import Operator


def join_batch_trace(delta: ArrangedBatch, trace: Trace, lattice, delta_first: bool) -> Batch | None:
    """delta x trace as a Batch of (key, delta vals, trace vals) or the reverse order."""
    if lattice.is_product and len(delta) and len(trace):
        return _join_product(delta, trace, delta_first)
    found = trace.lookup(delta.key)
    owner = found.owner
    if not len(owner):
        return None
    key = delta.key[:, owner]
    dval = delta.val[:, owner]
    time = lattice.join_arrays(delta.time[:, owner], found.time)
    diff = delta.diff[owner] * found.diff
    vals = [dval, found.val] if delta_first else [found.val, dval]
    return Batch(np.concatenate([key] + vals, axis=0), time, diff)


def _join_product(delta: ArrangedBatch, trace: Trace, delta_first: bool) -> Batch | None:
    """join_batch_trace for epoch and iteration times: one kernel writes the output (a large
    batch in two halves at once)."""
    cut = split_point(delta.key)
    if cut is not None:
        low, high = both(lambda: _join_product(delta.take(slice(0, cut)), trace, delta_first),
                         lambda: _join_product(delta.take(slice(cut, None)), trace, delta_first))
        parts = [p for p in (low, high) if p is not None]
        return Batch.concat(parts) if parts else None
    arity = delta.key.shape[0] + delta.val.shape[0] + trace.val_arity
    depth = delta.time.shape[0]
    room = 16 + int(trace.fanout * 1.25 * len(delta))
    for _ in range(2):
        data, time, diff = np.empty((arity, room), np.int64), np.empty((depth, room), np.int64), np.empty(room, np.int64)
        m = join_segments(delta.key, delta.val, delta.time, delta.diff, *trace.parts(), delta.key.shape[0], delta_first, data, time, diff)
        if m >= 0:
            break
        room = -m  # too little room: exactly as much, and again
    trace.observe_fanout(len(delta), m)
    if not m:
        return None
    return Batch(data[:, :m], time[:, :m], diff[:m])


def join_batches(a: ArrangedBatch, b: ArrangedBatch, lattice) -> Batch | None:
    owner, pos = a.lookup(b.lead, b.key) if len(a) and len(b) else (np.zeros(0, np.intp),) * 2
    if not len(owner):
        return None
    time = lattice.join_arrays(b.time[:, owner], a.time[:, pos])
    data = np.concatenate([b.key[:, owner], a.val[:, pos], b.val[:, owner]], axis=0)
    return Batch(data, time, -(b.diff[owner] * a.diff[pos]))


class JoinOp(Operator):
    name = "join"

    def __init__(self, dataflow, left: Arranged, right: Arranged):
        self.left_trace, self.right_trace = left.trace, right.trace
        self.left_handle = left.trace.new_handle()
        self.right_handle = right.trace.new_handle()
        lat = left.stream.lattice
        super().__init__(dataflow, [[left.stream], [right.stream]], [lat, lat], [lat])

    def run(self):
        lat = self.in_lattices[0]
        da = self.receive(0)
        db = self.receive(1)
        parts = []
        for a in da:
            parts.append(join_batch_trace(a, self.right_trace, lat, delta_first=True))
        for b in db:
            parts.append(join_batch_trace(b, self.left_trace, lat, delta_first=False))
        if da and db:
            for a in da:
                for b in db:
                    parts.append(join_batches(a, b, lat))
        # Each part goes as it is: its readers concatenate what they receive at most once.
        for part in parts:
            if part is not None:
                self.send(part)
        self.right_handle.set_frontier(self.frontier(0))
        self.left_handle.set_frontier(self.frontier(1))

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

import functools

import numpy as np

from runtime.batch import Batch
from runtime.operators.arrange import Arranged
from runtime.operators.join_kernels import join_segments
from runtime.parallel import both, split_point
from runtime.trace import ArrangedBatch, Trace
from runtime.worker import Operator

_MAX, _MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min


def join_batch_trace(delta: ArrangedBatch, trace: Trace, lattice, delta_first: bool, columns: tuple | None = None) -> list[Batch]:
    """delta x trace as batches of (key, delta vals, trace vals) or the reverse order; of those
    columns, only `columns`, in that order, when given."""
    if not len(delta) or not len(trace):
        return []
    if lattice.is_product:
        return _join_product(delta, trace, _destinations(delta.key.shape[0], delta.val.shape[0], trace.val_arity, delta_first, columns))
    found = trace.lookup(delta.key)
    owner = found.owner
    if not len(owner):
        return []
    key = delta.key[:, owner]
    dval = delta.val[:, owner]
    time = lattice.join_arrays(delta.time[:, owner], found.time)
    diff = delta.diff[owner] * found.diff
    vals = [dval, found.val] if delta_first else [found.val, dval]
    return [Batch(_selected(np.concatenate([key] + vals, axis=0), columns), time, diff)]


def _selected(data: np.ndarray, columns: tuple | None) -> np.ndarray:
    """The rows `columns` of a joined block (all when None): the joins not written by
    join_segments, which selects as it writes (`_destinations`)."""
    return data if columns is None else data.take(columns, axis=0)


@functools.cache
def _destinations(k: int, delta_vals: int, trace_vals: int, delta_first: bool, columns: tuple | None) -> np.ndarray:
    """join_segments' `dest`: for each column of (key, delta values, trace values), its row in
    the output, (key, delta values, trace values) or (key, trace values, delta values) as
    `delta_first` says, then only `columns` of that when given (-1: not written). (Cached: a
    loop's round joins a few rows, and building it costs more than that.)"""
    delta_at, trace_at = (k, k + delta_vals) if delta_first else (k + trace_vals, k)
    joined = [*range(k), *range(delta_at, delta_at + delta_vals), *range(trace_at, trace_at + trace_vals)]
    if columns is not None:
        row = {column: i for i, column in enumerate(columns)}
        joined = [row.get(column, -1) for column in joined]
    return np.array(joined, np.int64)  # (writeable, as kernels take arrays; never written)


def _join_product(delta: ArrangedBatch, trace: Trace, dest: np.ndarray) -> list[Batch]:
    """join_batch_trace for epoch and iteration times: one kernel writes the output (a large
    batch in two halves at once, each into its own part of one output block, and each sent
    as it is: the readers that sort them, arrangements, read both without a copy of them
    side by side)."""
    n = len(delta)
    cut = split_point(delta.key)
    arity = int(dest.max()) + 1 if len(dest) else 0
    rows = arity + delta.time.shape[0] + 1
    room = 16 + int(trace.fanout * 1.25 * n)  # as the trace's recent fan-out suggests
    if cut is None:
        parts, bounds = _join_into(delta, trace, dest, np.empty((rows, room), np.int64), arity)
    else:
        trace.wait()  # before the halves start: see runtime.operators.reduce
        low_room = 16 + int(trace.fanout * 1.25 * cut)
        block = np.empty((rows, room + 16), np.int64)
        (low, low_bounds), (high, bounds) = both(
            lambda: _join_into(delta.take(slice(0, cut)), trace, dest, block[:, :low_room], arity),
            lambda: _join_into(delta.take(slice(cut, None)), trace, dest, block[:, low_room:], arity))
        parts = low + high
        np.minimum(bounds[0], low_bounds[0], out=bounds[0])
        np.maximum(bounds[1], low_bounds[1], out=bounds[1])
    trace.observe_fanout(n, sum(out.shape[1] for out in parts))
    return [Batch(out[:arity], out[arity:-1], out[-1], bounds) for out in parts]


def _join_into(delta: ArrangedBatch, trace: Trace, dest: np.ndarray, out: np.ndarray, arity: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The join's output (blocks whose rows are data, time, diff): written into `out` and,
    when that fills up, on into blocks of its own, each sized by the rows per delta update
    met so far (join_segments stops where its room ends, and goes on from there); and the
    bounds of its rows (runtime.batch.Batch.bounds)."""
    store, fence, ends = trace.parts()
    visits = len(ends) * len(delta)  # (delta update, segment) pairs the walk meets
    at = np.zeros(5, np.int64)
    bounds = _no_bounds(out.shape[0]).copy()
    parts, written = [], 0
    while True:
        m = join_segments(delta.key, delta.val, delta.time, delta.diff, store, fence, ends, delta.key.shape[0], trace.delay, dest,
                          out[:arity], out[arity:-1], out[-1], at, bounds)
        if m:
            parts.append(out[:, :m])
            written += m
        if at[0] == len(ends):
            return parts, bounds
        met = int(at[0]) * len(delta) + int(at[1])
        room = int(at[4]) + 16 + int(1.25 * written * (visits - met) / max(met, 1))
        out = np.empty((out.shape[0], room), np.int64)


@functools.cache
def _no_bounds(rows: int) -> np.ndarray:
    """Bounds that any value widens (join_segments), for `rows` rows: copied, not built, in
    each of a loop round's small joins."""
    return np.array([[_MAX] * rows, [_MIN] * rows], np.int64)


def join_batches(a: ArrangedBatch, b: ArrangedBatch, lattice, columns: tuple | None = None) -> Batch | None:
    owner, pos = a.lookup(b.lead, b.key) if len(a) and len(b) else (np.zeros(0, np.intp),) * 2
    if not len(owner):
        return None
    time = lattice.join_arrays(b.time[:, owner], a.time[:, pos])
    data = np.concatenate([b.key[:, owner], a.val[:, pos], b.val[:, owner]], axis=0)
    return Batch(_selected(data, columns), time, -(b.diff[owner] * a.diff[pos]))


def _keyed(message, key_arity: int) -> ArrangedBatch:
    """A message as an arranged batch: a plain batch comes from a loop variable read through a
    delayed trace (runtime.trace.delayed), whose updates -- distinct's output, one iteration
    later -- are in the order of the whole row and time already."""
    if isinstance(message, ArrangedBatch):
        return message
    data = message.data
    return ArrangedBatch(data[:key_arity], data[key_arity:], message.time, message.diff, data)


class JoinOp(Operator):
    """Joins two arrangements; its output rows are (key, left values, right values), or only
    `columns` of them when a select that alone reads the join is done by it
    (runtime.worker.Dataflow._fuse_selects)."""

    name = "join"
    takes_select = True
    columns: tuple | None = None

    def __init__(self, dataflow, left: Arranged, right: Arranged):
        self.left_trace, self.right_trace = left.trace, right.trace
        self.left_key, self.right_key = left.key_arity, right.key_arity
        self.left_handle = left.trace.new_handle()
        self.right_handle = right.trace.new_handle()
        lat = left.stream.lattice
        super().__init__(dataflow, [[left.stream], [right.stream]], [lat, lat], [lat])

    def run(self):
        lat = self.in_lattices[0]
        da = self.receive(0)
        db = self.receive(1)
        parts = []
        da = [_keyed(a, self.left_key) for a in da]
        db = [_keyed(b, self.right_key) for b in db]
        for a in da:
            parts.extend(join_batch_trace(a, self.right_trace, lat, True, self.columns))
        for b in db:
            parts.extend(join_batch_trace(b, self.left_trace, lat, False, self.columns))
        if da and db:
            for a in da:
                for b in db:
                    parts.append(join_batches(a, b, lat, self.columns))
        # Each part goes as it is: its readers concatenate what they receive at most once.
        for part in parts:
            if part is not None:
                self.send(part)
        self.right_handle.set_frontier(self.frontier(0))
        self.left_handle.set_frontier(self.frontier(1))

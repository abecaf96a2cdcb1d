"""Capture: the sink where a collection's changes leave the dataflow.

A capture keeps every update it receives. It answers with the change stream
`(row, time, diff)` (consolidated, in time order) and with the accumulated
contents at a time, decoded to Python values -- or, for bulk readers, as the
consolidated int64 columns themselves (`change_batch`, `contents_batch`) -- and
knows its input frontier, so a caller can tell which times are complete.

Batches are kept as they come and arranged into the capture's trace only when
someone reads, or when they outgrow what is arranged already (so memory stays
within a constant factor of the consolidated history, plus the last batch): a
bulk answer that is read once is sorted once, when read, not once per loop round.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from runtime.batch import Batch
from runtime.operators.basic import one_batch
from runtime.times import Antichain
from runtime.trace import ArrangedBatch, Trace
from runtime.worker import Operator


_UNARRANGED_FLOOR = 4096  # unarranged rows always allowed, however small the trace


class CaptureOp(Operator):
    name = "capture"
    merges_input = True

    def __init__(self, dataflow, stream, types):
        self.types = types
        # A trace nobody reads is never compacted: it keeps every time, and its
        # geometric merging keeps the cost of keeping up with history logarithmic.
        self.trace = Trace(stream.lattice, len(types), 0, name="capture")
        self.unarranged: list[Batch] = []  # received, not yet in the trace
        self.arranged: list[ArrangedBatch] = []  # in arranged order already, not yet in the trace
        self.unarranged_rows = 0
        self.received = 0  # updates received, before consolidation
        super().__init__(dataflow, [[stream]], [stream.lattice], [])

    def run(self):
        self.keep(one_batch(self.receive(0)))

    def keep(self, batch: Batch) -> None:
        self.hold(batch)
        self.bound()

    def bound(self) -> None:
        """Arrange once the unarranged rows outgrow twice the trace (memory stays within a
        constant factor of the consolidated history, plus the last batch: a lone batch is kept
        as it came, however large, as its sender made it anyway -- a loop's whole answer
        leaving it in one batch is sorted when first read, not at once)."""
        if len(self.unarranged) > 1 and self.unarranged_rows > max(_UNARRANGED_FLOOR, 2 * len(self.trace)):
            self.arrange()

    def hold(self, batch: Batch) -> None:
        """Count the batch in and keep it unarranged."""
        self.received += len(batch)
        self.unarranged.append(batch)
        self.unarranged_rows += len(batch)

    def arrange(self) -> None:
        """Put the batches received so far into the trace."""
        for batch in self.arranged:
            self.trace.insert(batch)
        self.arranged = []
        if self.unarranged:
            batch = Batch.concat(self.unarranged)
            self.unarranged, self.unarranged_rows = [], 0
            self.trace.insert(ArrangedBatch.from_batch(batch, len(self.types)))

    def updates(self) -> Batch:
        """All captured updates, consolidated."""
        self.arrange()
        self.trace.compact()
        return self.trace.contents().to_batch()


class Capture:
    """The user-facing view of a capture operator."""

    def __init__(self, op: CaptureOp):
        self.op = op
        self.codec = op.dataflow.codec
        self.types = op.types

    def frontier(self) -> Antichain:
        return self.op.frontier()

    def done(self, time) -> bool:
        """Whether every update at `time` (and before) has arrived."""
        t = (time,) if isinstance(time, int) else tuple(time)
        return not self.frontier().less_equal(t)

    def change_batch(self, since=None, until=None) -> Batch:
        """The consolidated updates with times in [since, until), as columns (in no order)."""
        batch = self.op.updates()
        t = batch.time[0]
        mask = np.ones(len(batch), dtype=bool)
        if since is not None:
            mask &= t >= since
        if until is not None:
            mask &= t < until
        return batch.take(mask)

    def contents_batch(self, time=None) -> Batch:
        """The accumulated contents at `time` (default: everything captured) as columns:
        distinct rows with their counts in `diff` (time 0), in no order."""
        batch = self.op.updates()
        if time is not None:
            t = (time,) if isinstance(time, int) else tuple(time)
            mask = self.op.in_lattices[0].le_arrays(batch.time, np.asarray(t, dtype=np.int64).reshape(-1, 1))
            batch = batch.take(mask)
        t = batch.time[0]
        if len(batch) and batch.time.shape[0] == 1 and t.min() == t.max():
            return batch.with_time(np.zeros((1, len(batch)), dtype=np.int64))  # one time: distinct rows already
        return batch.with_time(np.zeros((1, len(batch)), dtype=np.int64)).consolidate()

    def changes(self, since=None, until=None) -> list[tuple]:
        """Consolidated `(row, time, diff)` triples, sorted by time; times in [since, until)."""
        batch = self.change_batch(since, until)
        order = np.lexsort(tuple(batch.data[::-1]) + tuple(batch.time[::-1]))
        batch = batch.take(order)
        rows = self.codec.decode_rows(batch.data, self.types)
        times = [tuple(x) if len(x) > 1 else x[0] for x in batch.time.T.tolist()]
        return list(zip(rows, times, batch.diff.tolist()))

    def contents(self, time=None) -> Counter:
        """Accumulated multiset {row: count} at `time` (default: everything captured)."""
        batch = self.contents_batch(time)
        rows = self.codec.decode_rows(batch.data, self.types)
        return Counter(dict(zip(rows, batch.diff.tolist())))

"""Consolidate: hold updates until their times are complete, then sum them.

Updates of one time can arrive in different batches; a join may even produce an
update for a time before the rest of that time's updates exist. Consolidate
buffers updates and, once a time is no longer in advance of the input frontier,
emits the net change at that time, so updates that cancel never travel further.
On a loop's back edge this is what makes iteration stop.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import Batch
from runtime.operators.basic import one_batch
from runtime.worker import Operator


class ConsolidateOp(Operator):
    name = "consolidate"
    merges_input = True

    def __init__(self, dataflow, stream):
        self.buffer: Batch | None = None
        super().__init__(dataflow, [[stream]], [stream.lattice], [stream.lattice])

    def run(self):
        incoming = self.receive(0)
        if self.buffer is not None:
            incoming = [*incoming, self.buffer]
        if not incoming:
            return
        pending = one_batch(incoming)
        later = self.frontier(0).in_advance_mask(pending.time)
        held = np.count_nonzero(later)  # on a loop's back edge, usually none
        if held < len(pending):
            self.send((pending.take(~later) if held else pending).consolidate())
        self.buffer = pending.take(later) if held else None
        if held or self.pending:
            self.defer(self.buffer.time if held else ())

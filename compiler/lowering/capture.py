"""Captures that also hand out only what is new, for sessions.

A session reports, at each commit, the changes of every output at the time it
closes. A plain runtime capture answers that by consolidating everything it
ever received and filtering by time, which costs as much as the relation's
whole history on every commit. `ChangeCapture` keeps the batches received
since it was last drained apart: `drain(until)` consolidates just those with
times before `until`, so a commit costs what changed, not what exists, and
hands the consolidated batch -- already in arranged order -- to the history
(for `read` and `change_log`), so nothing is sorted twice. It hands out
columns; the session decodes them only when asked (compiler.results).
"""

from __future__ import annotations

from runtime import Capture
from runtime.batch import Batch
from runtime.operators.capture import CaptureOp
from runtime.trace import ArrangedBatch


class _ChangeCaptureOp(CaptureOp):
    def __init__(self, dataflow, stream, types):
        self.recent: list[Batch] = []
        super().__init__(dataflow, stream, types)

    def keep(self, batch: Batch) -> None:
        super().keep(batch)
        self.recent.append(batch)


class ChangeCapture(Capture):
    def __init__(self, collection):
        super().__init__(_ChangeCaptureOp(collection.dataflow, collection.stream, collection.types))

    def drain(self, until: int) -> Batch | None:
        """The consolidated updates not yet drained with times before `until` (None if none)."""
        recent = self.op.recent
        if not recent:
            return None
        op = self.op
        batch = Batch.concat(recent)
        due = batch.time[0] < until
        all_due = bool(due.all())
        op.recent = [] if all_due else [batch.take(~due)]
        history_is_recent = all_due and len(op.unarranged) == len(recent) and all(a is b for a, b in zip(op.unarranged, recent))
        batch = (batch if all_due else batch.take(due)).consolidate()
        if history_is_recent:  # the consolidated batch is in arranged order: the history takes it as it is
            op.unarranged, op.unarranged_rows = [], 0
            if len(batch):
                op.trace.insert(ArrangedBatch(batch.data, batch.data[:0], batch.time, batch.diff))
        return batch if len(batch) else None

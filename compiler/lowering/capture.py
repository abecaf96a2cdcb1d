"""Captures that also hand out only what is new, for sessions.

A session reports, at each commit, the changes of every output at the time it
closes. A plain runtime capture answers that by consolidating everything it
ever received and filtering by time, which costs as much as the relation's
whole history on every commit. `ChangeCapture` keeps the batches received
since it was last drained apart: `drain(until)` consolidates just those with
times before `until`, so a commit costs what changed, not what exists, and
hands the consolidated batch -- already in arranged order -- to the history
(for `read` and `change_log`), so nothing is sorted twice: a large one goes into
the history's trace as it is, when the history is next read; a small one waits
with the next ones to be arranged together, as the capture's batches do. It
hands out columns; the session decodes them only when asked (compiler.results).
"""

from __future__ import annotations

from runtime import Capture
from runtime.batch import Batch
from runtime.operators.capture import CaptureOp
from runtime.trace import ArrangedBatch


_ARRANGED_AT = 4096  # a drained batch of this many rows goes into the history's trace as it is


class _ChangeCaptureOp(CaptureOp):
    def __init__(self, dataflow, stream, types):
        self.recent: list[Batch] = []
        super().__init__(dataflow, stream, types)

    def keep(self, batch: Batch) -> None:
        # Not arranged here when large, as a plain capture's are: the commit that drains it
        # consolidates it and hands that to the history, and arranging it here as well sorted a
        # bulk answer twice (tc-2k: 0.2 s). Until then `recent` holds it either way.
        self.hold(batch)
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
        times = batch.time[0]
        # (A commit's few rows: compared in Python, cheaper than numpy's calls on them.)
        all_due = max(times.tolist(), default=until - 1) < until if len(times) <= 64 else bool((times < until).all())
        due = None if all_due else times < until
        op.recent = [] if all_due else [batch.take(~due)]
        tail = len(op.unarranged) - len(recent)  # where the history's unarranged batches are these
        history_is_recent = all_due and tail >= 0 and all(a is b for a, b in zip(op.unarranged[tail:], recent))
        batch = (batch if all_due else batch.take(due)).consolidate()
        if history_is_recent:
            # The history's last unarranged batches are these: the consolidated batch, in
            # arranged order, stands for them. A large one goes into the history's trace as it
            # is when the history is next read (a bulk answer is neither sorted again nor
            # copied when nobody reads it); small ones wait to be arranged together, at a read
            # or once they outgrow the history, so many small commits are not kept one by one.
            del op.unarranged[tail:]
            op.unarranged_rows -= sum(len(b) for b in recent)
            if len(batch) >= _ARRANGED_AT:
                op.arranged.append(ArrangedBatch(batch.data, batch.data[:0], batch.time, batch.diff))
            elif len(batch):
                op.unarranged.append(batch)
                op.unarranged_rows += len(batch)
            op.bound()
        return batch if len(batch) else None

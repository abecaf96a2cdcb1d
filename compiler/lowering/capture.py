"""Captures that also hand out only what is new, for sessions.

A session reports, at each commit, the changes of every output at the time it
closes. A plain runtime capture answers that by consolidating everything it
ever received and filtering by time, which costs as much as the relation's
whole history on every commit. `ChangeCapture` keeps, besides the history
(for `read` and `change_log`), the batches received since it was last
drained: `drain(until)` consolidates just those with times before `until`,
so a commit costs what changed, not what exists.
"""

from __future__ import annotations

import numpy as np

from runtime import Capture
from runtime.batch import Batch
from runtime.kernels import radix_lexsort
from runtime.symbols import FLOAT, STR, collection_paused
from runtime.operators.capture import CaptureOp


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

    def drain(self, until: int) -> list[tuple[tuple, int]]:
        """Consolidated (row, diff) of the updates not yet drained with times before `until`."""
        batch = self._take_due(until)
        if batch is None:
            return []
        return self._pairs(batch)

    def drain_sorted(self, until: int, unsigned: frozenset[int] = frozenset()) -> list[tuple[tuple, int]]:
        """`drain`, in the order Python sorts the decoded (row, diff) pairs.

        The order is found on the columns (numbers as they are, floats by
        their order-preserving codes, strings by alphabetical rank, the
        `unsigned` columns with the sign bit flipped), so
        sorting a million changes costs a radix lexsort, not a million tuple
        comparisons.
        """
        batch = self._take_due(until)
        if batch is None:
            return []
        keys = [batch.diff]
        for j in reversed(range(len(self.types))):
            keys.append(self._sort_key(batch.data[j], self.types[j], j in unsigned))
        return self._pairs(batch.take(radix_lexsort(keys)))

    def _pairs(self, batch: Batch) -> list[tuple[tuple, int]]:
        with collection_paused():
            return list(zip(self.codec.decode_rows(batch.data, self.types), batch.diff.tolist()))

    def _sort_key(self, column: np.ndarray, column_type: str, unsigned: bool) -> np.ndarray:
        """An int64 column that orders as Python orders the decoded values."""
        if column_type == STR:
            ids, inverse = np.unique(column, return_inverse=True)
            strings = np.array(self.codec.symbols.strings(ids), dtype=object)
            rank = np.empty(len(ids), dtype=np.int64)
            rank[np.argsort(strings, kind="stable")] = np.arange(len(ids))
            return rank[inverse]
        if column_type == FLOAT:
            # Stored floats are order-preserving codes; -0.0 (code -1) equals 0.0.
            return np.where(column == -1, 0, column)
        return column ^ np.int64(-(2**63)) if unsigned else column

    def _take_due(self, until: int) -> Batch | None:
        """The consolidated updates not yet drained with times before `until` (None if none)."""
        recent = self.op.recent
        if not recent:
            return None
        batch = Batch.concat(recent)
        due = batch.time[0] < until
        self.op.recent = [] if due.all() else [batch.take(~due)]
        batch = batch.take(due).consolidate()
        return batch if len(batch) else None


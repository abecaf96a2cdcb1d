"""The count ledger: an input relation's row counts, kept to refuse removing what is not there.

A relation (Datalog's, or a SQL table) holds each row some number of times, never fewer
than zero. A dataflow collection has no such floor: a removal of a row that is not there
becomes a count of -1 that flows on silently, and a later insert of the row cancels it
instead of adding it. Materialize refuses such retractions; DDlog keeps its inputs to
the same end. A `CountLedger` keeps every update submitted to one input, arranged by row
(a `Trace` compacted to the input's open time), and checks each submission that removes
rows: for every row it removes, the count accumulated in time order over everything
submitted, this submission included, stays >= 0 at every time. A failed check raises
`NegativeCount` and records nothing, so the caller can refuse the whole submission.

Submissions without removals are kept as they are, unarranged, until a removal needs
them (or many have piled up), so a bulk load that is never changed costs memory only.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import INT, Batch, lead_column
from runtime.grouping import dense_ids
from runtime.times import Antichain, Lattice
from runtime.trace import ArrangedBatch, Trace

_PILE = 64  # unarranged submissions kept before they are arranged anyway


class NegativeCount(Exception):
    """A submission would take a row's count below zero."""

    def __init__(self, row: np.ndarray, time: int, count: int):
        super().__init__(f"row {row.tolist()} would have count {count} at time {time}")
        self.row, self.time, self.count = row, time, count


class CountLedger:
    def __init__(self, arity: int):
        self.lattice = Lattice()
        self.trace = Trace(self.lattice, arity, 0, name="count ledger")
        self.handle = self.trace.new_handle()
        self.unarranged: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (data, diff, time) as submitted

    def submit(self, data: np.ndarray, diff: np.ndarray, time: np.ndarray, open_time: int) -> None:
        """Record the updates (data (arity, n), diff (n,), time (n,)), all at times >=
        `open_time`, the least time any later submission may use; NegativeCount if a row
        they remove would then have a negative count at some time."""
        data = _owned(data)
        if (diff < 0).any():
            self._check(data, diff, time)
        self.unarranged.append((data, diff, time))  # a load's diff and time are broadcast scalars: no copies yet
        if self.handle.frontier.elements != ((open_time,),):
            self.handle.set_frontier(Antichain(self.lattice, [(open_time,)]))
        if len(self.unarranged) >= _PILE:
            self._arrange()

    def _arrange(self) -> None:
        if self.unarranged:
            batch = Batch(
                np.concatenate([data for data, _, _ in self.unarranged], axis=1),
                np.concatenate([time for _, _, time in self.unarranged]).astype(INT).reshape(1, -1),
                np.concatenate([diff for _, diff, _ in self.unarranged]).astype(INT),
            )
            self.unarranged = []
            self.trace.insert(ArrangedBatch.from_batch(batch, self.trace.key_arity))

    def _check(self, data, diff, time) -> None:
        self._arrange()
        data_lead = lead_column(data)
        removing = diff < 0
        removed, removed_lead = data[:, removing], data_lead[removing]
        _, first = dense_ids(removed_lead, removed)
        probe_lead, probe = removed_lead[first], removed[:, first]
        past = self.trace.lookup(probe)
        # The removed rows' history and this submission's updates of them (by leading
        # column: a row sharing it with one is checked too, as its own row), in one table.
        mine = np.isin(data_lead, probe_lead)
        rows = np.concatenate([probe[:, past.owner], data[:, mine]], axis=1)
        leads = np.concatenate([probe_lead[past.owner], data_lead[mine]])
        times = np.concatenate([past.time[0], time[mine]]).astype(INT, copy=False)
        diffs = np.concatenate([past.diff, diff[mine]]).astype(INT, copy=False)
        row_id, representative = dense_ids(leads, rows)
        order = np.lexsort((times, row_id))
        row_id, times, diffs = row_id[order], times[order], diffs[order]
        # Updates at one time are simultaneous: the count is checked after each time's sum.
        last_of_time = np.ones(len(order), dtype=bool)
        last_of_time[:-1] = (row_id[1:] != row_id[:-1]) | (times[1:] != times[:-1])
        running = np.cumsum(diffs)
        row_start = np.ones(len(order), dtype=bool)
        row_start[1:] = row_id[1:] != row_id[:-1]
        before_row = np.maximum.accumulate(np.where(row_start, np.arange(len(order)), 0))
        count = running - (running[before_row] - diffs[before_row])
        bad = np.flatnonzero(last_of_time & (count < 0))
        if len(bad):
            i = bad[np.argmin(times[bad])]  # the earliest time a count goes negative
            raise NegativeCount(rows[:, representative[row_id[i]]], int(times[i]), int(count[i]))


def _owned(a: np.ndarray) -> np.ndarray:
    """`a` as a writable int64 array (the compiled kernels take no read-only views); the
    caller hands its rows over and does not change them afterwards."""
    return a if a.flags.writeable and a.dtype == INT else np.array(a, dtype=INT)


__all__ = ["CountLedger", "NegativeCount"]

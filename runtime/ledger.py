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

A ledger of few rows (up to _SMALL) keeps them in a dict instead, each row's updates in a
short tuple, and checks a removal in Python: a single update's check is then a few dict
operations instead of a trace lookup. Past _SMALL rows it moves them into the trace for good.
In the trace, submissions are kept as they are, unarranged, until many have piled up (or a
large removal needs them arranged), so a bulk load that is never changed costs memory only.
The rows of small ones are also listed by row, so that checking a single update's removal
reads the trace and that list instead of arranging the last update first.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import INT, Batch, lead_column
from runtime.grouping import dense_ids
from runtime.times import Antichain, Lattice
from runtime.trace import ArrangedBatch, Trace

_PILE = 64  # unarranged submissions kept before they are arranged anyway
_FEW = 32  # submissions of at most this many rows are checked row by row in Python
_SMALL = 1 << 14  # rows a ledger keeps in a dict before it moves them into its trace (a bulk load past it
# stays columns: making each row a Python tuple costs about a microsecond)
_SHORT = 8  # a row's updates in the dict are compacted when more than this


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
        self.recent: dict[tuple, list[tuple[int, int]]] = {}  # the unarranged rows of small submissions: (time, diff)s
        self.unlisted = False  # some unarranged submission is too large to be in `recent`
        self.open_time = 0  # the least time a later submission may use, as the last one said
        # While the rows are few: every row's updates as one flat tuple (time, diff, time,
        # diff, ...): tuples of ints, which the garbage collector stops tracking, where lists
        # would add a tracked object per row to every full collection (None once in the trace).
        self.small: dict[tuple, tuple[int, ...]] | None = {}

    def submit(self, data: np.ndarray, diff: np.ndarray, time: np.ndarray, open_time: int) -> None:
        """Record the updates (data (arity, n), diff (n,), time (n,)), all at times >=
        `open_time`, the least time any later submission may use; NegativeCount if a row
        they remove would then have a negative count at some time."""
        self.open_time = open_time
        if self.small is not None:
            if len(self.small) + data.shape[1] <= _SMALL:
                self._submit_small(data, diff, time, open_time)
                return
            self._move_to_trace()
        data = _owned(data)
        if data.shape[1] <= _FEW:
            rows = [tuple(row) for row in data.T.tolist()]
            times, diffs = time.tolist(), diff.tolist()
            if min(diffs, default=0) < 0:
                if self.unlisted:
                    self._arrange()
                    self._check_many(data, diff, time)
                else:
                    self._check_few(rows, diffs, times)
            for row, t, d in zip(rows, times, diffs):
                self.recent.setdefault(row, []).append((t, d))
        else:
            if (diff < 0).any():
                self._arrange()
                self._check_many(data, diff, time)
            self.unlisted = True
        self.unarranged.append((data, diff, time))
        if len(self.unarranged) >= _PILE:
            self._arrange()

    def _submit_small(self, data, diff, time, open_time: int) -> None:
        """submit() while the rows are kept in the dict."""
        rows = [tuple(row) for row in data.T.tolist()]
        times, diffs = time.tolist(), diff.tolist()
        small = self.small
        if min(diffs, default=0) < 0:
            _check({row: _pairs(small.get(row, ())) for row, d in zip(rows, diffs) if d < 0}, rows, times, diffs)
        for row, t, d in zip(rows, times, diffs):
            changes = small.get(row, ()) + (t, d)
            if len(changes) > 2 * _SHORT:
                changes = _compacted(changes, open_time)
            if changes:
                small[row] = changes
            else:  # nothing left to remember
                small.pop(row, None)

    def _move_to_trace(self) -> None:
        """From the dict into the trace, for good: the rows have become too many."""
        small, self.small = self.small, None
        updates = [(row, t, d) for row, changes in small.items() for t, d in _pairs(changes)]
        if updates:
            arity = self.trace.key_arity
            data = np.array([row for row, _, _ in updates], dtype=INT).reshape(len(updates), arity).T.copy()
            self.unarranged.append((data, np.array([d for _, _, d in updates], dtype=INT), np.array([t for _, t, _ in updates], dtype=INT)))
            self.unlisted = True
            self._arrange()

    def _arrange(self) -> None:
        if self.unarranged:
            # Times before the open time are indistinguishable now: the trace compacts them
            # as it merges (its reader's frontier only matters there).
            if self.handle.frontier.elements != ((self.open_time,),):
                self.handle.set_frontier(Antichain(self.lattice, [(self.open_time,)]))
            batch = Batch(
                np.concatenate([data for data, _, _ in self.unarranged], axis=1),
                np.concatenate([time for _, _, time in self.unarranged]).astype(INT).reshape(1, -1),
                np.concatenate([diff for _, diff, _ in self.unarranged]).astype(INT),
            )
            self.unarranged, self.recent, self.unlisted = [], {}, False
            self.trace.insert(ArrangedBatch.from_batch(batch, self.trace.key_arity))

    def _check_few(self, rows: list[tuple], diffs: list[int], times: list[int]) -> None:
        """The check for a few rows (a single update's remove), with every unarranged
        submission in `recent`: each row's history as a list, where the columnar check's
        two dozen array calls cost more than the work."""
        removed = sorted({row for row, d in zip(rows, diffs) if d < 0})
        history: dict[tuple, list[tuple[int, int]]] = {row: list(self.recent.get(row, ())) for row in removed}
        if len(self.trace):
            past = self.trace.lookup(np.array(removed, dtype=INT).reshape(len(removed), self.trace.key_arity).T)
            for owner, t, d in zip(past.owner.tolist(), past.time[0].tolist(), past.diff.tolist()):
                history[removed[owner]].append((t, d))
        _check(history, rows, times, diffs)

    def _check_many(self, data, diff, time) -> None:
        """The check over arrays, with every submission before this one in the trace."""
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


def _compacted(changes: tuple, open_time: int) -> tuple:
    """A row's flat updates with those before the open time summed into one (no later update
    can come before any of them) and the later ones summed per time (a time's updates count
    together)."""
    past, later = 0, {}
    for t, d in _pairs(changes):
        if t < open_time:
            past += d
        else:
            later[t] = later.get(t, 0) + d
    kept = ([(open_time - 1, past)] if past else []) + [(t, d) for t, d in sorted(later.items()) if d]
    return tuple(x for pair in kept for x in pair)


def _pairs(changes: tuple) -> list[tuple[int, int]]:
    """A flat (time, diff, time, diff, ...) tuple as a list of (time, diff) pairs."""
    return list(zip(changes[::2], changes[1::2]))


def _check(history: dict[tuple, list[tuple[int, int]]], rows: list[tuple], times: list[int], diffs: list[int]) -> None:
    """NegativeCount for the earliest time some removed row's count is below zero: its
    updates so far (`history`: (time, diff)s) and this submission's, summed in time order (a
    time's together)."""
    for row, t, d in zip(rows, times, diffs):
        if row in history:
            history[row].append((t, d))
    worst = None  # (time, row, count) of the earliest negative count
    for row, changes in history.items():
        changes.sort()
        count = 0
        for i, (t, d) in enumerate(changes):
            count += d
            if count < 0 and (i + 1 == len(changes) or changes[i + 1][0] != t):
                if worst is None or t < worst[0]:
                    worst = (t, row, count)
                break
    if worst is not None:
        t, row, count = worst
        raise NegativeCount(np.array(row, dtype=INT), t, count)


def _owned(a: np.ndarray) -> np.ndarray:
    """`a` as a writable int64 array (the compiled kernels take no read-only views); the
    caller hands its rows over and does not change them afterwards."""
    return a if a.flags.writeable and a.dtype == INT else np.array(a, dtype=INT)


__all__ = ["CountLedger", "NegativeCount"]

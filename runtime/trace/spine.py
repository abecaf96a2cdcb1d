"""The spine: a trace's updates in sorted segments, merged geometrically and compacted.

A trace stores its updates in one (width, capacity) int64 block, rows being
the key columns, the value columns, the time coordinates and the diff. The
used part is a sequence of *segments*, oldest and largest first, each sorted
by (key, value, time) and consolidated. An inserted batch is copied in as a
new last segment; then, while the last segment is at least a quarter of the size
of the one before it (MERGE_RATIO), the two merge (runtime.trace.kernels.merge_segments)
-- a batch that is one block (an arrangement's sorted output) is merged from where
it is when its first merge is due, neither copied in nor copied aside. This
keeps O(log n) segments and amortised O(log n) merge work per update, and
since the last segment is the one that grows, a merge rewrites only the tail
of the block, in place (a spare block holds the newer segment meanwhile). A
merge applies logical compaction: every time is advanced by
`since`, the meet of the frontiers of the trace's readers, and identical
updates are consolidated, so updates that cancel once their times are
indistinguishable disappear. A lookup searches every segment in one call,
helped by the block's fences (the key at every FENCE-th position).

A large batch (BACKGROUND_FROM updates or more) is inserted on the machine's
other core (runtime.parallel) while this one goes on: every later use of the
trace but its insertion bounds waits for that insert first. In a load, the
insert of one round's updates overlaps with the rest of the round; a reader
that need not look at the trace (distinct whose input it is, in a first load)
does not wait for it at all. A dataflow's step waits for every such insert
before it returns, so no work of a step is left running after it. A merge of
SPLIT_MERGE_FROM updates or more runs in two halves on both cores, cut between
two (key, value)s (`_merge_in_halves`): in a 1% update of a large closure, the
cascade that reaches the trace's first segment is what its reader waits for.

A block of RESERVE_FROM bytes or more is address space with room for as many
updates as the machine has memory for (runtime.memory.address_space): only the
pages written take memory, and the store is never copied into a larger one again.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from runtime import parallel
from runtime.memory import address_space, physical_memory
from runtime.parallel import in_background
from runtime.times import Antichain, Lattice
from runtime.trace.batch import ArrangedBatch
from runtime.trace.kernels import (FENCE, MERGE_RATIO, NO_ROOM, count_segments, lookup_segments, merge_into, merge_segments, merge_split,
                                   move_down, settle)

_MAX, _MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
BACKGROUND_FROM = 16_384  # batches of this many updates or more are inserted on the other core
SPLIT_MERGE_FROM = 1 << 20  # merges of this many updates or more run in two halves, on both cores
RESERVE_FROM = 1 << 24  # bytes (16 MB): a store growing to this size or more gets the machine's memory as its room


class Matches(NamedTuple):
    """Updates found by a lookup: the probe each matched, and its val, time, diff."""

    owner: np.ndarray
    val: np.ndarray
    time: np.ndarray
    diff: np.ndarray


class TraceHandle:
    """One reader's view of a trace; its frontier bounds the trace's compaction."""

    __slots__ = ("trace", "frontier")

    def __init__(self, trace: "Trace", frontier: Antichain):
        self.trace = trace
        self.frontier = frontier

    def set_frontier(self, frontier: Antichain) -> None:
        if frontier != self.frontier:
            self.frontier = frontier
            self.trace._since_changed()

    def release(self) -> None:
        self.trace.handles.remove(self)
        self.trace._since_changed()


class Trace:
    delay = 0  # what readers add to the last time coordinate of its updates (runtime.trace.delayed)

    def __init__(self, lattice: Lattice, key_arity: int, val_arity: int, name: str = "trace"):
        self.lattice = lattice
        self.key_arity = key_arity
        self.val_arity = val_arity
        self.name = name
        self.width = key_arity + val_arity + lattice.depth + 1
        self.store = np.empty((self.width, 0), np.int64)
        self._ends = np.zeros(64, np.int64)  # segment ends in the store, in order: the first _count
        self._count = 0
        self._spare = np.empty((self.width, 0), np.int64)  # where a merge keeps the newer segment
        self._no_block = np.empty((self.width, 0), np.int64)  # settle's `whole` for a batch that is not one block
        self.fence = np.empty((key_arity, 0), np.int64)  # fence[:, q]: the key at position q * FENCE
        self.handles: list[TraceHandle] = []
        self._since = Antichain(lattice, [lattice.minimum()])
        self._since_stale = False  # a handle's frontier moved: `since` is to be derived again
        # Matches per probe in recent lookups: sizes the next lookup's output
        # so that it rarely has to grow (growing repeats the search).
        self.fanout = 2.0
        # The least diff, then the greatest time coordinates, of every update ever inserted
        # (merges add updates up and advance times to `since`: see `times_at_most`).
        self.inserted = np.array([_MAX] + [_MIN] * lattice.depth, np.int64)
        self._pending = None  # the future of an insert running on the other core

    def wait(self) -> None:
        """Wait for the insert running on the other core to finish (its errors are raised here).
        Both halves of a split kernel call (runtime.parallel) may wait at once. (Callers check
        `_pending` first: a single update's rounds read traces dozens of times.)"""
        pending = self._pending
        if pending is not None:
            pending.result()
            if self._pending is pending:
                self._pending = None

    @property
    def only_insertions(self) -> bool:
        """Every update ever inserted had a positive diff (so every count held is positive)."""
        return bool(self.inserted[0] > 0)

    def times_at_most(self) -> np.ndarray:
        """A (depth,) bound on each coordinate of every time held (under the product order):
        the greatest inserted, raised to the least of `since` (merges advance a coordinate to
        at most the larger of it and that)."""
        since = self.since.columns()
        return np.maximum(self.inserted[1:], since.min(axis=1)) if since.shape[1] else self.inserted[1:].copy()

    def __len__(self) -> int:
        """The number of updates held (the trace's size)."""
        if self._pending is not None:
            self.wait()
        return self._used()

    def _used(self) -> int:
        return int(self._ends[self._count - 1]) if self._count else 0

    @property
    def ends(self) -> list[int]:
        """Where each segment ends in the store, oldest first."""
        if self._pending is not None:
            self.wait()
        return self._ends[: self._count].tolist()

    def __repr__(self):
        return f"Trace({self.name}, segments={self.sizes()})"

    def sizes(self) -> list[int]:
        return [b - a for a, b in zip([0] + self.ends, self.ends)]

    def new_handle(self) -> TraceHandle:
        handle = TraceHandle(self, self.since)
        self.handles.append(handle)
        return handle

    def _since_changed(self) -> None:
        # Readers move their frontiers every round, the trace is read or merged less often:
        # the meet is taken when it is next needed.
        self._since_stale = bool(self.handles)

    @property
    def since(self) -> Antichain:
        """The meet of the readers' frontiers: times not in advance of it are indistinguishable."""
        if self._since_stale:
            since = self.handles[0].frontier
            for h in self.handles[1:]:
                if h.frontier is not since:
                    since = since.meet(h.frontier)
            self._since = since
            self._since_stale = False
        return self._since

    # -- the segments ------------------------------------------------------------

    def segment(self, s: int) -> ArrangedBatch:
        """Segment s as an ArrangedBatch of views into the store (valid until the next insert)."""
        start = self.ends[s - 1] if s else 0
        return self._view(start, self.ends[s])

    def segments(self) -> list[ArrangedBatch]:
        return [self.segment(s) for s in range(len(self.ends))]

    def _view(self, start: int, end: int) -> ArrangedBatch:
        k, kv = self.key_arity, self.key_arity + self.val_arity
        block = self.store[:, start:end]
        return ArrangedBatch(block[:k], block[k:kv], block[kv:-1], block[-1])

    # -- inserting and merging ---------------------------------------------------

    def insert(self, batch: ArrangedBatch) -> None:
        """Copy an arranged batch in as the newest segment, then merge as the spine's shape asks
        (a large batch on the other core: see the module's docstring). The batch's arrays are
        not to change afterwards."""
        if not len(batch.diff):
            return
        if self._pending is not None:
            self.wait()
        if not self.lattice.is_product:
            end = self._used()
            self._reserve(end + len(batch))
            self._insert_general(batch, end)
            return
        since = self.since.columns()
        if len(batch.diff) >= BACKGROUND_FROM:
            # The bounds now, so that readers of them need not wait (settle's own go to a copy).
            self.inserted[0] = min(self.inserted[0], batch.diff.min())
            np.maximum(self.inserted[1:], batch.time.max(axis=1), out=self.inserted[1:])
            scratch = self.inserted.copy()
            self._pending = in_background(lambda: self._settle(batch, since, scratch))
            if self._pending is not None:
                return
        self._settle(batch, since, self.inserted)

    def _settle(self, batch: ArrangedBatch, since: np.ndarray, inserted: np.ndarray) -> None:
        # (A store too small to hold a merge that large needs no look at the threads.)
        limit = _MAX if self.store.shape[1] < SPLIT_MERGE_FROM or not parallel.splittable() else SPLIT_MERGE_FROM
        whole = batch.block
        if whole is None or whole.shape != (self.width, len(batch)) or not whole.flags.c_contiguous:
            whole = self._no_block
        while True:
            count = settle(self.store, self._spare, self._ends, self._count, self.key_arity + self.val_arity,
                           since, self.fence, batch.key, batch.val, batch.time, batch.diff, inserted, limit, whole)
            if count != NO_ROOM:
                break
            end, n = self._used(), len(batch)
            self._reserve(end + n)
            first = int(self._ends[0]) if self._count else end + n
            if self._spare.shape[1] < end + n - first:  # room for any merge above the first segment
                self._spare = self._block(max(end + n - first, self._spare.shape[1] * 2))
        if count >= 0:
            self._count = count
            return
        self._count = ~count
        self._maintain(self._used(), since)  # the merges settle left: each of `limit` updates or more

    def _merge_in_halves(self, a: int, b: int, c: int, since: np.ndarray) -> int:
        """merge_segments of [a, b) and [b, c) in two halves that share no (key, value), on both
        cores: the lower one in place; the upper one reading copies of the rows the lower one
        writes over before it reads them (the newer segment, and as many of the older one's
        upper rows as the newer one has lower rows). Then the upper half's updates move down
        next to the lower half's (consolidating may have shortened it)."""
        kv = self.key_arity + self.val_arity
        i, j, nf = merge_split(self.store, a, b, c, kv, since)
        if i < 0:
            return merge_segments(self.store, a, b, c, kv, since, self._spare)
        newer = c - b
        if self._spare.shape[1] < newer + j:
            self._spare = self._block(newer + j)
        store, spare = self.store, self._spare
        spare[:, :newer] = store[:, b:c]
        spare[:, newer : newer + j] = store[:, i : i + j]
        low, high = parallel.both(lambda: merge_into(store, spare, a, i, a, 0, 0, j, i + j, kv, nf, since),
                                  lambda: merge_into(store, spare, i, b, i + j, newer, j, newer, c, kv, nf, since))
        if high and a + low < i + j:
            move_down(store, i + j, a + low, high)
        return low + high

    def _insert_general(self, batch: ArrangedBatch, end: int) -> None:
        """insert for lattices whose compaction is not per coordinate (AltNeu)."""
        n = len(batch)
        k, kv = self.key_arity, self.key_arity + self.val_arity
        store = self.store
        store[:k, end : end + n] = batch.key
        store[k:kv, end : end + n] = batch.val
        store[kv:-1, end : end + n] = batch.time
        store[-1, end : end + n] = batch.diff
        self.inserted[0] = min(self.inserted[0], batch.diff.min())
        self.inserted[1:] = np.maximum(self.inserted[1:], batch.time.max(axis=1))
        self._ends[self._count] = end + n
        self._count += 1
        self._maintain(end, self.since.columns())

    def _reserve(self, size: int) -> None:
        """Room for `size` updates in the store, for their fences, and for one more segment."""
        if size > self.store.shape[1]:
            # Four times the room: pages of the block not yet written are not resident, and each
            # growth copies the store into fresh pages (faulted in one by one), so growing less
            # often copies less (tc-2k batch: wall -6%, peak RSS 1.70-1.94 -> 1.54-1.57 GB). A
            # large store gets room for as many updates as the machine has memory for, and so
            # grows no more (`_block`).
            grown = self._block(max(size, 4 * self.store.shape[1], 16))
            used = self._used()
            grown[:, :used] = self.store[:, :used]
            if self.store.shape[1] > self._spare.shape[1]:
                self._spare = self.store  # merges copy their newer segment somewhere: reuse memory already touched
            self.store = grown
        fences = (size + FENCE - 1) // FENCE
        if self.fence.shape[1] < fences:
            grown = np.empty((self.key_arity, max(fences, 2 * self.fence.shape[1])), np.int64)
            grown[:, : self.fence.shape[1]] = self.fence
            self.fence = grown
        if self._count == len(self._ends):
            self._ends = np.concatenate([self._ends, np.zeros(len(self._ends), np.int64)])

    def _block(self, capacity: int) -> np.ndarray:
        """A (width, capacity) block; from RESERVE_FROM bytes on, one with room for as many
        updates as the machine has memory for (runtime.memory.address_space)."""
        if capacity * self.width * 8 >= RESERVE_FROM:
            block = address_space(self.width, max(capacity, physical_memory() // (self.width * 8)))
            if block is not None:
                return block
        return np.empty((self.width, capacity), np.int64)

    def _maintain(self, changed: int, since: np.ndarray) -> None:
        """Merge while the spine asks for it, advancing times by `since` (product lattices);
        positions from `changed` on were rewritten."""
        while self._count >= 2:
            ends = self._ends
            c, b = int(ends[self._count - 1]), int(ends[self._count - 2])
            a = int(ends[self._count - 3]) if self._count >= 3 else 0
            if b - a > MERGE_RATIO * (c - b):
                break
            self._merge_last(a, b, c, since)
            changed = min(changed, a)
        self._refence(changed)

    def _refence(self, changed: int) -> None:
        """Fences again for the positions from `changed` on."""
        n = self._used()
        count = (n + FENCE - 1) // FENCE
        first = (changed + FENCE - 1) // FENCE
        if first < count:
            self.fence[:, first:count] = self.store[: self.key_arity, first * FENCE : n : FENCE]

    def _merge_last(self, a: int, b: int, c: int, since: np.ndarray) -> None:
        """Merge the last two segments [a, b) and [b, c) into one at [a, a + m), times advanced
        by `since` (product lattices; others advance by the trace's own `since`)."""
        product = self.lattice.is_product
        need = c - b if product else c - a
        if self._spare.shape[1] < need:
            self._spare = self._block(need)
        if product and c - a >= SPLIT_MERGE_FROM and parallel.splittable():
            m = self._merge_in_halves(a, b, c, since)
        elif product:
            m = merge_segments(self.store, a, b, c, self.key_arity + self.val_arity, since, self._spare)
        else:
            m = self._merge_general(a, c, self._spare)
            self.store[:, a : a + m] = self._spare[:, :m]
        self._count -= 1 if m else 2
        if m:
            self._ends[self._count - 1] = a + m

    def _merge_general(self, a: int, c: int, out: np.ndarray) -> int:
        """Merge [a, c) for lattices whose advance is not per coordinate (AltNeu): advance,
        then arrange again."""
        view = self._view(a, c)
        time = self.lattice.advance_by(view.time, self.since)
        merged = ArrangedBatch.build(view.key, view.val, time, view.diff)
        m = len(merged)
        k, kv = self.key_arity, self.key_arity + self.val_arity
        out[:k, :m] = merged.key
        out[k:kv, :m] = merged.val
        out[kv:-1, :m] = merged.time
        out[-1, :m] = merged.diff
        return m

    def compact(self) -> None:
        """Merge every segment into one, fully compacted (used by tests and idle time)."""
        if self._pending is not None:
            self.wait()
        since = self.since.columns()
        while self._count >= 2:
            a = int(self._ends[self._count - 3]) if self._count >= 3 else 0
            self._merge_last(a, int(self._ends[self._count - 2]), int(self._ends[self._count - 1]), since)
        if self._count == 1:  # a single segment: compact it against an empty one
            end = int(self._ends[0])
            self._reserve(end)  # room for the extra (empty) segment
            self._ends[1] = end
            self._count = 2
            self._merge_last(0, end, end, since)
        self._refence(0)

    # -- reading -----------------------------------------------------------------

    def lookup(self, probe_key: np.ndarray) -> Matches:
        """All updates whose key equals a probe key (a column of `probe_key`), as `Matches`."""
        if self._pending is not None:
            self.wait()
        probes = probe_key.shape[1]
        size = 16 + int(self.fanout * 1.25 * probes) if probes and self._count else 0
        out = self._matches(size)
        end = lookup_segments(self.store, self.fence, self._ends[: self._count], self.key_arity, probe_key, out[0], out[1], 0)
        if end < 0:  # more matches than room: size exactly and look again
            out = self._matches(-end)
            end = lookup_segments(self.store, self.fence, self._ends[: self._count], self.key_arity, probe_key, out[0], out[1], 0)
        self.observe_fanout(probes, end)
        owner, rows = out[0][:end], out[1][:, :end]
        v, d = self.val_arity, self.lattice.depth
        return Matches(owner, rows[:v], rows[v : v + d], rows[-1])

    def observe_fanout(self, probes: int, found: int) -> None:
        """A lookup of `probes` keys found `found` updates: the next lookup's room follows."""
        if probes:
            self.fanout = 0.5 * self.fanout + 0.5 * found / probes if found <= self.fanout * probes else found / probes

    def _matches(self, size: int):
        return np.empty(size, np.int64), np.empty((self.width - self.key_arity, size), np.int64)

    def parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(block, fences, segment ends): what kernels that walk the trace in place take."""
        if self._pending is not None:
            self.wait()
        return self.store, self.fence, self._ends[: self._count]

    def count(self, probe_key: np.ndarray) -> np.ndarray:
        """For each probe key, how many updates have it (an upper bound on its matches)."""
        if self._pending is not None:
            self.wait()
        return count_segments(self.store, self.fence, self._ends[: self._count], self.key_arity, probe_key)

    def contents(self) -> ArrangedBatch:
        """All updates, merged into one arranged batch (a copy; no compaction)."""
        if not self.ends:
            return ArrangedBatch.empty(self.key_arity, self.val_arity, self.lattice.depth)
        if len(self.ends) == 1:
            return self._view(0, self.ends[0]).copy()
        view = self._view(0, self._used())
        return ArrangedBatch.build(view.key, view.val, view.time, view.diff)

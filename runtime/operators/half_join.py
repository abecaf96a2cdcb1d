"""Half join: a stream of updates looked up in an arrangement as of each update's time.

For every stream update `(row, t, r)` whose first `key` columns are `k`, the
half join emits `(row ++ w, t, r * s)` for every update `(k, w, t', s)` of the
arrangement with `t' <= t` (or, when `strict`, `t' < t`). The output is at the
stream update's own time: arrangement updates that come later never touch it.
So the output accumulated at `T` is the sum over stream updates at `t <= T` of
the update joined with the arrangement *as it was at t* -- not the join of the
two accumulated collections (differential dataflow's `dogsdogsdogs::half_join`).
Unlike `join`, the stream is never arranged: each update is looked up once,
when the arrangement has all of its updates at times `<= t` (its input frontier
has passed `t`), and then forgotten.

Two uses: an as-of join (orders looked up in the prices of their moment), and
the steps of a delta query (runtime.delta_query), whose alt/neu ordering is the
choice between `t' <= t` ("neu": the arrangement's updates at the same time
count) and `t' < t` ("alt": they do not). In an AltNeu scope the lattice makes
that distinction itself; on the epoch and iteration lattices `strict=True` makes
it without entering the arrangement into a second scope, so one arrangement per
(relation, key) serves both orderings. Compaction must keep strict comparisons
exact: the trace handle is held one step (in every coordinate) behind the
stream's frontier, so no compacted time can become equal to a later stream time.

An *extension* (`ExtendOp`) is several half joins that append the same new
columns, intersected: each `Lookup` keys an arrangement by some of the
stream's columns, its values are the new columns (in its own order), and the
output is `(row ++ w, t, r * s1(w) * s2(w) * ...)` where `s_i(w)` is the
multiplicity arrangement i gives (key_i, w) as of t -- the chain of half joins
`stream |> L1 |> L2 (keyed by all its columns) |> ...`, computed without its
intermediate results. Which lookup proposes the candidates `w` is decided per
stream update: the one with the fewest updates under the update's key; the
others validate them (dogsdogsdogs' `propose`/`validate`, the step of a
worst-case optimal delta query: a triangle's hub two-paths are never formed).
A half join is the extension with one lookup.

Fuel. A burst of stream updates may match millions of arrangement updates (a
hub key). The operator looks up the ready probes in order while the candidates
their proposers hold under their keys (counted by binary searches before any is
looked at) stay within `fuel` (at least one probe), emits that chunk, and holds
the times of the rest (runtime.worker): the operators downstream consume each
chunk before the next one exists, and the round is swept again. Stream updates
wait in `probes` until their time is complete in every arrangement and fuel
reaches them. Counting, choosing, proposing and validating a chunk is one
compiled call (runtime.operators.half_join_kernels), so a single update's
lookup costs one kernel call, not a numpy pass per step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from runtime.batch import Batch
from runtime.grouping import minimal_times
from runtime.operators.arrange import Arranged
from runtime.operators.basic import as_batch
from runtime.operators.half_join_kernels import LOOKUPS, extend_segments
from runtime.times import ALTNEU, Antichain
from runtime.worker import DataflowError, Operator, Stream

FUEL = 1 << 16  # candidate matches looked up per activation


class Lookup(NamedTuple):
    """One arrangement an extension looks stream updates up in."""

    arranged: Arranged
    key: tuple[int, ...]  # the stream columns that form its key, in its key order
    place: tuple[int, ...]  # for each of its value columns, the new column it is
    strict: bool  # as of < t rather than <= t


class ExtendOp(Operator):
    name = "half_join"
    pending_port = 1  # probes wait for the arrangements' updates at their times

    def __init__(self, dataflow, stream: Stream, lookups: list[Lookup], fuel: int = FUEL):
        lattice = stream.lattice
        if not 1 <= len(lookups) <= LOOKUPS:
            raise DataflowError(f"half_join: {len(lookups)} arrangements to look up (1 to {LOOKUPS})")
        width = len(lookups[0].place)
        for lk in lookups:
            if lk.arranged.stream.lattice != lattice:
                raise DataflowError("half_join: the stream and the arrangement must be in the same scope")
            if lk.arranged.key_arity != len(lk.key):
                raise DataflowError(f"half_join: the arrangement has {lk.arranged.key_arity} key columns, the stream {len(lk.key)}")
            if lk.strict and not lattice.is_product:
                raise DataflowError("half_join: strict comparison is for epoch/iteration scopes (an AltNeu scope orders alt < neu itself)")
            if len(lk.place) != lk.arranged.trace.val_arity or (len(lookups) > 1 and sorted(lk.place) != list(range(width))):
                raise DataflowError(f"half_join: the arrangement's {lk.arranged.trace.val_arity} value columns do not fill {width} new columns")
        if fuel < 1:
            raise DataflowError("half_join: fuel must be positive")
        self.lookups, self.fuel, self.width = list(lookups), int(fuel), width
        self.traces = [lk.arranged.trace for lk in lookups]
        # One handle per trace: held where its strictest lookup needs it.
        handles: dict[int, tuple] = {}
        for lk in lookups:
            trace = lk.arranged.trace
            handle, strict = handles.get(id(trace), (None, False))
            handles[id(trace)] = (handle or trace.new_handle(), strict or lk.strict)
        self.handles = list(handles.values())
        # The lookups as the kernel takes them: one row each.
        longest = max(len(lk.key) for lk in lookups)
        self._key_columns = np.array([list(lk.key) + [0] * (longest - len(lk.key)) for lk in lookups], np.int64).reshape(len(lookups), longest)
        self._key_lengths = np.array([len(lk.key) for lk in lookups], np.int64)
        self._places = np.array([lk.place for lk in lookups], np.int64).reshape(len(lookups), width)
        self._strict_lookups = np.array([lk.strict for lk in lookups], np.int64)
        self._layers = np.asarray([layer == ALTNEU for layer in lattice.layers], np.int64)
        self._strict = any(lk.strict for lk in lookups)
        self._probed: Antichain | None = None  # the probes' frontier the handles were last set to
        self._fanout = 1.0  # outputs per probe, recently
        self.probes: Batch | None = None  # stream updates not yet looked up
        streams = list({id(lk.arranged.stream): lk.arranged.stream for lk in lookups}.values())
        super().__init__(dataflow, [[stream], streams], [lattice, lattice], [lattice])

    def run(self) -> None:
        incoming = [as_batch(m) for m in self.receive(0)]
        self.receive(1)  # the traces already hold these; only the frontier matters here
        if self.probes is not None:
            incoming.insert(0, self.probes)
        if not incoming:
            self._keep(None)
            return
        pending = Batch.concat(incoming)
        waiting = self.frontier(1).in_advance_mask(pending.time)  # an arrangement may still change at <= t
        ready = np.flatnonzero(~waiting)
        done = 0
        if len(ready):
            done, out = self._extend(pending, ready)
            if out is not None:
                self.send(out)
        if done < len(ready) or self.held:
            # Out of fuel: the rest of the ready probes are output due at complete times.
            self.hold(minimal_times(self.in_lattices[0], pending.time[:, ready[done:]]))
        self._keep(self._rest(pending, ready, done))

    def _extend(self, pending: Batch, ready: np.ndarray) -> tuple[int, Batch | None]:
        """Look up a fuel's worth of the ready probes (at least one) in one kernel call: how
        many, and their output."""
        parts = [t.parts() for t in self.traces]
        pad = [parts[0]] * (LOOKUPS - len(parts))  # the kernel takes LOOKUPS traces; the rest are not read
        stores, fences, ends = (tuple(p[x] for p in parts + pad) for x in range(3))
        room = 16 + int(min(self._fanout * len(ready), self.fuel))  # outputs <= candidates: about a fuel
        for _ in range(2):
            out_data = np.empty((pending.arity + self.width, room), np.int64)
            out_time = np.empty((pending.time.shape[0], room), np.int64)
            out_diff = np.empty(room, np.int64)
            done, m = extend_segments(ready, pending.data, pending.time, pending.diff, stores, fences, ends, len(parts),
                                      self._key_columns, self._key_lengths, self._places, self._strict_lookups, self._layers,
                                      self.fuel, out_data, out_time, out_diff)
            if m >= 0:
                break
            room = -m  # too little room: exactly as much, and again
        # Outputs per probe in recent runs size the next run's arrays, so that they rarely grow.
        self._fanout = 0.5 * self._fanout + 0.5 * m / done if m <= self._fanout * done else m / done
        return done, Batch(out_data[:, :m], out_time[:, :m], out_diff[:m]) if m else None

    @staticmethod
    def _rest(pending: Batch, ready: np.ndarray, done: int) -> Batch | None:
        """The probes not looked up yet: a view when those looked up were a prefix."""
        if done == len(pending):
            return None
        if not done:
            return pending
        if ready[done - 1] == done - 1:  # ready[:done] is 0..done-1
            return Batch(pending.data[:, done:], pending.time[:, done:], pending.diff[done:])
        keep = np.ones(len(pending), dtype=bool)
        keep[ready[:done]] = False
        return pending.take(keep)

    def _keep(self, pending: Batch | None) -> None:
        """Keep `pending` for later, and let the traces compact up to what may still be probed."""
        self.probes = pending
        lat = self.in_lattices[0]
        if pending is None:
            if self.pending:
                self.defer(())
            probes = self.frontier(0)
        else:
            waiting = minimal_times(lat, pending.time)
            self.defer(waiting)
            probes = Antichain(lat, list(self.frontier(0).elements) + waiting)
        if probes == self._probed:
            return
        self._probed = probes
        behind = Antichain(lat, [tuple(x - 1 for x in t) for t in probes.elements]) if self._strict else None
        for handle, strict in self.handles:
            handle.set_frontier(behind if strict else probes)

    def evaluate(self, inputs):
        raise NotImplementedError("half_join depends on times; tests check it against a history oracle")


class HalfJoinOp(ExtendOp):
    """The half join of a stream whose first `key_arity` columns are the key: its columns, then
    the arrangement's values."""

    def __init__(self, dataflow, stream: Stream, key_arity: int, arranged: Arranged, strict: bool = False, fuel: int = FUEL):
        values = tuple(range(arranged.trace.val_arity))
        super().__init__(dataflow, stream, [Lookup(arranged, tuple(range(key_arity)), values, strict)], fuel)


__all__ = ["ExtendOp", "FUEL", "HalfJoinOp", "Lookup"]

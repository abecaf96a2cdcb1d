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

Fuel. A burst of stream updates may match millions of arrangement updates (a
hub key). Before looking anything up, the operator counts each ready probe's
candidates (binary searches for each key in the trace's batches), looks
up the longest prefix of probes with about `fuel` candidates (at least one
probe), emits that chunk, and holds the times of the rest (runtime.worker): the
operators downstream consume each chunk before the next one exists, and the
round is swept again. Stream updates wait in `probes` until their time is
complete in the arrangement and fuel reaches them.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import Batch
from runtime.grouping import minimal_times
from runtime.operators.arrange import Arranged
from runtime.operators.basic import as_batch
from runtime.times import Antichain
from runtime.worker import DataflowError, Operator, Stream

FUEL = 1 << 16  # candidate matches looked up per activation


class HalfJoinOp(Operator):
    name = "half_join"
    pending_port = 1  # probes wait for the arrangement's updates at their times

    def __init__(self, dataflow, stream: Stream, key_arity: int, arranged: Arranged, strict: bool = False, fuel: int = FUEL):
        lattice = stream.lattice
        if arranged.stream.lattice != lattice:
            raise DataflowError("half_join: the stream and the arrangement must be in the same scope")
        if arranged.key_arity != key_arity:
            raise DataflowError(f"half_join: the arrangement has {arranged.key_arity} key columns, the stream {key_arity}")
        if strict and not lattice.is_product:
            raise DataflowError("half_join: strict comparison is for epoch/iteration scopes (an AltNeu scope orders alt < neu itself)")
        if fuel < 1:
            raise DataflowError("half_join: fuel must be positive")
        self.key_arity, self.strict, self.fuel = key_arity, strict, int(fuel)
        self.trace = arranged.trace
        self.handle = arranged.trace.new_handle()
        self.probes: Batch | None = None  # stream updates not yet looked up
        super().__init__(dataflow, [[stream], [arranged.stream]], [lattice, lattice], [lattice])

    def run(self) -> None:
        incoming = [as_batch(m) for m in self.receive(0)]
        self.receive(1)  # the trace already holds these; only the frontier matters here
        if self.probes is not None:
            incoming.insert(0, self.probes)
        lat = self.in_lattices[0]
        if not incoming:
            self._keep(None)
            return
        pending = Batch.concat(incoming)
        waiting = self.frontier(1).in_advance_mask(pending.time)  # the arrangement may still change at <= t
        ready = np.flatnonzero(~waiting)
        # Count each ready probe's candidate matches (updates with its key, in every batch of the
        # trace), and look up only a prefix worth about one fuel: a hub key's burst is
        # cut into chunks before it exists.
        counts = self._match_counts(pending.data[: self.key_arity, ready])
        reach = np.cumsum(counts)
        done = max(1, int(np.searchsorted(reach, self.fuel, side="right"))) if len(ready) else 0
        parts = []
        for lo in range(0, done, self.fuel):
            out = self._lookup(pending.take(ready[lo : min(done, lo + self.fuel)]))
            if len(out):
                parts.append(out)
        if parts:
            self.send(Batch.concat(parts))
        # Out of fuel: the rest of the ready probes are output due at complete times.
        self.hold(minimal_times(lat, pending.time[:, ready[done:]]) if done < len(ready) else ())
        keep = np.ones(len(pending), dtype=bool)
        keep[ready[:done]] = False
        rest = pending.take(keep) if done else pending
        self._keep(rest if len(rest) else None)

    def _match_counts(self, key: np.ndarray) -> np.ndarray:
        """How many updates in the trace have each probe's key (an upper bound on its matches:
        times decide which of them match)."""
        return self.trace.count(key)

    def _lookup(self, probe: Batch) -> Batch:
        key = probe.data[: self.key_arity]
        found = self.trace.lookup(key)
        owner = found.owner
        time = probe.time[:, owner]
        lat = self.in_lattices[0]
        ok = lat.le_arrays(found.time, time)
        if self.strict:
            ok &= np.any(found.time != time, axis=0)
        idx = np.flatnonzero(ok)
        owner = owner[idx]
        data = np.concatenate([probe.data[:, owner], found.val[:, idx]], axis=0)
        return Batch(data, time[:, idx], probe.diff[owner] * found.diff[idx])

    def _keep(self, pending: Batch | None) -> None:
        """Keep `pending` for later, and let the trace compact up to what may still be probed."""
        self.probes = pending
        lat = self.in_lattices[0]
        waiting = minimal_times(lat, pending.time) if pending is not None else []
        self.defer(waiting)
        probes = Antichain(lat, list(self.frontier(0).elements) + waiting)
        if self.strict:
            probes = Antichain(lat, [tuple(x - 1 for x in t) for t in probes.elements])
        self.handle.set_frontier(probes)

    def evaluate(self, inputs):
        raise NotImplementedError("half_join depends on times; tests check it against a history oracle")


__all__ = ["HalfJoinOp", "FUEL"]

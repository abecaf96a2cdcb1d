"""The worker: a static graph of operators and the loop that runs them.

A `Dataflow` owns operators (created in topological order, apart from loop
feedback edges), the edges between their ports, and the progress tracker. Sent
batches wait in the receiver's input queue, stamped with a lower bound of their
times; operators that pass batches on unchanged (concat, loop variables) are
skipped, so a batch goes straight to the operators that use it. `step()`
sweeps the operators in creation order, running each that has queued input or
that holds deferred work while progress has been made, and repeats until a
sweep does nothing; one sweep carries a loop one iteration (`on_sweep`, if
set, is called after each, for progress displays).
"""

from __future__ import annotations

from runtime.batch import Batch
from runtime.progress import ProgressTracker, Summary
from runtime.symbols import Codec, SymbolTable
from runtime.times import Antichain, Lattice


class DataflowError(Exception):
    """Misuse of the dataflow API (bad rows, times, or graph construction)."""


class Stream:
    """An operator output port: what a collection's updates flow out of."""

    __slots__ = ("op", "port", "lattice")

    def __init__(self, op: "Operator", port: int, lattice: Lattice):
        self.op, self.port, self.lattice = op, port, lattice


class Operator:
    name = "operator"
    needs_frontier = False  # ask the tracker for this operator's input frontiers
    passthrough = False  # forwards every batch unchanged: senders deliver past it

    def __init__(self, dataflow: "Dataflow", inputs: list[list[Stream]], in_lattices, out_lattices):
        self.dataflow = dataflow
        self.in_lattices = list(in_lattices)
        self.out_lattices = list(out_lattices)
        self.queues: list[list] = [[] for _ in self.in_lattices]
        self.queued = 0
        self.capabilities: list[list[tuple]] = [[] for _ in self.out_lattices]
        self.seen_changes = -1
        self.id = dataflow._add(self)
        for port, streams in enumerate(inputs):
            for stream in streams:
                dataflow.connect(stream, self, port)

    def __repr__(self):
        return f"{self.name}#{self.id}"

    def output(self, port: int = 0) -> Stream:
        return Stream(self, port, self.out_lattices[port])

    def summary(self, in_port: int, out_port: int) -> Summary | None:
        return Summary.identity(self.in_lattices[in_port].depth)

    # -- used by run() ----------------------------------------------------------

    def receive(self, port: int = 0) -> list[Batch]:
        queue = self.queues[port]
        if not queue:
            return []
        self.queues[port] = []
        self.queued -= len(queue)
        tracker = self.dataflow.tracker
        del tracker.live[("in", self.id, port)]
        tracker.changes += 1
        return [b for b, _ in queue]

    def send(self, batch, port: int = 0) -> None:
        if len(batch):
            self.dataflow.deliver(self, port, batch)

    def frontier(self, port: int = 0) -> Antichain:
        return self.dataflow.tracker.frontier(("in", self.id, port), self.in_lattices[port])

    def set_capabilities(self, times, port: int = 0) -> None:
        """Hold exactly the antichain `times` at an output port."""
        new = list(Antichain(self.out_lattices[port], times).elements)
        if new == self.capabilities[port]:
            return
        self.capabilities[port] = new
        tracker = self.dataflow.tracker
        loc = ("out", self.id, port)
        if new:
            tracker.live[loc] = None
        else:
            tracker.live.pop(loc, None)
        tracker.changes += 1

    # -- scheduling -------------------------------------------------------------

    def has_pending(self) -> bool:
        """Deferred work that a frontier advance may release."""
        return False

    def run(self) -> None:
        raise NotImplementedError

    # -- reference semantics (runtime.reference) -------------------------------

    def evaluate(self, inputs: list):
        """Naive semantics on whole multisets: list of {row: count} per port -> output."""
        raise NotImplementedError(f"{self.name} has no reference semantics")


class Dataflow:
    """One worker: builds and runs a dataflow graph."""

    def __init__(self):
        self.ops: list[Operator] = []
        self.subscribers: dict[tuple[int, int], list[tuple[Operator, int]]] = {}
        self.routes: dict[tuple[int, int], list[tuple[Operator, int, tuple]]] | None = None  # None: stale
        self.symbols = SymbolTable()
        self.codec = Codec(self.symbols)
        self.root = Lattice()
        self.tracker = ProgressTracker({}, None, [], self._stamps_at)
        self._graph_changed = True
        self._running = False
        self.inputs = []
        self._root_scope = None
        self.on_sweep = None  # called after each sweep of step() (a progress display's hook)

    # -- construction -----------------------------------------------------------

    def new_input(self, name: str, types=2):
        """An input handle and its collection; `types` is an arity or column types."""
        from runtime.collection import Collection, Scope, normalize_types
        from runtime.operators.input import InputHandle

        if self._root_scope is None:
            self._root_scope = Scope(self, self.root)
        handle = InputHandle(self, name, normalize_types(types))
        return handle, Collection(self._root_scope, handle.op.output(), handle.types)

    def _add(self, op: Operator) -> int:
        self.ops.append(op)
        self._graph_changed = True
        self.routes = None
        return len(self.ops) - 1

    def connect(self, stream: Stream, op: Operator, port: int) -> None:
        if stream.lattice != op.in_lattices[port]:
            raise DataflowError(f"cannot connect {stream.op} ({stream.lattice}) to {op} ({op.in_lattices[port]}): different scopes")
        self.subscribers.setdefault((stream.op.id, stream.port), []).append((op, port))
        self._graph_changed = True
        self.routes = None

    def _rebuild_tracker(self) -> None:
        successors: dict[tuple, list] = {}
        depth: dict[tuple, int] = {}
        for op in self.ops:
            for i, lat in enumerate(op.in_lattices):
                loc = ("in", op.id, i)
                depth[loc] = lat.depth
                successors[loc] = [
                    (("out", op.id, o), s)
                    for o in range(len(op.out_lattices))
                    if (s := op.summary(i, o)) is not None
                ]
            for o, lat in enumerate(op.out_lattices):
                loc = ("out", op.id, o)
                depth[loc] = lat.depth
                successors[loc] = [
                    (("in", dst.id, p), Summary.identity(lat.depth)) for dst, p in self.subscribers.get((op.id, o), ())
                ]
        targets = [("in", op.id, i) for op in self.ops if op.needs_frontier for i in range(len(op.in_lattices))]
        old = self.tracker
        self.tracker = ProgressTracker(successors, depth.__getitem__, targets, self._stamps_at)
        self.tracker.live = old.live
        self.tracker.changes = old.changes + 1
        self._graph_changed = False

    def _route(self, subscribers, passed: set) -> list:
        """Where a batch sent to `subscribers` lands: past passthrough operators
        (concat, loop variables), straight at the operators that use it. The
        tracker still sees the declared graph; a passthrough's path summary is
        the identity, so frontiers are the same either way."""
        route = []
        for dst, port in subscribers:
            if dst.passthrough and dst.id not in passed:
                route.extend(self._route(self.subscribers.get((dst.id, 0), ()), passed | {dst.id}))
            else:
                route.append((dst, port, ("in", dst.id, port)))
        return route

    def _stamps_at(self, loc: tuple) -> list[tuple]:
        """The pointstamps at a location: its queued batches' stamps, or its capabilities."""
        kind, op, port = loc
        if kind == "in":
            return [stamp for _, stamp in self.ops[op].queues[port]]
        return self.ops[op].capabilities[port]

    # -- messages ---------------------------------------------------------------

    def deliver(self, op: Operator, port: int, batch) -> None:
        if self.routes is None:
            self.routes = {out: self._route(subs, set()) for out, subs in self.subscribers.items()}
        subs = self.routes.get((op.id, port))
        if not subs:
            return
        stamp = op.out_lattices[port].lower_bound(batch.time)
        live = self.tracker.live
        for dst, p, loc in subs:
            dst.queues[p].append((batch, stamp))
            dst.queued += 1
            live[loc] = None

    # -- running ----------------------------------------------------------------

    def step(self) -> None:
        """Run every operator until nothing more can happen."""
        if self._running:
            raise DataflowError("step() called re-entrantly (from inside an operator)")
        if self._graph_changed:
            self._rebuild_tracker()
        self._running = True
        try:
            for handle in self.inputs:
                handle.flush()
            ops = self.ops
            tracker = self.tracker
            while True:
                active = False
                for op in ops:
                    if op.queued or (op.seen_changes != tracker.changes and op.has_pending()):
                        op.seen_changes = tracker.changes
                        op.run()
                        active = True
                if not active:
                    break
                if self.on_sweep is not None:
                    self.on_sweep()
        finally:
            self._running = False

"""The worker: a static graph of operators, run in synchronous rounds.

A `Dataflow` owns operators, the edges between their ports, and the scopes the
operators live in: the root (times are input epochs), loop bodies (`iterate`
adds an iteration coordinate) and AltNeu scopes (runtime.calculus adds an
alt/neu flag). The operators of one scope and the child scopes inside it form
that scope's *schedule*, in topological order (loop feedback edges aside).
`step()` runs the root schedule once. A loop runs its schedule round by round
-- round r processes every open epoch's updates at iteration r together -- and
goes on to the least later iteration at which it still has work, until it has
none; a child scope runs to completion within each round of its parent.

Frontiers are derived, not counted (timely dataflow's progress tracking,
specialised to one worker and a known topological order). During a step the
updates in flight at an operator are at epochs in [lo, hi): lo is the least
epoch its upstream inputs were at when the previous step ended, hi the least
epoch they are at now. In round r of a loop, every time at iteration <= r has
reached an operator by the time it runs: the operators before it in the round
have run, and the feedback edge carries times only to iteration r + 1. So the
operator's input frontier is the antichain of (hi, 0, ...) and, for each
enclosing loop running round r_l, (lo, r_1, ..., r_l + 1, 0, ...). Operators
that must see complete times (reduce, consolidate, trace compaction) act only
on times not in advance of it and keep the rest as *pending* work, whose least
times they declare (`defer`); the scheduler runs them again when some of it is
complete. Outside a step the frontiers are those of the last step's end.

One operator may stop with output still due at complete times: a half join
out of fuel. It *holds* those times (`hold`): the frontiers downstream of it
are lowered to them along the graph's path summaries (runtime.progress), and
its scope's round is swept again until nothing is held.

Sent batches wait in the receiver's input queue. Operators that pass batches
on unchanged (concat, loop variables) are never run: a batch goes straight to
the operators that read it.
"""

from __future__ import annotations

import gc

import numpy as np

from runtime.batch import Batch
from runtime.grouping import minimal_times
from runtime.parallel import finish_background
from runtime.progress import ProgressTracker, Summary
from runtime.symbols import Codec, SymbolTable
from runtime.times import ALTNEU, ITERATION, Antichain, Lattice


# Python's cycle collector looks at its youngest objects every 700 allocations of
# containers by default. A round allocates a few hundred (batches, tuples, antichains),
# most of them still alive at the next collection, so the default threshold makes a
# loop of small rounds pay for traversing the same live objects over and over (~7% of
# a one-fact-per-round loop's time). A step collects at most every YOUNG allocations;
# it makes no reference cycles of its own, so little waits for the collector.
YOUNG = 20_000


MERGE_QUEUED = 256  # messages waiting at an input that merges them, concatenated into one


class DataflowError(Exception):
    """Misuse of the dataflow API (bad rows, times, or graph construction)."""


class RoundLimitError(Exception):
    """A loop with a round limit had work left at a round past it (`Scope.round_limit`).

    Raised from inside `step()`, which stops there: the dataflow is left mid-step and must
    not be stepped again. `label` is what the loop's maker named it by."""

    def __init__(self, label, limit: int):
        super().__init__(f"loop {label!r} had work left after {limit} rounds")
        self.label, self.limit = label, limit


class Scope:
    """A region of the dataflow whose times share a lattice: the root, a loop body or an AltNeu scope."""

    def __init__(self, dataflow, lattice: Lattice, parent: "Scope | None" = None):
        self.dataflow, self.lattice, self.parent = dataflow, lattice, parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.loop = parent is not None and lattice.layers[-1] == ITERATION
        self.round: int | None = None  # the round a running loop is in
        self.round_limit: int | None = None  # a loop: rounds past it are an error (RoundLimitError)
        self.label = None  # a loop: what RoundLimitError names it by
        self.schedule: list = []  # operators and child scopes, in the order they run
        self.ops: list = []  # every operator of this scope and of the scopes inside it

    def __repr__(self):
        return f"Scope({'x'.join(self.lattice.layers)}, depth {self.depth})"

    def is_within(self, other: "Scope") -> bool:
        s = self
        while s is not None:
            if s is other:
                return True
            s = s.parent
        return False

    def iterative(self) -> "Scope":
        return Scope(self.dataflow, self.lattice.nested(ITERATION), self)

    def altneu(self) -> "Scope":
        """A child scope whose times are (outer time, alt=0 | neu=1) (runtime.calculus)."""
        return Scope(self.dataflow, self.lattice.nested(ALTNEU), self)


class Stream:
    """An operator output port: what a collection's updates flow out of."""

    __slots__ = ("op", "port", "lattice")

    def __init__(self, op: "Operator", port: int, lattice: Lattice):
        self.op, self.port, self.lattice = op, port, lattice

    @property
    def scope(self) -> Scope:
        return self.op.scope


class Operator:
    name = "operator"
    passthrough = False  # forwards every batch unchanged: senders deliver past it
    feedback = False  # its output goes round a loop to the next iteration
    pending_port = 0  # the input whose frontier makes pending work complete
    merges_input = False  # reads its queued messages as one batch: they may be concatenated while they wait
    # Stateless within its scope (a map or filter): batches from operators of its own scope
    # are handed to `apply` as they are sent, instead of waiting in a queue for it to run,
    # which is the same work without a turn of its own in every round.
    eager = False

    def __init__(self, dataflow: "Dataflow", inputs: list[list[Stream]], in_lattices, out_lattices, scope: Scope | None = None):
        self.dataflow = dataflow
        self.in_lattices = list(in_lattices)
        self.out_lattices = list(out_lattices)
        self.queues: list[list] = [[] for _ in self.in_lattices]
        self.queued = 0
        self.merged = [0] * len(self.in_lattices)  # per queue: how many leading messages are concatenations
        self.pending: tuple = ()  # least times of deferred work (an antichain)
        self.held: tuple = ()  # times at which output is due though the frontier calls them complete
        self.scope = scope if scope is not None else self._scope_from(inputs)
        self.input_scopes = [streams[0].scope if streams else self.scope for streams in inputs] or [self.scope]
        self.id = dataflow._add(self)
        for port, streams in enumerate(inputs):
            for stream in streams:
                dataflow.connect(stream, self, port)

    def _scope_from(self, inputs) -> Scope:
        streams = [s for port in inputs for s in port]
        if not streams:
            return self.dataflow.root_scope
        scope = streams[0].scope
        if self.out_lattices and self.out_lattices[0].depth < scope.lattice.depth:
            return scope.parent  # leaves its input's scope (leave, integrate)
        if self.out_lattices and self.out_lattices[0] != scope.lattice:
            raise DataflowError(f"{self.name}: an operator entering a scope must be given the scope")
        return scope

    def __repr__(self):
        return f"{self.name}#{self.id}"

    def output(self, port: int = 0) -> Stream:
        return Stream(self, port, self.out_lattices[port])

    def summary(self, in_port: int, out_port: int) -> Summary | None:
        return Summary.identity(self.in_lattices[in_port].depth)

    # -- used by run() ----------------------------------------------------------

    def receive(self, port: int = 0) -> list[Batch] | tuple:
        """The messages queued at `port`, taken out of the queue (the caller's to keep)."""
        queue = self.queues[port]
        if not queue:
            return ()
        self.queues[port] = []
        self.queued -= len(queue)
        self.merged[port] = 0
        return queue

    def send(self, batch, port: int = 0) -> None:
        if len(batch):
            self.dataflow.deliver(self, port, batch)

    def frontier(self, port: int = 0) -> Antichain:
        return self.dataflow.frontier(self, port)

    def defer(self, times) -> None:
        """Declare the work this operator keeps for later by its times: a (depth, n) array or
        an iterable of time tuples, not necessarily minimal (empty: none)."""
        lattice = self.in_lattices[self.pending_port]
        if isinstance(times, np.ndarray):
            self.pending = tuple(minimal_times(lattice, times)) if times.shape[1] else ()
        elif times == ():
            self.pending = ()
        else:
            self.pending = Antichain(lattice, times).elements

    def hold(self, times) -> None:
        """Declare the times at which output is still due although they may be complete
        (empty: none). The operator is run again in the same round."""
        held = Antichain(self.out_lattices[0], times).elements
        if held != self.held:
            self.held = held
            self.dataflow._held(self)

    # -- scheduling -------------------------------------------------------------

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
        self.routes: dict | None = None  # None: stale
        self.symbols = SymbolTable()
        self.codec = Codec(self.symbols)
        self.root = Lattice()
        self.root_scope = Scope(self, self.root)
        self.inputs = []
        self.on_sweep = None  # called after each round of a loop and each sweep of the root (progress displays)
        self._planned = False
        self._running = False
        self._groups: list[tuple] = []  # input handles upstream of some port (a frontier group)
        self._bounds: list[tuple] = []  # per group: (lo, hi) epochs of the current step (hi None: closed)
        self._frontiers: dict = {}
        self._holders: dict[Operator, None] = {}
        self._tracker: ProgressTracker | None = None
        self._fused: list[tuple] = []  # (writer, select) pairs of _fuse_selects

    # -- construction -----------------------------------------------------------

    def new_input(self, name: str, types=2):
        """An input handle and its collection; `types` is an arity or column types."""
        from runtime.collection import Collection, normalize_types
        from runtime.operators.input import InputHandle

        handle = InputHandle(self, name, normalize_types(types))
        return handle, Collection(self.root_scope, handle.op.output(), handle.types)

    def _add(self, op: Operator) -> int:
        if self._running:
            raise DataflowError("operators cannot be added while the dataflow runs")
        self.ops.append(op)
        self._planned = False
        self.routes = None
        return len(self.ops) - 1

    def connect(self, stream: Stream, op: Operator, port: int) -> None:
        if stream.lattice != op.in_lattices[port]:
            raise DataflowError(f"cannot connect {stream.op} ({stream.lattice}) to {op} ({op.in_lattices[port]}): different scopes")
        self.subscribers.setdefault((stream.op.id, stream.port), []).append((op, port))
        self._planned = False
        self.routes = None

    # -- planning: schedules and frontier groups -----------------------------------

    def _plan(self) -> None:
        self._fuse_selects()
        scopes: dict[int, Scope] = {}
        for op in self.ops:
            s = op.scope
            while s is not None and id(s) not in scopes:
                scopes[id(s)] = s
                s = s.parent
        for s in scopes.values():
            s.schedule, s.ops = [], []
        for op in self.ops:
            s = op.scope
            while s is not None:
                s.ops.append(op)
                s = s.parent
        self._schedule(scopes.values())
        self._plan_groups()
        self._tracker = None
        self._planned = True

    def _fuse_selects(self) -> None:
        """A select that alone reads an operator's output, which can write only the selected
        columns (a join: `takes_select`), is done by that operator as it writes its output;
        the select passes batches on untouched and senders deliver past it. Undone and done
        again at every plan, for operators added since may read the same output."""
        for writer, select in self._fused:
            writer.columns = None
            select.fuse(False)
        self._fused = []
        for (src, _), subs in self.subscribers.items():
            writer = self.ops[src]
            if not getattr(writer, "takes_select", False) or len(subs) != 1:
                continue
            select = subs[0][0]
            columns = getattr(select, "selected", None)
            if columns is not None and len(set(columns)) == len(columns) and select.scope is writer.scope:
                writer.columns = columns
                select.fuse(True)
                self._fused.append((writer, select))
        self.routes = None

    def _edges(self):
        """(source, destination) operator pairs of every edge but loop feedback."""
        for (src, _), subs in self.subscribers.items():
            if not self.ops[src].feedback:
                for dst, _ in subs:
                    yield self.ops[src], dst

    def _schedule(self, scopes) -> None:
        """Each scope's operators and child scopes in topological order (ties: creation order)."""

        def item_in(op, scope):
            item, s = op, op.scope
            while s is not scope:
                item, s = s, s.parent
            return item

        def first_id(item):
            return item.id if isinstance(item, Operator) else min(op.id for op in item.ops)

        items: dict[int, list] = {id(s): [] for s in scopes}
        for s in scopes:
            if s.parent is not None:
                items[id(s.parent)].append(s)
        for op in self.ops:
            items[id(op.scope)].append(op)
        after: dict[int, set] = {}
        for src, dst in self._edges():
            common = src.scope
            while not dst.scope.is_within(common):
                common = common.parent
            a, b = item_in(src, common), item_in(dst, common)
            if a is not b:
                after.setdefault(id(a), set()).add(id(b))
        for s in scopes:
            mine = sorted(items[id(s)], key=first_id)
            by_id = {id(i): i for i in mine}
            waiting = {id(i): 0 for i in mine}
            for i in mine:
                for j in after.get(id(i), ()):
                    if j in waiting:
                        waiting[j] += 1
            ready = [i for i in mine if waiting[id(i)] == 0]
            order = []
            while ready:
                ready.sort(key=first_id, reverse=True)
                item = ready.pop()
                order.append(item)
                for j in after.get(id(item), ()):
                    if j in waiting:
                        waiting[j] -= 1
                        if waiting[j] == 0:
                            ready.append(by_id[j])
            if len(order) != len(mine):
                raise DataflowError("the dataflow has a cycle that does not go through a loop variable")
            # Passthrough operators never run (deliver routes batches past them).
            s.schedule = [item for item in order if isinstance(item, Scope) or not item.passthrough]

    def _plan_groups(self) -> None:
        """For every input port, the input handles upstream of it (its frontier group)."""
        upstream: dict[int, set] = {}
        handles = {h.op.id: i for i, h in enumerate(self.inputs)}
        feeds: dict[int, list[int]] = {}
        for (src, _), subs in self.subscribers.items():
            for dst, _ in subs:
                feeds.setdefault(dst.id, []).append(src)

        def reach(op_id) -> set:
            done = upstream.get(op_id)
            if done is not None:
                return done
            seen, stack, found = {op_id}, [op_id], set()
            while stack:
                o = stack.pop()
                if o in handles:
                    found.add(handles[o])
                for p in feeds.get(o, ()):
                    if p not in seen:
                        seen.add(p)
                        stack.append(p)
            upstream[op_id] = found
            return found

        sources: dict[tuple[int, int], list[int]] = {}
        for (src, _), subs in self.subscribers.items():
            for dst, p in subs:
                sources.setdefault((dst.id, p), []).append(src)
        index: dict[frozenset, int] = {}
        for op in self.ops:
            groups = []
            for port in range(len(op.in_lattices)):
                found = set()
                for src in sources.get((op.id, port), ()):
                    found |= reach(src)
                key = frozenset(found)
                groups.append(index.setdefault(key, len(index)))
            op.groups = groups or [index.setdefault(frozenset(reach(op.id)), len(index))]
        self._groups = [tuple(self.inputs[i] for i in sorted(key)) for key in index]

    # -- frontiers --------------------------------------------------------------

    def _epoch_bounds(self) -> list[tuple]:
        """(lo, hi) per frontier group: the epochs of the step under way, or of the last step's end."""
        out = []
        for group in self._groups:
            if self._running:
                lo = min((h.stepped for h in group), default=None)
                open_ = [h.epoch for h in group if not h.closed]
            else:
                open_ = [h.stepped for h in group if not h.stepped_closed]
                lo = min(open_, default=None)
            out.append((lo, min(open_) if open_ else None))
        return out

    def frontier(self, op: Operator, port: int = 0) -> Antichain:
        if not self._planned:
            self._plan()
        if not self._bounds:
            self._bounds = self._epoch_bounds()
        bounds = self._bounds[op.groups[port]]
        scope = op.input_scopes[port]
        # Groups whose epochs are the same (inputs that advance together) share the frontier.
        # The loops' rounds are not in the key: derived frontiers are forgotten whenever a round
        # begins or a loop ends, and the epochs' bounds are fixed for the whole step.
        key = (bounds, id(scope))
        found = self._frontiers.get(key)
        if found is None:
            found = self._frontiers[key] = self._derived(bounds, scope, op.in_lattices[port])
        if self._holders:
            found = self._lowered(found, op, port)
        return found

    def _derived(self, bounds: tuple, scope: Scope, lattice: Lattice) -> Antichain:
        lo, hi = bounds
        d = lattice.depth
        elements = [] if hi is None else [(hi,) + (0,) * (d - 1)]
        # Every other element is at epoch lo and after (lo, 0, ...): when lo == hi the
        # first one is below them all; else (lo <= hi) no element is below another.
        if lo is not None and lo != hi:
            chain = []
            s = scope
            while s is not None and s.parent is not None:
                chain.append(s)
                s = s.parent
            chain.reverse()  # outermost first: chain[k] holds coordinate k + 1
            coords = [lo] + [0] * (d - 1)
            for k, s in enumerate(chain):
                if s.loop and s.round is not None:
                    element = list(coords)
                    element[k + 1] = s.round + 1
                    elements.append(tuple(element))
                    coords[k + 1] = s.round
        return Antichain.of_minimal(lattice, elements)

    def _held(self, op: Operator) -> None:
        if op.held:
            self._holders[op] = None
        else:
            self._holders.pop(op, None)

    def _lowered(self, frontier: Antichain, op: Operator, port: int) -> Antichain:
        """`frontier` lowered to the times held by operators upstream of (op, port)."""
        if self._tracker is None:
            self._tracker = self._make_tracker()
        self._tracker.live = {("out", h.id, 0): None for h in self._holders}
        held = self._tracker.frontier(("in", op.id, port), op.in_lattices[port])
        return frontier.meet(held) if len(held) else frontier

    def _make_tracker(self) -> ProgressTracker:
        successors: dict[tuple, list] = {}
        depth: dict[tuple, int] = {}
        for op in self.ops:
            for i, lat in enumerate(op.in_lattices):
                loc = ("in", op.id, i)
                depth[loc] = lat.depth
                successors[loc] = [
                    (("out", op.id, o), s) for o in range(len(op.out_lattices)) if (s := op.summary(i, o)) is not None
                ]
            for o, lat in enumerate(op.out_lattices):
                loc = ("out", op.id, o)
                depth[loc] = lat.depth
                successors[loc] = [(("in", dst.id, p), Summary.identity(lat.depth)) for dst, p in self.subscribers.get((op.id, o), ())]
        return ProgressTracker(successors, depth.__getitem__, lambda loc: self.ops[loc[1]].held)

    def outstanding(self) -> dict[str, list[tuple]]:
        """Work not yet done, by operator: least times of pending work and held output,
        and of queued batches (for tests and debugging)."""
        out = {}
        for op in self.ops:
            times = list(op.pending) + list(op.held)
            for queue, lat in zip(op.queues, op.in_lattices):
                for batch in queue:
                    if len(batch):
                        times.append(lat.lower_bound(batch.time))
            if times:
                out[repr(op)] = times
        return out

    # -- messages ---------------------------------------------------------------

    def _route(self, scope: Scope, subscribers, passed: set) -> list:
        """Where a batch sent to `subscribers` from an operator in `scope` lands: past
        passthrough operators (concat, loop variables), straight at the operators that use
        it; port None: an eager operator of the same scope (port 0), applied on delivery
        during a step."""
        route = []
        for dst, port in subscribers:
            if dst.passthrough and dst.id not in passed:
                route.extend(self._route(scope, self.subscribers.get((dst.id, 0), ()), passed | {dst.id}))
            else:
                route.append((dst, None if dst.eager and dst.scope is scope else port))
        return route

    def deliver(self, op: Operator, port: int, batch) -> None:
        if self.routes is None:
            self.routes = {out: self._route(self.ops[out[0]].scope, subs, set()) for out, subs in self.subscribers.items()}
        for dst, p in self.routes.get((op.id, port), ()):
            if p is None:
                if self._running:  # (inputs deliver outside steps too: they flush as they advance)
                    dst.apply(batch)
                    continue
                p = 0
            queue = dst.queues[p]
            queue.append(batch)
            dst.queued += 1
            if dst.merges_input and len(queue) - dst.merged[p] >= MERGE_QUEUED:
                self._merge_queued(dst, p)

    def _merge_queued(self, op: Operator, port: int) -> None:
        """Concatenate the messages queued at (op, port) since its last concatenation: a loop's
        output leaving it waits for the loop to finish, one small batch per round, and a
        million rounds would otherwise hold a million batches (hundreds of megabytes of array headers)."""
        queue, start = op.queues[port], op.merged[port]
        tail = [b if isinstance(b, Batch) else b.to_batch() for b in queue[start:]]
        del queue[start:]
        queue.append(Batch.concat(tail))
        op.queued -= len(tail) - 1
        op.merged[port] = start + 1

    # -- running ----------------------------------------------------------------

    def step(self) -> None:
        """Run every operator until nothing more can happen before the inputs' frontiers."""
        if self._running:
            raise DataflowError("step() called re-entrantly (from inside an operator)")
        if not self._planned:
            self._plan()
        for handle in self.inputs:
            handle.flush()
        self._running = True
        self._bounds = []
        self._frontiers.clear()
        threshold = gc.get_threshold()
        if 0 < threshold[0] < YOUNG:
            gc.set_threshold(YOUNG, *threshold[1:])
        try:
            self._run(self.root_scope)
        finally:
            finish_background()  # inserts handed to the other core are part of the step
            gc.set_threshold(*threshold)
            self._running = False
            for handle in self.inputs:
                handle.stepped, handle.stepped_closed = handle.epoch, handle.closed
            self._bounds = []
            self._frontiers.clear()

    def _run(self, scope: Scope) -> None:
        if not scope.loop:
            self._sweep(scope)
            if scope.parent is None and self.on_sweep is not None:
                self.on_sweep()
            return
        r = 0 if any(op.queued for op in scope.ops) else self._next_round(scope, -1)
        try:
            while r is not None:
                if scope.round_limit is not None and r > scope.round_limit:
                    raise RoundLimitError(scope.label, scope.round_limit)
                scope.round = r
                self._frontiers.clear()  # derived for earlier rounds: never asked for again
                self._sweep(scope)
                if self.on_sweep is not None:
                    self.on_sweep()
                r = self._next_round(scope, r)
        finally:
            scope.round = None
            self._frontiers.clear()

    def _sweep(self, scope: Scope) -> None:
        while True:
            for item in scope.schedule:
                if isinstance(item, Scope):
                    self._run(item)
                elif item.queued or (item.pending and self._ready(item)):
                    item.run()
            if not (self._holders and any(op in self._holders for op in scope.ops)):
                return

    def _ready(self, op: Operator) -> bool:
        """Whether some of the operator's pending work is at complete times."""
        frontier = self.frontier(op, op.pending_port)
        return any(not frontier.less_equal(t) for t in op.pending)

    def _next_round(self, scope: Scope, r: int) -> int | None:
        """The least round after r at which the loop has work: r + 1 when batches are
        queued in it (they came round the feedback edge), else the least iteration
        after r of pending work at an epoch of this step and the outer loops' current
        rounds. Pending work at round r or before waits for something outside the
        loop (output held upstream): the loop stops, to be entered again when the
        scope around it sweeps again (it does while that output is held), instead of
        counting empty rounds for ever."""
        for op in scope.ops:
            if op.queued:  # (a loop is cheaper than any() over a generator, every round)
                return r + 1
        if not self._bounds:
            self._bounds = self._epoch_bounds()
        level = scope.depth
        outer = [(s.depth, s.round) for s in _ancestors(scope) if s.loop]
        best = None
        for op in scope.ops:
            if not op.pending:
                continue
            hi = self._bounds[op.groups[op.pending_port]][1]
            for t in op.pending:
                if hi is not None and t[0] >= hi:
                    continue
                if any(t[k] != round_ for k, round_ in outer) or t[level] <= r:
                    continue
                c = t[level]
                if best is None or c < best:
                    best = c
        return best


def _ancestors(scope: Scope):
    s = scope.parent
    while s is not None:
        yield s
        s = s.parent

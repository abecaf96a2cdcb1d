"""A delayed trace: another trace read one loop iteration later.

A loop variable that starts empty holds at iteration i + 1 what the loop's
result held at iteration i. When that result is distinct's output, distinct's
output trace already holds every update the variable will ever hold, sorted by
the whole row and so by any leading columns: a join keyed by the first k columns
can read it in place, taking each update's last time coordinate as one more,
instead of the variable arranging the same updates again (a second trace as
large as the answer, its merges and the sort of every round's delta). A
`DelayedTrace` is that view, as joins read it (runtime.operators.join: the
join kernel adds `delay` to the iteration it reads). Its handles hold the
trace's compaction at their reader's frontier one iteration earlier: advancing
a time by a frontier commutes with adding one to the last coordinate of both.

The variable's arrangements are made before its result exists (the loop body
reads the variable to compute the result), so a delayed trace is bound to the
trace it reads when the loop's result is set (runtime.collection.Variable).
"""

from __future__ import annotations

from runtime.times import Antichain, Lattice
from runtime.trace.spine import Trace

DELAY = 1  # a loop variable holds its result one iteration later


class DelayedHandle:
    """A reader's handle on a delayed trace: its frontier, moved one iteration earlier, is
    the reader's say in the compaction of the trace read."""

    __slots__ = ("frontier", "_handle")

    def __init__(self):
        self.frontier = None  # as the reader gave it (the reader's times)
        self._handle = None

    def bind(self, trace: Trace) -> None:
        self._handle = trace.new_handle()

    def set_frontier(self, frontier: Antichain) -> None:
        # Frontiers are derived once per round and shared: the same object is given again and again.
        if frontier is not self.frontier:
            self.frontier = frontier
            earlier = [t[:-1] + (t[-1] - DELAY,) for t in frontier.elements]
            self._handle.set_frontier(Antichain.of_minimal(frontier.lattice, earlier))


class DelayedTrace:
    """What joins read of a trace: its updates keyed by the first `key_arity` columns, each
    time's last coordinate taken as `delay` more."""

    delay = DELAY

    def __init__(self, lattice: Lattice, key_arity: int, val_arity: int):
        if not lattice.is_product:
            raise ValueError("a delayed trace is read in (epoch, iteration, ...) time, under the product order")
        self.lattice, self.key_arity, self.val_arity = lattice, key_arity, val_arity
        self.source: Trace | None = None
        self.fanout = 2.0  # matches per probe of recent joins (see Trace.observe_fanout)
        self._handles: list[DelayedHandle] = []

    def __repr__(self):
        return f"DelayedTrace({self.source!r}, key_arity={self.key_arity})"

    def bind(self, trace: Trace) -> None:
        """Read `trace` from now on: a trace of whole rows of this view's arity, in this lattice."""
        if trace.lattice != self.lattice or trace.key_arity + trace.val_arity != self.key_arity + self.val_arity:
            raise ValueError(f"{self!r} cannot read {trace!r}: another lattice or arity")
        self.source = trace
        for handle in self._handles:
            handle.bind(trace)

    def new_handle(self) -> DelayedHandle:
        handle = DelayedHandle()
        if self.source is not None:
            handle.bind(self.source)
        self._handles.append(handle)
        return handle

    def __len__(self) -> int:
        return len(self.source)

    def wait(self) -> None:
        self.source.wait()

    def parts(self):
        return self.source.parts()

    observe_fanout = Trace.observe_fanout

"""Progress: which times may still arrive at each operator input.

As in timely dataflow, every unit of outstanding work is a *pointstamp*: a time
at a location. Locations are operator output ports (where operators hold
*capabilities* to send at a time) and operator input ports (where sent batches
wait). A batch in flight is stamped with one lower bound of its times.

One worker runs a static graph, so nothing needs counting: the pointstamps are
read off the operators themselves when a frontier is asked for (their queued
batches' stamps and their capabilities). The tracker keeps only the set of
*live* locations, those holding any work, which sending, receiving and
changing capabilities maintain at the cost of a dict insert or delete.

The graph is static, so for every pair of locations we know the *path
summaries*: how a time changes along a path. Edges and most operators leave it
unchanged; `enter` appends an iteration coordinate 0, `leave` drops the last
coordinate, `feedback` adds 1 to it. Any composition has the normal form
`Summary(keep, inc, tail)`: keep the first `keep` coordinates, add `inc` to the
last kept one, append `tail`. Between two locations we keep the antichain of
minimal summaries (a loop adds increments, so going round it more is dominated).

The frontier at an input port is the antichain of minimal times obtained by
applying those summaries to all live pointstamps that can reach it. An operator
may treat a time as complete when it is not in advance of its input frontier.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

from runtime.times import Antichain, Lattice


class Summary(NamedTuple):
    keep: int
    inc: int = 0
    tail: tuple = ()

    @staticmethod
    def identity(depth: int) -> "Summary":
        return Summary(depth)

    def apply(self, t: tuple) -> tuple:
        k = self.keep
        if k == len(t) and not self.inc and not self.tail:
            return t  # the identity: most paths
        return t[: k - 1] + (t[k - 1] + self.inc,) + self.tail

    def then(self, other: "Summary") -> "Summary":
        """This summary followed by `other`."""
        k1, k2 = self.keep, other.keep
        if k2 < k1:
            return other
        if k2 == k1:
            return Summary(k1, self.inc + other.inc, other.tail)
        kept = self.tail[: k2 - k1]
        kept = kept[:-1] + (kept[-1] + other.inc,)
        return Summary(k1, self.inc, kept + other.tail)

    def le(self, other: "Summary") -> bool:
        """True when self(t) <= other(t) for every t (a sufficient test)."""
        return (
            self.keep == other.keep
            and len(self.tail) == len(other.tail)
            and self.inc <= other.inc
            and all(a <= b for a, b in zip(self.tail, other.tail))
        )


def _add_summary(antichain: list[Summary], s: Summary) -> bool:
    if any(e.le(s) for e in antichain):
        return False
    antichain[:] = [e for e in antichain if not s.le(e)] + [s]
    return True


class ProgressTracker:
    """Live locations and the summaries from every location to chosen inputs.

    Locations are `("in", op, port)` and `("out", op, port)` tuples.
    `successors(location) -> [(location, Summary)]` and `depth_of` describe the
    graph; `targets` are the input ports whose frontiers will be asked for;
    `stamps_at(location)` lists the pointstamps a live location holds now.
    """

    def __init__(self, successors, depth_of, targets, stamps_at):
        self.stamps_at = stamps_at
        self.live: dict[tuple, None] = {}
        # sources[target] = {location: [summaries from location to target]}
        self.sources: dict[tuple, dict[tuple, list[Summary]]] = {}
        predecessors: dict[tuple, list[tuple[tuple, Summary]]] = {}
        for loc, succs in successors.items():
            for nxt, s in succs:
                predecessors.setdefault(nxt, []).append((loc, s))
        for target in targets:
            self.sources[target] = self._reverse_reach(target, predecessors, depth_of)
        self.changes = 0  # bumped whenever work is taken or a capability changes (a frontier may advance)

    @staticmethod
    def _reverse_reach(target, predecessors, depth_of):
        """Summaries from every location to `target`, by search on reversed edges."""
        best: dict[tuple, list[Summary]] = {target: [Summary.identity(depth_of(target))]}
        queue = deque([(target, best[target][0])])
        while queue:
            loc, to_target = queue.popleft()
            if to_target not in best[loc]:
                continue  # superseded by a smaller summary
            for prev, s in predecessors.get(loc, ()):
                candidate = s.then(to_target)
                chain = best.setdefault(prev, [])
                if _add_summary(chain, candidate):
                    queue.append((prev, candidate))
        return best

    def pointstamps(self) -> dict[tuple, list[tuple]]:
        """Every live location's pointstamps (for tests and debugging)."""
        return {loc: self.stamps_at(loc) for loc in self.live}

    def frontier(self, target: tuple, lattice: Lattice) -> Antichain:
        sources = self.sources[target]
        times = []
        for loc in self.live:
            summaries = sources.get(loc)
            if summaries is None:
                continue
            for t in self.stamps_at(loc):
                times.extend(s.apply(t) for s in summaries)
        return Antichain(lattice, times)

"""Progress: which times may still arrive at each operator input.

As in timely dataflow, every unit of outstanding work is a *pointstamp*: a time
at a location. Locations are operator output ports (where operators hold
*capabilities* to send at a time) and operator input ports (where sent batches
wait). A batch in flight is stamped with one lower bound of its times.

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

from runtime.times import Antichain, Lattice, MutableAntichain


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
    """Pointstamp counts and the summaries from every location to chosen inputs.

    Locations are `("in", op, port)` and `("out", op, port)` tuples. `graph`
    supplies `successors(location) -> [(location, Summary)]` and the depth of each
    location; `targets` are the input ports whose frontiers will be asked for.
    """

    def __init__(self, successors, depth_of, targets, lattice_of):
        self.lattice_of = lattice_of
        self.stamps: dict[tuple, MutableAntichain] = {}
        # sources[target] = {location: [summaries from location to target]}
        self.sources: dict[tuple, dict[tuple, list[Summary]]] = {}
        predecessors: dict[tuple, list[tuple[tuple, Summary]]] = {}
        for loc, succs in successors.items():
            for nxt, s in succs:
                predecessors.setdefault(nxt, []).append((loc, s))
        for target in targets:
            self.sources[target] = self._reverse_reach(target, predecessors, depth_of)
        self.changes = 0  # bumped whenever a count decreases (a frontier may advance)

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

    def update(self, location: tuple, time: tuple, diff: int) -> None:
        stamps = self.stamps.get(location)
        if stamps is None:
            stamps = self.stamps[location] = MutableAntichain(self.lattice_of(location))
        stamps.update(time, diff)
        if diff < 0:
            self.changes += 1
            if stamps.is_empty():
                del self.stamps[location]

    def frontier(self, target: tuple, lattice: Lattice) -> Antichain:
        sources = self.sources[target]
        times = []
        for loc, stamps in self.stamps.items():
            summaries = sources.get(loc)
            if summaries is None:
                continue
            for t in stamps.frontier():
                times.extend(s.apply(t) for s in summaries)
        return Antichain(lattice, times)

"""Progress: path summaries, and frontiers lowered by held output.

Frontiers are derived from the inputs and the loops' rounds (runtime.worker).
The one thing that derivation cannot see is an operator that stops with output
still due at times its inputs call complete (a half join out of fuel): it
*holds* those times, as a timely dataflow capability. This module says which
times then reach each operator input.

The graph is static, so for every pair of locations we know the *path
summaries*: how a time changes along a path. Locations are operator output
ports `("out", op, port)` and input ports `("in", op, port)`. Edges and most
operators leave a time unchanged; `enter` appends an iteration coordinate 0,
`leave` drops the last coordinate, `feedback` adds 1 to it. Any composition
has the normal form `Summary(keep, inc, tail)`: keep the first `keep`
coordinates, add `inc` to the last kept one, append `tail`. Between two
locations we keep the antichain of minimal summaries (a loop adds increments,
so going round it more is dominated).

The held frontier at an input port is the antichain of minimal times obtained
by applying those summaries to the times held at every live location that can
reach it.
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
    """Live locations and the summaries from every location to the inputs asked about.

    `successors` maps each location to `[(location, Summary)]` and `depth_of`
    gives a location's time depth; `stamps_at(location)` lists the times a
    live location holds now. Summaries to an input port are found the first
    time its frontier is asked for.
    """

    def __init__(self, successors, depth_of, stamps_at):
        self.stamps_at = stamps_at
        self.depth_of = depth_of
        self.live: dict[tuple, None] = {}
        # sources[target] = {location: [summaries from location to target]}
        self.sources: dict[tuple, dict[tuple, list[Summary]]] = {}
        self.predecessors: dict[tuple, list[tuple[tuple, Summary]]] = {}
        for loc, succs in successors.items():
            for nxt, s in succs:
                self.predecessors.setdefault(nxt, []).append((loc, s))

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

    def frontier(self, target: tuple, lattice: Lattice) -> Antichain:
        sources = self.sources.get(target)
        if sources is None:
            sources = self.sources[target] = self._reverse_reach(target, self.predecessors, self.depth_of)
        times = []
        for loc in self.live:
            summaries = sources.get(loc)
            if summaries is None:
                continue
            for t in self.stamps_at(loc):
                times.extend(s.apply(t) for s in summaries)
        return Antichain(lattice, times)

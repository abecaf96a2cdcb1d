"""Join cost: what a multiway join keeps arranged as binary joins and as a delta query.

Relation sizes are unknown when a program is compiled, so the planner compares
the two plans of a join cluster (compiler.plan.rewrites.joins flattens one into
leaves and conditions) under a deliberately simple model:

- every relation, an input leaf or an intermediate result, has the same number
  of rows, N. That is the optimistic key/foreign-key estimate for binary plans:
  a join neither grows nor shrinks. Many-to-many joins make intermediates
  larger (a triangle's two-paths grow with the square of a hub's degree), which
  only strengthens the delta plan's case;
- an arrangement of a relation by some key columns keeps N records of its
  width: a leaf's columns, or for an intermediate the columns of its leaves
  less one copy of each join key (the runtime stores a key once). Widths are
  counted before column pruning, so they are upper bounds;
- one arrangement serves every reader of the same (relation, key columns),
  across the whole program, as after compiler.plan.rewrites.share; an
  arrangement that something outside the cluster makes anyway costs the
  cluster nothing ("arranged elsewhere"). Key columns are compared as a set.

The binary plan is the left-deep tree order_joins builds: it arranges both
inputs of each join, so its first leaf, each next leaf, and every intermediate
but the last (the cluster's result, which both plans produce) are arranged.
The delta plan is runtime.delta_query's: one term per leaf, each extending the
leaf's updates by lookups in the other leaves' arrangements (`term_steps`: each
leaf keyed by the columns bound before its step; leaves that bind the same new
columns are intersected in one step); it arranges no intermediate.

`Cost.records` is the sum of widths of the arrangements a plan adds (in units
of N), `arrangements` their number, `lookups` the arrangement lookups when
every leaf changes once (a changed row ignoring fan-out: a binary plan looks
up each join it passes through, a delta plan each of the other leaves).
"""

from __future__ import annotations

from typing import NamedTuple

from runtime.delta_query import term_steps

from compiler.plan.delta import DeltaJoin
from compiler.plan.nodes import Aggregate, Antijoin, Distinct, Filter, Join, Node, Project, Ref, Scan, walk
from compiler.plan.rewrites.joins import _in_cluster  # an intermediate of a join tree, not a leaf


class Arrangement(NamedTuple):
    node: Node  # what is arranged: a (filtered) leaf or an intermediate
    key: tuple[int, ...]  # its key columns, sorted
    width: int  # columns kept per record
    intermediate: bool


class Cost(NamedTuple):
    records: int  # maintained records, in units of N rows, weighted by width
    arrangements: int
    intermediates: int
    lookups: int

    def describe(self) -> str:
        inter = f" ({self.intermediates} intermediate{'s' if self.intermediates != 1 else ''})" if self.intermediates else ""
        return f"{self.records}N in {self.arrangements} arrangement{'s' if self.arrangements != 1 else ''}{inter}"


def binary_arrangements(tree: Node) -> tuple[list[Arrangement], int]:
    """The arrangements of a left-deep join tree (order_joins's), and its lookups (every leaf changing once)."""
    node = tree.input if isinstance(tree, Project) else tree
    joins: list[Join] = []
    while _in_cluster(node):
        if isinstance(node, Filter):
            node = node.input
            continue
        joins.append(node)
        node = node.left
    joins.reverse()  # bottom (first two leaves) up
    arranged = []
    for j in joins:
        arranged.append(Arrangement(j.left, _sorted(a for a, _ in j.keys), _width(j.left), _in_cluster(j.left)))
        arranged.append(Arrangement(j.right, _sorted(b for _, b in j.keys), _width(j.right), False))
    n = len(joins) + 1
    # The first two leaves pass through every join; the k-th (k >= 2) through the last n - k.
    lookups = 2 * (n - 1) + sum(n - k for k in range(2, n))
    return arranged, lookups


def delta_arrangements(join: DeltaJoin, terms=None) -> tuple[list[Arrangement], int]:
    """The arrangements runtime.delta_query looks up for `join`, and its lookups (every leaf changing once)."""
    variables, offsets = join.variables(), join.offsets()
    names = [tuple(variables[offsets[k] + c] for c in range(leaf.arity)) for k, leaf in enumerate(join.inputs)]
    arranged, lookups = [], 0
    for i in range(len(join.inputs)) if terms is None else terms:
        for step in term_steps(names, i):
            for j, key in step:
                arranged.append(Arrangement(join.inputs[j], key, join.inputs[j].arity, False))
                lookups += 1
    return arranged, lookups


def other_arrangements(node: Node) -> list[Arrangement]:
    """What a node outside join clusters arranges (Antijoin: both sides; Distinct: its input; Aggregate: by group)."""
    if isinstance(node, Antijoin):
        return [
            Arrangement(node.left, _sorted(a for a, _ in node.keys), node.left.arity, False),
            Arrangement(node.right, _sorted(b for _, b in node.keys), node.right.arity, False),
        ]
    if isinstance(node, Distinct):
        return [Arrangement(node.input, tuple(range(node.arity)), node.arity, False)]
    if isinstance(node, Aggregate):
        return [Arrangement(node.input, _sorted(node.group), node.input.arity, False)]
    if isinstance(node, DeltaJoin) and node.as_of:  # only the first input's updates look the others up
        return delta_arrangements(node, terms=[0])[0]
    return []


def cost(arranged: list[Arrangement], lookups: int, elsewhere) -> Cost:
    """The cost of a plan's arrangements, each distinct one once, those `elsewhere(node, key)` arranges free."""
    distinct = {(a.node, a.key): a for a in arranged}
    added = [a for (node, key), a in distinct.items() if not elsewhere(node, key)]
    return Cost(sum(a.width for a in added), len(added), sum(a.intermediate for a in added), lookups)


def label(leaf: Node) -> str:
    """A short name for a join's leaf: the relation it reads, else its operator."""
    for n in reversed(walk(leaf)):
        if isinstance(n, (Scan, Ref)):
            return n.name
    return type(leaf).__name__.lower()


def _width(node: Node) -> int:
    """Columns the runtime keeps for `node`: a join keeps each key once."""
    if isinstance(node, Filter) and _in_cluster(node):
        return _width(node.input)
    if isinstance(node, Join):
        return _width(node.left) + _width(node.right) - len(node.keys)
    return node.arity


def _sorted(cols) -> tuple[int, ...]:
    return tuple(sorted(set(cols)))


__all__ = ["Arrangement", "Cost", "binary_arrangements", "delta_arrangements", "other_arrangements", "cost", "label"]

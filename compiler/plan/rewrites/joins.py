"""Join ordering: rebuild each cluster of joins as a left-deep tree with keys.

A cluster is a maximal tree of Join and Filter nodes; its leaves are the
other nodes under it (relations, aggregates, unions, ...). The rewrite
flattens a cluster into its leaves and the conditions over their columns
(join keys become equalities again), then rebuilds it:

- conditions on one leaf filter that leaf before it is joined;
- the first leaf is the one with the most such conditions (constants make it
  small), the earliest on a tie;
- each next leaf is one sharing the most column equalities with the leaves
  already joined (those equalities become the join keys), the earliest on a
  tie, so a cross product happens only when no remaining leaf is connected;
- any other condition is a Filter as soon as all the leaves it reads are in.

A Project on top puts the columns back in the cluster's original order, so
the nodes above do not change. `join_order="source"` keeps the leaves in
their written order and only places keys and filters.
"""

from __future__ import annotations

from typing import NamedTuple

from compiler.plan.errors import PlanError
from compiler.plan.expr import Call, Col, columns, conjoin, conjuncts, equated_columns, remap
from compiler.plan.nodes import Filter, Join, Node, Project
from compiler.plan.program import Plan

JOIN_ORDERS = ("greedy", "source")


def order_joins(plan: Plan, join_order: str = "greedy", **options) -> Plan:
    if join_order not in JOIN_ORDERS:
        raise PlanError(f"join_order must be one of {JOIN_ORDERS}, not {join_order!r}")
    memo: dict[int, Node] = {}
    return plan.map_bodies(lambda body: _order(body, join_order, memo))


def _in_cluster(node: Node) -> bool:
    while isinstance(node, Filter):
        node = node.input
    return isinstance(node, Join)


def _order(node: Node, strategy: str, memo) -> Node:
    done = memo.get(id(node))
    if done is None:
        if _in_cluster(node):
            leaves, conditions = _flatten(node)
            leaves = [_order(leaf, strategy, memo) for leaf in leaves]
            done = _rebuild(leaves, conditions, strategy, node.span)
        else:
            done = node.with_children([_order(c, strategy, memo) for c in node.children()])
        memo[id(node)] = done
    return done


def _flatten(node: Node) -> tuple[list[Node], list]:
    """Leaves in column order, and conditions over the concatenation of their columns."""
    if isinstance(node, Filter):  # over the cluster, or over one leaf: placed again by _rebuild
        leaves, conditions = _flatten(node.input)
        return leaves, conditions + conjuncts(node.predicate)
    if isinstance(node, Join):
        left, left_conditions = _flatten(node.left)
        right, right_conditions = _flatten(node.right)
        width = node.left.arity
        shifted = [remap(c, {i: i + width for i in columns(c)}) for c in right_conditions]
        keys = [_equal(node.types, a, width + b) for a, b in node.keys]
        return left + right, left_conditions + shifted + keys
    return [node], []


def with_leaves(cluster: Node, rewritten: list[Node]) -> Node:
    """The cluster's own tree with its leaves, in _flatten's order, replaced by `rewritten`
    (by position: one relation may be several leaves)."""
    replacements = iter(rewritten)

    def rebuild(node: Node) -> Node:
        if isinstance(node, (Filter, Join)):  # as _flatten walks it
            return node.with_children([rebuild(c) for c in node.children()])
        return next(replacements)

    return rebuild(cluster)


def _equal(types, a: int, b: int):
    return Call("=", (Col(a, types[a]), Col(b, types[b])))


class Conditions(NamedTuple):
    """A flattened join's conditions sorted by the leaves they read.

    Columns are numbered globally (leaf k's start at offsets[k]; owner[i] is
    the leaf of column i). `local[k]` reads only leaf k, `edges` equates one
    column of each of two leaves, `general` is everything else.
    """

    offsets: list[int]
    owner: list[int]
    local: list[list]
    edges: list[tuple[int, int]]
    general: list

    def filtered(self, leaves: list[Node], k: int) -> Node:
        """Leaf k under its local conditions."""
        leaf, start = leaves[k], self.offsets[k]
        shift = {i: i - start for i in range(start, start + leaf.arity)}
        preds = [remap(c, shift) for c in self.local[k]]
        return Filter(leaf, conjoin(preds), span=leaf.span) if preds else leaf


def partition_conditions(leaves: list[Node], conditions: list) -> Conditions:
    offsets, owner = [], []
    for k, leaf in enumerate(leaves):
        offsets.append(len(owner))
        owner.extend([k] * leaf.arity)
    local: list[list] = [[] for _ in leaves]
    edges: list[tuple[int, int]] = []
    general = []
    for c in dict.fromkeys(conditions):
        readers = {owner[i] for i in columns(c)}
        pair = equated_columns(c)
        if len(readers) <= 1:
            local[min(readers, default=0)].append(c)
        elif pair is not None and len(readers) == 2:
            edges.append(tuple(pair))
        else:
            general.append(c)
    return Conditions(offsets, owner, local, edges, general)


def _rebuild(leaves: list[Node], conditions: list, strategy: str, span) -> Node:
    parts = partition_conditions(leaves, conditions)
    offsets, owner, local, edges, general = parts

    def filtered(k: int) -> Node:
        return parts.filtered(leaves, k)

    order = _order_leaves(len(leaves), local, edges, owner, strategy)
    first = order[0]
    current = filtered(first)
    position = {offsets[first] + i: i for i in range(leaves[first].arity)}
    joined = {first}
    for k in order[1:]:
        right = filtered(k)
        keys = []
        for a, b in edges:
            if owner[a] == k and owner[b] in joined:
                a, b = b, a
            if owner[a] in joined and owner[b] == k:
                keys.append((position[a], b - offsets[k]))
        width = current.arity
        current = Join(current, right, tuple(dict.fromkeys(keys)), span=span)
        position.update({offsets[k] + i: width + i for i in range(leaves[k].arity)})
        joined.add(k)
        ready = [c for c in general if {owner[i] for i in columns(c)} <= joined]
        if ready:
            general = [c for c in general if c not in ready]
            current = Filter(current, conjoin(remap(c, position) for c in ready), span=span)
    restored = Project(current, tuple(Col(position[g], current.types[position[g]]) for g in range(len(owner))), span=span)
    return current if restored.is_identity() else restored


def _order_leaves(n: int, local, edges, owner, strategy: str) -> list[int]:
    if strategy == "source":
        return list(range(n))
    links = [[0] * n for _ in range(n)]
    for a, b in edges:
        links[owner[a]][owner[b]] += 1
        links[owner[b]][owner[a]] += 1
    first = max(range(n), key=lambda k: (len(local[k]), -k))
    order, remaining = [first], [k for k in range(n) if k != first]
    while remaining:
        best = max(remaining, key=lambda k: (sum(links[k][j] for j in order), -k))
        order.append(best)
        remaining.remove(best)
    return order

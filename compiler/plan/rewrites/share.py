"""Sharing: equal subplans become one node.

Plans are values, so two rules that read the same relation through the same
filter, or join the same two relations on the same keys, contain equal
subtrees. Hash-consing the whole plan (every binding's body, bottom up)
makes each distinct subtree a single object. The lowering builds one dataflow
collection per node object and one arrangement per (collection, key), so
after this pass each relation is indexed by a given key once, however many
rules and strata join on it.
"""

from __future__ import annotations

from compiler.plan.nodes import Node
from compiler.plan.program import Plan


def share(plan: Plan, **options) -> Plan:
    canonical: dict[Node, Node] = {}
    memo: dict[int, Node] = {}

    def intern(node: Node) -> Node:
        done = memo.get(id(node))
        if done is None:
            # The children become their canonical equals: the node is equal to itself, unchecked.
            rebuilt = node.with_equal_children(intern(c) for c in node.children())
            done = memo[id(node)] = canonical.setdefault(rebuilt, rebuilt)
        return done

    return plan.map_bodies(intern)

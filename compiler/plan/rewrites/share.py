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
from compiler.plan.rewrites.walk import bottom_up


def share(plan: Plan, **options) -> Plan:
    canonical: dict[Node, Node] = {}
    memo: dict[int, Node] = {}
    return plan.map_bodies(lambda body: bottom_up(body, lambda n: canonical.setdefault(n, n), memo))

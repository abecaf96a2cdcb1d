"""Distinct elimination: no Distinct where it cannot change the answer.

A Distinct over a node that is already a set (a Distinct or an Aggregate) is
dropped. A Distinct over an input Scan (possibly filtered) -- there because an
input may hold a row more than once -- is dropped where only the *presence* of rows
matters downstream: the rows pass through Filter, Project, Union and Join
(whose result has the same rows, only with other multiplicities) up to a
Distinct, a min/max Aggregate, or the right side of an Antijoin. Under a
count, sum or mean it stays, since those count duplicates. (This relies on
multiplicities never being negative: a session never removes more copies of a
row than it holds; see compiler.program.) A binding's own top-level Distinct
always stays: bindings are sets, and inside a Fixpoint it is what makes each
iteration a set.
"""

from __future__ import annotations

from compiler.plan.delta import DeltaJoin
from compiler.plan.nodes import Aggregate, Antijoin, Distinct, Filter, Join, Node, Scan, is_set
from compiler.plan.program import Plan


def drop_distincts(plan: Plan, **options) -> Plan:
    memo: dict = {}

    def top(body: Node) -> Node:
        if isinstance(body, Distinct):  # the binding's own Distinct stays
            return body.with_children([_drop(body.input, True, memo)])
        return _drop(body, False, memo)

    return plan.map_bodies(top)


def _drop(node: Node, presence_only: bool, memo) -> Node:
    """The node without needless Distincts; presence_only: the consumer ignores multiplicities."""
    key = (id(node), presence_only)
    done = memo.get(key)
    if done is not None:
        return done
    if isinstance(node, Distinct):
        inner = node.input
        if is_set(inner) or (presence_only and _filtered_scan(inner)):
            done = _drop(inner, presence_only, memo)
        else:
            done = node.with_children([_drop(inner, True, memo)])
    elif isinstance(node, Aggregate):
        done = node.with_children([_drop(node.input, node.func in ("min", "max"), memo)])
    elif isinstance(node, Antijoin):
        done = node.with_children([_drop(node.left, presence_only, memo), _drop(node.right, True, memo)])
    elif isinstance(node, DeltaJoin) and node.as_of:
        # An as-of join looks events up in the relations as they are, multiplicities
        # included: their Distincts (sets) are part of its meaning.
        done = node.with_children([_drop(c, False, memo) for c in node.children()])
    elif getattr(node, "multiplicities_matter", False):
        # A front end's own node whose answer depends on its inputs' multiplicities
        # (SQL's AsOfJoin: each change of a row is an event); it keeps their Distincts.
        done = node.with_children([_drop(c, False, memo) for c in node.children()])
    elif isinstance(node, Join):
        done = node.with_children([_drop(c, presence_only, memo) for c in node.children()])
    else:  # Filter, Project, Union pass multiplicities through; leaves have no children
        done = node.with_children([_drop(c, presence_only, memo) for c in node.children()])
    memo[key] = done
    return done


def _filtered_scan(node: Node) -> bool:
    while isinstance(node, Filter):
        node = node.input
    return isinstance(node, Scan)

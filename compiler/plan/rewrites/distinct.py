"""Distinct elimination: no Distinct where it cannot change the answer.

A Distinct over a node that is already a set (a Distinct or an Aggregate) is
dropped. A Distinct over an input Scan (possibly filtered) -- there because an
input may hold a row more than once -- is dropped where only the *presence* of rows
matters downstream: the rows pass through Filter, Project, Union and Join
(whose result has the same rows, only with other multiplicities) -- and a front
end's node with `passes_multiplicities` -- up to a Distinct, a min/max
Aggregate, or the right side of an Antijoin (`presence_only_below`, which
compiler.plan.rewrites.existence asks too). Under a count, sum or mean it
stays, since those count duplicates, and so it does under any other node. (This relies on
multiplicities never being negative: a session never removes more copies of a
row than it holds; see compiler.program.) A binding's own top-level Distinct
always stays: bindings are sets, and inside a Fixpoint it is what makes each
iteration a set.
"""

from __future__ import annotations

from compiler.plan.delta import DeltaJoin
from compiler.plan.nodes import Aggregate, Antijoin, Distinct, Filter, Join, Node, Project, Scan, Union, is_set
from compiler.plan.program import Plan


def drop_distincts(plan: Plan, **options) -> Plan:
    memo: dict = {}

    def top(body: Node) -> Node:
        if isinstance(body, Distinct):  # the binding's own Distinct stays
            return body.with_children([_drop(body.input, True, memo)])
        return _drop(body, False, memo)

    return plan.map_bodies(top)


def presence_only_below(node: Node, presence_only: bool) -> tuple[bool, ...]:
    """For each child of `node`: whether only the presence of its rows matters, given
    whether only the presence of `node`'s rows does (see the module)."""
    children = node.children()
    if isinstance(node, Distinct):
        return (True,)
    if isinstance(node, Aggregate):
        return (node.func in ("min", "max"),)
    if isinstance(node, Antijoin):
        return (presence_only, True)
    if isinstance(node, (Filter, Project, Union, Join)) or (isinstance(node, DeltaJoin) and not node.as_of):
        return (presence_only,) * len(children)  # multiplicities pass through (a join multiplies them)
    if getattr(node, "passes_multiplicities", False):  # a front end's own node that says so
        return (presence_only,) * len(children)
    # An as-of join looks events up in the relations as they are, multiplicities included;
    # another front end's node (SQL's AsOfJoin, TopK, ...) may count its inputs' rows.
    return (False,) * len(children)


def _drop(node: Node, presence_only: bool, memo) -> Node:
    """The node without needless Distincts; presence_only: the consumer ignores multiplicities."""
    key = (id(node), presence_only)
    done = memo.get(key)
    if done is not None:
        return done
    if isinstance(node, Distinct) and (is_set(node.input) or (presence_only and _filtered_scan(node.input))):
        done = _drop(node.input, presence_only, memo)
    else:
        below = presence_only_below(node, presence_only)
        done = node.with_children([_drop(c, p, memo) for c, p in zip(node.children(), below)])
    memo[key] = done
    return done


def _filtered_scan(node: Node) -> bool:
    while isinstance(node, Filter):
        node = node.input
    return isinstance(node, Scan)

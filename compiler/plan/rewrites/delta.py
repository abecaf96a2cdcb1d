"""Delta-query planning: which join clusters run as delta queries (compiler.plan.delta).

A binary join tree keeps every intermediate result arranged. For a cyclic
join -- a triangle `e(a,b), e(b,c), e(a,c)`, a 4-cycle, a clique -- the first
join of any order is an open path whose size grows with the square of a hub's
degree, though the answer may be small. A delta query keeps only the base
relations' arrangements (one per relation and key, shared) and streams each
change through lookups, so its state is the size of its inputs.

The rewrite runs before join ordering and looks at each join cluster (the
maximal tree of Join and Filter nodes, as compiler.plan.rewrites.joins
flattens it): its leaves, and conditions over their columns. The choice,
`join_plan=`:

- "binary": never a delta query (the join tree of order_joins);
- "delta": every connected cluster of three or more leaves;
- "auto" (default): connected clusters of three or more leaves whose join graph
  (leaves linked by equalities) has a cycle, outside recursion: in a fixpoint
  body that reads the fixpoint's own bindings the binary plan is kept, since
  its arrangements of the changing variables are needed anyway.

A chosen cluster becomes `DeltaJoin(filtered leaves, equalities)` under a
Filter of the conditions that span several leaves otherwise (inequalities,
arithmetic); the columns keep the cluster's order, so nothing above changes.
"""

from __future__ import annotations

from compiler.plan.delta import DeltaJoin
from compiler.plan.errors import PlanError
from compiler.plan.expr import conjoin
from compiler.plan.nodes import Filter, Node, Ref, walk
from compiler.plan.program import Fixpoint, Plan
from compiler.plan.rewrites.joins import _flatten, _in_cluster, partition_conditions

JOIN_PLANS = ("auto", "binary", "delta")


def plan_delta_joins(plan: Plan, join_plan: str = "auto", **options) -> Plan:
    if join_plan not in JOIN_PLANS:
        raise PlanError(f"join_plan must be one of {JOIN_PLANS}, not {join_plan!r}")
    if join_plan == "binary":
        return plan
    recursive = {b.name: frozenset(x.name for x in step.bindings) for step in plan.steps if isinstance(step, Fixpoint) for b in step.bindings}
    memo: dict = {}
    names = iter([b.name for b in plan.bindings()])

    def rewrite(body: Node) -> Node:
        return _rewrite(body, join_plan, recursive.get(next(names), frozenset()), memo)

    return plan.map_bodies(rewrite)


def _rewrite(node: Node, mode: str, recursive: frozenset, memo) -> Node:
    key = (id(node), recursive)
    done = memo.get(key)
    if done is None:
        done = None
        if _in_cluster(node):
            leaves, conditions = _flatten(node)
            leaves = [_rewrite(leaf, mode, recursive, memo) for leaf in leaves]
            done = _delta(leaves, conditions, mode, recursive, node.span)
        if done is None:
            done = node.with_children([_rewrite(c, mode, recursive, memo) for c in node.children()])
        memo[key] = done
    return done


def _delta(leaves: list[Node], conditions: list, mode: str, recursive: frozenset, span) -> Node | None:
    n = len(leaves)
    if n < 3:
        return None
    parts = partition_conditions(leaves, conditions)
    owner, edges, general = parts.owner, parts.edges, parts.general
    links = {frozenset((owner[a], owner[b])) for a, b in edges}
    if not _connected(n, links):
        return None
    if mode == "auto":
        if len(links) < n:  # a connected graph with as many edges as nodes has a cycle
            return None
        if recursive and any(isinstance(x, Ref) and x.name in recursive for leaf in leaves for x in walk(leaf)):
            return None
    inputs = tuple(parts.filtered(leaves, k) for k in range(n))
    result: Node = DeltaJoin(inputs, tuple(dict.fromkeys(edges)), span=span)
    if general:
        result = Filter(result, conjoin(general), span=span)
    return result


def _connected(n: int, links) -> bool:
    seen, stack = {0}, [0]
    while stack:
        k = stack.pop()
        for link in links:
            if k in link:
                for j in link:
                    if j not in seen:
                        seen.add(j)
                        stack.append(j)
    return len(seen) == n


__all__ = ["JOIN_PLANS", "plan_delta_joins"]

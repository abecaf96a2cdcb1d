"""Delta-query planning: which join clusters run as delta queries (compiler.plan.delta).

A binary join tree keeps every intermediate result arranged. For a cyclic
join -- a triangle `e(a,b), e(b,c), e(a,c)`, a 4-cycle, a clique -- the first
join of any order is an open path whose size grows with the square of a hub's
degree, though the answer may be small. A delta query keeps only the base
relations' arrangements (one per relation and key, shared) and streams each
change through lookups, so its state is the size of its inputs.

The rewrite runs before join ordering and looks at each join cluster (the
maximal tree of Join and Filter nodes, as compiler.plan.rewrites.joins
flattens it): its leaves, and conditions over their columns. A multiway join
is a connected cluster (leaves linked by equalities, no cross product) of
three or more leaves. The choice, `join_plan=`:

- "binary": never a delta query (the join tree of order_joins);
- "delta": every multiway join;
- "auto" (default): no delta query in a fixpoint body that reads the
  fixpoint's own bindings (the binary plan's arrangements of the changing
  variables are needed anyway); otherwise every cyclic multiway join (its
  join graph has a cycle), and every acyclic one whose delta plan adds
  strictly fewer maintained records than its binary plan under the cost model
  of compiler.plan.rewrites.cost (every relation N rows; an arrangement costs
  its width; what the rest of the program arranges anyway is free). "The
  rest of the program" is what is planned whatever the model says: cyclic
  joins as delta queries, two-leaf joins, antijoins, aggregates, distincts,
  every join under a forced `join_plan`. The other joins the model decides
  are costed each as if it were alone, so two joins that would share an
  arrangement only if both took the same plan are not seen together. On a
  tie the binary plan stays: it does fewer lookups per update.

A chosen cluster becomes `DeltaJoin(filtered leaves, equalities)` under a
Filter of the conditions that span several leaves otherwise (inequalities,
arithmetic); the columns keep the cluster's order, so nothing above changes.
Every multiway join's choice, with both plans' cost figures, is recorded in
`plan.join_choices` (JoinChoice), which explain prints.
"""

from __future__ import annotations

from typing import NamedTuple

from compiler.plan.delta import DeltaJoin
from compiler.plan.errors import PlanError
from compiler.plan.expr import conjoin
from compiler.plan.nodes import Filter, Node, Ref, walk
from compiler.plan.program import Fixpoint, Plan
from compiler.plan.rewrites.cost import Cost, binary_arrangements, cost, delta_arrangements, label, other_arrangements
from compiler.plan.rewrites.joins import Conditions, _flatten, _in_cluster, _rebuild, partition_conditions, with_leaves

JOIN_PLANS = ("auto", "binary", "delta")


class JoinChoice(NamedTuple):
    """How one multiway join is planned, and the cost figures behind it."""

    binding: str  # the first binding it occurs in
    atoms: tuple[str, ...]  # its leaves, by the relation each reads
    cyclic: bool
    plan: str  # "delta" or "binary"
    reason: str
    binary: Cost
    delta: Cost

    def describe(self) -> str:
        """Two lines: the join and the choice; then each plan's figures."""
        shape = "cyclic" if self.cyclic else "acyclic"
        return (
            f"{self.binding}: {len(self.atoms)}-way {shape} join of {', '.join(self.atoms)} -> {self.plan}: {self.reason}\n"
            f"  binary adds {self.binary.describe()}, {self.binary.lookups} lookups;"
            f" delta adds {self.delta.describe()}, {self.delta.lookups} lookups"
        )


class _Cluster:
    """A join cluster as the planner sees it: leaves, conditions, join graph and both plans."""

    def __init__(self, node: Node, binding: str, recursive: bool, join_order: str):
        self.node, self.binding, self.recursive = node, binding, recursive
        self.leaves, self.conditions = _flatten(node)
        self.parts: Conditions = partition_conditions(self.leaves, self.conditions)
        n = len(self.leaves)
        links = {frozenset((self.parts.owner[a], self.parts.owner[b])) for a, b in self.parts.edges}
        self.multiway = n >= 3 and _connected(n, links)
        self.cyclic = self.multiway and len(links) >= n  # a connected graph with as many edges as nodes has a cycle
        self.binary = binary_arrangements(_rebuild(self.leaves, self.conditions, join_order, node.span))
        self.delta = delta_arrangements(self.delta_join(self.leaves)) if self.multiway else None

    def delta_join(self, leaves: list[Node]) -> DeltaJoin:
        inputs = tuple(self.parts.filtered(leaves, k) for k in range(len(leaves)))
        return DeltaJoin(inputs, tuple(dict.fromkeys(self.parts.edges)), span=self.node.span)

    def forced(self, mode: str) -> tuple[str, str] | None:
        """(plan, reason) when the mode or the join's shape decides, else None: the cost model decides."""
        if mode != "auto":
            return mode, f"join_plan={mode}"
        if self.recursive:
            return "binary", "reads its fixpoint's own relations"
        if self.cyclic:
            return "delta", "cyclic: binary intermediates outgrow the inputs"
        return None


def plan_delta_joins(plan: Plan, join_plan: str = "auto", join_order: str = "greedy", **options) -> Plan:
    if join_plan not in JOIN_PLANS:
        raise PlanError(f"join_plan must be one of {JOIN_PLANS}, not {join_plan!r}")
    clusters = _clusters(plan, join_order)
    owners = _arranged_by(plan, clusters.values(), join_plan)
    choices = {key: _choose(c, join_plan, owners) for key, c in clusters.items() if c.multiway}
    recursive = _recursive_names(plan)
    memo: dict = {}
    names = iter([b.name for b in plan.bindings()])

    def rewrite(body: Node) -> Node:
        return _rewrite(body, recursive.get(next(names), frozenset()), clusters, choices, memo)

    return plan.map_bodies(rewrite).with_join_choices(choice for choice in choices.values())


def _recursive_names(plan: Plan) -> dict[str, frozenset]:
    """For each binding of a fixpoint, the names of that fixpoint's bindings."""
    return {b.name: frozenset(x.name for x in step.bindings) for step in plan.steps if isinstance(step, Fixpoint) for b in step.bindings}


def _reads(node: Node, names: frozenset) -> bool:
    return bool(names) and any(isinstance(x, Ref) and x.name in names for x in walk(node))


def _clusters(plan: Plan, join_order: str) -> dict:
    """Every join cluster the rewrite visits, keyed by (id(node), the fixpoint's names) as _rewrite's memo is."""
    recursive = _recursive_names(plan)
    found: dict = {}
    seen: set = set()
    for b in plan.bindings():
        names = recursive.get(b.name, frozenset())
        stack = [b.body]
        while stack:
            node = stack.pop()
            key = (id(node), names)
            if key in seen:
                continue
            seen.add(key)
            if not _in_cluster(node):
                stack.extend(node.children())
                continue
            leaves = _flatten(node)[0]
            c = found[key] = _Cluster(node, b.name, any(_reads(leaf, names) for leaf in leaves), join_order)
            # A multiway join's leaves are planned on their own; a two-leaf join or a cross product
            # keeps its tree, and the clusters inside it get their own chance.
            stack.extend(c.leaves if c.multiway else node.children())
    return found


def _arranged_by(plan: Plan, clusters, mode: str) -> dict:
    """{(node, key columns): owners} of every arrangement the program makes whatever the cost model says."""
    owners: dict = {}
    for c in clusters:
        decided = c.forced(mode) if c.multiway else ("binary", "not a multiway join")
        if decided is None:
            continue  # decided by the model too: costed as if it were alone
        arranged = c.delta[0] if decided[0] == "delta" else c.binary[0]
        for a in arranged:
            owners.setdefault((a.node, a.key), set()).add(c.node)
    for b in plan.bindings():
        for node in walk(b.body):
            for a in other_arrangements(node):
                owners.setdefault((a.node, a.key), set()).add(node)
    return owners


def _choose(c: _Cluster, mode: str, owners: dict) -> JoinChoice:
    def elsewhere(node, key) -> bool:
        return bool(owners.get((node, key), set()) - {c.node})

    binary, delta = cost(*c.binary, elsewhere), cost(*c.delta, elsewhere)
    decided = c.forced(mode)
    if decided is None:
        if delta.records < binary.records:
            decided = "delta", "the delta plan keeps fewer records"
        elif delta.records == binary.records:
            decided = "binary", "as many records either way; binary does fewer lookups"
        else:
            decided = "binary", "the binary plan keeps fewer records"
    plan, reason = decided
    return JoinChoice(c.binding, tuple(label(leaf) for leaf in c.leaves), c.cyclic, plan, reason, binary, delta)


def _rewrite(node: Node, recursive: frozenset, clusters: dict, choices: dict, memo) -> Node:
    key = (id(node), recursive)
    done = memo.get(key)
    if done is None:
        cluster = clusters.get(key)
        if cluster is not None and cluster.multiway:
            leaves = [_rewrite(leaf, recursive, clusters, choices, memo) for leaf in cluster.leaves]
            if choices[key].plan == "delta":
                done = cluster.delta_join(leaves)
                if cluster.parts.general:
                    done = Filter(done, conjoin(cluster.parts.general), span=node.span)
            else:
                done = with_leaves(node, leaves)
        else:
            done = node.with_children([_rewrite(c, recursive, clusters, choices, memo) for c in node.children()])
        memo[key] = done
    return done


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


__all__ = ["JOIN_PLANS", "JoinChoice", "plan_delta_joins"]

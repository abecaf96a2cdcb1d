"""Existence tests: a part of a join that nothing reads is only asked whether it is empty.

In `a(x) :- b(x), c(y), d(y).` nothing above the join reads `y`, and `c(y), d(y)`
shares no variable with `b(x)`: the rule derives `a(x)` for every `b(x)` when
`c ⋈ d` has a row, and nothing otherwise. A plan that crosses `b` with `c` and
then joins `d` arranges |b| x |c| rows for that answer (and does it again for
every new `b` row in a recursion); Soufflé evaluates such literals as a
condition checked once. This rewrite does the same with relations:

- a join cluster (as compiler.plan.rewrites.joins flattens it: leaves, and
  conditions over their columns) splits into the connected components of its
  join graph, where two leaves are linked when a condition reads both;
- a component none of whose columns the nodes above read is an *existence
  test*: it is planned on its own and reduced to a 0-ary relation, one row
  when it has any (Distinct of its empty projection), and the rest of the
  cluster is crossed with it -- a cross product with a relation of no columns
  and at most one row is a filter;
- the cluster keeps its columns: those of an existence test become constants
  that nothing reads (prune_columns drops them).

"Read above" is tracked from each binding down (its columns are all read; a
Project reads what its kept expressions read, a Filter adds its predicate's
columns, an Aggregate its group and argument, an Antijoin its keys, a
Distinct everything), and so is whether only the *presence* of rows matters
there (compiler.plan.rewrites.distinct.presence_only_below): the rewrite
changes how many times a row is derived, so under a count, sum or mean of the
rows it does not apply. A component that is one leaf of no columns is left as
it is (it already is a test), and so is a cluster of one component.
"""

from __future__ import annotations

from compiler.plan.expr import Col, columns, remap, unread
from compiler.plan.nodes import Aggregate, Antijoin, Distinct, Filter, Node, Project, Union
from compiler.plan.program import Plan
from compiler.plan.rewrites.distinct import presence_only_below
from compiler.plan.rewrites.joins import _flatten, _in_cluster, _rebuild, partition_conditions, with_leaves

def isolate_existence_tests(plan: Plan, **options) -> Plan:
    memo: dict = {}
    return plan.map_bodies(lambda body: _rewrite(body, frozenset(range(body.arity)), False, memo))


def _rewrite(node: Node, read: frozenset, presence_only: bool, memo) -> Node:
    """`node` with its existence tests isolated; `read`: its columns read above."""
    key = (id(node), read, presence_only)
    done = memo.get(key)
    if done is None:
        if _in_cluster(node):
            done = _cluster(node, read, presence_only, memo)
        else:
            below = zip(node.children(), _read_below(node, read), presence_only_below(node, presence_only))
            done = node.with_children([_rewrite(child, r, p, memo) for child, r, p in below])
        memo[key] = done
    return done


def _read_below(node: Node, read: frozenset) -> list[frozenset]:
    """For each child of a node outside join clusters: its columns the node (and what is above) reads."""
    if isinstance(node, Filter):
        return [read | columns(node.predicate)]
    if isinstance(node, Project):
        return [frozenset().union(*(columns(node.exprs[i]) for i in read))]
    if isinstance(node, Antijoin):
        return [read | {a for a, _ in node.keys}, frozenset(b for _, b in node.keys)]
    if isinstance(node, Union):
        return [read] * len(node.inputs)
    if isinstance(node, Aggregate):
        return [frozenset(node.group) | ({node.arg} if node.arg is not None else set())]
    return [frozenset(range(child.arity)) for child in node.children()]  # Distinct, and any other node: all


def _cluster(node: Node, read: frozenset, presence_only: bool, memo) -> Node:
    leaves, conditions = _flatten(node)
    offsets, owner = partition_conditions(leaves, conditions)[:2]
    by_conditions = frozenset().union(*(columns(c) for c in conditions))
    rewritten = []
    for k, leaf in enumerate(leaves):
        start = offsets[k]
        wanted = frozenset(c - start for c in read | by_conditions if owner[c] == k)
        rewritten.append(_rewrite(leaf, wanted, presence_only, memo))
    components = _components(len(leaves), owner, conditions)
    tests = [c for c in components if not any(owner[i] in c for i in read) and not _is_test(c, leaves)]
    if not presence_only or len(components) < 2 or not tests:
        if all(a is b for a, b in zip(rewritten, leaves)):
            return node
        return with_leaves(node, rewritten)
    kept = [k for k in range(len(leaves)) if not any(k in c for c in tests)]
    existence = [_existence_test(sorted(c), rewritten, offsets, conditions, node.span) for c in tests]
    # The kept leaves, then the tests; the conditions over kept leaves (or none), renumbered.
    position = _renumbering(kept, leaves, offsets)
    kept_conditions = [remap(c, position) for c in conditions if columns(c) <= position.keys()]
    joined = _rebuild([rewritten[k] for k in kept] + existence, kept_conditions, "source", node.span)
    exprs = tuple(Col(position[g], t) if g in position else unread(t) for g, t in enumerate(node.types))
    return Project(joined, exprs, span=node.span)


def _components(n: int, owner: list[int], conditions) -> list[frozenset[int]]:
    """The leaves' connected components, two leaves linked when a condition reads both."""
    parent = list(range(n))

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for c in conditions:
        readers = sorted({owner[i] for i in columns(c)})
        for k in readers[1:]:
            parent[find(k)] = find(readers[0])
    groups: dict[int, set[int]] = {}
    for k in range(n):
        groups.setdefault(find(k), set()).add(k)
    return [frozenset(g) for g in groups.values()]


def _is_test(component: frozenset[int], leaves: list[Node]) -> bool:
    """A single leaf of no columns: already nothing but an existence test."""
    return len(component) == 1 and leaves[next(iter(component))].arity == 0


def _existence_test(component: list[int], leaves: list[Node], offsets: list[int], conditions, span) -> Node:
    """The component's leaves joined under their conditions, reduced to one row of no columns if any."""
    position = _renumbering(component, leaves, offsets)
    inside = [remap(c, position) for c in conditions if columns(c) and columns(c) <= position.keys()]
    joined = _rebuild([leaves[k] for k in component], inside, "source", span)
    return Distinct(Project(joined, (), span=span), span=span)


def _renumbering(chosen: list[int], leaves: list[Node], offsets: list[int]) -> dict[int, int]:
    """The cluster's columns of the chosen leaves -> their columns once those leaves stand side by side."""
    position, width = {}, 0
    for k in chosen:
        position.update({offsets[k] + i: width + i for i in range(leaves[k].arity)})
        width += leaves[k].arity
    return position


__all__ = ["isolate_existence_tests"]

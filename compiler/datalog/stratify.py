"""Stratification: the order in which relations can be computed.

The dependency graph has an edge from each rule's head relation to every
relation its body uses (inside aggregates too). Its strongly connected
components, in topological order, are the strata: each is computed after the
ones it depends on, and a component with a cycle is recursive (one fixpoint).
Negation of a relation of the same component has no least model, and neither
has count, sum or mean over one, so both are StratificationErrors naming the
relations around the cycle. min and max are monotone under the lattice order
the runtime uses for them, so min/max aggregates may recurse, and so may
relations declared with a `min(col)`/`max(col)` qualifier (their implicit
aggregation is not an edge of the graph at all).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterator

from compiler.datalog.ast import Aggregate, Atom, Negation, Rule, literal_terms, subterms
from compiler.errors import Source, StratificationError

MONOTONE_AGGREGATES = {"min", "max"}


@dataclass(frozen=True)
class Stratum:
    relations: tuple[str, ...]
    rules: tuple[Rule, ...]
    recursive: bool


def body_atoms(body, mode: str = "positive") -> Iterator[tuple[Atom, str]]:
    """Each atom of a body, also inside aggregates, with how it is used: 'positive',
    'negative', or the kind of the outermost non-monotone aggregate around it
    (a min/max aggregate alone leaves it 'positive')."""
    for lit in body:
        if isinstance(lit, Atom):
            yield lit, mode
        elif isinstance(lit, Negation):
            yield lit.atom, "negative"
        for term in literal_terms(lit):
            for sub in subterms(term):
                if isinstance(sub, Aggregate):
                    inner = mode if mode != "positive" or sub.kind in MONOTONE_AGGREGATES else sub.kind
                    yield from body_atoms(sub.body, inner)


def strongly_connected(nodes: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm without recursion; components come out dependencies first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges[root]))]
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def stratify(rules: tuple[Rule, ...], source: Source | None, subsumptions=()) -> list[Stratum]:
    """Strata of the relations that rules (or subsumptive rules) define, in dependency
    order. Rules have one head each. A subsumptive rule `r(..) <= r(..) :- body` makes r
    depend on its body's relations; its two heads read r's candidate tuples, not r."""
    defined: dict[str, list[Rule]] = {}
    for rule in rules:
        defined.setdefault(rule.heads[0].relation, []).append(rule)
    # The subsumptive rules count as rules with their body, less the atoms of their own
    # relation (like the two heads, they read its candidate tuples).
    dependencies = {name: list(its_rules) for name, its_rules in defined.items()}
    for s in subsumptions:
        defined.setdefault(s.relation, [])
        body = tuple(lit for lit in s.body if _relation_of(lit) != s.relation)
        dependencies.setdefault(s.relation, []).append(Rule((s.dominated,), body, span=s.span))
    edges: dict[str, list[str]] = {}
    for name, its_rules in dependencies.items():
        used = (atom.relation for rule in its_rules for atom, _ in body_atoms(rule.body))
        edges[name] = list(dict.fromkeys(r for r in used if r in defined))

    order = {name: i for i, name in enumerate(defined)}
    strata = []
    for component in strongly_connected(list(defined), edges):
        members = set(component)
        its_rules = [r for name in component for r in defined[name]]
        its_rules.sort(key=lambda r: (r.span.line, r.span.column))
        recursive = len(component) > 1 or component[0] in edges[component[0]]
        if recursive:
            _check_component([r for name in component for r in dependencies[name]], members, edges, source)
        strata.append(Stratum(tuple(sorted(component, key=order.get)), tuple(its_rules), recursive))
    return strata


def _relation_of(literal) -> str | None:
    """The relation an atom or negated atom reads (None for other literals)."""
    atom = literal.atom if isinstance(literal, Negation) else literal
    return atom.relation if isinstance(atom, Atom) else None


def _check_component(rules, members: set[str], edges, source) -> None:
    for rule in rules:
        head = rule.heads[0].relation
        for atom, mode in body_atoms(rule.body):
            if atom.relation in members and mode != "positive":
                path = _path(atom.relation, head, members, edges)
                mark = "!" + atom.relation if mode == "negative" else f"{mode}({atom.relation})"
                cycle = " -> ".join([head, mark, *path[1:]])
                if mode == "negative":
                    message = f"cannot stratify: negation of '{atom.relation}' inside its own recursion: {cycle}"
                else:
                    message = (
                        f"cannot stratify: {mode} over '{atom.relation}' inside its own recursion: {cycle}"
                        " (only min and max may aggregate recursively)"
                    )
                raise StratificationError.at(message, atom.span, source)


def _path(start: str, goal: str, members: set[str], edges) -> list[str]:
    """Shortest dependency path start -> ... -> goal inside one component (breadth first)."""
    if start == goal:
        return [start]
    came_from = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in edges[node]:
            if nxt in members and nxt not in came_from:
                came_from[nxt] = node
                if nxt == goal:
                    path = [goal]
                    while came_from[path[-1]] is not None:
                        path.append(came_from[path[-1]])
                    return path[::-1]
                queue.append(nxt)
    raise AssertionError("members of one component reach each other")

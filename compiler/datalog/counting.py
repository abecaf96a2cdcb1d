"""What a count, sum or mean ranges over: Soufflé's materialised aggregate bodies.

Soufflé evaluates an aggregate over one atom by scanning that atom's relation: a
count counts the matching tuples, a sum adds its target over them, so
`count : { r(x, _) }` is 2 when r holds (1, 2) and (1, 3). An aggregate whose
body is more than that is first *materialised* (its MaterializeAggregationQueries
transform): the body becomes a relation of its own, whose columns are the body's
named variables -- the aggregate's own and those it takes from outside -- and the
aggregate scans that relation. A relation is a set, so the aggregate then ranges
over the distinct bindings of those variables: `count : { r(x, _), s(x) }` counts
x values, not pairs of r and s tuples. Soufflé materialises a body that has

- more than one atom (a negated atom is not one),
- an aggregate inside it (or in its target),
- a `range(...)` anywhere in it (a functor with several results), or
- one atom with a repeated variable: written twice in it (`r(x, x)`, `r(x, x + 1)`),
  or two of its variables equated by `x = y` in the body, one of them at least the
  aggregate's own (Soufflé resolves such aliases first).

An `_` is not a named variable, and neither is a variable local to an aggregate
nested inside (nor one local to a negated atom, which has no value to count).

`mark_counted` records the decision on each count, sum and mean of a program's
rules (`Aggregate.counted`: the aggregate's own variables whose distinct bindings
it ranges over, or None: the combinations of its body's tuples); the lowering
(compiler.lowering.rules) and the naive oracle read it. It runs on the program as
written, before inline relations are substituted (compiler.datalog.inline), as
Soufflé materialises before it inlines: a count over one inline atom counts the
combinations of the tuples that atom unfolds to, and a materialised body ranges
over the variables written in it, not over those inlining brings in.
"""

from __future__ import annotations

import dataclasses

from compiler.datalog.ast import Aggregate, Atom, Comparison, Functor, Program, Variable, literal_terms, rebuild_nodes, subterms
from compiler.datalog.scope import Scope, rule_scope

COUNTING = ("count", "sum", "mean")


def mark_counted(program: Program) -> Program:
    """The program with `counted` set on every count, sum and mean of its rules."""
    rules = tuple(_marked(rule, rule_scope(rule.heads, rule.body)) for rule in program.rules)
    subsumptions = tuple(_marked(s, rule_scope((), s.as_rule().body)) for s in program.subsumptions)
    return dataclasses.replace(program, rules=rules, subsumptions=subsumptions)


def _marked(clause, root: Scope):
    scopes: dict[int, Scope] = {}
    pending = [root]
    while pending:
        scope = pending.pop()
        scopes.update(scope.children)
        pending += scope.children.values()

    def mark(rebuilt, original):
        scope = scopes.get(id(original)) if isinstance(original, Aggregate) else None
        if scope is None or original.kind not in COUNTING or not materialised(original, scope):
            return rebuilt
        return dataclasses.replace(rebuilt, counted=frozenset(scope.own - scope.existential))

    return rebuild_nodes(clause, mark)


def materialised(aggregate: Aggregate, scope: Scope) -> bool:
    """Whether Soufflé materialises the aggregate's body (see the module)."""
    atoms = [lit for lit in aggregate.body if isinstance(lit, Atom)]
    if len(atoms) > 1 or scope.children:
        return True
    if any(isinstance(t, Functor) and t.name == "range" for t in _all_terms(aggregate)):
        return True
    return len(atoms) == 1 and _repeats_a_variable(atoms[0], aggregate.body, scope)


def _all_terms(aggregate: Aggregate):
    """Every term in the aggregate, its nested aggregates' included."""
    terms = [aggregate.target] if aggregate.target is not None else []
    terms += [t for lit in aggregate.body for t in literal_terms(lit)]
    for term in terms:
        for sub in subterms(term):
            yield sub
            if isinstance(sub, Aggregate):
                yield from _all_terms(sub)


def _repeats_a_variable(atom: Atom, body, scope: Scope) -> bool:
    """Whether the atom holds one variable twice once `x = y` aliases in the body are resolved."""
    alias: dict[str, str] = {}

    def find(name: str) -> str:
        while alias.get(name, name) != name:
            name = alias[name]
        return name

    for lit in body:
        if isinstance(lit, Comparison) and lit.op == "=" and isinstance(lit.left, Variable) and isinstance(lit.right, Variable):
            if not {lit.left.name, lit.right.name} <= scope.outer:  # names from outside are never resolved
                alias[find(lit.left.name)] = find(lit.right.name)
    names = [find(sub.name) for arg in atom.args for sub in subterms(arg) if isinstance(sub, Variable)]
    return len(names) != len(set(names))


__all__ = ["mark_counted", "materialised"]

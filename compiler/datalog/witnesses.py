"""Witnesses of nested aggregates, grounded in the rule as Soufflé grounds them.

A witness (compiler.datalog.scope) is a variable the rule uses that only a min or
max aggregate's body grounds: in `tallest(s, h) :- h = max x : { student(s, x) }`
the max binds `s` to the students reaching it. When that aggregate sits inside
another one, as in

    F(n, w) :- n = count : { B(x, _), x > min y : { D(y, w) } }.

the enclosing count has no tuple to take `w` from. Soufflé (its GroundWitnesses
transform) grounds such a witness in the rule itself: the min's body is added to
the rule's body, with its target equated to the min's value, and inside the
aggregate `w` becomes a local variable renamed apart -- so the min no longer
depends on `w`, and the count counts what the rule would count without `w`:

    F(n, w) :- n = count : { B(x, _), x > min y : { D(y, w') } },
               D(y2, w), y2 = min y : { D(y, w') }.

`ground_nested_witnesses` does the same to every rule before anything else reads
it: for each min or max nested in another aggregate, the variables grounded in
its body that the rule uses but does not ground otherwise (atoms, equalities,
and the witnesses of the rule's own aggregates) are grounded by a copy of its
body in the rule, its other variables renamed apart. The aggregate must then
depend on nothing but the rule's own variables: one that reads a variable of the
aggregate around it cannot be copied out, and its witness is an
UnsafeVariableError, as Soufflé cannot ground it either.
"""

from __future__ import annotations

import dataclasses
from itertools import count

from compiler.datalog.ast import Aggregate, Comparison, Program, Rule, Variable, map_nodes, rebuild_nodes
from compiler.datalog.safety import grounded_in
from compiler.datalog.scope import Scope, grounded, plain_names, rule_scope
from compiler.errors import UnsafeVariableError


def ground_nested_witnesses(program: Program) -> Program:
    """The program with the witnesses of nested aggregates grounded in their rules."""
    fresh = count(1)
    rules = tuple(_grounded(rule, fresh, program.source) for rule in program.rules)
    return dataclasses.replace(program, rules=rules)


def _grounded(rule: Rule, fresh, source) -> Rule:
    root = rule_scope(rule.heads, rule.body)
    witnessed = _nested_witnesses(root)
    if not witnessed:
        return rule
    added = []

    def ground(rebuilt, original):
        if id(original) not in witnessed:
            return rebuilt
        scope, names = witnessed[id(original)]
        for name in sorted(scope.outer - names):
            if scope.owner(name) is not root:
                raise _not_in_rule(original, scope, min(names), name, source)
        n = next(fresh)
        local = _renamed(rebuilt, {w: f"<witness {w} {n}>" for w in names})
        # The body once more, in the rule: its own variables renamed apart, the witnesses not.
        outside = {v: f"<witnessed {v} {n}>" for v in _variables(rebuilt) if v not in scope.outer}
        copy = _renamed(rebuilt, outside)
        added.extend(copy.body)
        added.append(Comparison("=", copy.target, _renamed(local, {}), span=original.span))
        return local

    body = rebuild_nodes(rule.body, ground)
    return dataclasses.replace(rule, body=body + tuple(added))


def _nested_witnesses(root: Scope) -> dict[int, tuple[Scope, frozenset[str]]]:
    """id(aggregate) -> (its scope, its witnesses the rule must ground), for each min or max
    nested in an aggregate that has such witnesses."""
    at_rule_level = grounded_in(root, set())
    found = {}
    pending = [(child, 1) for child in root.children.values()]
    while pending:
        scope, depth = pending.pop()
        pending += [(child, depth + 1) for child in scope.children.values()]
        if depth < 2 or scope.aggregate.kind not in ("min", "max"):
            continue
        inside = grounded(scope.aggregate.body, set(), plain_names)
        names = {w for w in scope.outer & inside if scope.owner(w) is root and w not in at_rule_level}
        if names:
            found[id(scope.aggregate)] = (scope, frozenset(names))
    return found


def _variables(node) -> set[str]:
    names = set()
    map_nodes(node, lambda n: names.add(n.name) or n if isinstance(n, Variable) else n)
    return names


def _renamed(node, names: dict[str, str]):
    """A copy of `node` (new objects throughout) with the variables in `names` renamed."""
    return map_nodes(node, lambda n: dataclasses.replace(n, name=names[n.name]) if isinstance(n, Variable) and n.name in names else n)


def _not_in_rule(aggregate: Aggregate, scope: Scope, witness: str, read: str, source) -> UnsafeVariableError:
    uses = []
    map_nodes(aggregate, lambda n: uses.append(n) or n if isinstance(n, Variable) and n.name == witness else n)
    use = min(uses, key=lambda v: (v.span.line, v.span.column))
    enclosing = scope.parent.aggregate.kind
    message = (
        f"variable '{witness}' is grounded only inside this {aggregate.kind} aggregate, which reads '{read}' of the "
        f"{enclosing} aggregate around it: the witness cannot be grounded in the rule"
    )
    return UnsafeVariableError.at(message, use.span, source)


__all__ = ["ground_nested_witnesses"]

"""A checked Datalog program as a logical plan.

Every relation is a set. A relation fed only from outside (an input with
neither facts nor rules) is just an input, read as `Distinct(Scan)` because
the session lets a row be inserted twice (compiler.plan.rewrites drops the
Distinct where duplicates cannot matter). Every other relation is a binding
whose body is the union of its sources -- its input if it is also an input,
its facts as Values (facts with records or ADT values, which only a dataflow's
record table can give ids, as a one-row Project computing them), one plan per rule (compiler.lowering.rules) -- made a set
by a Distinct; a relation declared with `min(col)`/`max(col)` is instead
reduced to the least/greatest `col` per value of its other columns, which is
also a set. Strata become steps in dependency order: a non-recursive stratum
is one Binding, a recursive one a Fixpoint with a binding per relation, so a
min/max relation is reduced inside its recursion (the BFS distances of
`examples/bfs.dl`). Relations with no rules come first.
"""

from __future__ import annotations

from compiler.datalog.ast import CONSTANTS, Atom, Fact
from compiler.datalog.checks import CheckedProgram, RelationInfo
from compiler.datalog.scope import rule_scope
from compiler.lowering.rules import RuleContext, constant
from compiler.plan import Aggregate, Binding, Col, Distinct, Fixpoint, Plan, PlanError, Project, Ref, Scan, Union, Values


def plan_datalog(program: CheckedProgram) -> Plan:
    relations = program.relations
    rules_of: dict[str, list] = {}
    for rule in program.rules:
        rules_of.setdefault(rule.heads[0].relation, []).append(rule)
    facts_of: dict[str, list[Fact]] = {}
    for fact in program.facts:
        facts_of.setdefault(fact.relation, []).append(fact)
    # An output is a binding even if it is only an input: outputs report changes of a set.
    pure_inputs = {n for n, info in relations.items() if info.is_input and n not in rules_of and n not in facts_of}
    bound = {name for name in relations if name not in pure_inputs or name in program.outputs}

    def relation_node(name: str, span=None):
        types = relations[name].types
        if name in bound:
            return Ref(name, types, span=span)
        return Distinct(Scan(name, types, span=span), span=span)

    def binding(name: str) -> Binding:
        info = relations[name]
        parts = []
        if info.is_input:
            parts.append(Scan(name, info.types, span=info.span))
        if name in facts_of:
            plain = [f for f in facts_of[name] if not _structured(f)]
            if plain:
                parts.append(_values(plain, info))
            parts += [_structured_fact(f, program, relation_node) for f in facts_of[name] if _structured(f)]
        for rule in rules_of.get(name, ()):
            parts.append(_rule(rule, program, relation_node))
        if not parts:
            parts.append(Values((), info.types, span=info.span))
        body = parts[0] if len(parts) == 1 else Union(tuple(parts), span=info.span)
        return Binding(name, _as_set(body, info), span=info.span)

    steps = [binding(name) for name in relations if name in bound and name not in rules_of]
    for stratum in program.strata:
        if stratum.recursive:
            steps.append(Fixpoint(tuple(binding(name) for name in stratum.relations)))
        else:
            steps.extend(binding(name) for name in stratum.relations)
    inputs = {name: info.types for name, info in relations.items() if info.is_input}
    return Plan(inputs, tuple(steps), tuple(program.outputs))


def _values(facts: list[Fact], info: RelationInfo) -> Values:
    rows = dict.fromkeys(tuple(constant(arg.value, t).value for arg, t in zip(f.args, info.types)) for f in facts)
    return Values(tuple(rows), info.types, span=facts[0].span)


def _structured(fact: Fact) -> bool:
    return not all(isinstance(a, CONSTANTS) for a in fact.args)


def _structured_fact(fact: Fact, program: CheckedProgram, relation_node):
    """A fact with records or ADT values: one row, its values computed (compiler.lowering.rules)."""
    context = RuleContext(relation_node, program.term_types[fact], fact.span)
    head = Atom(fact.relation, fact.args, span=fact.span)
    body = context.body((), rule_scope((head,), ()))
    return Project(body.node, tuple(body.expr(arg) for arg in fact.args), span=fact.span)


def _rule(rule, program: CheckedProgram, relation_node):
    head = rule.heads[0]
    context = RuleContext(relation_node, program.term_types[rule], rule.span)
    scope = rule_scope(rule.heads, rule.body)
    body = context.body(rule.body, scope, as_of=program.relations[head.relation].as_of)
    exprs = tuple(body.guard(body.expr(arg)) for arg in head.args)
    projected = Project(body.node, exprs, span=rule.span)
    expected = program.relations[head.relation].types
    if projected.types != expected:
        raise PlanError(f"rule for {head.relation} makes {projected.types}, the relation has {expected}")
    return projected


def _as_set(body, info: RelationInfo):
    """The relation's rows as a set: distinct, or reduced by its min/max qualifier."""
    q = info.qualifier
    if q is None:
        return Distinct(body, span=info.span)
    col = info.attribute_names.index(q.column)
    others = tuple(i for i in range(info.arity) if i != col)
    reduced = Aggregate(body, others, q.kind, col, span=q.span)
    # Aggregate puts the group columns first; put the column back where it was declared.
    order = [others.index(i) if i != col else len(others) for i in range(info.arity)]
    restored = Project(reduced, tuple(Col(j, reduced.types[j]) for j in order), span=q.span)
    return reduced if restored.is_identity() else restored

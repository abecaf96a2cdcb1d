"""A checked Datalog program as a logical plan.

Every relation is a set. A relation fed only from outside (an input with
neither facts nor rules) is just an input, read as `Distinct(Scan)` because
the session lets a row be inserted twice (compiler.plan.rewrites drops the
Distinct where duplicates cannot matter). Every other relation is a binding
whose body starts from its *candidates*, the union of its sources -- its input
if it is also an input, its facts as Values (a fact with records or ADT values,
which only a dataflow's record table can give ids, as a one-row Project
computing them), one plan per rule (compiler.lowering.rules) -- and keeps the candidates as its kind says:

- a plain relation, each once (a Distinct);
- `min(col)`/`max(col)`: the least/greatest `col` per value of its other columns;
- `choice-domain`: one tuple per key, the least (compiler.lowering.choice);
- with subsumptive rules: the undominated ones (compiler.lowering.subsumption);
- `eqrel`: the candidates are base pairs, kept as classes of values
  (bindings `r@base`, `r@class`), the pairs themselves (binding `r`) only for
  an output (compiler.lowering.eqrel).

Strata become steps in dependency order: a non-recursive stratum is one
Binding, a recursive one a Fixpoint with a binding per relation, so a min/max
relation is reduced inside its recursion (the BFS distances of
`examples/bfs.dl`). There, as in Soufflé's evaluation of subsumption, what a
min/max relation (or one with subsumptive rules) kept in one round is among its
candidates in the next: a row is replaced only by a better one, never dropped
because the row it was derived from was replaced. Without that, `best(1).
best(v + 1) :- best(v), v < 5.` under `max(v)` has no fixpoint (each round's
best supports the next one alone, and 5 supports nothing) and the loop never
ends; with it, the answer is 5, Soufflé's. Each commit's loop still starts from
nothing, so a row whose support is gone does not keep itself. Whatever iterates
to its answer by itself -- an eqrel's class labels, a choice over several
domains -- is a Fixpoint even when its
stratum is not recursive. A recursive stratum with a choice-domain relation
carries each tuple's depth (`r@depth` bindings, see compiler.lowering.choice),
and a binding per relation drops it again. Relations with no rules come first.
"""

from __future__ import annotations

from compiler.datalog.ast import CONSTANTS, Atom, Fact
from compiler.datalog.checks import CheckedProgram, RelationInfo
from compiler.datalog.scope import rule_scope
from compiler.lowering.choice import DEPTH, choose, with_depth
from compiler.lowering.eqrel import class_name, class_types, eqrel_bindings, pairs_body
from compiler.lowering.rules import RuleContext, constant
from compiler.lowering.subsumption import undominated
from compiler.plan.ops import PythonFunctor
from compiler.plan import Aggregate, Binding, Col, Const, Distinct, Fixpoint, Plan, PlanError, Project, Ref, Scan, Union, Values


def plan_datalog(program: CheckedProgram) -> Plan:
    return _Planner(program).plan()


class _Planner:
    def __init__(self, program: CheckedProgram):
        self.program = program
        self.relations = relations = program.relations
        self.rules_of: dict[str, list] = {}
        for rule in program.rules:
            self.rules_of.setdefault(rule.heads[0].relation, []).append(rule)
        self.facts_of: dict[str, list[Fact]] = {}
        for fact in program.facts:
            self.facts_of.setdefault(fact.relation, []).append(fact)
        self.subsumptions_of: dict[str, list] = {}
        for s in program.subsumptions:
            self.subsumptions_of.setdefault(s.relation, []).append(s)
        kept_as_is = lambda info: not (info.eqrel or info.choice_domains or info.name in self.subsumptions_of)  # noqa: E731
        pure_inputs = {
            n for n, info in relations.items()
            if info.is_input and n not in self.rules_of and n not in self.facts_of and kept_as_is(info)
        }  # fmt: skip
        self.functors = {"@" + f.name: PythonFunctor(f.name, f.param_types, f.result_type, f.function) for f in program.functors.values()}
        # An output is a binding even if it is only an input: outputs report changes of a set.
        self.bound = {name for name in relations if name not in pure_inputs or name in program.outputs}

    def plan(self) -> Plan:
        program, relations = self.program, self.relations
        in_strata = {name for stratum in program.strata for name in stratum.relations}
        steps = []
        for name in relations:
            if name in self.bound and name not in in_strata:
                steps += self._stratum((name,), recursive=False)
        for stratum in program.strata:
            steps += self._stratum(stratum.relations, stratum.recursive)
        inputs = {name: info.types for name, info in relations.items() if info.is_input}
        return Plan(inputs, tuple(steps), tuple(program.outputs))

    # ---- reading relations ----

    def relation_node(self, name: str, span=None):
        types = self.relations[name].types
        if name in self.bound:
            return Ref(name, types, span=span)
        return Distinct(Scan(name, types, span=span), span=span)

    def classes(self, name: str):
        """The class binding of an eqrel relation (None for any other relation)."""
        info = self.relations[name]
        return Ref(class_name(name), class_types(info.types[0]), span=info.span) if info.eqrel else None

    def context(self, term_types, span, relation_node=None) -> RuleContext:
        return RuleContext(relation_node or self.relation_node, term_types, span, self.classes, self.functors)

    # ---- strata ----

    def _stratum(self, names, recursive: bool) -> list:
        if recursive and any(self.relations[n].choice_domains for n in names):
            return self._with_depths(names)
        bindings, after = [], []
        for name in names:
            info = self.relations[name]
            candidates = self.candidates(name)
            if info.eqrel:
                bindings += [Binding(n, body, span=info.span) for n, body in eqrel_bindings(name, info, candidates, info.span)]
                if name in self.program.outputs:
                    after.append(Binding(name, pairs_body(self.classes(name), info.span), span=info.span))
            else:
                bindings.append(Binding(name, self.kept(name, candidates, recursive), span=info.span))
        iterates = recursive or any(self.relations[n].eqrel or len(self.relations[n].choice_domains) > 1 for n in names)
        return ([Fixpoint(tuple(bindings))] if iterates else bindings) + after

    def candidates(self, name: str, relation_node=None, tagged=None):
        """The union of a relation's sources. `tagged(rule)` rewrites each rule and gives its
        head's types (a depth-carrying stratum); its input and facts then get depth 0."""
        info = self.relations[name]
        depth = () if tagged is None else (Const(0, DEPTH),)
        parts = []
        if info.is_input:
            scan = Scan(name, info.types, span=info.span)
            parts.append(Project(scan, tuple(Col(i, t) for i, t in enumerate(info.types)) + depth, span=info.span) if depth else scan)
        if name in self.facts_of:
            plain = [f for f in self.facts_of[name] if not _structured(f)]
            if plain:
                parts.append(_values(plain, info, tuple(c.value for c in depth)))
            parts += [self._structured_fact(f, depth) for f in self.facts_of[name] if _structured(f)]
        for rule in self.rules_of.get(name, ()):
            parts.append(self._rule(rule, relation_node, tagged))
        types = info.types + tuple(c.type for c in depth)
        if not parts:
            parts.append(Values((), types, span=info.span))
        return parts[0] if len(parts) == 1 else Union(tuple(parts), span=info.span)

    def kept(self, name: str, candidates, recursive: bool = False):
        """What a relation keeps of its candidates (see the module)."""
        info = self.relations[name]
        if recursive and (info.qualifier is not None or name in self.subsumptions_of):
            # What it kept in the last round stays a candidate (see the module).
            candidates = Union((candidates, Ref(name, info.types, span=info.span)), span=info.span)
        if info.qualifier is not None:
            return _qualified(candidates, info)
        if info.choice_domains:
            previous = Ref(name, info.types, span=info.span)
            return choose(Distinct(candidates, span=info.span), info.choice_domains, (), info.kinds, previous, info.span)
        if name in self.subsumptions_of:

            def context_for(s, read):
                reading = lambda n, span=None: read if n == name else self.relation_node(n, span)  # noqa: E731
                return self.context(self.program.term_types[s.as_rule()], s.span, reading)

            return undominated(Distinct(candidates, span=info.span), self.subsumptions_of[name], context_for, info.span)
        return Distinct(candidates, span=info.span)

    def _with_depths(self, names) -> list:
        """A recursive stratum with a choice: each relation as `r@depth` with a last column
        holding each tuple's depth (compiler.lowering.choice), then `r` without it."""
        members = set(names)
        inner = {n: f"{n}@depth" for n in names}

        def types(n):
            return self.relations[n].types + (DEPTH,)

        def reading(n, span=None):
            return Ref(inner[n], types(n), span=span) if n in members else self.relation_node(n, span)

        def tagged(rule):
            return with_depth(rule, members), types(rule.heads[0].relation)

        bindings, after = [], []
        for name in names:
            info = self.relations[name]
            candidates = self.candidates(name, reading, tagged)
            depth = info.arity
            if info.choice_domains:
                previous = Ref(inner[name], types(name), span=info.span)
                body = choose(Distinct(candidates, span=info.span), info.choice_domains, (depth,), info.kinds + (DEPTH,), previous, info.span)
            else:  # each tuple at its least depth
                body = Aggregate(candidates, tuple(range(depth)), "min", depth, span=info.span)
            bindings.append(Binding(inner[name], body, span=info.span))
            own = Ref(inner[name], types(name), span=info.span)
            after.append(Binding(name, Project(own, tuple(Col(i, t) for i, t in enumerate(info.types)), span=info.span), span=info.span))
        return [Fixpoint(tuple(bindings))] + after

    def _rule(self, rule, relation_node=None, tagged=None):
        head = rule.heads[0]
        term_types = self.program.term_types[rule]
        expected = self.relations[head.relation].types
        if tagged is not None:
            rule, expected = tagged(rule)
            head = rule.heads[0]
        context = self.context(term_types, rule.span, relation_node)
        scope = rule_scope(rule.heads, rule.body)
        body = context.body(rule.body, scope, as_of=self.relations[head.relation].as_of)
        exprs = tuple(body.guard(body.expr(arg)) for arg in head.args)
        projected = Project(body.node, exprs, span=rule.span)
        if projected.types != expected:
            raise PlanError(f"rule for {head.relation} makes {projected.types}, the relation has {expected}")
        return projected

    def _structured_fact(self, fact: Fact, depth: tuple):
        """A fact with records or ADT values: one row, its values computed (compiler.lowering.rules),
        then `depth`'s constants."""
        head = Atom(fact.relation, fact.args, span=fact.span)
        body = self.context(self.program.term_types[fact], fact.span).body((), rule_scope((head,), ()))
        return Project(body.node, tuple(body.expr(arg) for arg in fact.args) + depth, span=fact.span)


def _values(facts: list[Fact], info: RelationInfo, extra: tuple = ()) -> Values:
    rows = dict.fromkeys(tuple(constant(arg.value, t).value for arg, t in zip(f.args, info.types)) + extra for f in facts)
    types = info.types + tuple(DEPTH for _ in extra)
    return Values(tuple(rows), types, span=facts[0].span)


def _structured(fact: Fact) -> bool:
    return not all(isinstance(a, CONSTANTS) for a in fact.args)


def _qualified(body, info: RelationInfo):
    """The relation's rows reduced by its min/max qualifier."""
    q = info.qualifier
    col = info.attribute_names.index(q.column)
    others = tuple(i for i in range(info.arity) if i != col)
    reduced = Aggregate(body, others, q.kind, col, span=q.span)
    # Aggregate puts the group columns first; put the column back where it was declared.
    order = [others.index(i) if i != col else len(others) for i in range(info.arity)]
    restored = Project(reduced, tuple(Col(j, reduced.types[j]) for j in order), span=q.span)
    return reduced if restored.is_identity() else restored

"""Soufflé's components, expanded away before anything else sees the program.

A component is a template: `.comp Graph<N> { .decl edge(a: N, b: N) ... }` declares
relations, types, I/O directives and clauses without making any of them exist.
`.init g = Graph<number>` makes an instance: a copy of the component's content in
which every relation and type the component declares is renamed `g.<name>` (so
`g.edge`, written to `g.edge.csv` by `.output edge` inside the component) and the
type parameter N reads `number`. Clauses elsewhere use an instance's relations by
these qualified names (`g.edge(1, 2).`, `r(x) :- g.edge(x, _).`).

What an instance holds, in order: the content of the instances its component makes
(`.init` inside the `.comp`, already renamed under the inner instance's name, so
`g.inner.r`); what it inherits from each base (`.comp D : C<T>, B`: the base's own
instances, then recursively its bases and body, its parameters bound to the arguments
the base list gives); then the component's own body. Only names the instance declares
are renamed: a clause may use a relation of an enclosing instance or of the program by
its plain name. A clause whose head the instance does not declare is an orphan, handed
outward to the first enclosing instance that declares its head, else to the program:
`.comp B { A(x) :- X(x). } .comp A { .decl A(x: number) .init b = B }` and
`.init a = A` give `a.A(x) :- X(x).`

Overrides. `.override r` in a component drops the clauses its bases (transitively)
give `r`, which must be an inherited relation declared `overridable`. The component's
own clauses for `r` stay, and so do those that reach `r` as orphans from instances the
bases make (Soufflé's tests comp-override1..3 pin this down).

Scopes. A component name is looked up where the `.init` or the base list is written:
among the components nested there and in their bases, then outward through enclosing
components, then the program's. A type parameter stands for its argument, which may be
a type or a component (`.comp Main<G> { .init g = G }`); each component binds only its
own parameters, to arguments read where the reference is written.

This follows Soufflé's ComponentInstantiation and ComponentChecker passes. Errors point
at the component source that caused them (ComponentError and its subclasses in
compiler.errors); every component is checked, instantiated or not.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field

from compiler.datalog.ast import (
    Atom,
    Branch,
    BranchTerm,
    Component,
    ComponentInit,
    ComponentType,
    Decl,
    Fact,
    IODirective,
    Program,
    Rule,
    Span,
    Subsumption,
    TypeCast,
    TypeDecl,
    map_nodes,
)
from compiler.errors import (
    ComponentError,
    NameClashError,
    OverrideError,
    Source,
    TypeArgumentError,
    UnknownComponentError,
)

# Soufflé's limit; deeper means a component that (indirectly) instantiates itself.
MAX_INSTANCE_DEPTH = 100

# What a type parameter is bound to while a component is checked rather than instantiated:
# its argument is not known, so a reference through it is not looked up.
_UNKNOWN_ARGUMENT = "<type parameter>"

Clause = Fact | Rule | Subsumption


def instantiate_components(program: Program) -> Program:
    """The program with every `.init` replaced by its instance's declarations, directives
    and clauses, and no components left; raises a ComponentError for a misuse."""
    if not program.components and not program.instances:
        return program
    expander = _Expander(program)
    expander.check()
    types, decls, directives, clauses = [], [], [], []
    for init in program.instances:
        orphans: list[Clause] = []
        content = expander.instantiate(init, None, {}, orphans, depth=1)
        types += content.types
        decls += content.decls
        directives += content.directives
        clauses += content.clauses + orphans  # orphans no instance declares are the program's
    return dataclasses.replace(
        program,
        types=program.types + tuple(types),
        decls=program.decls + tuple(decls),
        inputs=program.inputs + tuple(d for d in directives if d.kind == "input"),
        outputs=program.outputs + tuple(d for d in directives if d.kind == "output"),
        printsizes=program.printsizes + tuple(d for d in directives if d.kind == "printsize"),
        facts=program.facts + tuple(c for c in clauses if isinstance(c, Fact)),
        rules=program.rules + tuple(c for c in clauses if isinstance(c, Rule)),
        subsumptions=program.subsumptions + tuple(c for c in clauses if isinstance(c, Subsumption)),
        components=(),
        instances=(),
    )


@dataclass
class _Content:
    """What one instance holds while it is being built; names are relative to it."""

    source: Source | None
    types: list[TypeDecl] = field(default_factory=list)
    decls: list[Decl] = field(default_factory=list)
    directives: list[IODirective] = field(default_factory=list)
    clauses: list[Clause] = field(default_factory=list)

    def add_type(self, new: TypeDecl) -> None:
        self._check_unique("type", new, self.types)
        self.types.append(new)

    def add_decl(self, new: Decl) -> None:
        self._check_unique("relation", new, self.decls)
        self.decls.append(new)

    def _check_unique(self, kind: str, new, present) -> None:
        first = next((old for old in present if old.name == new.name), None)
        if first is None:
            return
        where = f"line {first.span.line}, column {first.span.column}"
        if first.span == new.span:  # the same declaration, reached along two paths
            message = f"{kind} '{new.name}' (declared at {where}) reaches one instance twice: "
            message += "inherited along two paths, or from two instances"
        else:
            message = f"{kind} '{new.name}' is declared twice in one instance (first at {where}); "
            message += "a component cannot redeclare what it inherits"
        raise NameClashError.at(message, new.span, self.source)

    def merge(self, other: "_Content") -> None:
        for t in other.types:
            self.add_type(t)
        for d in other.decls:
            self.add_decl(d)
        self.directives += other.directives
        self.clauses += other.clauses

    def rename(self, instance: str, orphans: list[Clause]) -> None:
        """Prefix everything this instance declares with `instance.`, and every use of it:
        in its clauses and in the orphans still on their way outward."""
        type_names = {t.name: f"{instance}.{t.name}" for t in self.types}
        relation_names = {d.name: f"{instance}.{d.name}" for d in self.decls}
        branch_names = {b.name: f"{instance}.{b.name}" for t in self.types for b in t.branches}
        self.types = [_renamed(_retyped(t, type_names), branches=branch_names) for t in self.types]
        self.decls = [dataclasses.replace(_retyped(d, type_names), name=relation_names[d.name]) for d in self.decls]
        self.directives = [dataclasses.replace(d, relation=relation_names.get(d.relation, d.relation)) for d in self.directives]
        self.clauses = [_renamed(c, relation_names, type_names, branch_names) for c in self.clauses]
        orphans[:] = [_renamed(c, relation_names, type_names, branch_names) for c in orphans]


def _retyped(node: TypeDecl | Decl, names: dict[str, str]):
    """A type declaration (its name, bases, record fields and branch fields) or a relation
    declaration (its column types) with type names replaced as `names` says: a parameter
    by its argument, a type of an instance by its qualified name."""

    def fields(attributes):
        return tuple(a if a.type_name is None else dataclasses.replace(a, type_name=names.get(a.type_name, a.type_name)) for a in attributes)

    if isinstance(node, TypeDecl):
        return dataclasses.replace(
            node,
            name=names.get(node.name, node.name),
            bases=tuple(names.get(b, b) for b in node.bases),
            fields=fields(node.fields),
            branches=tuple(dataclasses.replace(b, fields=fields(b.fields)) for b in node.branches),
        )
    return dataclasses.replace(node, attributes=fields(node.attributes))


def _renamed(node, relations=None, types=None, branches=None):
    """A clause (or an ADT's declaration) with the names it uses replaced, each map saying
    old -> new: the relations of its atoms and facts, the types its `as(x, T)` casts name,
    its ADT branches (an instance's branches are `$inst.B`, as Soufflé names them)."""
    relations, types, branches = relations or {}, types or {}, branches or {}
    if not (relations or types or branches):
        return node

    def rename(n):
        if isinstance(n, (Atom, Fact)) and n.relation in relations:
            return dataclasses.replace(n, relation=relations[n.relation])
        if isinstance(n, TypeCast) and n.type_name in types:
            return dataclasses.replace(n, type_name=types[n.type_name])
        if isinstance(n, (Branch, BranchTerm)) and n.name in branches:
            return dataclasses.replace(n, name=branches[n.name])
        return n

    return map_nodes(node, rename)


def _head(clause: Clause) -> str:
    return clause.heads[0].relation if isinstance(clause, Rule) else clause.relation


def _clauses(body: Program) -> list[Clause]:
    """The body's facts, rules and subsumptive rules in source order, one head per rule: a
    head's clause may stay in the instance while another head's is handed outward."""
    rules = [Rule((head,), rule.body, span=rule.span) for rule in body.rules for head in rule.heads]
    return sorted([*body.facts, *rules, *body.subsumptions], key=lambda c: (c.span.line, c.span.column))


def _arguments(component: Component, ref: ComponentType, binding: dict[str, str]) -> dict[str, str]:
    """The component's parameters bound to the arguments of `ref`, each read in `binding`."""
    return {param: binding.get(arg, arg) for param, arg in zip(component.params, ref.args)}


def _unknown_parameters(component: Component, outer: dict[str, str] | None = None) -> dict[str, str]:
    return {**(outer or {}), **{param: _UNKNOWN_ARGUMENT for param in component.params}}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class _Expander:
    def __init__(self, program: Program):
        self.program = program
        self.source = program.source
        self.enclosing: dict[int, Component | None] = {}  # by id: equal components may sit in two scopes
        self._index_scopes(program.components, None)

    def _index_scopes(self, components, enclosing: Component | None) -> None:
        for component in components:
            self.enclosing[id(component)] = enclosing
            self._index_scopes(component.body.components, component)

    # ---- finding components ----

    def lookup(self, scope: Component | None, name: str, binding: dict[str, str], visiting=frozenset()) -> Component | None:
        """The component `name` (or the argument a parameter `name` is bound to) in `scope`."""
        wanted = binding.get(name, name)
        while scope is not None:
            for nested in scope.body.components:
                if nested.name == wanted:
                    return nested
            if id(scope) not in visiting:  # an inheritance cycle is reported by check(), not looped on here
                for ref in scope.bases:
                    base = self.lookup(self.enclosing[id(scope)], ref.name, binding, visiting | {id(scope)})
                    if base is not None and base is not scope:
                        found = self.lookup(base, name, binding, visiting | {id(scope)})
                        if found is not None:
                            return found
            scope = self.enclosing[id(scope)]
        return next((c for c in self.program.components if c.name == wanted), None)

    def resolve(self, scope: Component | None, ref: ComponentType, binding: dict[str, str]) -> Component | None:
        """The component `ref` names, checked against its type arguments; None when `ref`
        names a parameter whose argument is unknown (a component checked, not instantiated)."""
        wanted = binding.get(ref.name, ref.name)
        if wanted == _UNKNOWN_ARGUMENT:
            return None
        component = self.lookup(scope, ref.name, binding)
        if component is None:
            if wanted != ref.name:
                message = f"'{wanted}', the argument of parameter '{ref.name}', is not a component"
            else:
                message = f"unknown component '{ref.name}'"
                close = difflib.get_close_matches(ref.name, sorted(self._visible_names(scope)), n=3, cutoff=0.6)
                if close:
                    message += "; did you mean " + " or ".join(f"'{name}'" for name in close) + "?"
            raise UnknownComponentError.at(message, ref.span, self.source)
        if len(component.params) != len(ref.args):
            expected = _plural(len(component.params), "type argument")
            params = f" ({', '.join(component.params)})" if component.params else ""
            given = len(ref.args)
            message = f"component '{component.name}' takes {expected}{params}, but {given} {'is' if given == 1 else 'are'} given"
            raise TypeArgumentError.at(message, ref.span, self.source)
        return component

    def _visible_names(self, scope: Component | None) -> set[str]:
        names = {c.name for c in self.program.components}
        while scope is not None:
            names |= {c.name for c in scope.body.components}
            scope = self.enclosing[id(scope)]
        return names

    # ---- checking every component, instantiated or not ----

    def check(self) -> None:
        self._check_scope(self.program, None, {})
        self._check_program_names()

    def _check_scope(self, body: Program, scope: Component | None, binding: dict[str, str]) -> None:
        for kind, nodes in (("component", body.components), ("instance", body.instances)):
            seen: dict[str, Span] = {}
            for node in nodes:
                name, span = (node.name, node.head.span) if kind == "component" else (node.instance, node.span)
                if name in seen:
                    first = seen[name]
                    message = f"{kind} '{name}' is declared twice in one scope (first at line {first.line}, column {first.column})"
                    raise NameClashError.at(message, span, self.source)
                seen[name] = span
        for component in body.components:
            self._check_component(component, scope, binding)
        for init in body.instances:
            self.resolve(scope, init.component, binding)

    def _check_component(self, component: Component, scope: Component | None, binding: dict[str, str]) -> None:
        parameters = _unknown_parameters(component, binding)
        for ref in component.bases:
            self.resolve(scope, ref, parameters)
        ancestors = self._ancestors(component, parameters, (component,))
        own = {d.name for d in component.body.decls}
        inherited = {d.name: d for ancestor in ancestors for d in ancestor.body.decls}
        for override in component.overrides:
            name = override.relation
            if name in own or name not in inherited:
                why = "it declares" if name in own else "no base component declares"
                message = f"'.override {name}' in component '{component.name}': {why} '{name}', "
                message += "so it inherits no clauses of it to override"
                raise OverrideError.at(message, override.span, self.source)
            if not inherited[name].overridable:
                first = inherited[name].span
                message = (f"'.override {name}' in component '{component.name}': '{name}' is not overridable "
                           f"(add 'overridable' to its declaration at line {first.line}, column {first.column})")  # fmt: skip
                raise OverrideError.at(message, override.span, self.source)
        self._check_scope(component.body, component, parameters)

    def _ancestors(self, component: Component, binding: dict[str, str], path: tuple[Component, ...]) -> list[Component]:
        """The components `component` inherits from, transitively (`path`: the derived ones)."""
        found = []
        for ref in component.bases:
            base = self.resolve(self.enclosing[id(component)], ref, binding)
            if base is None:
                continue
            if any(base is derived for derived in path):
                chain = " : ".join(c.name for c in (*path, base))
                raise ComponentError.at(f"component '{base.name}' inherits from itself ({chain})", ref.span, self.source)
            found += [base, *self._ancestors(base, _unknown_parameters(base), (*path, base))]
        return found

    def _check_program_names(self) -> None:
        """As in Soufflé, the program's components and instances share one namespace with
        its declared relations and types."""
        names = {t.name: "type" for t in self.program.types} | {d.name: "relation" for d in self.program.decls}
        nodes = [("component", c.name, c.head.span) for c in self.program.components]
        nodes += [("instance", i.instance, i.span) for i in self.program.instances]
        for kind, name, span in nodes:
            if name in names:
                raise NameClashError.at(f"{kind} '{name}' has the name of a {names[name]}", span, self.source)
            names[name] = kind

    # ---- instantiating ----

    def instantiate(self, init: ComponentInit, scope: Component | None, binding: dict[str, str], orphans: list[Clause],
                    depth: int) -> _Content:  # fmt: skip
        """The content of instance `init`, written in `scope` where `binding` holds."""
        if depth > MAX_INSTANCE_DEPTH:
            name = init.component.name
            message = f"instances nested more than {MAX_INSTANCE_DEPTH} deep: does component '{name}' instantiate itself?"
            raise ComponentError.at(message, init.span, self.source)
        component = self.resolve(scope, init.component, binding)
        arguments = _arguments(component, init.component, binding)
        content = _Content(self.source)
        for nested in component.body.instances:
            content.merge(self.instantiate(nested, component, arguments, orphans, depth + 1))
        self._collect(component, arguments, content, orphans, frozenset(), depth)
        content.rename(init.instance, orphans)
        return content

    def _collect(self, component: Component, arguments: dict[str, str], content: _Content, orphans: list[Clause],
                 overridden: frozenset[str], depth: int) -> None:  # fmt: skip
        """Add what `component` inherits and declares to `content`, its parameters bound to
        `arguments`; its clauses for an `overridden` relation (overridden by a component
        that derives from it) are left out."""
        overridden_in_bases = overridden | {o.relation for o in component.overrides}
        for ref in component.bases:
            base = self.resolve(self.enclosing[id(component)], ref, arguments)
            base_arguments = _arguments(base, ref, arguments)
            for nested in base.body.instances:
                content.merge(self.instantiate(nested, base, base_arguments, orphans, depth + 1))
            self._collect(base, base_arguments, content, orphans, overridden_in_bases, depth)
        body = component.body
        for type_decl in body.types:
            content.add_type(_retyped(type_decl, arguments))
        for decl in body.decls:
            content.add_decl(_retyped(decl, arguments))
        content.directives += [*body.inputs, *body.outputs, *body.printsizes]
        declared = {d.name for d in content.decls}
        for clause in _clauses(body):
            if _head(clause) in overridden:
                continue
            clause = _renamed(clause, types=arguments)
            (content.clauses if _head(clause) in declared else orphans).append(clause)
        content.clauses += [c for c in orphans if _head(c) in declared]
        orphans[:] = [c for c in orphans if _head(c) not in declared]

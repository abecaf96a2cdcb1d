"""Subset types checked as Soufflé checks them: values flow from sources into sinks.

Kinds (compiler.datalog.infer) say what a value is made of; subset types say
more: a column declared `Id` (`.type Id <: number`) holds numbers, but only
those that are `Id`s. Within each rule, as Soufflé does:

- *sources* narrow a variable's type: a positive body atom whose column is
  declared of type T makes its argument a T; a field of a record or ADT value
  is of its declared field type; the two sides of a comparison (any of
  `= != < <= > >=`) are of one type. A variable narrowed to types with no value
  in common (two disjoint subset types) is a TypeMismatchError at the use that
  narrowed it last;
- *sinks* take values: a head argument that is a variable must be of a subtype of
  its column's declared type. A value no source narrows -- a constant, the result
  of arithmetic, a functor or an aggregate -- fits any subset type of its kind, so
  `r(x + 1) :- r(x)` stays within `r`'s type; a variable read from a plain `number`
  column does not fit a column of a subset of number (a TypeMismatchError at the
  head argument).

Negated atoms and relations without declarations take any value of their kinds.
Types are compared through `TypeEnv.down` (the non-union types each type holds),
so aliases are the types they name and a union holds its members' values.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.datalog.ast import Atom, BranchTerm, Comparison, Decl, Negation, Record, Rule, Term, Variable, literal_terms, subterms
from compiler.datalog.scope import Scope, rule_scope
from compiler.datalog.types import ADTType, RecordType, TypeEnv
from compiler.errors import Source, TypeMismatchError


@dataclass
class _Narrowed:
    """What a variable may still be: the non-union types it is in, named for messages."""

    types: frozenset[str]
    name: str  # the declared type that narrowed it to `types`, or "the types in common"
    origin: str  # where, in words


def check_subtypes(rules: tuple[Rule, ...], decls: dict[str, Decl], env: TypeEnv, term_kinds: dict, source: Source | None) -> None:
    """Raise a TypeMismatchError for the first rule that breaks the rules above."""
    if not any(t != k for t, k in env.kinds.items() if isinstance(k, str)):  # no subset, alias or union types
        return
    for rule in rules:
        _RuleCheck(rule, decls, env, term_kinds[rule], source).run()


class _RuleCheck:
    def __init__(self, rule: Rule, decls, env: TypeEnv, kinds: dict, source):
        self.rule, self.decls, self.env, self.kinds, self.source = rule, decls, env, kinds, source
        self.parent: dict[tuple, tuple] = {}
        self.narrowed: dict[tuple, _Narrowed] = {}

    # ---- union-find over the rule's variables ----

    def _find(self, key):
        while self.parent.get(key, key) != key:
            key = self.parent[key]
        return key

    def _key(self, var: Variable, scope: Scope):
        return self._find((id(scope.owner(var.name)), var.name))

    def _narrow(self, var: Variable, scope: Scope, type_name: str, origin: str) -> None:
        key = self._key(var, scope)
        incoming = _Narrowed(self.env.down[type_name], type_name, origin)
        self.narrowed[key] = self._meet(self.narrowed.get(key), incoming, var)

    def _meet(self, old: _Narrowed | None, new: _Narrowed | None, var: Variable) -> _Narrowed | None:
        if old is None or new is None:
            return old or new
        both = old.types & new.types
        if not both:
            message = (
                f"variable '{var.name}' is a '{new.name}' ({new.origin}) and a '{old.name}' ({old.origin}),"
                " types with no value in common"
            )
            raise TypeMismatchError.at(message, var.span, self.source)
        if both == new.types:
            return new
        return old if both == old.types else _Narrowed(both, "the types in common", f"{old.origin}, and {new.origin}")

    def _unite(self, a: Variable, b: Variable, scope: Scope) -> None:
        """`a` and `b` are compared: they are of one type."""
        ka, kb = self._key(a, scope), self._key(b, scope)
        if ka != kb:
            na, nb = self.narrowed.get(ka), self.narrowed.get(kb)
            if na is not None and nb is not None and not na.types & nb.types:
                message = (
                    f"variable '{b.name}' is a '{nb.name}' ({nb.origin}), but is compared with variable '{a.name}',"
                    f" a '{na.name}' ({na.origin}): types with no value in common"
                )
                raise TypeMismatchError.at(message, b.span, self.source)
            merged = self._meet(self.narrowed.pop(ka, None), self.narrowed.pop(kb, None), b)
            self.parent[kb] = ka
            if merged is not None:
                self.narrowed[ka] = merged

    # ---- the rule ----

    def run(self) -> None:
        scope = rule_scope(self.rule.heads, self.rule.body)
        self._scope(scope)
        for head in self.rule.heads:  # none for a subsumptive rule's as_rule(): its heads are sources
            for i, arg in enumerate(head.args):
                self._fields(arg, scope)
                self._sink(head, i, arg, scope)

    def _scope(self, scope: Scope) -> None:
        for lit in scope.literals:
            if isinstance(lit, Atom):
                for i, arg in enumerate(lit.args):
                    self._source(arg, self._declared(lit.relation, i), f"argument {i + 1} of '{lit.relation}'", scope)
            elif isinstance(lit, Comparison) and isinstance(lit.left, Variable) and isinstance(lit.right, Variable):
                self._unite(lit.left, lit.right, scope)
            for term in literal_terms(lit) if not isinstance(lit, Negation) else lit.atom.args:
                self._fields(term, scope)
        for child in scope.children.values():
            self._scope(child)

    def _declared(self, relation: str, i: int) -> str | None:
        decl = self.decls.get(relation)
        return decl.attributes[i].type_name if decl is not None else None

    def _source(self, term: Term, type_name: str | None, origin: str, scope: Scope) -> None:
        """`term` stands where values of `type_name` come from (None: any value of its kind)."""
        if isinstance(term, Variable) and type_name is not None:
            self._narrow(term, scope, type_name, origin)

    def _fields(self, term: Term, scope: Scope) -> None:
        """Each record or ADT value within `term` makes its fields sources of their declared types."""
        for sub in subterms(term):
            kind = self.kinds.get(sub)
            if isinstance(sub, Record) and isinstance(kind, RecordType):
                names = [(kind.field_types[j], f"field '{kind.fields[j][0]}' of '{kind.name}'") for j in range(len(sub.args))]
            elif isinstance(sub, BranchTerm) and isinstance(kind, ADTType):
                _, branch = self.env.branches[sub.name]
                names = [(branch.field_types[j], f"field '{branch.fields[j][0]}' of ${sub.name}") for j in range(len(sub.args))]
            else:
                continue
            for arg, (type_name, origin) in zip(sub.args, names):
                self._source(arg, type_name, origin, scope)

    def _sink(self, head: Atom, i: int, arg: Term, scope: Scope) -> None:
        declared = self._declared(head.relation, i)
        if declared is None or not isinstance(arg, Variable):
            return
        narrowed = self.narrowed.get(self._key(arg, scope))
        if narrowed is not None and not narrowed.types <= self.env.down[declared]:
            message = (
                f"variable '{arg.name}' is a '{narrowed.name}' ({narrowed.origin}), but argument {i + 1} of"
                f" '{head.relation}' is declared '{declared}', which '{narrowed.name}' is not a subtype of"
                f" (as({arg.name}, {declared}) takes it as one, unchecked)"
            )
            raise TypeMismatchError.at(message, arg.span, self.source)


"""Arity and type inference for relations, variables and terms.

Every relation column, every variable (per scope, see compiler.datalog.scope)
and every term gets a type class; classes are merged (union-find) whenever
the program says two things have the same type: an argument and its column,
the two sides of a comparison, the operands of `+`. Each class holds the set
of base types still possible, narrowed by constants, declarations and
operators (arithmetic and `<` need numbers, string functors need symbols);
an empty set is a TypeMismatchError at the term that emptied it. Integer
literals may be number, unsigned or float, as in Soufflé. A class never
narrowed to one type defaults to number (e.g. a column only ever given `_`).

Arity is fixed by a relation's declaration, else by its first use; any other
use with another number of arguments is an ArityError at the atom.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.datalog.ast import (
    Aggregate,
    Atom,
    BinaryOp,
    Comparison,
    Fact,
    Float,
    Functor,
    Negation,
    Number,
    Rule,
    Span,
    String,
    StringTest,
    Term,
    UnaryOp,
    Unsigned,
    Variable,
    Wildcard,
)
from compiler.datalog.scope import Scope, rule_scope
from compiler.errors import ArityError, Source, TypeMismatchError, UnknownFunctorError

BASE_TYPES = ("number", "unsigned", "float", "symbol")
ANY = frozenset(BASE_TYPES)
NUMERIC = frozenset({"number", "unsigned", "float"})
INTEGRAL = frozenset({"number", "unsigned"})

_INTEGRAL_OPS = {"band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor", "bnot", "lnot"}
_ORDER_OPS = {"<", "<=", ">", ">="}
# name -> (parameter types, result type); None parameters: any number of symbols.
_FUNCTORS = {
    "cat": (None, "symbol"),
    "strlen": (("symbol",), "number"),
    "substr": (("symbol", "number", "number"), "symbol"),
    "to_number": ((NUMERIC | {"symbol"},), "number"),  # parses a symbol, converts a numeric
    "to_string": ((NUMERIC,), "symbol"),
    "to_float": ((NUMERIC,), "float"),
    "to_unsigned": ((NUMERIC,), "unsigned"),
    "ord": ((NUMERIC | {"symbol"},), "number"),
}
_SHOWN = {"number": "a number", "unsigned": "an unsigned", "float": "a float", "symbol": "a symbol"}


def show(types: frozenset) -> str:
    if len(types) == 1:
        return _SHOWN[next(iter(types))]
    if types == NUMERIC:
        return "numeric"
    if types == INTEGRAL:
        return "an integer (number or unsigned)"
    return "one of " + ", ".join(t for t in BASE_TYPES if t in types)


def default_type(types: frozenset) -> str:
    return "number" if "number" in types else next(t for t in BASE_TYPES if t in types)


def describe(term: Term) -> str:
    if isinstance(term, Variable):
        return f"variable '{term.name}'"
    if isinstance(term, Wildcard):
        return "'_'"
    if isinstance(term, (Number, Float)):
        return repr(term.value)
    if isinstance(term, Unsigned):
        return f"{term.value}u"
    if isinstance(term, String):
        return '"' + term.value + '"'
    if isinstance(term, (BinaryOp, UnaryOp)):
        return f"the '{term.op}' expression"
    if isinstance(term, Functor):
        return f"{term.name}(...)"  # a user functor's name has its '@'

    return f"the {term.kind} aggregate"


@dataclass
class _Class:
    types: frozenset
    origin: Span | None  # where the narrowing came from, for messages
    declared: bool = False
    constraint: bool = False  # a requirement ("must be") rather than a fact ("is")


@dataclass
class RelationShape:
    arity: int
    columns: list[int]  # type class ids
    span: Span  # declaration, or first use
    declared: bool


class Inference:
    """Runs over declarations, facts and rules in order; then `relation_types` and `term_types`."""

    def __init__(self, source: Source | None, functors: dict | None = None):
        self.source = source
        self.functors = functors or {}  # user functor name (without '@') -> (parameter types, result type)
        self.parent: list[int] = []
        self.classes: dict[int, _Class] = {}
        self.relations: dict[str, RelationShape] = {}
        self._terms: dict[Rule, list[tuple[Term, int]]] = {}
        self._vars: dict[tuple[Scope, str], int] = {}  # of the rule being inferred
        self._recorded: list[tuple[Term, int]] | None = None

    # ---- union-find ----

    def new(self, types: frozenset, origin: Span | None = None, declared: bool = False, constraint: bool = False) -> int:
        cid = len(self.parent)
        self.parent.append(cid)
        self.classes[cid] = _Class(types, origin, declared, constraint)
        return cid

    def find(self, cid: int) -> int:
        root = cid
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[cid] != root:  # path compression
            self.parent[cid], cid = root, self.parent[cid]
        return root

    def unify(self, a: int, b: int, at: Span, what_a: str, what_b: str) -> int:
        """Merge the class of `what_a` (a term at `at`) with that of `what_b` (its context)."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        ca, cb = self.classes[ra], self.classes[rb]
        both = ca.types & cb.types
        if not both:
            message = f"{what_a} is {show(ca.types)}{self._where(ca, at)}, but {what_b}"
            message += f" {'must be' if cb.constraint else 'is'} {show(cb.types)}{self._where(cb, at)}"
            raise TypeMismatchError.at(message, at, self.source)
        origin = ca if both == ca.types else cb if both == cb.types else _Class(both, at)
        self.parent[rb] = ra
        self.classes[ra] = _Class(both, origin.origin, origin.declared, origin.constraint)
        del self.classes[rb]
        return ra

    def restrict(self, cid: int, types: frozenset, at: Span, what: str, context: str, origin=None, declared=False) -> int:
        return self.unify(cid, self.new(types, origin, declared, constraint=True), at, what, context)

    @staticmethod
    def _where(cls: _Class, at: Span) -> str:
        if cls.origin is None or (cls.origin.line, cls.origin.column) == (at.line, at.column):
            return ""
        verb = "declared at" if cls.declared else "from"
        return f" ({verb} line {cls.origin.line}, column {cls.origin.column})"

    # ---- relations ----

    def declare(self, name: str, column_types: list[str | None], spans: list[Span], span: Span) -> None:
        columns = [self.new(ANY if t is None else frozenset({t}), s, declared=t is not None) for t, s in zip(column_types, spans)]
        self.relations[name] = RelationShape(len(columns), columns, span, declared=True)

    def shape(self, atom_relation: str, arity: int, span: Span) -> RelationShape:
        shape = self.relations.get(atom_relation)
        if shape is None:
            shape = RelationShape(arity, [self.new(ANY) for _ in range(arity)], span, declared=False)
            self.relations[atom_relation] = shape
        elif shape.arity != arity:
            where = "its declaration" if shape.declared else "its first use"
            message = (
                f"'{atom_relation}' is used with {_args(arity)} here, but has {_args(shape.arity)} in {where}"
                f" (line {shape.span.line}, column {shape.span.column})"
            )
            raise ArityError.at(message, span, self.source)
        return shape

    def relation_types(self, name: str) -> tuple[str, ...]:
        return tuple(default_type(self.classes[self.find(c)].types) for c in self.relations[name].columns)

    def term_types(self, rule: Rule) -> dict[Term, str]:
        return {term: default_type(self.classes[self.find(c)].types) for term, c in self._terms.get(rule, ())}

    # ---- clauses ----

    def fact(self, fact: Fact) -> None:
        self._atom(Atom(fact.relation, fact.args, span=fact.span), None)

    def rule(self, rule: Rule) -> None:
        self._recorded = self._terms.setdefault(rule, [])
        self._vars = {}  # a variable means nothing outside its rule
        scope = rule_scope(rule.heads, rule.body)
        for head in rule.heads:
            self._atom(head, scope)
        self._literals(rule.body, scope)
        self._recorded = None

    def _literals(self, literals, scope: Scope) -> None:
        for lit in literals:
            if isinstance(lit, Atom):
                self._atom(lit, scope)
            elif isinstance(lit, Negation):
                self._atom(lit.atom, scope)
            elif isinstance(lit, Comparison):
                left, right = self.term(lit.left, scope), self.term(lit.right, scope)
                if lit.op in _ORDER_OPS:
                    self.restrict(left, NUMERIC, lit.left.span, describe(lit.left), f"an operand of '{lit.op}'", lit.span)
                self.unify(right, left, lit.right.span, describe(lit.right), describe(lit.left))
            else:
                assert isinstance(lit, StringTest)
                for i, arg in enumerate(lit.args):
                    self._param(arg, frozenset({"symbol"}), scope, f"argument {i + 1} of {lit.name}", lit.span)

    def _atom(self, atom: Atom, scope: Scope | None) -> None:
        shape = self.shape(atom.relation, len(atom.args), atom.span)
        for i, (arg, column) in enumerate(zip(atom.args, shape.columns)):
            cid = self.term(arg, scope)
            self.unify(cid, column, arg.span, describe(arg), f"argument {i + 1} of '{atom.relation}'")

    def _param(self, arg: Term, types: frozenset, scope, what: str, origin: Span) -> int:
        """The class of `arg`, which `origin` (an operator, functor, ...) requires to be of `types`."""
        return self.restrict(self.term(arg, scope), types, arg.span, describe(arg), what, origin)

    # ---- terms ----

    def term(self, term: Term, scope: Scope | None) -> int:
        cid = self._term(term, scope)
        if self._recorded is not None:
            self._recorded.append((term, cid))
        return cid

    def _term(self, term: Term, scope: Scope | None) -> int:
        if isinstance(term, Variable):
            key = (scope.owner(term.name), term.name)
            if key not in self._vars:
                self._vars[key] = self.new(ANY)
            return self._vars[key]
        if isinstance(term, Wildcard):
            return self.new(ANY)
        if isinstance(term, Number):
            return self.new(NUMERIC, term.span)
        if isinstance(term, Unsigned):
            return self.new(frozenset({"unsigned"}), term.span)
        if isinstance(term, Float):
            return self.new(frozenset({"float"}), term.span)
        if isinstance(term, String):
            return self.new(frozenset({"symbol"}), term.span)
        if isinstance(term, BinaryOp):
            need = INTEGRAL if term.op in _INTEGRAL_OPS else NUMERIC
            left = self._param(term.left, need, scope, f"an operand of '{term.op}'", term.span)
            right = self.term(term.right, scope)
            return self.unify(right, left, term.right.span, describe(term.right), describe(term.left))
        if isinstance(term, UnaryOp):
            need = INTEGRAL if term.op in _INTEGRAL_OPS else NUMERIC
            return self._param(term.operand, need, scope, f"the operand of '{term.op}'", term.span)
        if isinstance(term, Functor):
            return self._functor(term, scope)
        assert isinstance(term, Aggregate)
        return self._aggregate(term, scope.child(term))

    def _functor(self, term: Functor, scope: Scope) -> int:
        if term.user_defined:
            return self._user_functor(term, scope)
        if term.name == "range" and len(term.args) not in (2, 3):
            raise ArityError.at(f"range takes 2 or 3 arguments, but is given {len(term.args)}", term.span, self.source)
        if term.name in ("min", "max", "range"):
            first = self._param(term.args[0], NUMERIC, scope, f"argument 1 of {term.name}", term.span)
            for arg in term.args[1:]:
                self.unify(self.term(arg, scope), first, arg.span, describe(arg), describe(term.args[0]))
            return first
        params, result = _FUNCTORS[term.name]
        if params is None:
            if not term.args:
                raise ArityError.at(f"{term.name} needs at least 1 argument", term.span, self.source)
            params = ("symbol",) * len(term.args)
        if len(params) != len(term.args):
            message = f"{term.name} takes {_args(len(params))}, but is given {len(term.args)}"
            raise ArityError.at(message, term.span, self.source)
        for i, (arg, param) in enumerate(zip(term.args, params)):
            types = param if isinstance(param, frozenset) else frozenset({param})
            self._param(arg, types, scope, f"argument {i + 1} of {term.name}", term.span)
        return self.new(frozenset({result}), term.span)

    def _user_functor(self, term: Functor, scope: Scope) -> int:
        name = term.name[1:]
        if name not in self.functors:
            known = ", ".join(sorted(self.functors)) or "none"
            message = f"functor '{name}' is not declared (declare it with '.functor {name}(...): type'; declared: {known})"
            raise UnknownFunctorError.at(message, term.span, self.source)
        params, result = self.functors[name]
        if len(params) != len(term.args):
            raise ArityError.at(f"@{name} takes {_args(len(params))}, but is given {len(term.args)}", term.span, self.source)
        for i, (arg, param) in enumerate(zip(term.args, params)):
            self._param(arg, frozenset({param}), scope, f"argument {i + 1} of @{name}", term.span)
        return self.new(frozenset({result}), term.span)

    def _aggregate(self, agg: Aggregate, scope: Scope) -> int:
        self._literals(agg.body, scope)
        if agg.kind == "count":
            return self.new(frozenset({"number"}), agg.span)
        target = self._param(agg.target, NUMERIC, scope, f"the target of {agg.kind}", agg.span)
        return self.new(frozenset({"float"}), agg.span) if agg.kind == "mean" else target


def _args(n: int) -> str:
    return f"{n} argument" + ("" if n == 1 else "s")

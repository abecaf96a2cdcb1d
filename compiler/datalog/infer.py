"""Arity and kind inference for relations, variables and terms.

Every relation column, every variable (per scope, see compiler.datalog.scope)
and every term gets a type class; classes are merged (union-find) whenever
the program says two things have the same type: an argument and its column,
the two sides of a comparison, the operands of `+`. Each class holds the set
of kinds (compiler.datalog.types: number, unsigned, float, symbol, or a record
type or ADT of the program) still possible, narrowed by constants,
declarations and operators (arithmetic needs numbers, string functors symbols);
an empty set is a TypeMismatchError at the term that emptied it. Integer
literals may be number, unsigned or float, as in Soufflé, and as Soufflé
overloads them, `+` adds numbers or concatenates symbols, `<` and the min and
max functors order numbers or symbols, to_string takes a symbol too. A class never narrowed to one kind
defaults to number (e.g. a column only ever given `_`).

Records. `$Branch(...)` names its ADT, and so the kinds of its fields. A record
`[a, b]` or `nil` may be of any record type: once the record's class is
narrowed to one record type (by the column it is an argument of, the
variable it is equated with, ...), its fields take that type's field kinds.
This is settled after the clauses are read, repeating until nothing changes;
a record whose type is still open then is a TypeMismatchError ("which record
type?"), as is a record with the wrong number of fields. Records and ADT values
may only be compared with `=` and `!=`.

Arity is fixed by a relation's declaration, else by its first use; any other
use with another number of arguments is an ArityError at the atom.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.datalog.ast import (
    Aggregate,
    Atom,
    BinaryOp,
    BranchTerm,
    Comparison,
    Fact,
    Float,
    Functor,
    Negation,
    Nil,
    Number,
    Record,
    Rule,
    Span,
    String,
    StringTest,
    Term,
    TypeCast,
    UnaryOp,
    Unsigned,
    Variable,
    Wildcard,
)
from compiler.datalog.scope import Scope, rule_scope
from compiler.datalog.types import PRIMITIVES, ADTType, Kind, RecordType, TypeEnv, is_structured
from compiler.errors import ArityError, DeclarationError, Source, TypeMismatchError, UnknownFunctorError

BASE_TYPES = PRIMITIVES
NUMERIC = frozenset({"number", "unsigned", "float"})
INTEGRAL = frozenset({"number", "unsigned"})

# What `+`, `<`, min and max take: Soufflé overloads them for symbols (concatenation, order).
NUMERIC_OR_SYMBOL = NUMERIC | {"symbol"}
_INTEGRAL_OPS = {"band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor", "bnot", "lnot"}
_ORDER_OPS = {"<", "<=", ">", ">="}
# name -> (parameter types, result type); None parameters: any number of symbols (cat), one value of any kind (ord).
_FUNCTORS = {
    "cat": (None, "symbol"),
    "strlen": (("symbol",), "number"),
    "substr": (("symbol", "number", "number"), "symbol"),
    "to_number": ((NUMERIC | {"symbol"},), "number"),  # parses a symbol, converts a numeric
    "to_string": ((NUMERIC_OR_SYMBOL,), "symbol"),  # of a symbol: the symbol
    "to_float": ((NUMERIC,), "float"),
    "to_unsigned": ((NUMERIC,), "unsigned"),
    "ord": (None, "number"),  # of any value: its stored form (a symbol's or record's id)
}
_SHOWN = {"number": "a number", "unsigned": "an unsigned", "float": "a float", "symbol": "a symbol"}


def show(types: frozenset) -> str:
    if len(types) == 1:
        (kind,) = types
        if isinstance(kind, RecordType):
            return f"a record of type '{kind.name}'"
        if isinstance(kind, ADTType):
            return f"a value of the ADT '{kind.name}'"
        return _SHOWN[kind]
    if types == NUMERIC:
        return "numeric"
    if types == INTEGRAL:
        return "an integer (number or unsigned)"
    if all(isinstance(t, RecordType) for t in types):
        return "a record"
    if types == NUMERIC_OR_SYMBOL:
        return "a number or a symbol"
    names = [t for t in BASE_TYPES if t in types] + sorted(t.name for t in types if is_structured(t))
    return "one of " + ", ".join(names)


def default_type(types: frozenset) -> Kind:
    if "number" in types:
        return "number"
    return next((t for t in BASE_TYPES if t in types), None) or next(iter(types))


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
    if isinstance(term, Record):
        return "the record [...]" if term.args else "the record []"
    if isinstance(term, Nil):
        return "nil"
    if isinstance(term, BranchTerm):
        return f"${term.name}(...)" if term.args else f"${term.name}"
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
    """Runs over declarations, facts and rules in order, then `settle_records()`; then
    `relation_types` and `term_types`."""

    def __init__(self, source: Source | None, types: TypeEnv | None = None, functors: dict | None = None):
        self.source = source
        self.types = types or TypeEnv()
        structured = {k for k in self.types.kinds.values() if is_structured(k)}
        self.any = frozenset(BASE_TYPES) | structured  # every kind of the program
        self.records = frozenset(k for k in structured if isinstance(k, RecordType))
        self.functors = functors or {}  # user functor name (without '@') -> (parameter kinds, result kind)
        self.parent: list[int] = []
        self.classes: dict[int, _Class] = {}
        self.relations: dict[str, RelationShape] = {}
        self._terms: dict[Rule | Fact, list[tuple[Term, int]]] = {}
        self._vars: dict[tuple[Scope, str], int] = {}  # of the rule being inferred
        self._recorded: list[tuple[Term, int]] | None = None
        self._records: list[tuple[Record, int, list[int]]] = []  # each record term, its class and its fields' classes

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

    def declare(self, name: str, column_types: list[Kind | None], spans: list[Span], span: Span) -> None:
        columns = [self.new(self.any if t is None else frozenset({t}), s, declared=t is not None) for t, s in zip(column_types, spans)]
        self.relations[name] = RelationShape(len(columns), columns, span, declared=True)

    def shape(self, atom_relation: str, arity: int, span: Span) -> RelationShape:
        shape = self.relations.get(atom_relation)
        if shape is None:
            shape = RelationShape(arity, [self.new(self.any) for _ in range(arity)], span, declared=False)
            self.relations[atom_relation] = shape
        elif shape.arity != arity:
            where = "its declaration" if shape.declared else "its first use"
            message = (
                f"'{atom_relation}' is used with {_args(arity)} here, but has {_args(shape.arity)} in {where}"
                f" (line {shape.span.line}, column {shape.span.column})"
            )
            raise ArityError.at(message, span, self.source)
        return shape

    def relation_types(self, name: str) -> tuple[Kind, ...]:
        return tuple(default_type(self.classes[self.find(c)].types) for c in self.relations[name].columns)

    def term_types(self, clause: Rule | Fact) -> dict[Term, Kind]:
        return {term: default_type(self.classes[self.find(c)].types) for term, c in self._terms.get(clause, ())}

    # ---- clauses ----

    def fact(self, fact: Fact) -> None:
        self._recorded = self._terms.setdefault(fact, [])
        self._atom(Atom(fact.relation, fact.args, span=fact.span), None)
        self._recorded = None

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
                    self.restrict(left, NUMERIC_OR_SYMBOL, lit.left.span, describe(lit.left), f"an operand of '{lit.op}'", lit.span)
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

    def _param(self, arg: Term, types: frozenset, scope, what: str, origin: Span, declared: bool = False) -> int:
        """The class of `arg`, which `origin` (an operator, functor, ...) requires to be of `types`."""
        return self.restrict(self.term(arg, scope), types, arg.span, describe(arg), what, origin, declared)

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
                self._vars[key] = self.new(self.any)
            return self._vars[key]
        if isinstance(term, Wildcard):
            return self.new(self.any)
        if isinstance(term, Number):
            return self.new(NUMERIC, term.span)
        if isinstance(term, Unsigned):
            return self.new(frozenset({"unsigned"}), term.span)
        if isinstance(term, Float):
            return self.new(frozenset({"float"}), term.span)
        if isinstance(term, String):
            return self.new(frozenset({"symbol"}), term.span)
        if isinstance(term, BinaryOp):
            need = INTEGRAL if term.op in _INTEGRAL_OPS else NUMERIC_OR_SYMBOL if term.op == "+" else NUMERIC
            left = self._param(term.left, need, scope, f"an operand of '{term.op}'", term.span)
            right = self.term(term.right, scope)
            return self.unify(right, left, term.right.span, describe(term.right), describe(term.left))
        if isinstance(term, UnaryOp):
            need = INTEGRAL if term.op in _INTEGRAL_OPS else NUMERIC
            return self._param(term.operand, need, scope, f"the operand of '{term.op}'", term.span)
        if isinstance(term, Functor):
            return self._functor(term, scope)
        if isinstance(term, Record):
            fields = [self.term(arg, scope) for arg in term.args]
            if not self.records:
                raise TypeMismatchError.at(f"{describe(term)} has no type: the program declares no record type", term.span, self.source)
            cid = self.new(self.records)  # of the type where it stands: its arity is checked once that is known
            self._records.append((term, cid, fields))
            return cid
        if isinstance(term, Nil):
            if not self.records:
                raise TypeMismatchError.at("nil is a record, but the program declares no record type", term.span, self.source)
            return self.new(self.records, term.span)
        if isinstance(term, BranchTerm):
            return self._branch(term, scope)
        assert isinstance(term, Aggregate)
        return self._aggregate(term, scope.child(term))

    def _branch(self, term: BranchTerm, scope: Scope) -> int:
        if term.name not in self.types.branches:
            known = ", ".join(f"${name}" for name in sorted(self.types.branches)) or "none: the program declares no ADT"
            raise TypeMismatchError.at(f"unknown ADT branch '${term.name}' (the branches: {known})", term.span, self.source)
        adt, branch = self.types.branches[term.name]
        if len(term.args) != len(branch.fields):
            message = f"branch '${term.name}' of '{adt.name}' has {_fields(len(branch.fields))}, but is given {len(term.args)}"
            raise ArityError.at(message, term.span, self.source)
        for (name, kind), arg in zip(branch.fields, term.args):
            self._param(arg, frozenset({kind}), scope, f"field '{name}' of ${term.name}", branch.span, declared=True)
        return self.new(frozenset({adt}), term.span)

    def settle_records(self) -> None:
        """Give each record term's fields the kinds of its record type, once the record is
        known to be of one type; repeated until nothing changes. Then every record term must
        be of exactly one record type."""
        unsettled = list(self._records)
        progress = True
        while unsettled and progress:
            progress = False
            for item in list(unsettled):
                term, cid, fields = item
                candidates = self.classes[self.find(cid)].types
                if len(candidates) == 1:
                    (record,) = candidates
                    if record.arity != len(term.args):
                        message = f"{describe(term)} has {_fields(len(term.args))}, but is a record of type '{record.name}', which has {record.arity}"
                        raise TypeMismatchError.at(message, term.span, self.source)
                    for (name, kind), arg, field in zip(record.fields, term.args, fields):
                        what = f"field '{name}' of '{record.name}'"
                        self.restrict(field, frozenset({kind}), arg.span, describe(arg), what, record.span, declared=True)
                    unsettled.remove(item)
                    progress = True
                    continue
                fitting = frozenset(r for r in candidates if self._fits(r, fields))
                if not fitting:
                    names = ", ".join(sorted(r.name for r in candidates))
                    if any(r.arity == len(term.args) for r in candidates):
                        message = f"{describe(term)} has fields of kinds no record type it could be has ({names})"
                    else:
                        message = f"no record type has {_fields(len(term.args))} ({describe(term)} could be {names})"
                    raise TypeMismatchError.at(message, term.span, self.source)
                if fitting != candidates:
                    self.restrict(cid, fitting, term.span, describe(term), "a record", term.span)
                    progress = True
        for term, cid, _ in unsettled:
            names = ", ".join(sorted(r.name for r in self.classes[self.find(cid)].types))
            message = f"cannot tell which record type {describe(term)} is (it could be {names}): declare the type of the column or variable it stands for"
            raise TypeMismatchError.at(message, term.span, self.source)

    def _fits(self, record: RecordType, fields: list[int]) -> bool:
        return record.arity == len(fields) and all(kind in self.classes[self.find(c)].types for (_, kind), c in zip(record.fields, fields))

    def _functor(self, term: Functor, scope: Scope) -> int:
        if isinstance(term, TypeCast):
            return self._cast(term, scope)
        if term.user_defined:
            return self._user_functor(term, scope)
        if term.name == "range" and len(term.args) not in (2, 3):
            raise ArityError.at(f"range takes 2 or 3 arguments, but is given {len(term.args)}", term.span, self.source)
        if term.name in ("min", "max", "range"):
            domain = NUMERIC if term.name == "range" else NUMERIC_OR_SYMBOL
            first = self._param(term.args[0], domain, scope, f"argument 1 of {term.name}", term.span)
            for arg in term.args[1:]:
                self.unify(self.term(arg, scope), first, arg.span, describe(arg), describe(term.args[0]))
            return first
        params, result = _FUNCTORS[term.name]
        if term.name == "ord":
            params = (self.any,)
        elif params is None:
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

    def _cast(self, term: TypeCast, scope: Scope) -> int:
        """as(x, T): a value of T's kind; x keeps its own (checks.check_casts says which pairs go)."""
        self.term(term.args[0], scope)
        kind = self.types.kinds.get(term.type_name)
        if kind is None:
            known = ", ".join(sorted(self.types.kinds))
            raise DeclarationError.at(f"unknown type '{term.type_name}' in as(...) (the types: {known})", term.span, self.source)
        return self.new(frozenset({kind}), term.span)

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


def _fields(n: int) -> str:
    return f"{n} field" + ("" if n == 1 else "s")

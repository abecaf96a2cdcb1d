"""Abstract syntax of Datalog programs.

A Program is what the parser makes of one source text: relation declarations,
type definitions, I/O directives, facts and rules, and Soufflé's components
(Component, ComponentInit), which compiler.datalog.components expands into
plain declarations and clauses before anything else sees the program. Nodes are immutable and
carry the Span of source text they came from, so every later stage can point
an error back at the text. Rules are already in disjunctive normal form: each
Rule has a plain conjunctive body, and a source rule written with `;` becomes
several Rules sharing the span of the source rule.

Terms are what appear as arguments (variables, constants, arithmetic,
functors, aggregates, and Soufflé's records `[a, b]`, `nil` and ADT values
`$Branch(a, b)`); literals are what appear in a body (atoms, negated
atoms, comparisons, the string tests `contains`/`match`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from itertools import count
from typing import Iterator, Union

from compiler.errors import Source


@dataclass(frozen=True)
class Span:
    """A source region; lines and columns are 1-based, the end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


# For nodes made by later stages (or tests) that have no source of their own.
NOWHERE = Span(0, 0, 0, 0)


def _span():
    return field(default=NOWHERE, kw_only=True)


# ---- terms -----------------------------------------------------------------


@dataclass(frozen=True)
class Variable:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Wildcard:
    span: Span = _span()


@dataclass(frozen=True)
class Number:
    """A signed integer literal; like Soufflé, it may also stand for an unsigned or float."""

    value: int
    span: Span = _span()


@dataclass(frozen=True)
class Unsigned:
    value: int
    span: Span = _span()


@dataclass(frozen=True)
class Float:
    value: float
    span: Span = _span()


@dataclass(frozen=True)
class String:
    value: str
    span: Span = _span()


@dataclass(frozen=True)
class BinaryOp:
    """Arithmetic, bitwise (band bor bxor bshl bshr bshru) or logical (land lor lxor)."""

    op: str
    left: "Term"
    right: "Term"
    span: Span = _span()


@dataclass(frozen=True)
class UnaryOp:
    """`-`, `bnot` or `lnot`."""

    op: str
    operand: "Term"
    span: Span = _span()


@dataclass(frozen=True)
class Functor:
    """A built-in function (cat strlen substr to_number to_string min max ...), or a
    user-defined functor `@f(...)`, whose name keeps its `@` (see FunctorDecl)."""

    name: str
    args: tuple["Term", ...]
    span: Span = _span()

    @property
    def user_defined(self) -> bool:
        return self.name.startswith("@")


@dataclass(frozen=True)
class TypeCast(Functor):
    """`as(x, T)`: x's value taken as a value of type T, unchecked, as in Soufflé (its one
    argument is `args[0]`). Between subset types of one kind it is the value itself; between
    number, unsigned and float it keeps the 64 bits; a symbol, record or ADT value taken as
    a number is its id, as `ord` gives it (compiler.datalog.checks decides what is allowed)."""

    type_name: str = ""


@dataclass(frozen=True)
class Aggregate:
    """`kind target : { body }`; kind is count, sum, min, max or mean (count has no target).

    Which of its variables are bound from outside, local, or witnesses bound for
    the enclosing rule is compiler.datalog.scope's rule (Soufflé's). What a count,
    sum or mean ranges over is `counted`'s (compiler.datalog.counting): None, each
    combination of the body's tuples; else each distinct binding of these variables.
    """

    kind: str
    target: "Term | None"
    body: tuple["Literal", ...]
    span: Span = _span()
    counted: frozenset[str] | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class Record:
    """A record `[a, b, ...]`: built where its arguments are known (a head, an expression),
    taken apart where it is matched against a value (a body atom's argument, `x = [a, b]`)."""

    args: tuple["Term", ...]
    span: Span = _span()


@dataclass(frozen=True)
class Nil:
    """`nil`: the record value of every record type that is no record."""

    span: Span = _span()


@dataclass(frozen=True)
class BranchTerm:
    """An ADT value `$Branch(a, b)` (`$Branch` or `$Branch()` for a branch without fields);
    like a record, built or matched by where it stands."""

    name: str
    args: tuple["Term", ...]
    span: Span = _span()


Constant = Union[Number, Unsigned, Float, String]
Term = Union[Variable, Wildcard, Number, Unsigned, Float, String, BinaryOp, UnaryOp, Functor, Aggregate, Record, Nil, BranchTerm]
CONSTANTS = (Number, Unsigned, Float, String)
PATTERNS = (Record, BranchTerm)  # terms that bind their variables when matched against a value


def is_ground(term: "Term") -> bool:
    """A constant, `nil`, or a record or ADT value of ground terms: a fact may hold it."""
    if isinstance(term, PATTERNS):
        return all(is_ground(a) for a in term.args)
    return isinstance(term, (*CONSTANTS, Nil))


# ---- literals ----------------------------------------------------------------


@dataclass(frozen=True)
class Atom:
    relation: str
    args: tuple[Term, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Negation:
    atom: Atom
    span: Span = _span()


@dataclass(frozen=True)
class Comparison:
    """op is one of = != < <= > >=."""

    op: str
    left: Term
    right: Term
    span: Span = _span()


@dataclass(frozen=True)
class StringTest:
    """Soufflé's body constraints `contains(needle, s)` and `match(regex, s)`."""

    name: str
    args: tuple[Term, Term]
    negated: bool = False
    span: Span = _span()


Literal = Union[Atom, Negation, Comparison, StringTest]


# ---- clauses and declarations ------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """A clause with no body whose arguments are all ground (`is_ground`)."""

    relation: str
    args: tuple[Term, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Subsumption:
    """`dominated <= dominating :- body`: a tuple of the relation is dropped when another
    tuple of it dominates it as the body says (compiler.datalog.checks, Soufflé's
    subsumptive rules). Both heads are atoms of the same relation."""

    dominated: Atom
    dominating: Atom
    body: tuple[Literal, ...]
    span: Span = _span()

    @property
    def relation(self) -> str:
        return self.dominated.relation

    def as_rule(self) -> "Rule":
        """A headless rule whose body is the two heads and then the body: how inference,
        safety and the lowering see the subsumptive rule (the heads ground variables, like
        body atoms). Each `_` of the heads, in a record or ADT value too, is a variable of
        its own there (`<head i>`): the dominated tuple is read back from its arguments."""
        names = count()

        def named(node):
            return Variable(f"<head {next(names)}>", span=node.span) if isinstance(node, Wildcard) else node

        heads = map_nodes((self.dominated, self.dominating), named)
        return Rule((), (*heads, *self.body), span=self.span)


@dataclass(frozen=True)
class Rule:
    """`heads :- body`, with a conjunctive body (several heads share the body)."""

    heads: tuple[Atom, ...]
    body: tuple[Literal, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Attribute:
    name: str
    type_name: str | None  # None: the column's type is inferred
    span: Span = _span()


@dataclass(frozen=True)
class Qualifier:
    """`min(col)` / `max(col)` after a declaration: keep only the least/greatest
    value of `col` per value of the other columns (a monotone, recursive-safe
    aggregation; see compiler.datalog.checks)."""

    kind: str
    column: str
    span: Span = _span()


@dataclass(frozen=True)
class ChoiceDomain:
    """One domain of a `choice-domain` qualifier: the attributes that pick one tuple."""

    columns: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Decl:
    name: str
    attributes: tuple[Attribute, ...]
    qualifier: Qualifier | None = None
    span: Span = _span()
    as_of: bool = False  # the `asof` qualifier: the relation's rules are as-of joins
    overridable: bool = False  # the `overridable` qualifier: a derived component may `.override` its clauses
    eqrel: bool = False  # the `eqrel` qualifier: an equivalence relation (compiler.datalog.checks)
    inline: bool = False  # the `inline` qualifier: substituted into its uses (compiler.datalog.inline)
    choice_domains: tuple[ChoiceDomain, ...] = ()  # the `choice-domain` qualifier


@dataclass(frozen=True)
class FunctorDecl:
    """`.functor name(params): result [stateful]`: a user-defined functor, called `@name(...)`;
    parameters are Attributes whose type_name is the type (their names are optional)."""

    name: str
    params: tuple[Attribute, ...]
    result: str
    stateful: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class Branch:
    """One branch of an ADT's declaration: `Name {field: type, ...}`."""

    name: str
    fields: tuple[Attribute, ...]
    span: Span = _span()


@dataclass(frozen=True)
class TypeDecl:
    """`.type T = A | B` (kind 'equal', one or more bases), `.type T <: A` (kind 'subtype'),
    `.type T = [x: A, ...]` (kind 'record', its `fields`) or `.type T = A {...} | B {...}`
    (kind 'adt', its `branches`); compiler.datalog.types gives them meaning."""

    name: str
    kind: str
    bases: tuple[str, ...] = ()
    span: Span = _span()
    fields: tuple[Attribute, ...] = ()
    branches: tuple[Branch, ...] = ()


@dataclass(frozen=True)
class IODirective:
    """One relation of an `.input` / `.output` / `.printsize` line, its options kept as written."""

    kind: str
    relation: str
    options: dict[str, str] = field(default_factory=dict, hash=False)
    span: Span = _span()
    option_spans: dict[str, Span] = field(default_factory=dict, hash=False, compare=False)  # where each option is written


@dataclass(frozen=True)
class Pragma:
    """`.pragma "key" "value"`: a Soufflé command-line option written in the program."""

    key: str
    value: str | None
    span: Span = _span()


@dataclass(frozen=True)
class ExecutionPlan:
    """`.plan 1:(2,1), ...` after a rule: Soufflé's order of its body atoms for each version
    (of a recursive rule), as (version, atom positions) pairs. A hint deltalog ignores."""

    orders: tuple[tuple[int, tuple[int, ...]], ...]
    span: Span = _span()

    def __str__(self) -> str:
        return ".plan " + ", ".join(f"{v}:({','.join(map(str, atoms))})" for v, atoms in self.orders)


# ---- components ------------------------------------------------------------------


@dataclass(frozen=True)
class ComponentType:
    """A reference to a component with its type arguments: `Graph<number>` (name 'Graph',
    args ('number',)); an argument is a type or a component name."""

    name: str
    args: tuple[str, ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class ComponentInit:
    """`.init instance = Component<args>`: a copy of the component's relations named `instance.<relation>`."""

    instance: str
    component: ComponentType
    span: Span = _span()


@dataclass(frozen=True)
class Override:
    """`.override r` in a component: the clauses its base components give `r` are dropped."""

    relation: str
    span: Span = _span()


@dataclass(frozen=True)
class Component:
    """`.comp Name<params> : bases { body }`; the body is a Program of its own (with its
    nested components and instances), and `overrides` are its `.override` lines."""

    head: ComponentType  # the component's name and its type parameters
    bases: tuple[ComponentType, ...]
    overrides: tuple[Override, ...]
    body: "Program"
    span: Span = _span()

    @property
    def name(self) -> str:
        return self.head.name

    @property
    def params(self) -> tuple[str, ...]:
        return self.head.args


@dataclass(frozen=True)
class Program:
    decls: tuple[Decl, ...]
    types: tuple[TypeDecl, ...]
    inputs: tuple[IODirective, ...]
    outputs: tuple[IODirective, ...]
    facts: tuple[Fact, ...]
    rules: tuple[Rule, ...]
    printsizes: tuple[IODirective, ...] = ()
    source: Source | None = field(default=None, compare=False)
    pragmas: tuple[Pragma, ...] = ()
    plans: tuple[ExecutionPlan, ...] = ()
    # Empty once compiler.datalog.components has expanded them (parse_datalog's result).
    components: tuple[Component, ...] = ()
    instances: tuple[ComponentInit, ...] = ()
    subsumptions: tuple[Subsumption, ...] = ()
    functors: tuple[FunctorDecl, ...] = ()


# ---- traversal -----------------------------------------------------------------


def subterms(term: Term) -> Iterator[Term]:
    """The term and its subterms, outermost first.

    An Aggregate is yielded but not entered: its target and body belong to the
    aggregate's own variable scope (see compiler.datalog.scope).
    """
    stack = [term]
    while stack:
        t = stack.pop()
        yield t
        if isinstance(t, BinaryOp):
            stack += (t.right, t.left)
        elif isinstance(t, UnaryOp):
            stack.append(t.operand)
        elif isinstance(t, (Functor, Record, BranchTerm)):
            stack.extend(reversed(t.args))


def pattern_variables(term: Term) -> set[str]:
    """The variables a term binds when it is matched against a known value: a variable
    itself, and the variables standing as fields (at any depth) of a record or ADT value."""
    if isinstance(term, Variable):
        return {term.name}
    if isinstance(term, PATTERNS):
        return set().union(*(pattern_variables(a) for a in term.args))
    return set()


def literal_terms(lit: Literal) -> tuple[Term, ...]:
    """The argument terms of a literal, in source order."""
    if isinstance(lit, Atom):
        return lit.args
    if isinstance(lit, Negation):
        return lit.atom.args
    if isinstance(lit, Comparison):
        return (lit.left, lit.right)
    return lit.args


def map_nodes(node, fn):
    """The same tree rebuilt bottom-up: each AST node is replaced by `fn(node)`, called
    once its children are rebuilt. Spans, sources and option dicts are left as they are."""
    return rebuild_nodes(node, lambda rebuilt, original: fn(rebuilt))


def rebuild_nodes(node, fn):
    """map_nodes, with `fn(rebuilt, original)` also given the node as it was (the object a
    scope analysis of the original tree knows it by)."""
    if isinstance(node, tuple):
        return tuple(rebuild_nodes(x, fn) for x in node)
    if isinstance(node, list):
        return [rebuild_nodes(x, fn) for x in node]
    if dataclasses.is_dataclass(node) and not isinstance(node, (type, Span, Source)):
        changes = {f.name: rebuild_nodes(getattr(node, f.name), fn) for f in dataclasses.fields(node)}
        return fn(dataclasses.replace(node, **changes), node)
    return node


def strip_spans(node):
    """The same tree with every span set to NOWHERE, for comparing structure."""
    return map_nodes(node, lambda n: dataclasses.replace(n, span=NOWHERE) if hasattr(n, "span") else n)

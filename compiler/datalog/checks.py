"""Checking a parsed Datalog program: from Program to CheckedProgram.

A CheckedProgram is a program known to mean something: every relation has an
arity and a kind per column (declared or inferred: a base type, or a record type
or ADT, compiler.datalog.types), every rule is safe, and the rules are split into
strata that can be computed in order. Checking runs type and relation
declarations first, folds anonymous records (compiler.datalog.anonymous), then
arity and kind inference over facts and rules in source order
(compiler.datalog.infer), subset types (compiler.datalog.subtypes), safety per
rule (compiler.datalog.safety), then stratification (compiler.datalog.stratify).
It either returns a CheckedProgram or raises a CompileError. A relation's `types`
are its columns' plan types (a record or ADT column is a plan `record`), its
`kinds` what the values are.

Relations. Declarations are optional for relations that rules or facts
define: their arity and types are inferred. A relation used in a body must
be given rows somehow -- by a rule, a fact, a `.decl` or an `.input` --
else it is an UnknownRelationError at its first use (most often a typo; the
message suggests the program's relations with close names), never a silent
empty relation. A relation is an input -- it may be fed rows from outside,
by `Session.insert` or a table on the command line -- when no rule defines
it (it is only declared, or only given facts, which the fed rows join) or
when `.input` names it (as in Soufflé, its rules then add to the rows read). `required_inputs` are the `.input` relations: those a
run reads a table for, as Soufflé reads their fact files. The
outputs are the `.output` and `.printsize` relations (the CLI prints the size of
a `.printsize` relation, and its rows only if it is an `.output` too), or,
without either directive, every relation defined by rules that is not an input.

The `min(col)` / `max(col)` qualifier. `.decl dist(node: number, d: number)
min(d)` makes `dist` keep, per value of its other columns, only the least
value of column `d` among all the tuples its rules and facts derive: the
shortest distance per node, as in breadth-first search written as
`dist(y, d + 1) :- dist(x, d), edge(x, y).` The column must be numeric. The
qualified relation may be recursive: keeping the minimum is monotone.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from compiler.datalog.anonymous import fold_anonymous_records
from compiler.datalog.ast import Decl, Fact, IODirective, Pragma, Program, Qualifier, Rule, Span, Term
from compiler.datalog.infer import BASE_TYPES, NUMERIC, Inference
from compiler.datalog.types import Kind, TypeEnv, is_structured, plan_type, type_environment
from compiler.datalog.parser import parse_datalog
from compiler.datalog.preprocess import preprocess
from compiler.datalog.safety import check_safety
from compiler.datalog.subtypes import check_subtypes
from compiler.datalog.stratify import Stratum, body_atoms, stratify
from compiler.errors import CompileError, DeclarationError, Source, TypeMismatchError, UnknownRelationError, UnsupportedError


@dataclass(frozen=True)
class RelationInfo:
    name: str
    arity: int
    types: tuple[str, ...]  # plan types: number, unsigned, float, symbol, or record (records and ADT values: compiler.values)
    attribute_names: tuple[str, ...]  # declared names, else x0, x1, ...
    qualifier: Qualifier | None
    is_input: bool
    is_output: bool
    input_options: dict[str, str] = field(hash=False)
    output_options: dict[str, str] = field(hash=False)
    span: Span  # the declaration, else the first use
    as_of: bool = False  # declared `asof`: each rule's first atom is looked up as of its time (compiler.lowering.rules)
    kinds: tuple[Kind, ...] = ()  # what each column's values are (compiler.datalog.types): `types`, a record type or an ADT

    def __post_init__(self):
        if not self.kinds:
            object.__setattr__(self, "kinds", self.types)


@dataclass(frozen=True)
class CheckedProgram:
    relations: dict[str, RelationInfo] = field(hash=False)
    # Values as written: an integer literal in a float or unsigned column is that
    # column's type (see RelationInfo.types), as in Soufflé.
    facts: tuple[Fact, ...]
    rules: tuple[Rule, ...]  # disjunction-free, and each with exactly one head
    strata: tuple[Stratum, ...]  # dependency order
    outputs: tuple[str, ...]  # .output and .printsize relations (without either: every derived relation)
    required_inputs: tuple[str, ...]  # the `.input` relations, in directive order: a run needs a table for each
    printsizes: tuple[str, ...]  # whose size the CLI prints, as Soufflé's .printsize
    # The kind of every term of every rule and fact with records (keys are the rules above and the facts).
    term_types: dict[Rule | Fact, dict[Term, Kind]] = field(hash=False, repr=False)
    source: Source | None = field(default=None, compare=False, repr=False)
    pragmas: tuple[Pragma, ...] = field(default=(), compare=False, repr=False)  # all ignored (builder.IGNORED_PRAGMAS)
    types: TypeEnv = field(default_factory=TypeEnv, compare=False, repr=False)  # the program's .type declarations


def check_datalog(text: str, source_name: str = "<string>", include_dirs=()) -> CheckedProgram:
    """Preprocess (compiler.datalog.preprocess), parse and check Datalog source text;
    errors name the file and line the offending text came from."""
    text, lines = preprocess(text, source_name, include_dirs)
    try:
        return check(parse_datalog(text, source_name))
    except CompileError as error:
        if lines is None:
            raise
        raise lines.relocate(error) from None


def check(program: Program) -> CheckedProgram:
    """Infer, check and stratify a parsed program; raise the first CompileError found."""
    source = program.source
    types = type_environment(program.types, source)
    decls = _index_decls(program.decls, source)
    _check_defined(program, decls, source)
    # A rule with several heads is several rules with one body: strata may differ per head.
    rules = fold_anonymous_records(tuple(Rule((head,), rule.body, span=rule.span) for rule in program.rules for head in rule.heads))

    inference = Inference(source, types)
    for decl in decls.values():
        kinds = [None if a.type_name is None else _kind_of(a.type_name, types, a.span, source) for a in decl.attributes]
        inference.declare(decl.name, kinds, [a.span for a in decl.attributes], decl.span)
        if decl.qualifier is not None:
            _check_qualifier(decl, kinds, inference, source)
    clauses = sorted([*program.facts, *rules], key=lambda c: (c.span.line, c.span.column))
    for clause in clauses:
        if isinstance(clause, Fact):
            inference.fact(clause)
        else:
            inference.rule(clause)
    inference.settle_records()
    term_types = {clause: inference.term_types(clause) for clause in clauses}
    check_subtypes(rules, decls, types, term_types, source)

    for rule in rules:
        check_safety(rule, source)
    strata = tuple(stratify(rules, source))

    directives = {kind: _index_io(getattr(program, f"{kind}s"), inference, source) for kind in ("input", "output", "printsize")}
    defined = {rule.heads[0].relation for rule in rules}
    relations = {}
    for name, shape in inference.relations.items():
        decl = decls.get(name)
        kinds = inference.relation_types(name)
        relations[name] = RelationInfo(
            name=name,
            arity=shape.arity,
            types=tuple(plan_type(k) for k in kinds),
            kinds=kinds,
            attribute_names=tuple(a.name for a in decl.attributes) if decl else tuple(f"x{i}" for i in range(shape.arity)),
            qualifier=decl.qualifier if decl else None,
            is_input=name not in defined or name in directives["input"],
            is_output=name in directives["output"],
            input_options=directives["input"].get(name, {}),
            output_options=directives["output"].get(name, {}),
            as_of=bool(decl and decl.as_of),
            span=shape.span,
        )
    if directives["output"] or directives["printsize"]:
        outputs = tuple(dict.fromkeys([*directives["output"], *directives["printsize"]]))
    else:
        outputs = tuple(n for n, info in relations.items() if n in defined and not info.is_input)
    return CheckedProgram(
        relations=relations,
        facts=program.facts,
        rules=rules,
        strata=strata,
        outputs=outputs,
        required_inputs=tuple(directives["input"]),
        printsizes=tuple(directives["printsize"]),
        term_types=term_types,
        source=source,
        pragmas=program.pragmas,
        types=types,
    )


def _check_defined(program: Program, decls: dict[str, Decl], source) -> None:
    """Every relation a body reads is given rows by a rule, a fact, a .decl or an .input;
    the first use of one that is not raises UnknownRelationError."""
    given = {head.relation for rule in program.rules for head in rule.heads}
    given |= {fact.relation for fact in program.facts} | set(decls) | {d.relation for d in program.inputs}
    uses = [atom for rule in program.rules for atom, _ in body_atoms(rule.body) if atom.relation not in given]
    if not uses:
        return
    first = min(uses, key=lambda atom: (atom.span.line, atom.span.column))
    close = difflib.get_close_matches(first.relation, sorted(given), n=3, cutoff=0.6)
    if close:
        hint = "did you mean " + " or ".join(f"'{name}'" for name in close) + "?"
    else:
        hint = f"declare it with '.decl {first.relation}(...)' and '.input {first.relation}' to read it from a table"
    message = f"relation '{first.relation}' is used but never defined (no rule, fact, .decl or .input gives it rows); {hint}"
    raise UnknownRelationError.at(message, first.span, source)


def _kind_of(name: str, types: TypeEnv, span, source) -> Kind:
    if name not in types.kinds:
        known = ", ".join(BASE_TYPES)
        raise DeclarationError.at(f"unknown type '{name}' (base types are {known}, or define it with .type)", span, source)
    return types.kinds[name]


def _index_decls(decls: tuple[Decl, ...], source) -> dict[str, Decl]:
    out: dict[str, Decl] = {}
    for decl in decls:
        if decl.name in out:
            first = out[decl.name].span
            message = f"relation '{decl.name}' is declared twice (first at line {first.line}, column {first.column})"
            raise DeclarationError.at(message, decl.span, source)
        names = [a.name for a in decl.attributes]
        for i, attr in enumerate(decl.attributes):
            if attr.name in names[:i]:
                raise DeclarationError.at(f"relation '{decl.name}' has two columns named '{attr.name}'", attr.span, source)
        out[decl.name] = decl
    return out


def _check_qualifier(decl: Decl, types: list[Kind | None], inference: Inference, source) -> None:
    q = decl.qualifier
    names = [a.name for a in decl.attributes]
    if q.column not in names:
        raise DeclarationError.at(f"{q.kind}({q.column}): relation '{decl.name}' has no column '{q.column}'", q.span, source)
    declared = types[names.index(q.column)]
    if declared is not None and declared not in NUMERIC:
        shown = declared.name if is_structured(declared) else declared
        raise TypeMismatchError.at(f"{q.kind}({q.column}) needs a numeric column, but '{q.column}' is a {shown}", q.span, source)
    column = inference.relations[decl.name].columns[names.index(q.column)]
    inference.restrict(column, NUMERIC, q.span, f"column '{q.column}' of '{decl.name}'", f"{q.kind}(...)", q.span, declared=True)


# The options of `.input` / `.output` that deltalog honours (compiler.cli, Session.load_facts):
# Soufflé's file I/O, its paths relative to -F (--facts-dir) or -D (--output-dir).
IO_OPTIONS = {
    "input": {"IO": ("file",), "filename": None, "delimiter": None, "headers": ("true", "false")},
    "output": {"IO": ("file", "stdout"), "filename": None, "delimiter": None, "headers": ("true", "false")},
    "printsize": {},
}


def _check_io_options(d: IODirective, source) -> None:
    """Every option of the directive is one deltalog honours, with a value it knows."""
    known = IO_OPTIONS[d.kind]
    for key, value in d.options.items():
        span = d.option_spans.get(key, d.span)
        if key not in known:
            names = ", ".join(sorted(known)) or "none"
            raise UnsupportedError.at(f"option '{key}' of '.{d.kind}' is not supported (the options deltalog knows: {names})", span, source)
        values = known[key]
        if values is not None and value not in values:
            raise UnsupportedError.at(f"'.{d.kind}' option {key}={value} is not supported (one of: {', '.join(values)})", span, source)
        if key == "delimiter" and len(value) != 1:
            raise UnsupportedError.at(f"delimiter {value!r}: deltalog reads and writes one-character delimiters only", span, source)


def _index_io(directives: tuple[IODirective, ...], inference: Inference, source) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for d in directives:
        _check_io_options(d, source)
        if d.relation not in inference.relations:
            message = f"'.{d.kind} {d.relation}' names a relation that is never declared or used"
            raise UnknownRelationError.at(message, d.span, source)
        if d.relation in out:
            raise DeclarationError.at(f"relation '{d.relation}' has two .{d.kind} directives", d.span, source)
        out[d.relation] = dict(d.options)
    return out

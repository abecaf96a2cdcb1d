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

What a relation keeps of the tuples its rules derive -- all of them, or as a
min/max qualifier, `eqrel`, `choice-domain` or subsumptive rules say -- is
compiler.datalog.kinds's to check. Before anything else, as Soufflé orders it,
the witnesses of aggregates nested in aggregates are grounded in their rules
(compiler.datalog.witnesses), each count, sum and mean is told whether it ranges
over its body's tuples or the distinct bindings of its variables
(compiler.datalog.counting), and inline relations are substituted into their
uses (compiler.datalog.inline); a program with
`.pragma "magic-transform"` is checked as written and then rewritten with magic
sets (compiler.datalog.magic). `.functor` declarations name Python callables
given to `check` (`functors`); one without a callable is an UnsupportedError
(deltalog cannot load Soufflé's C++ functor libraries).
"""

from __future__ import annotations

import dataclasses
import difflib
import warnings
from dataclasses import dataclass, field

from compiler.datalog.anonymous import fold_anonymous_records
from compiler.datalog.ast import Decl, ExecutionPlan, Fact, IODirective, Pragma, Program, Qualifier, Rule, Span, Subsumption, Term, TypeCast, Variable, map_nodes
from compiler.datalog.counting import mark_counted
from compiler.datalog.infer import BASE_TYPES, NUMERIC, Inference, describe, show
from compiler.datalog.inline import inline_relations
from compiler.datalog.kinds import check_eqrel, check_kinds, check_qualifier, choice_domains
from compiler.datalog.magic import magic_transform
from compiler.datalog.types import Kind, TypeEnv, is_structured, plan_type, type_environment
from compiler.datalog.parser import parse_datalog
from compiler.datalog.preprocess import preprocess
from compiler.datalog.safety import check_safety
from compiler.datalog.subtypes import check_subtypes
from compiler.datalog.stratify import Stratum, body_atoms, stratify
from compiler.datalog.witnesses import ground_nested_witnesses
from compiler.errors import CompileError, CompileWarning, DeclarationError, Source, UnknownRelationError, UnsupportedError


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
    outputs: tuple[dict[str, str], ...] = field(hash=False)  # the options of each `.output` of the relation, in order
    span: Span  # the declaration, else the first use
    as_of: bool = False  # declared `asof`: each rule's first atom is looked up as of its time (compiler.lowering.rules)
    eqrel: bool = False  # declared `eqrel`: an equivalence relation (see the module)
    # `choice-domain`: the column indexes of each domain (see the module).
    choice_domains: tuple[tuple[int, ...], ...] = ()
    kinds: tuple[Kind, ...] = ()  # what each column's values are (compiler.datalog.types): `types`, a record type or an ADT

    def __post_init__(self):
        if not self.kinds:
            object.__setattr__(self, "kinds", self.types)


@dataclass(frozen=True)
class UserFunctor:
    """A `.functor` declaration with the Python callable that implements it."""

    name: str  # without the '@'
    param_types: tuple[str, ...]
    result_type: str
    function: object = field(compare=False)


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
    # The kind of every term of every rule, subsumptive rule (keys: its `as_rule()`) and fact.
    term_types: dict[Rule | Fact, dict[Term, Kind]] = field(hash=False, repr=False)
    source: Source | None = field(default=None, compare=False, repr=False)
    pragmas: tuple[Pragma, ...] = field(default=(), compare=False, repr=False)  # builder.IGNORED_PRAGMAS, HONOURED_PRAGMAS
    plans: tuple[ExecutionPlan, ...] = field(default=(), compare=False, repr=False)  # hints, ignored
    magic: tuple[str, ...] = ()  # the relations evaluated on demand (compiler.datalog.magic)
    subsumptions: tuple[Subsumption, ...] = ()  # disjunction-free; see the module
    functors: dict[str, UserFunctor] = field(default_factory=dict, hash=False, repr=False)  # by name, without '@'
    types: TypeEnv = field(default_factory=TypeEnv, compare=False, repr=False)  # the program's .type declarations


def check_datalog(text: str, source_name: str = "<string>", include_dirs=(), functors=None) -> CheckedProgram:
    """Preprocess (compiler.datalog.preprocess), parse and check Datalog source text;
    errors name the file and line the offending text came from. `functors` maps the
    names of `.functor` declarations to the Python callables implementing them."""
    text, lines = preprocess(text, source_name, include_dirs)
    if lines is None:
        return check(parse_datalog(text, source_name), functors)
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            return check(parse_datalog(text, source_name), functors)
    except CompileError as error:
        raise lines.relocate(error) from None
    finally:
        for w in caught:  # the compiler's warnings, moved back to their file and line like errors
            origin = lines.origin(w.lineno) if w.filename == source_name else None
            name, line = origin if origin is not None else (w.filename, w.lineno)
            warnings.warn_explicit(w.message, w.category, name, line)


def check(program: Program, functors=None) -> CheckedProgram:
    """Infer, check and stratify a parsed program; raise the first CompileError found.
    Inline relations are substituted first (compiler.datalog.inline); a program asking
    for magic sets is checked as written, then transformed (compiler.datalog.magic)."""
    source = program.source
    _warn_lone_variables(program)
    types = type_environment(program.types, source)
    user_functors = _user_functors(program, functors or {}, types)
    # As Soufflé orders it: nested witnesses grounded, then aggregate bodies judged, then inlining.
    program = mark_counted(ground_nested_witnesses(program))
    if any(d.inline for d in program.decls):
        # Type-check the inline relations' own clauses before they disappear into their uses.
        _typed(program, _index_decls(program.decls, source), types, user_functors)
        program = inline_relations(program)
    checked = _check(program, types, user_functors)
    transformed = magic_transform(program, checked)
    if transformed is None:
        return checked
    try:
        on_demand = _check(transformed, types, user_functors)
    except CompileError:  # e.g. a magic rule closing a cycle through a negation: not used
        return checked
    magic = tuple(sorted({name.split("@")[0] for name in on_demand.relations if "@magic@" in name}))
    return dataclasses.replace(on_demand, magic=magic)


def _warn_lone_variables(program: Program) -> None:
    """A CompileWarning for each variable that occurs once in a rule, as Soufflé warns: a
    misspelt variable (`e(x, yy), e(y, z)`) is one, and binds nothing, so the rule quietly
    becomes a cross product. `_` (or a name starting with `_`) says it is meant."""
    warned = set()
    for clause in (*program.rules, *program.subsumptions):
        seen: dict[str, list[Variable]] = {}

        def visit(node):
            if isinstance(node, Variable):
                seen.setdefault(node.name, []).append(node)
            elif isinstance(node, (list, tuple)):
                for item in node:
                    visit(item)
            elif dataclasses.is_dataclass(node) and not isinstance(node, Span):
                for f in dataclasses.fields(node):
                    visit(getattr(node, f.name))

        visit(clause)
        for name, places in seen.items():
            where = (places[0].span.line, places[0].span.column, name)
            if len(places) == 1 and not name.startswith("_") and places[0].span.line and where not in warned:
                warned.add(where)
                file = program.source.name if program.source else "<string>"
                warnings.warn_explicit(f"variable '{name}' occurs only once in its rule (write _ if that is meant)",
                                       CompileWarning, file, places[0].span.line)


def _check(program: Program, types, user_functors) -> CheckedProgram:
    source = program.source
    decls = _index_decls(program.decls, source)
    _check_defined(program, decls, source)
    inference, rules, term_types = _typed(program, decls, types, user_functors)

    for rule in rules:
        check_safety(rule, source)
    for s in program.subsumptions:
        check_safety(s.as_rule(), source)
    strata = tuple(stratify(rules, source, program.subsumptions))

    directives = {kind: _index_io(getattr(program, f"{kind}s"), inference, source) for kind in ("input", "output", "printsize")}
    written = {name: tuple(options) for name, options in directives["output"].items()}
    rule_heads = {rule.heads[0].relation for rule in rules}
    defined = rule_heads | {s.relation for s in program.subsumptions}
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
            is_input=name not in rule_heads or name in directives["input"],
            is_output=name in directives["output"],
            input_options=directives["input"].get(name, [{}])[0],
            outputs=written.get(name, ()),
            as_of=bool(decl and decl.as_of),
            eqrel=bool(decl and decl.eqrel),
            choice_domains=choice_domains(decl, source) if decl else (),
            span=shape.span,
        )
    check_kinds(program, relations, strata, source)
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
        plans=program.plans,
        subsumptions=program.subsumptions,
        functors=user_functors,
        types=types,
    )


def _typed(program: Program, decls: dict[str, Decl], types: TypeEnv, functors) -> tuple[Inference, tuple[Rule, ...], dict]:
    """Arity and kind inference over the declarations and clauses, in source order, then
    subset types; the inference, the program's rules with one head each (anonymous records
    folded) and the kinds of each clause's terms (CheckedProgram.term_types)."""
    source = program.source
    # A rule with several heads is several rules with one body: strata may differ per head.
    rules = fold_anonymous_records(tuple(Rule((head,), rule.body, span=rule.span) for rule in program.rules for head in rule.heads))
    subsumptive = tuple(s.as_rule() for s in program.subsumptions)
    inference = Inference(source, types, {name: (f.param_types, f.result_type) for name, f in functors.items()})
    for decl in decls.values():
        kinds = [None if a.type_name is None else _kind_of(a.type_name, types, a.span, source) for a in decl.attributes]
        inference.declare(decl.name, kinds, [a.span for a in decl.attributes], decl.span)
        if decl.qualifier is not None:
            check_qualifier(decl, kinds, inference, source)
        if decl.eqrel:
            check_eqrel(decl, types, inference, source)
    clauses = sorted([*program.facts, *rules, *subsumptive], key=lambda c: (c.span.line, c.span.column))
    for clause in clauses:
        if isinstance(clause, Fact):
            inference.fact(clause)
        else:
            inference.rule(clause)
    inference.settle_records()
    term_types = {clause: inference.term_types(clause) for clause in clauses}
    check_casts(clauses, term_types, source)
    check_subtypes((*rules, *subsumptive), decls, types, term_types, source)
    return inference, rules, term_types


def check_casts(clauses, term_types: dict, source: Source | None) -> None:
    """Every `as(x, T)` takes x's kind to T's as deltalog can: within one kind (subset types),
    between number, unsigned and float (the same 64 bits, as Soufflé's 64-bit build), or a
    symbol, record or ADT value to a number or unsigned (its id, as `ord`). Anything else
    would name a symbol or record by an id of deltalog's own tables: an UnsupportedError."""
    for clause in clauses:
        kinds = term_types[clause]
        for cast in _casts(clause):
            have, want = kinds.get(cast.args[0]), kinds.get(cast)
            if have is None or have == want or (have in NUMERIC and want in NUMERIC):
                continue
            if want in ("number", "unsigned") and (have == "symbol" or is_structured(have)):
                continue
            message = (f"as({describe(cast.args[0])}, {cast.type_name}) would take {show(frozenset({have}))} as "
                       f"{show(frozenset({want}))}: deltalog's as() casts within one kind (subset types), between "
                       f"number, unsigned and float (keeping the bits), and a symbol, record or ADT value to its id as a number")
            raise UnsupportedError.at(message, cast.span, source)


def _casts(clause) -> list[TypeCast]:
    """The clause's `as(x, T)` terms, aggregate bodies included (map_nodes visits every node)."""
    found: list[TypeCast] = []

    def visit(node):
        if isinstance(node, TypeCast):
            found.append(node)
        return node

    map_nodes(clause, visit)
    return found


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


def _functor_kind(functor: str, name: str, types: TypeEnv, span, source) -> Kind:
    """The kind of a `.functor`'s parameter or result type: a Python callable takes and gives
    numbers and strings, not the record table's ids."""
    kind = _kind_of(name, types, span, source)
    if is_structured(kind):
        message = f"functor '{functor}' takes or gives '{name}', a record or ADT type, whose values a Python callable cannot take or give"
        raise UnsupportedError.at(message, span, source)
    return kind


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


def _user_functors(program: Program, functors: dict, types: TypeEnv) -> dict[str, UserFunctor]:
    """The program's `.functor` declarations with their Python callables (`functors`)."""
    source = program.source
    declared = {}
    for decl in program.functors:
        if decl.name in declared:
            raise DeclarationError.at(f"functor '{decl.name}' is declared twice", decl.span, source)
        if decl.name not in functors:
            message = (f"functor '{decl.name}' has no implementation: deltalog cannot load C++ functor libraries; "
                       f"give a Python callable with compile_datalog(..., functors={{'{decl.name}': f}})")  # fmt: skip
            raise UnsupportedError.at(message, decl.span, source)
        if not callable(functors[decl.name]):
            raise TypeError(f"functors['{decl.name}'] is not callable: {functors[decl.name]!r}")
        params = tuple(_functor_kind(decl.name, p.type_name, types, p.span, source) for p in decl.params)
        result = _functor_kind(decl.name, decl.result, types, decl.span, source)
        declared[decl.name] = UserFunctor(decl.name, params, result, functors[decl.name])
    undeclared = sorted(set(functors) - set(declared))
    if undeclared:
        raise TypeError(f"functors given for {', '.join(map(repr, undeclared))}, which no '.functor' of the program declares")
    return declared


# The options of `.input` / `.output` that deltalog honours (compiler.cli, Session.load_facts):
# Soufflé's file I/O, its paths relative to -F (--facts-dir) or -D (--output-dir).
IO_OPTIONS = {
    "input": {"IO": ("file",), "filename": None, "delimiter": None, "headers": ("true", "false"), "rfc4180": ("true", "false")},
    "output": {"IO": ("file", "stdout", "json", "jsonfile"), "filename": None, "delimiter": None, "headers": ("true", "false"),
               "rfc4180": ("true", "false"), "format": ("array", "object")},
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
        if key == "delimiter" and not value:
            raise DeclarationError.at("an empty delimiter separates nothing", span, source)
    if "format" in d.options and d.options.get("IO") not in ("json", "jsonfile"):
        raise UnsupportedError.at("format= is an option of IO=json and IO=jsonfile", d.option_spans.get("format", d.span), source)
    if d.options.get("rfc4180") == "true" and len(d.options.get("delimiter", ",")) != 1:
        span = d.option_spans.get("delimiter", d.span)
        raise UnsupportedError.at("rfc4180=true takes a delimiter of one character (quoted CSV fields)", span, source)


def _index_io(directives: tuple[IODirective, ...], inference: Inference, source) -> dict[str, list[dict[str, str]]]:
    """Per relation, the options of each of its directives of one kind. A relation may be
    written several times (`.output r` and `.output r(IO=stdout)`), as in Soufflé; it is read
    from one table (several `.input`s, a union of files, are not supported)."""
    out: dict[str, list[dict[str, str]]] = {}
    for d in directives:
        _check_io_options(d, source)
        if d.relation not in inference.relations:
            message = f"'.{d.kind} {d.relation}' names a relation that is never declared or used"
            raise UnknownRelationError.at(message, d.span, source)
        if d.relation in out and d.kind == "input":
            raise UnsupportedError.at(f"relation '{d.relation}' has two .input directives: deltalog reads a relation from one table", d.span, source)
        if dict(d.options) in out.get(d.relation, []):
            raise DeclarationError.at(f"relation '{d.relation}' has this .{d.kind} directive twice", d.span, source)
        out.setdefault(d.relation, []).append(dict(d.options))
    return out

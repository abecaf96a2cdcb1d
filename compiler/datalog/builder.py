"""From lark's parse tree to the Datalog AST.

The Builder is a lark Transformer: one method per grammar rule, each turning
its already-built children into AST nodes with the rule's source span. Bodies
come out in disjunctive normal form (see compiler.datalog.dnf), and clauses
come out as Facts (no body, constant arguments) or Rules (one per alternative
of the body). Errors raised here are CompileErrors; lark wraps them in a
VisitError, which compiler.datalog.parser unwraps.
"""

from __future__ import annotations

import warnings

from lark import Token, Transformer, v_args

from compiler.datalog import dnf
from compiler.datalog.ast import (
    Aggregate,
    Atom,
    Attribute,
    BinaryOp,
    Branch,
    BranchTerm,
    ChoiceDomain,
    Comparison,
    Component,
    ComponentInit,
    ComponentType,
    Decl,
    ExecutionPlan,
    Fact,
    Float,
    Functor,
    FunctorDecl,
    IODirective,
    Nil,
    Number,
    Override,
    Pragma,
    Program,
    Qualifier,
    Record,
    Rule,
    Span,
    String,
    StringTest,
    Subsumption,
    TypeCast,
    TypeDecl,
    UnaryOp,
    Unsigned,
    Variable,
    Wildcard,
    is_ground,
)
from compiler.errors import CompileWarning, DeclarationError, ParseError, Source, UnsupportedError
from compiler.plan.regex import report_invalid_constant

# Soufflé's binding strength of binary operators (all left associative); `^` and
# the unary operators bind tighter still and are left to the grammar.
PRECEDENCE = {
    "lor": 1, "lxor": 2, "land": 3, "bor": 4, "bxor": 5, "band": 6,
    "bshl": 7, "bshr": 7, "bshru": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9,
}  # fmt: skip
_UNARY = {"op_neg": "-", "op_bnot": "bnot", "op_lnot": "lnot"}

_ESCAPES = {'"': '"', "\\": "\\", "'": "'", "n": "\n", "t": "\t", "r": "\r", "0": "\0"}

# Soufflé's data-structure and evaluation hints: they change performance, not meaning.
_IGNORED_QUALIFIERS = {"btree", "brie", "btree_delete", "magic", "no_magic"}
# Qualifiers that change meaning: a flag of the Decl each (compiler.datalog.ast.Decl);
# `no_inline` overrides `inline`, as in Soufflé.
_FLAG_QUALIFIERS = ("asof", "overridable", "eqrel", "inline", "no_inline")


# Soufflé's `.pragma` keys (its command-line options) that tune how it evaluates or
# what it reports, never the result: deltalog plans by itself and ignores them.
IGNORED_PRAGMAS = {
    "disable-transformers": "an optimisation hint (deltalog plans by itself)",
    "enable-transformers": "an optimisation hint (deltalog plans by itself)",
    "RamSIPS": "an optimisation hint (deltalog plans by itself)",
    "index-stats": "an optimisation hint (deltalog plans by itself)",
    "jobs": "a run option (deltalog's runtime sets its own parallelism)",
    "profile": "a profiling option",
    "profile-use": "a profiling option",
    "profile-frequency": "a profiling option",
    "debug-report": "a reporting option",
    "verbose": "a reporting option",
    "emit-statistics": "a reporting option",
    "legacy": "a compatibility switch of Soufflé's command line",
}


# Keys deltalog honours: compiler.datalog.magic and compiler.datalog.inline read them.
HONOURED_PRAGMAS = {
    "magic-transform": "relations evaluated on demand (magic sets)",
    "magic-transform-exclude": "relations kept out of the magic sets",
    "inline-exclude": "inline relations kept materialised",
}


def unsupported_directive_message(name: str) -> str:
    """What is said of a Soufflé directive deltalog does not support (`name` with its dot)."""
    return f"directive '{name}' is not supported"


def token_span(tok: Token) -> Span:
    return Span(tok.line, tok.column, tok.end_line, tok.end_column)


def meta_span(meta) -> Span:
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


def parse_int(text: str) -> int:
    if text[:2] in ("0x", "0X"):
        return int(text[2:], 16)
    if text[:2] in ("0b", "0B"):
        return int(text[2:], 2)
    return int(text, 10)


def unescape(quoted: str) -> str:
    """The value of a string literal; unknown escapes (e.g. `\\d` in a regex) stay as written."""
    body, out, i = quoted[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _present(children):
    """Children without the None that lark puts for an absent optional part."""
    return [c for c in children if c is not None]


@v_args(meta=True)
class Builder(Transformer):
    def __init__(self, source: Source):
        super().__init__()
        self.source = source

    def _error(self, cls, message, span):
        return cls.at(message, span, self.source)

    # ---- terms ----

    def variable(self, meta, children):
        return Variable(str(children[0]), span=meta_span(meta))

    def wildcard(self, meta, children):
        return Wildcard(span=meta_span(meta))

    def number(self, meta, children):
        return Number(self._fitting(str(children[0]), 2**63 - 1, "a number (64-bit signed)", meta), span=meta_span(meta))

    def ipv4(self, meta, children):
        text = str(children[0])
        parts = [int(p) for p in text.split(".")]
        if max(parts) > 255:
            raise self._error(ParseError, f"the address {text} has a part above 255", meta_span(meta))
        value = parts[0] << 24 | parts[1] << 16 | parts[2] << 8 | parts[3]
        return Number(value - 2**32 if value >= 2**31 else value, span=meta_span(meta))  # as Soufflé's lexer: a C int

    def unsigned(self, meta, children):
        return Unsigned(self._fitting(str(children[0])[:-1], 2**64 - 1, "an unsigned (64-bit)", meta), span=meta_span(meta))

    def _fitting(self, text: str, largest: int, what: str, meta) -> int:
        value = parse_int(text)
        if value > largest:
            raise self._error(ParseError, f"the literal {text} does not fit in {what}: at most {largest}", meta_span(meta))
        return value

    def float(self, meta, children):
        return Float(float(str(children[0])), span=meta_span(meta))

    def string(self, meta, children):
        return String(unescape(str(children[0])), span=meta_span(meta))

    def nil(self, meta, children):
        return Nil(span=meta_span(meta))

    def record(self, meta, children):
        return Record(tuple(_present(children)), span=meta_span(meta))

    def branch(self, meta, children):
        name, *args = _present(children)
        return BranchTerm(str(name), tuple(args), span=meta_span(meta))

    def binop(self, meta, children):
        return str(children[0])

    def expr(self, meta, children):
        """Precedence climbing over `operand (op operand)*`."""
        operands, ops = [children[0]], []

        def reduce():
            right, left = operands.pop(), operands.pop()
            span = Span(left.span.line, left.span.column, right.span.end_line, right.span.end_column)
            operands.append(BinaryOp(ops.pop(), left, right, span=span))

        for i in range(1, len(children), 2):
            op = children[i]
            while ops and PRECEDENCE[ops[-1]] >= PRECEDENCE[op]:
                reduce()
            ops.append(op)
            operands.append(children[i + 1])
        while ops:
            reduce()
        return operands[0]

    def op_pow(self, meta, children):
        return BinaryOp("^", children[0], children[1], span=meta_span(meta))

    def __default__(self, data, children, meta):
        op = _UNARY.get(data)
        if op is None:
            return super().__default__(data, children, meta)
        (operand,) = children
        span = meta_span(meta)
        # `-1` is a negative constant, as a reader expects, not an operation.
        if op == "-" and isinstance(operand, (Number, Float)):
            return type(operand)(-operand.value, span=span)
        return UnaryOp(op, operand, span=span)

    def user_functor(self, meta, children):
        name, *args = _present(children)
        return Functor("@" + str(name), tuple(args), span=meta_span(meta))

    def functor(self, meta, children):
        name, *args = _present(children)
        if name == "autoinc":
            # Soufflé numbers the tuples in the order its evaluation happens to derive them.
            message = "autoinc() is not supported: its values depend on the order rows are derived, which is not deterministic under updates"
            raise self._error(UnsupportedError, message, meta_span(meta))
        return Functor(str(name), tuple(args), span=meta_span(meta))

    def type_cast(self, meta, children):
        _, value, type_name = children
        return TypeCast("as", (value,), span=meta_span(meta), type_name=str(type_name))

    def aggregate(self, meta, children):
        kind, *rest = children
        target, formula = (None, rest[0]) if len(rest) == 1 else rest
        span = meta_span(meta)
        body = self._dnf(formula, span)
        if len(body) != 1:
            # count/sum over a union is not the sum over its parts; keep the user's meaning.
            message = f"a disjunction (';', or '!' over a conjunction) inside a {kind} aggregate is not supported"
            raise self._error(UnsupportedError, message, span)
        return Aggregate(str(kind), target, body[0], span=span)

    def single_atom_body(self, meta, children):
        return ("lit", children[0])

    # ---- literals and bodies (formulas, see compiler.datalog.dnf) ----

    def atom(self, meta, children):
        name, *args = _present(children)
        return Atom(str(name), tuple(args), span=meta_span(meta))

    def positive(self, meta, children):
        return ("lit", children[0])

    def boolean_constraint(self, meta, children):
        """Soufflé's `true` and `false` in a body: a comparison of constants that holds or not."""
        span = meta_span(meta)
        holds = str(children[0]) == "true"
        return ("lit", Comparison("=", Number(0, span=span), Number(0 if holds else 1, span=span), span=span))

    def cmp_op(self, meta, children):
        return str(children[0])

    def comparison(self, meta, children):
        left, op, right = children
        if op == "=":  # `_ = min x : {...}`: an aggregate wanted for its witnesses, its value unnamed
            left, right = (self._unnamed(side) if isinstance(other, Aggregate) else side for side, other in ((left, right), (right, left)))
        return ("lit", Comparison(op, left, right, span=meta_span(meta)))

    @staticmethod
    def _unnamed(term):
        """A wildcard standing for a value, as a variable nothing else can name."""
        if not isinstance(term, Wildcard):
            return term
        return Variable(f"<_ {term.span.line}:{term.span.column}>", span=term.span)

    def string_test(self, meta, children):
        name, needle, haystack = children
        if str(name) == "match" and isinstance(needle, String) and report_invalid_constant(needle.value):
            message = f"match(): the pattern {needle.value!r} is no regular expression (C++ std::regex, ECMAScript): it matches nothing, as in Soufflé"
            self._warn(message, needle.span.line)
        return ("lit", StringTest(str(name), (needle, haystack), span=meta_span(meta)))

    def negated(self, meta, children):
        (inner,) = [c for c in children if not isinstance(c, Token)]
        return ("not", inner, meta_span(meta))

    def conjunction(self, meta, children):
        return children[0] if len(children) == 1 else ("and", children)

    def disjunction(self, meta, children):
        return children[0] if len(children) == 1 else ("or", children)

    def _dnf(self, formula, span):
        try:
            return dnf.to_dnf(formula)
        except dnf.TooManyAlternatives:
            msg = f"body expands to more than {dnf.MAX_ALTERNATIVES} alternatives; split the rule"
            raise self._error(UnsupportedError, msg, span) from None

    # ---- clauses ----

    def heads(self, meta, children):
        return tuple(children)

    def subsumption(self, meta, children):
        dominated, dominating, body = children
        span = meta_span(meta)
        return [Subsumption(dominated, dominating, alternative, span=span) for alternative in self._dnf(body, span)]

    def clause(self, meta, children):
        heads = children[0]
        span = meta_span(meta)
        if len(children) == 2:
            return [Rule(heads, alternative, span=span) for alternative in self._dnf(children[1], span)]
        out = []
        for head in heads:
            if all(is_ground(a) for a in head.args):
                out.append(Fact(head.relation, head.args, span=head.span))
            else:  # not a fact: checks will say which variable is ungrounded
                out.append(Rule((head,), (), span=span))
        return out

    # ---- declarations and directives ----

    def attribute(self, meta, children):
        name, type_name = children
        return Attribute(str(name), None if type_name is None else str(type_name), span=meta_span(meta))

    def choice_domain(self, meta, children):
        return ChoiceDomain(tuple(map(str, children)), span=meta_span(meta))

    def decl_qualifier(self, meta, children):
        span = meta_span(meta)
        if isinstance(children[0], Token) and children[0].type == "CHOICE_DOMAIN":
            return tuple(children[1:])
        if len(children) == 2:
            return Qualifier(str(children[0]), str(children[1]), span=span)
        name = str(children[0])
        if name in _IGNORED_QUALIFIERS:
            return None
        assert name in _FLAG_QUALIFIERS, name
        return name

    def decl(self, meta, children):
        """The Decls of one `.decl` (several when it names several relations)."""
        _, *rest = _present(children)
        names = [c for c in rest if isinstance(c, Token)]
        attributes = tuple(c for c in rest if isinstance(c, Attribute))
        qualifiers = [c for c in rest if isinstance(c, Qualifier)]
        if len(qualifiers) > 1:
            raise self._error(DeclarationError, f"relation '{names[0]}' has more than one min/max qualifier", qualifiers[1].span)
        given = {c for c in rest if type(c) is str}  # flag qualifiers (names are Tokens)
        flags = {name: name in given for name in _FLAG_QUALIFIERS}
        flags["as_of"] = flags.pop("asof")
        if flags.pop("no_inline"):
            flags["inline"] = False
        domains = tuple(d for c in rest if isinstance(c, tuple) for d in c)
        qualifier = qualifiers[0] if qualifiers else None
        span = meta_span(meta)
        return [Decl(str(name), attributes, qualifier, span=span, choice_domains=domains, **flags) for name in names]

    def functor_decl(self, meta, children):
        _, name, *rest = _present(children)
        stateful = bool(rest) and isinstance(rest[-1], Token) and rest[-1].type == "STATEFUL"
        if stateful:
            rest = rest[:-1]
        *params, result = rest
        # `.functor f(number, symbol): number`: an unnamed parameter is just its type.
        params = tuple(p if p.type_name is not None else Attribute("", p.name, span=p.span) for p in params)
        return FunctorDecl(str(name), params, str(result), stateful, span=meta_span(meta))

    def type_equal(self, meta, children):
        _, name, *bases = children
        return TypeDecl(str(name), "equal", tuple(map(str, bases)), span=meta_span(meta))

    def type_subtype(self, meta, children):
        _, name, base = children
        return TypeDecl(str(name), "subtype", (str(base),), span=meta_span(meta))

    def type_record(self, meta, children):
        _, name, *fields = _present(children)
        return TypeDecl(str(name), "record", span=meta_span(meta), fields=self._fields(fields, f"record type '{name}'"))

    def adt_branch(self, meta, children):
        name, *fields = _present(children)
        return Branch(str(name), self._fields(fields, f"branch '{name}'"), span=meta_span(meta))

    def type_adt(self, meta, children):
        _, name, *branches = children
        return TypeDecl(str(name), "adt", span=meta_span(meta), branches=tuple(branches))

    def _fields(self, fields, owner: str) -> tuple[Attribute, ...]:
        """The fields of a record type or an ADT branch: each with a type, each name once."""
        names = set()
        for field_ in fields:
            if field_.type_name is None:
                raise self._error(DeclarationError, f"field '{field_.name}' of {owner} needs a type ('{field_.name}: number')", field_.span)
            if field_.name in names:
                raise self._error(DeclarationError, f"{owner} has two fields named '{field_.name}'", field_.span)
            names.add(field_.name)
        return tuple(fields)

    def type_number(self, meta, children):
        return TypeDecl(str(children[1]), "subtype", ("number",), span=meta_span(meta))

    def type_symbol(self, meta, children):
        return TypeDecl(str(children[1]), "subtype", ("symbol",), span=meta_span(meta))

    def io_option(self, meta, children):
        key, value = children
        text = unescape(str(value)) if value.type == "STRING" else str(value)
        return str(key), text, meta_span(meta)

    def io_target(self, meta, children):
        name, *options = _present(children)
        table, spans = {}, {}
        for key, value, span in options:
            if key in table:
                raise self._error(DeclarationError, f"option '{key}' given twice", span)
            table[key], spans[key] = value, span
        return str(name), table, spans, meta_span(meta)

    def io_directive(self, meta, children):
        kind_token, *targets = children
        kind = str(kind_token)[1:]
        return [IODirective(kind, name, options, span=span, option_spans=spans) for name, options, spans, span in targets]

    def pragma(self, meta, children):
        _, key, value = children
        pragma = Pragma(unescape(str(key)), None if value is None else unescape(str(value)), span=meta_span(meta))
        if pragma.key not in IGNORED_PRAGMAS and pragma.key not in HONOURED_PRAGMAS:
            self._warn(f"unknown .pragma key '{pragma.key}' (ignored)", meta.line)
        return pragma

    def _warn(self, message: str, line: int) -> None:
        """A CompileWarning at the program's file and line, as a compiler warns (moved to the
        original file and line after the preprocessor by check_datalog)."""
        warnings.warn_explicit(message, CompileWarning, self.source.name if self.source else "<string>", line)

    def plan_hint(self, meta, children):
        _, *orders = children
        return ExecutionPlan(tuple(orders), span=meta_span(meta))

    def plan_order(self, meta, children):
        version, *atoms = _present(children)
        return int(version), tuple(int(a) for a in atoms)

    def unsupported_directive(self, meta, children):
        token = children[0]
        raise self._error(UnsupportedError, unsupported_directive_message(str(token).split()[0]), token_span(token))

    # ---- components ----

    def component_type(self, meta, children):
        name, *args = _present(children)
        return ComponentType(str(name), tuple(map(str, args)), span=meta_span(meta))

    def component_init(self, meta, children):
        _, instance, component = children
        return ComponentInit(str(instance), component, span=meta_span(meta))

    def override(self, meta, children):
        return Override(str(children[1]), span=meta_span(meta))

    def component(self, meta, children):
        _, head, *rest = _present(children)
        bases = tuple(c for c in rest if isinstance(c, ComponentType))
        members = [c for c in rest if not isinstance(c, ComponentType)]
        overrides = tuple(c for c in members if isinstance(c, Override))
        body = self._program([c for c in members if not isinstance(c, Override)])
        return Component(head, bases, overrides, body, span=meta_span(meta))

    def start(self, meta, children):
        for node in children:
            if isinstance(node, Override):
                message = "'.override' belongs in a component ('.comp'), where it overrides an inherited relation"
                raise self._error(ParseError, message, node.span)
        return self._program(children)

    def _program(self, statements) -> Program:
        """The statements of a program, or of a component's body, sorted by kind."""
        kinds = (Decl, TypeDecl, "input", "output", "printsize", Fact, Rule, Subsumption, Pragma, ExecutionPlan, Component, ComponentInit,
                 FunctorDecl)
        parts = {kind: [] for kind in kinds}
        for item in statements:
            for node in item if isinstance(item, list) else [item]:
                key = node.kind if isinstance(node, IODirective) else type(node)
                parts[key].append(node)
        return Program(
            decls=tuple(parts[Decl]),
            types=tuple(parts[TypeDecl]),
            inputs=tuple(parts["input"]),
            outputs=tuple(parts["output"]),
            facts=tuple(parts[Fact]),
            rules=tuple(parts[Rule]),
            printsizes=tuple(parts["printsize"]),
            source=self.source,
            pragmas=tuple(parts[Pragma]),
            plans=tuple(parts[ExecutionPlan]),
            components=tuple(parts[Component]),
            instances=tuple(parts[ComponentInit]),
            subsumptions=tuple(parts[Subsumption]),
            functors=tuple(parts[FunctorDecl]),
        )

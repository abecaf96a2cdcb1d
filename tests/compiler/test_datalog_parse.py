"""Parsing Datalog: every construct of the grammar, spans, and DNF normalisation."""

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from compiler import compile_datalog
from compiler.datalog import parse_datalog
from compiler.errors import CompileWarning, ParseError
from compiler.datalog.ast import (
    Aggregate,
    Atom,
    Attribute,
    BinaryOp,
    Comparison,
    Decl,
    Fact,
    Float,
    Functor,
    IODirective,
    Negation,
    Number,
    Qualifier,
    Rule,
    Span,
    String,
    StringTest,
    TypeDecl,
    UnaryOp,
    Unsigned,
    Variable,
    Wildcard,
    strip_spans,
)
from compiler.errors import CompileError, UnsupportedError

V = Variable


def body_of(text):
    """The body of the single rule `h(0) :- text.`."""
    (rule,) = parse_datalog(f"h(0) :- {text}.").rules
    return strip_spans(rule.body)


def term_of(text):
    """The right side of `x = text`."""
    (comparison,) = body_of(f"x = {text}")
    return comparison.right


# ---- declarations and directives ---------------------------------------------


def test_decl_with_every_base_type_and_an_untyped_attribute():
    (decl,) = parse_datalog(".decl r(a: number, b: unsigned, c: float, d: symbol, e)").decls
    assert strip_spans(decl) == Decl(
        "r",
        (
            Attribute("a", "number"),
            Attribute("b", "unsigned"),
            Attribute("c", "float"),
            Attribute("d", "symbol"),
            Attribute("e", None),
        ),
        None,
    )
    assert decl.span == Span(1, 1, 1, 56)
    assert decl.attributes[1].span == Span(1, 20, 1, 31)


def test_decl_of_several_relations_declares_each_alike():
    program = parse_datalog(".decl a, b ,c(x: number, y: symbol) btree\n.decl d(z: float)")
    assert [d.name for d in program.decls] == ["a", "b", "c", "d"]
    attributes = (Attribute("x", "number"), Attribute("y", "symbol"))
    assert all(strip_spans(d) == Decl(d.name, attributes, None) for d in program.decls[:3])
    assert program.decls[1].span == Span(1, 1, 1, 42)


def test_pragma_hints_are_kept_and_an_unknown_key_only_warns(recwarn):
    program = parse_datalog('.pragma "magic-transform" "*"\n.pragma "profile" "p.log"\ne(1).', "p.dl")
    assert [(p.key, p.value) for p in program.pragmas] == [("magic-transform", "*"), ("profile", "p.log")]
    assert len(recwarn) == 0
    with pytest.warns(CompileWarning, match=r"unknown \.pragma key 'shiny' \(ignored\)") as caught:
        program = parse_datalog('e(1).\n.pragma "shiny"', "p.dl")
    assert (caught[0].filename, caught[0].lineno) == ("p.dl", 2)
    assert [(p.key, p.value) for p in program.pragmas] == [("shiny", None)]


def test_explain_reports_each_pragma_as_ignored_or_applied():
    text = '.pragma "RamSIPS" "x"\n.pragma "magic-transform" "*"\ne(1).\nt(x) :- e(x).\n.output t'
    first, second = compile_datalog(text).explain().splitlines()[:2]
    assert first == 'ignored: .pragma "RamSIPS" "x": an optimisation hint (deltalog plans by itself)'
    assert second == 'applied: .pragma "magic-transform" "*": no relation evaluated on demand (magic sets)'


def test_a_rules_execution_plan_is_kept_as_a_hint_and_explain_says_it_is_ignored():
    text = "e(1, 2).\nt(x, y) :- e(x, y).\nt(x, z) :- t(x, y), e(y, z).\n  .plan 1: (2,1), 2:(1,2)\n.output t"
    program = parse_datalog(text)
    assert [(p.orders, p.span.line) for p in program.plans] == [(((1, (2, 1)), (2, (1, 2))), 4)]
    compiled = compile_datalog(text)
    assert compiled.explain().splitlines()[0] == (
        "ignored: .plan 1:(2,1), 2:(1,2) (line 4): a join order for the rule before it (deltalog plans by itself)")
    session = compiled.session()
    session.commit()
    assert session.read("t") == [(1, 2)]


def test_an_execution_plan_without_versions_is_a_parse_error_at_its_parenthesis():
    with pytest.raises(CompileError) as info:
        parse_datalog("t(x) :- e(x).\n.plan (1,2), 2: (2,1)")
    assert (info.value.line, info.value.column, info.value.message) == (2, 7, "expected a number but found '('")


def test_decl_qualifiers_min_max_and_ignored_souffle_hints():
    program = parse_datalog(
        ".decl dist(node: number, d: number) min(d)\n"
        ".decl best(k: symbol, v: float) btree max(v)\n"
        ".decl zero() brie\n"
    )
    dist, best, zero = program.decls
    assert dist.qualifier == Qualifier("min", "d", span=Span(1, 37, 1, 43))
    assert strip_spans(best.qualifier) == Qualifier("max", "v")
    assert zero.attributes == () and zero.qualifier is None


def test_type_declarations():
    program = parse_datalog(
        ".type Id = number\n.type Name <: symbol\n.type Key = Id | Other\n.number_type N\n.symbol_type S\n"
    )
    assert strip_spans(program.types) == (
        TypeDecl("Id", "equal", ("number",)),
        TypeDecl("Name", "subtype", ("symbol",)),
        TypeDecl("Key", "equal", ("Id", "Other")),
        TypeDecl("N", "subtype", ("number",)),
        TypeDecl("S", "subtype", ("symbol",)),
    )


def test_io_directives_keep_options_as_strings():
    program = parse_datalog(
        '.input edge(IO=file, filename="edge.csv", delimiter="\\t", headers=true, skip=2)\n'
        ".output path, reach(IO=stdout), other()\n"
    )
    (edge,) = program.inputs
    assert edge == IODirective(
        "input",
        "edge",
        {"IO": "file", "filename": "edge.csv", "delimiter": "\t", "headers": "true", "skip": "2"},
        span=Span(1, 8, 1, 80),
    )
    assert [(d.kind, d.relation, d.options) for d in program.outputs] == [
        ("output", "path", {}),
        ("output", "reach", {"IO": "stdout"}),
        ("output", "other", {}),
    ]


# ---- facts and constants -----------------------------------------------------------


@pytest.mark.parametrize(
    "text, constant",
    [
        ("42", Number(42)),
        ("-7", Number(-7)),
        ("0x1F", Number(31)),
        ("0b101", Number(5)),
        ("5u", Unsigned(5)),
        ("0xffu", Unsigned(255)),
        ("1.5", Float(1.5)),
        ("-2.25", Float(-2.25)),
        ("6.02e23", Float(6.02e23)),
        ("10.0.0.1", Number(10 << 24 | 1)),  # an IPv4 address, as Soufflé's lexer reads it: a C int
        ("255.255.255.255", Number(-1)),
        ('"plain"', String("plain")),
        ('""', String("")),
        (r'"q\"b\\s\n\t"', String('q"b\\s\n\t')),
        (r'"a\.b\d"', String(r"a\.b\d")),  # unknown escapes stay, for regexes
        ('"ünï"', String("ünï")),
    ],
)
def test_fact_constants(text, constant):
    (fact,) = parse_datalog(f"r({text}).").facts
    assert strip_spans(fact) == Fact("r", (constant,))


def test_an_ipv4_address_ends_a_clause_and_a_part_above_255_is_an_error():
    (rule,) = parse_datalog("b(x) :- a(x), x = 1.2.3.4.").rules
    assert strip_spans(rule.body[1].right) == Number(16909060)
    with pytest.raises(ParseError) as info:
        parse_datalog("a(1.2.3.256).")
    assert (info.value.line, info.value.column) == (1, 3) and "1.2.3.256 has a part above 255" in info.value.message


def test_annotations_are_read_as_comments_wherever_souffle_allows_them():
    annotated = """
    @[doc = "edges ] of [ a graph", form = []]
    .decl e(@[key] a: number, b: number)
    .type T = @[xbranch(One)] One {} | Two {x: number}
    @[inline]
    .decl r(a: number, b: number)
    @[rule(1)] r(a, b) :- e(a, b).
    """
    plain = ".decl e(a: number, b: number)\n.type T = One {} | Two {x: number}\n.decl r(a: number, b: number)\nr(a, b) :- e(a, b)."
    assert strip_spans(parse_datalog(annotated)) == strip_spans(parse_datalog(plain))


def test_facts_with_spans_and_comments():
    text = "// edges\nedge(1, 2). /* two\nlines */ edge(2, 3).\nflag().\n"
    program = parse_datalog(text)
    assert [strip_spans(f) for f in program.facts] == [
        Fact("edge", (Number(1), Number(2))),
        Fact("edge", (Number(2), Number(3))),
        Fact("flag", ()),
    ]
    assert program.facts[1].span == Span(3, 10, 3, 20)
    assert program.facts[1].args[1].span == Span(3, 18, 3, 19)
    assert program.rules == ()


def test_bodyless_clause_with_a_variable_is_a_rule_not_a_fact():
    program = parse_datalog("a(1), b(x).")
    assert strip_spans(program.facts) == (Fact("a", (Number(1),)),)
    assert strip_spans(program.rules) == (Rule((Atom("b", (V("x"),)),), ()),)


# ---- rules ----------------------------------------------------------------------


def test_rule_with_several_heads_and_spans():
    (rule,) = parse_datalog("\n  a(x), b(x, ?y) :-\n    c(x, ?y), _z = 1.").rules
    assert strip_spans(rule) == Rule(
        (Atom("a", (V("x"),)), Atom("b", (V("x"), V("?y")))),
        (Atom("c", (V("x"), V("?y"))), Comparison("=", V("_z"), Number(1))),
    )
    assert rule.span == Span(2, 3, 3, 22)
    assert rule.heads[1].span == Span(2, 9, 2, 17)
    assert rule.body[0].args[1].span == Span(3, 10, 3, 12)


def test_negation_with_bang_and_not_and_wildcards():
    body = body_of("e(x, _), !e(_, x), not f(x)")
    assert body == (
        Atom("e", (V("x"), Wildcard())),
        Negation(Atom("e", (Wildcard(), V("x")))),
        Negation(Atom("f", (V("x"),))),
    )
    (rule,) = parse_datalog("h(x) :- e(x), not  f(x).").rules
    assert rule.body[1].span == Span(1, 15, 1, 24)  # from `not` to `)`
    assert rule.body[1].atom.span == Span(1, 20, 1, 24)


@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">="])
def test_comparisons(op):
    assert body_of(f"x {op} y") == (Comparison(op, V("x"), V("y")),)


def test_string_tests():
    assert body_of('contains("ab", s), !match("a.*", s)') == (
        StringTest("contains", (String("ab"), V("s"))),
        StringTest("match", (String("a.*"), V("s")), negated=True),
    )


# ---- expressions -----------------------------------------------------------------


def B(op, left, right):
    return BinaryOp(op, left, right)


@pytest.mark.parametrize(
    "text, tree",
    [
        ("1 + 2 * 3", B("+", Number(1), B("*", Number(2), Number(3)))),
        ("1 - 2 - 3", B("-", B("-", Number(1), Number(2)), Number(3))),
        ("8 / 4 % 3", B("%", B("/", Number(8), Number(4)), Number(3))),
        ("a - b + c", B("+", B("-", V("a"), V("b")), V("c"))),
        ("a % b * c", B("*", B("%", V("a"), V("b")), V("c"))),
        ("a bshr b bshl c", B("bshl", B("bshr", V("a"), V("b")), V("c"))),
        ("(1 + 2) * 3", B("*", B("+", Number(1), Number(2)), Number(3))),
        ("2 ^ 3 ^ 2", B("^", Number(2), B("^", Number(3), Number(2)))),
        ("-2 ^ 2", UnaryOp("-", B("^", Number(2), Number(2)))),
        ("-a * b", B("*", UnaryOp("-", V("a")), V("b"))),
        ("2 ^ -a", B("^", Number(2), UnaryOp("-", V("a")))),
        ("a - -1", B("-", V("a"), Number(-1))),
        ("1 bor 2 band 3", B("bor", Number(1), B("band", Number(2), Number(3)))),
        ("1 bxor 2 bor 3", B("bor", B("bxor", Number(1), Number(2)), Number(3))),
        ("1 band 2 bxor 3", B("bxor", B("band", Number(1), Number(2)), Number(3))),
        ("1 bshl 2 + 3", B("bshl", Number(1), B("+", Number(2), Number(3)))),
        ("1 band 2 bshr 3", B("band", Number(1), B("bshr", Number(2), Number(3)))),
        ("a lor b land c", B("lor", V("a"), B("land", V("b"), V("c")))),
        ("a lxor b lor c", B("lor", B("lxor", V("a"), V("b")), V("c"))),
        ("bnot a bshru lnot b", B("bshru", UnaryOp("bnot", V("a")), UnaryOp("lnot", V("b")))),
    ],
)
def test_operator_precedence(text, tree):
    assert term_of(text) == tree


@pytest.mark.parametrize(
    "text, functor",
    [
        ('cat(a, "-", b)', Functor("cat", (V("a"), String("-"), V("b")))),
        ("strlen(s)", Functor("strlen", (V("s"),))),
        ("substr(s, 0, n + 1)", Functor("substr", (V("s"), Number(0), B("+", V("n"), Number(1))))),
        ('to_number("12")', Functor("to_number", (String("12"),))),
        ("to_string(n)", Functor("to_string", (V("n"),))),
        ("min(a, b, c)", Functor("min", (V("a"), V("b"), V("c")))),
        ("max((a), b)", Functor("max", (V("a"), V("b")))),
    ],
)
def test_functors(text, functor):
    assert term_of(text) == functor


def test_aggregates():
    e = Atom("edge", (V("x"), Wildcard()))
    assert term_of("count : { edge(x, _) }") == Aggregate("count", None, (e,))
    assert term_of("count : edge(x, _)") == Aggregate("count", None, (e,))
    w = Atom("w", (V("x"), V("v")))
    for kind in ("sum", "min", "max", "mean"):
        assert term_of(f"{kind} v : {{ w(x, v), v > 0 }}") == Aggregate(
            kind, V("v"), (w, Comparison(">", V("v"), Number(0)))
        )
    assert term_of("min (v) : w(x, v)") == Aggregate("min", V("v"), (w,))
    assert term_of("sum v * 2 : w(x, v)") == Aggregate("sum", B("*", V("v"), Number(2)), (w,))
    assert term_of("1 + count : w(x, _)") == B("+", Number(1), Aggregate("count", None, (Atom("w", (V("x"), Wildcard())),)))


def test_aggregate_body_negation_is_normalised_inside():
    # `!(b, y > 2)` is `!b ; y <= 2`: two alternatives, which an aggregate cannot hold.
    with pytest.raises(UnsupportedError, match="disjunction"):
        term_of("count : { a(y), !(b(y), y > 2) }")
    assert term_of("count : { a(y), !(b(y) ; y > 2) }") == Aggregate(
        "count", None, (Atom("a", (V("y"),)), Negation(Atom("b", (V("y"),))), Comparison("<=", V("y"), Number(2)))
    )


# ---- disjunctive normal form ----------------------------------------------------


def test_disjunctions_multiply_out_in_order_and_keep_the_rule_span():
    text = "h(x) :- b(x), (c(x) ; d(x)), (e(x) ; f(x))."
    rules = parse_datalog(text).rules
    assert [[lit.relation for lit in r.body] for r in rules] == [
        ["b", "c", "e"],
        ["b", "c", "f"],
        ["b", "d", "e"],
        ["b", "d", "f"],
    ]
    assert {r.span for r in rules} == {Span(1, 1, 1, len(text) + 1)}


def test_top_level_semicolon_binds_looser_than_comma():
    rules = parse_datalog("h(x) :- a(x), b(x) ; c(x).").rules
    assert [[lit.relation for lit in r.body] for r in rules] == [["a", "b"], ["c"]]


def test_de_morgan_and_flipped_comparisons():
    (rule,) = parse_datalog("h(x) :- a(x), !(b(x) ; x < 3 ; !c(x)).").rules
    assert strip_spans(rule.body) == (
        Atom("a", (V("x"),)),
        Negation(Atom("b", (V("x"),))),
        Comparison(">=", V("x"), Number(3)),
        Atom("c", (V("x"),)),
    )
    alternatives = parse_datalog("h(x) :- a(x), !(b(x), x != 3).").rules
    assert [strip_spans(r.body[1]) for r in alternatives] == [
        Negation(Atom("b", (V("x"),))),
        Comparison("=", V("x"), Number(3)),
    ]


def test_negation_is_pushed_down_before_multiplying_out():
    rules = parse_datalog("h() :- !(p(), (q(); r(); s()), (t(); u())).").rules
    assert [[str(lit.atom.relation) if isinstance(lit, Negation) else lit.relation for lit in r.body] for r in rules] == [
        ["p"],
        ["q", "r", "s"],
        ["t", "u"],
    ]
    assert all(isinstance(lit, Negation) for r in rules for lit in r.body)


def test_bodies_expanding_past_the_cap_are_unsupported():
    text = "h() :- " + ", ".join(["(a(); b())"] * 13) + "."  # 2^13 alternatives
    with pytest.raises(UnsupportedError, match="more than 4096 alternatives") as info:
        parse_datalog(text)
    assert (info.value.line, info.value.column) == (1, 1)


# A random propositional body over 0-ary atoms and constant comparisons. The DNF
# rules the parser makes must be true for exactly the same assignments.
_atoms = st.sampled_from(["p", "q", "r"])
_comparisons = st.tuples(st.integers(0, 2), st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), st.integers(0, 2))
_formula = st.recursive(
    st.one_of(_atoms.map(lambda a: ("atom", a)), _comparisons.map(lambda c: ("cmp",) + c)),
    lambda inner: st.one_of(
        st.tuples(st.just("not"), inner),
        st.tuples(st.sampled_from(["and", "or"]), st.lists(inner, min_size=2, max_size=3)),
    ),
    max_leaves=7,
)


def _render(f):
    if f[0] == "atom":
        return f"{f[1]}()"
    if f[0] == "cmp":
        return f"{f[1]} {f[2]} {f[3]}"
    if f[0] == "not":
        return f"!({_render(f[1])})" if f[1][0] in ("and", "or") else f"!{_render(f[1])}"
    joiner = ", " if f[0] == "and" else "; "
    return "(" + joiner.join(_render(g) for g in f[1]) + ")"


_CMP = {"=": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__}


def _truth(f, world):
    if f[0] == "atom":
        return world[f[1]]
    if f[0] == "cmp":
        return _CMP[f[2]](f[1], f[3])
    if f[0] == "not":
        return not _truth(f[1], world)
    parts = [_truth(g, world) for g in f[1]]
    return all(parts) if f[0] == "and" else any(parts)


def _literal_truth(lit, world):
    if isinstance(lit, Atom):
        return world[lit.relation]
    if isinstance(lit, Negation):
        return not world[lit.atom.relation]
    return _CMP[lit.op](lit.left.value, lit.right.value)


@settings(max_examples=200, deadline=None)
@given(_formula)
def test_dnf_is_equivalent_to_the_source_body(formula):
    rules = parse_datalog(f"h() :- {_render(formula)}.").rules
    assert all(len(r.body) > 0 for r in rules)
    for values in itertools.product([False, True], repeat=3):
        world = dict(zip("pqr", values))
        dnf = any(all(_literal_truth(lit, world) for lit in r.body) for r in rules)
        assert dnf == _truth(formula, world)


# ---- round trips through random expressions ------------------------------------------

# Soufflé's binding strengths, written out here (not imported) so the test checks the parser.
PRECEDENCE = {
    "lor": 1, "lxor": 2, "land": 3, "bor": 4, "bxor": 5, "band": 6,
    "bshl": 7, "bshr": 7, "bshru": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9,
}  # fmt: skip

_leaf = st.one_of(
    st.sampled_from(["x", "y", "?z", "_w"]).map(Variable),
    st.integers(-(2**40), 2**40).map(Number),
    st.integers(0, 2**40).map(Unsigned),
    st.integers(0, 10**6).map(lambda n: Float(n / 100)),
    st.text(max_size=5).map(String),
)


def _expressions(children):
    binary = st.tuples(st.sampled_from([*PRECEDENCE, "^"]), children, children).map(lambda t: BinaryOp(*t))
    unary = st.tuples(st.sampled_from(["-", "bnot", "lnot"]), children).map(lambda t: UnaryOp(*t))
    # `-` of a literal is parsed as a negative literal, so it is not an operation to generate.
    unary = unary.filter(lambda u: not (u.op == "-" and isinstance(u.operand, (Number, Float))))
    functor = st.one_of(
        st.tuples(st.sampled_from(["strlen", "to_number", "to_string"]), st.tuples(children)),
        st.tuples(st.just("substr"), st.tuples(children, children, children)),
        st.tuples(st.sampled_from(["cat", "min", "max"]), st.lists(children, min_size=2, max_size=3).map(tuple)),
    ).map(lambda t: Functor(*t))
    # Mostly binary operators: nested ones are what tell precedences apart.
    return st.one_of(binary, binary, binary, binary, unary, functor)


_expression = st.recursive(_leaf, _expressions, max_leaves=16)


def _strength(t):
    if isinstance(t, BinaryOp):
        return 11 if t.op == "^" else PRECEDENCE[t.op]
    if isinstance(t, UnaryOp) or (isinstance(t, (Number, Float)) and t.value < 0):
        return 10
    return 12


def _show(t, at_least=0):
    """Source text for a term with the fewest parentheses the precedence rules need."""
    if isinstance(t, Variable):
        text = t.name
    elif isinstance(t, (Number, Float)):
        text = repr(t.value)
    elif isinstance(t, Unsigned):
        text = f"{t.value}u"
    elif isinstance(t, String):
        text = '"' + t.value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'
    elif isinstance(t, Functor):
        text = f"{t.name}(" + ", ".join(_show(a) for a in t.args) + ")"
    elif isinstance(t, UnaryOp):
        text = f"{t.op} {_show(t.operand, 10)}"
    elif t.op == "^":
        text = f"{_show(t.left, 12)} ^ {_show(t.right, 10)}"
    else:
        p = PRECEDENCE[t.op]
        text = f"{_show(t.left, p)} {t.op} {_show(t.right, p + 1)}"
    return f"({text})" if _strength(t) < at_least else text


# Python's grammar gives | ^ & << >> + - * % exactly Soufflé's relative binding
# strength (bor bxor band bshl bshr + - * %), so Python can judge the parser.
_PYTHON_OPS = {"+": "+", "-": "-", "*": "*", "%": "%", "bor": "|", "bxor": "^", "band": "&", "bshl": "<<", "bshr": ">>"}
_APPLY = {
    "+": int.__add__, "-": int.__sub__, "*": int.__mul__, "%": int.__mod__,
    "bor": int.__or__, "bxor": int.__xor__, "band": int.__and__, "bshl": int.__lshift__, "bshr": int.__rshift__,
}  # fmt: skip


def _evaluate(t):
    if isinstance(t, Number):
        return t.value
    return _APPLY[t.op](_evaluate(t.left), _evaluate(t.right))


@settings(max_examples=300, deadline=None)
@given(st.integers(-6, 6), st.lists(st.tuples(st.sampled_from(list(_PYTHON_OPS)), st.integers(-6, 6)), max_size=7))
def test_binary_operator_precedence_agrees_with_python(first, rest):
    souffle = str(first) + "".join(f" {op} {n}" for op, n in rest)
    python = str(first) + "".join(f" {_PYTHON_OPS[op]} {n}" for op, n in rest)
    try:
        expected = eval(python)  # noqa: S307 - integers and operators only
    except (ZeroDivisionError, ValueError):  # x % 0, negative shift counts
        assume(False)
    assert _evaluate(term_of(souffle)) == expected


@settings(max_examples=300, deadline=None)
@given(_expression)
def test_expressions_round_trip_with_minimal_parentheses(tree):
    assert term_of(_show(tree)) == tree


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(
    ["a", "(", ")", ",", ".", ":-", ";", "!", "not", "x", "_", "1", '"s"', "=", "<", "+", "count", ":", "{", "}",
     "min", "sum", ".decl", ".output", ".input", "number", "/*", "*/", "//", "\n", "cat", "^", "-", "1.5", "2u", "\\"]
), max_size=25))
def test_arbitrary_token_soup_either_parses_or_raises_a_compile_error(tokens):
    text = " ".join(tokens)
    try:
        parse_datalog(text)
    except CompileError as err:
        assert err.line is not None and err.line >= 1 and err.column >= 1

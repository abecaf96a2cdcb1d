"""Compile errors of the Datalog front end: class, line, column and message of each."""

import pickle

import pytest

import compiler
from compiler import check_datalog, parse_datalog
from compiler.errors import (
    ArityError,
    CompileError,
    ComponentError,
    DeclarationError,
    InlineError,
    NameClashError,
    OverrideError,
    ParseError,
    StratificationError,
    SubsumptionError,
    TypeArgumentError,
    TypeMismatchError,
    UnknownComponentError,
    UnknownFunctorError,
    UnknownRelationError,
    UnsafeVariableError,
    UnsupportedError,
)


def error_of(text, source_name="<string>"):
    with pytest.raises(CompileError) as info:
        check_datalog(text, source_name)
    return info.value


def test_str_is_file_line_column_class_message_source_line_and_caret():
    err = error_of("edge(1, 2).\npath(x, y) :- edge(x y).\n", "graph.dl")
    assert (err.source_name, err.line, err.column) == ("graph.dl", 2, 22)
    assert err.source_line == "path(x, y) :- edge(x y)."
    assert str(err) == (
        "graph.dl:2:22: ParseError: expected one of ')' ',' or an operator but found identifier 'y'\n"
        "  path(x, y) :- edge(x y).\n"
        "                       ^"
    )


def test_caret_keeps_tabs_so_it_lines_up():
    err = error_of("\tp(x) :- q(x),\t!r(y), !s(y).\n.input q, r, s")
    assert str(err).splitlines()[-1] == "  \t" + " " * 13 + "\t" + "   ^"
    assert (err.line, err.column) == (1, 19)


def test_every_error_class_is_a_compile_error_exported_by_the_package():
    for cls in (ParseError, ArityError, UnsafeVariableError, TypeMismatchError, StratificationError,
                UnknownRelationError, DeclarationError, UnsupportedError, ComponentError, UnknownComponentError,
                TypeArgumentError, OverrideError, NameClashError, InlineError, SubsumptionError, UnknownFunctorError):  # fmt: skip
        assert issubclass(cls, CompileError)
        assert getattr(compiler, cls.__name__) is cls


def test_errors_survive_pickling_with_their_position():
    err = error_of("a(x) :- b(x).\na(x, y) :- b(x), b(y).\n.input b")
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is ArityError and str(copy) == str(err)


# ---- parse errors ---------------------------------------------------------------

PARSE_ERRORS = [
    # LALR reduces `x` before it sees the `:-`, so operators are no longer on offer there.
    ("a(x :- b(x).", 1, 5, "expected one of ')' ',' but found ':-'"),
    ("a(x) :- b(x)", 1, 13, "expected one of ',' '.' ';' but found end of input"),
    ("a(x) :- b(x)\nc(x) :- d(x).", 2, 1, "expected one of ',' '.' ';' but found identifier 'c'"),
    ("a(x) :- .", 1, 9, "expected one of '!' 'contains' 'false' 'match' 'not' 'true' or a term but found '.'"),
    ("a(x) :- b(x), x < .", 1, 19, "expected a term but found '.'"),
    ("a(x) :- b(x), x < 1 < 2.", 1, 21, "expected one of ',' '.' ';' but found '<'"),
    ("a(x) :- b(x), 1x.", 1, 16, "expected an operator or a comparison operator but found identifier 'x'"),
    ("a(x) :- b(x) & c(x).", 1, 14, "unexpected character '&'"),
    ('a("x) :- b(x).', 1, 3, "unterminated string (strings end with '\"' on the same line)"),
    ("a(1).\n/* open", 2, 1, "unterminated comment ('/*' without '*/')"),
    (".decl", 1, 6, "expected an identifier but found end of input"),
    (".decl r(x: number) foo", 1, 23, "expected '(' but found end of input"),  # `foo` starts a clause
    (".decl r(x number)", 1, 11, "expected one of ')' ',' ':' but found identifier 'number'"),
    (".output a(x=)", 1, 13, "expected a float, a number, a string, an identifier or an unsigned number but found ')'"),
    ("a(count).", 1, 8, "expected ':' but found ')'"),
    ("a(x) :- b(x), x = count { b(y) }.", 1, 25, "expected ':' but found '{'"),
    # As in Soufflé, min with one argument is an aggregate, `min (x) : ...`, not a functor.
    ("r(x) :- q(x), x = min(x).", 1, 25, "expected ':' but found '.'"),
    ("r(x) :- q(x), x = strlen x.", 1, 26, "expected '(' but found identifier 'x'"),
    ("r(x) :- q(x), x = fold(\"a\").", 1, 19, "unknown functor 'fold' (the functors: cat, strlen, substr, to_number, to_string, to_float, to_unsigned, ord, range, min, max)"),
    ("r(9223372036854775808).", 1, 3, "the literal 9223372036854775808 does not fit in a number (64-bit signed): at most 9223372036854775807"),
    ("r(x) :- q(x), x = 0x1ffffffffffffffff.", 1, 19,
     "the literal 0x1ffffffffffffffff does not fit in a number (64-bit signed): at most 9223372036854775807"),
    ("r(18446744073709551616u).", 1, 3,
     "the literal 18446744073709551616 does not fit in an unsigned (64-bit): at most 18446744073709551615"),
]


# Soufflé features deltalog lacks: reported at their first token, by name, not as a parse error
UNSUPPORTED_FEATURES = [
    # inside a component's body as anywhere else
    (".comp C {\n  r(x) :- q(y), x = lower(y).\n}", 2, 21, "the functor 'lower' is not supported"),
    ("r(x) :- q(y),\n  x = autoinc().", 2, 7,
     "autoinc() is not supported: its values depend on the order rows are derived, which is not deterministic under updates"),
    ("r(x) :- q(y), x = lower(y).", 1, 19, "the functor 'lower' is not supported"),
]


@pytest.mark.parametrize("text, line, column, message", UNSUPPORTED_FEATURES)
def test_unsupported_souffle_features_are_named_at_their_first_token(text, line, column, message):
    with pytest.raises(UnsupportedError) as info:
        parse_datalog(text)
    err = info.value
    assert (err.line, err.column, err.message) == (line, column, message)


def test_brackets_in_strings_and_comments_are_not_records():
    program = parse_datalog('.decl r(x: symbol) // [not a record]\nr("[a, b] $ @").\n')
    assert [f.args[0].value for f in program.facts] == ["[a, b] $ @"]


@pytest.mark.parametrize("text, line, column, message", PARSE_ERRORS)
def test_parse_errors(text, line, column, message):
    with pytest.raises(ParseError) as info:
        parse_datalog(text)
    err = info.value
    assert (err.line, err.column, err.message) == (line, column, message)


# ---- everything else ---------------------------------------------------------------

ERRORS = [
    # arity
    (ArityError, "r(x) :- b(x, y), c(x).\nr(x) :- b(x).\n.input b, c", 2, 9,
     "'b' is used with 1 argument here, but has 2 arguments in its first use (line 1, column 9)"),
    (ArityError, ".decl b(x: number)\nr(x) :- b(x, 1).", 2, 9,
     "'b' is used with 2 arguments here, but has 1 argument in its declaration (line 1, column 1)"),
    (ArityError, "e(1, 2).\ne(3).", 2, 1,
     "'e' is used with 1 argument here, but has 2 arguments in its first use (line 1, column 1)"),
    (ArityError, "r(n) :- q(s), n = substr(s, 1).\n.input q", 1, 19, "substr takes 3 arguments, but is given 2"),
    (ArityError, "r(n) :- q(s), n = strlen(s, s).\n.input q", 1, 19, "strlen takes 1 argument, but is given 2"),
    (ArityError, "r(n) :- q(n), n = cat().\n.input q", 1, 19, "cat needs at least 1 argument"),
    # unsafe variables and wildcards
    (UnsafeVariableError, "a(x) :- b(y).\n.input b", 1, 3,
     "variable 'x' is not grounded: it only occurs in the head, never in a positive body atom"),
    (UnsafeVariableError, "a(x).", 1, 3,
     "variable 'x' is not grounded: it only occurs in the head, never in a positive body atom"),
    # y is shared by two negated atoms: not local to one, so not existential
    (UnsafeVariableError, "a(x) :- b(x), !c(x, y), !d(y).\n.input b, c, d", 1, 21,
     "variable 'y' is not grounded: it only occurs under negation, never in a positive body atom"),
    (UnsafeVariableError, "a(x) :- !b(x).\n.input b", 1, 12,
     "variable 'x' is not grounded: it only occurs in the head and under negation, never in a positive body atom"),
    (UnsafeVariableError, "a(x) :- b(x), y < x.\n.input b", 1, 15,
     "variable 'y' is not grounded: it only occurs in a comparison, never in a positive body atom"),
    (UnsafeVariableError, "a(x) :- b(x), c(x + y).\n.input b, c", 1, 21,
     "variable 'y' is not grounded: it only occurs in an argument expression, never in a positive body atom"),
    (UnsafeVariableError, "a(x) :- b(x), x = strlen(s).\n.input b", 1, 26,
     "variable 's' is not grounded: it only occurs in a functor argument, never in a positive body atom"),
    (UnsafeVariableError, 'a(x) :- b(x), contains("a", s).\n.input b', 1, 29,
     "variable 's' is not grounded: it only occurs in a contains/match test, never in a positive body atom"),
    (UnsafeVariableError, "a(x, n) :- n = count : { b(x, _) }.\n.input b", 1, 28,
     "variable 'x' is grounded only inside this count aggregate, but is used outside it: "
     "only min and max have a witness tuple to take its value from"),
    (UnsafeVariableError, "a(x, n) :- b(z), n = mean y : { c(y, x), y > z }.\n.input b, c", 1, 38,
     "variable 'x' is grounded only inside this mean aggregate, but is used outside it: "
     "only min and max have a witness tuple to take its value from"),
    (UnsafeVariableError, "a(x, n) :- n = min y : { b(y), y < x }.\n.input b", 1, 36,
     "variable 'x' is not grounded: it only occurs in the head and inside an aggregate, never in a positive body atom"),
    (UnsafeVariableError, "a(n) :- n = sum y : { b(x) }.\n.input b", 1, 17,
     "variable 'y' is not grounded: it only occurs in the aggregate's target, never in a positive body atom"),
    (UnsafeVariableError, "a(n) :- c(y), n = count : { b(x), !d(x, z), !e(z) }.\n.input c, b, d, e", 1, 41,
     "variable 'z' is not grounded: it only occurs under negation, never in a positive body atom"),
    (UnsafeVariableError, "a(x, y) :- b(x), y = z + 1.\n.input b", 1, 22,
     "variable 'z' is not grounded: it only occurs in a comparison, never in a positive body atom"),
    (UnsafeVariableError, "a(_) :- b(x).\n.input b", 1, 3, "'_' is not allowed in the head"),
    (UnsafeVariableError, "a(x) :- b(x), x != _.\n.input b", 1, 20, "'_' is not allowed in a comparison"),
    (UnsafeVariableError, "a(x) :- b(x), c(_ + 1).\n.input b, c", 1, 17, "'_' is not allowed in an expression"),
    (UnsafeVariableError, "a(x) :- b(x), match(_, x).\n.input b", 1, 21, "'_' is not allowed in match(...)"),
    (UnsafeVariableError, "a(n) :- n = sum _ : b(_).\n.input b", 1, 17, "'_' is not allowed in an aggregate's target"),
    # types
    (TypeMismatchError, 'edge("a", 2).\nedge(1, 2).', 2, 6,
     "1 is numeric, but argument 1 of 'edge' is a symbol (from line 1, column 6)"),
    (TypeMismatchError, ".decl b(x: number)\nr(x) :- b(x), strlen(x) = 3.", 2, 22,
     "variable 'x' is a number (declared at line 1, column 9), but argument 1 of strlen must be a symbol"
     " (from line 2, column 15)"),
    (TypeMismatchError, 'a(x) :- b(x), x = 1, x < "s".\n.input b', 1, 26,
     "\"s\" is a symbol, but variable 'x' is numeric (from line 1, column 19)"),
    (TypeMismatchError, "a(x) :- b(x), x = 1u, x = 1.5.\n.input b", 1, 27,
     "1.5 is a float, but variable 'x' is an unsigned (from line 1, column 19)"),
    (TypeMismatchError, "a(x) :- b(x), y = x band 1.5.\n.input b", 1, 26,
     "1.5 is a float, but variable 'x' must be an integer (number or unsigned) (from line 1, column 19)"),
    (TypeMismatchError, 'p(x) :- q(x), r(s), s = cat(x, "!"), x > 0.\n.input q, r', 1, 42,
     "0 is numeric, but variable 'x' must be a symbol (from line 1, column 25)"),
    (TypeMismatchError, ".decl name(n: number, s: symbol)\nbad(s) :- name(s, _).\nbad(n) :- name(_, n).", 3, 19,
     "variable 'n' is a number (declared at line 1, column 12), but argument 2 of 'name' is a symbol"
     " (declared at line 1, column 23)"),
    (TypeMismatchError, ".decl d(a: number, b: symbol) min(b)", 1, 31,
     "min(b) needs a numeric column, but 'b' is a symbol"),
    (TypeMismatchError, '.decl d(a: number, b) max(b)\nd(1, "x").', 2, 6,
     "\"x\" is a symbol, but argument 2 of 'd' must be numeric (declared at line 1, column 23)"),
    # stratification
    (StratificationError, "win(x) :- move(x, y), !win(y).\n.input move", 1, 24,
     "cannot stratify: negation of 'win' inside its own recursion: win -> !win"),
    (StratificationError, "a(x) :- b(x), !c(x).\nc(x) :- d(x), a(x).\n.input b, d", 1, 16,
     "cannot stratify: negation of 'c' inside its own recursion: a -> !c -> a"),
    (StratificationError, "total(n) :- n = count : total(_).", 1, 25,
     "cannot stratify: count over 'total' inside its own recursion: total -> count(total)"
     " (only min and max may aggregate recursively)"),
    (StratificationError, "p(x) :- q(x).\nq(x) :- r(x).\nr(x) :- p(x), s(x, n), n = sum y : { p(y) }.\n.input s", 3, 38,
     "cannot stratify: sum over 'p' inside its own recursion: r -> sum(p) -> q -> r"
     " (only min and max may aggregate recursively)"),
    (StratificationError, "p(x) :- e(x).\np(m) :- m = min y : { p(y), !p(y + 1) }.\n.input e", 2, 30,
     "cannot stratify: negation of 'p' inside its own recursion: p -> !p"),
    # declarations and relations
    (DeclarationError, ".decl a(x: number)\n.decl a(y: number)", 2, 1,
     "relation 'a' is declared twice (first at line 1, column 1)"),
    (DeclarationError, ".decl a(x: number, x: symbol)", 1, 20, "relation 'a' has two columns named 'x'"),
    (DeclarationError, ".decl d(a: number, b: foo)", 1, 20,
     "unknown type 'foo' (base types are number, unsigned, float, symbol, or define it with .type)"),
    (DeclarationError, ".decl d(a: number, b: symbol) min(c)", 1, 31, "min(c): relation 'd' has no column 'c'"),
    (DeclarationError, ".type A = B\n.type B = A", 1, 1, "type 'A' is defined in terms of itself: A -> B -> A"),
    (DeclarationError, ".type T = number | symbol", 1, 1, "union type 'T' mixes number and symbol"),
    (DeclarationError, ".type T = Missing", 1, 1, "unknown type 'Missing' in the definition of 'T'"),
    (DeclarationError, ".type T = number\n.type T <: symbol", 2, 1, "type 'T' is defined twice"),
    (DeclarationError, ".decl r(x: number) min(x) max(x)", 1, 27, "relation 'r' has more than one min/max qualifier"),
    (DeclarationError, ".input e(a=1, a=2)\ne(1).", 1, 15, "option 'a' given twice"),
    (DeclarationError, "e(1).\n.output e\n.output e", 3, 9, "relation 'e' has this .output directive twice"),
    (UnsupportedError, ".decl e(x: number)\n.input e\n.input e(filename=\"f\")\n.output e", 3, 8,
     "relation 'e' has two .input directives: deltalog reads a relation from one table"),
    # a body relation nothing gives rows: a typo, never an empty input
    (UnknownRelationError, ".decl edge(a: number, b: number)\n.input edge\nreach(r, r) :- edge(r, _).\n"
     "reach(r, m) :- reach(r, n), edeg(n, m).", 4, 29,
     "relation 'edeg' is used but never defined (no rule, fact, .decl or .input gives it rows); did you mean 'edge'?"),
    (UnknownRelationError, "p(1).\nq(x) :- p(x), !blocked(x).", 2, 16,
     "relation 'blocked' is used but never defined (no rule, fact, .decl or .input gives it rows);"
     " declare it with '.decl blocked(...)' and '.input blocked' to read it from a table"),
    (UnknownRelationError, "node(1).\nc(k) :- node(x), k = count : { nodes(x) }.", 2, 32,
     "relation 'nodes' is used but never defined (no rule, fact, .decl or .input gives it rows); did you mean 'node'?"),
    (UnknownRelationError, "e(1).\n.output f", 2, 9, "'.output f' names a relation that is never declared or used"),
    # valid Soufflé we do not support
    (UnsupportedError, ".decl e(y: number)\n.input e\nr(x) :- e(x), x < range(1, 5).", 3, 19,
     "range(...) is supported only as 'x = range(a, b[, step])', binding x to each value"),
    (UnsupportedError, "r(range(1, 3)).", 1, 3, "range(...) is supported only as 'x = range(a, b[, step])', binding x to each value"),
    (ArityError, "r(x) :- x = range(1).", 1, 13, "range takes 2 or 3 arguments, but is given 1"),
    (UnsupportedError, "e(1).\n.limitsize e(n=5)", 2, 1, "directive '.limitsize' is not supported"),
    (UnsupportedError, ".decl e(x: number)\n.lattice L<> {\n  Bottom -> 0,\n  Lub -> @lub(_, _)\n}", 2, 1, "directive '.lattice' is not supported"),
    (UnknownRelationError, "e(1).\n.printsize f", 2, 12, "'.printsize f' names a relation that is never declared or used"),
    # eqrel, choice-domain, subsumption
    (DeclarationError, ".decl r(x: number) eqrel", 1, 1, "eqrel relation 'r' must have two attributes (an equivalence between values), but has 1"),
    (TypeMismatchError, ".decl r(x: number, y: symbol) eqrel", 1, 20,
     "attribute 'y' of eqrel relation 'r' is a symbol, but attribute 'x' is a number (declared at line 1, column 9)"),
    (DeclarationError, ".decl r(x: number, y: number) choice-domain x, (x, z)", 1, 48,
     "choice-domain: relation 'r' has no attribute 'z' (its attributes: x, y)"),
    (DeclarationError, ".decl r(x: number, y: number) eqrel choice-domain x", 1, 1,
     "relation 'r' cannot be both eqrel and choice-domain: each decides alone which tuples it keeps"),
    (DeclarationError, ".decl r(x: number, y: number) min(y)\nr(1, 2).\nr(x, y) <= r(x, z) :- y > z.", 3, 1,
     "relation 'r' cannot be both min(y) and subsumptive rules: each decides alone which tuples it keeps"),
    (SubsumptionError, ".decl b(x: number)\n.decl c(x: number)\nb(1). c(1).\nb(x) <= c(y) :- y <= x.", 4, 1,
     "a subsumptive rule compares tuples of one relation, but 'b' <= 'c' names two"),
    (SubsumptionError, "a().\na() <= a() :- a().", 2, 1, "relation 'a' has no attributes: its one tuple cannot dominate another"),
    (UnsafeVariableError, ".decl r(x: number)\nr(1).\nr(x) <= r(y) :- x < z.", 3, 21,
     "variable 'z' is not grounded: it only occurs in a comparison, never in a positive body atom"),
    (StratificationError, "e(1).\nr(x) :- e(x).\nr(x) <= r(y) :- x < y, !s(x).\ns(x) :- r(x).", 3, 25,
     "cannot stratify: negation of 's' inside its own recursion: r -> !s -> r"),
    (UnsupportedError, ".decl e(x: number, y: number)\n.input e\n.decl t(x: number, y: number) choice-domain x\n"
     "t(x, y) :- e(x, y).\nt(y, n) :- t(_, y), n = min z : { t(y, z) }.", 5, 35,
     "an aggregate over 't' inside the recursion of the choice-domain relation 't' is not supported"),
    (UnsupportedError, ".decl e(x: number, y: number)\n.input e\n.decl t(x: number, y: number) choice-domain x\n"
     ".decl m(x: number, y: number) min(y)\nt(x, y) :- e(x, y).\nt(x, y) :- m(x, y).\nm(x, y) :- t(x, y).", 4, 1,
     "relation 'm' is in one recursion with the choice-domain relation 't', which only plain relations may share"),
    # inline relations
    (InlineError, ".decl b(x: number, y: number) inline\n.output b\n.decl a(x: number)\n.input a\nb(x, x) :- a(x).", 2, 9,
     "relation 'b' is inline, so it cannot be read or written ('.output'): inline relations are never materialised"),
    (InlineError, ".decl m(x: number) inline\n.decl n(x: number) inline\n.decl i(x: number)\n.input i\n"
     "m(x) :- n(x).\nn(x) :- m(x).\nm(x) :- i(x).\np(x) :- m(x).", 1, 1,
     "inline relations that depend on each other cannot be inlined: m, n (a cycle)"),
    (InlineError, ".decl c(x: number)\n.input c\n.decl d(x: number, y: number)\n.input d\n.decl b(x: number) inline\n"
     "b(x) :- d(x, y), !c(y).\na(x) :- c(x), !b(x).", 7, 16,
     "cannot inline the negated relation 'b': its clause at line 6 has variables that are not in its head, which negation cannot express"),
    (InlineError, ".decl c(x: number)\n.input c\n.decl e(x: number) inline\ne(x) :- c(x).\na(x) :- c(x), !e(_).", 5, 18,
     "cannot inline the negated atom 'e(...)' with '_' among its arguments: it would mean 'there is no value such that ...'"),
    (InlineError, ".decl r(x: number, y: number) eqrel inline", 1, 1, "relation 'r' cannot be both inline and eqrel"),
    (UnsafeVariableError, ".decl b(x: number, y: number) inline\nb(x, y) :- 0 < x, 0 < y.\nr0(x) :- b(x, 0).", 3, 12,
     "variable 'x' is not grounded: it only occurs in the head and in a comparison, never in a positive body atom"),
    (UnsupportedError, ".decl a(x: number)\n.input a\n.decl i(x:number) inline\ni(x) :- a(x).\ni(3).\nr(n) :- n = count : { i(x) }.", 6, 13,
     "an inline relation used inside an aggregate must have exactly one clause here (it unfolds to a disjunction)"),
    # user-defined functors
    (UnknownFunctorError, ".decl e(x: number)\n.input e\nr(y) :- e(x), y = @f(x).", 3, 19,
     "functor 'f' is not declared (declare it with '.functor f(...): type'; declared: none)"),
    (UnsupportedError, ".functor f(number): number\n.decl e(x: number)\n.input e\nr(y) :- e(x), y = @f(x).", 1, 1,
     "functor 'f' has no implementation: deltalog cannot load C++ functor libraries; "
     "give a Python callable with compile_datalog(..., functors={'f': f})"),
    (UnsupportedError, "a(n) :- n = count : { b(x) ; c(x) }.", 1, 13,
     "a disjunction (';', or '!' over a conjunction) inside a count aggregate is not supported"),
]


@pytest.mark.parametrize("cls, text, line, column, message", ERRORS, ids=[f"{e[0].__name__}-{i}" for i, e in enumerate(ERRORS)])
def test_errors(cls, text, line, column, message):
    err = error_of(text)
    assert type(err) is cls
    assert (err.line, err.column, err.message) == (line, column, message)
    assert err.source_line == text.splitlines()[line - 1]

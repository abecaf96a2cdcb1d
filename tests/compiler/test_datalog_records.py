"""Soufflé's types, records and ADTs: what compiled programs compute with them.

Every program runs through tests.compiler.replay, so each relation is checked
against the naive oracle (which knows records as Python tuples and ADT values as
Branch, nothing of how they are stored) after every commit, and every commit's
changes against the difference of two recomputations; the assertions pin the
answers themselves.
"""

import numpy as np
import pyarrow as pa
import pytest

import compiler
from compiler import ArityError, DeclarationError, SessionError, TypeMismatchError, UnsafeVariableError
from compiler.values import Branch, decode, encode, from_text, to_text
from tests.compiler.replay import Replay
from tests.compiler.test_datalog_semantics import read, run as run_program

TYPES = """
.type Point = [x: number, y: number]
.type Named = [name: symbol, at: Point]
.type List = [head: number, tail: List]
.type Expr = Num {n: number} | Add {l: Expr, r: Expr} | Neg {e: Expr} | Zero {}
.type Day = Mon {} | Tue {} | Wed {}
"""


def run(text: str, inputs: dict | None = None) -> Replay:
    return run_program(TYPES + text, inputs)


def test_records_are_built_in_heads_and_taken_apart_in_bodies():
    text = """
    .decl p(x: number, y: number)
    .input p
    .decl point(p: Point)
    point([x, y]) :- p(x, y).
    .decl named(n: Named)
    named([cat("p", to_string(x)), [x, y]]) :- p(x, y).
    .decl xs(x: number)
    xs(x) :- point([x, _]).
    .decl diagonal(n: symbol)
    diagonal(n) :- named([n, [v, v]]).
    .decl swapped(p: Point)
    swapped(q) :- point(p), p = [a, b], q = [b, a].
    .decl shared(a: Point, b: Point)
    shared(a, b) :- point(a), point(b), a = [x, _], b = [_, x].
    """
    r = run(text, {"p": [(1, 2), (2, 2), (3, 1)]})
    assert read(r, "point") == [((1, 2),), ((2, 2),), ((3, 1),)]
    assert read(r, "xs") == [(1,), (2,), (3,)]
    assert read(r, "diagonal") == [("p2",)]
    assert read(r, "swapped") == [((1, 3),), ((2, 1),), ((2, 2),)]
    assert read(r, "shared") == [((1, 2), (3, 1)), ((2, 2), (1, 2)), ((2, 2), (2, 2))]


def test_recursive_records_nil_and_facts_with_records():
    text = """
    .decl list(l: List)
    list(nil).
    list([1, nil]).
    list([n + 1, l]) :- list(l), l = [n, _], n < 4.
    .decl length(l: List, n: number)
    length(nil, 0).
    length([h, t], n + 1) :- list([h, t]), length(t, n).
    .decl empty(b: number)
    empty(1) :- list(nil).
    .decl not_nil(n: number)
    not_nil(h) :- list(l), l != nil, l = [h, _].
    """
    r = run(text)
    lists = [None, (1, None), (2, (1, None)), (3, (2, (1, None))), (4, (3, (2, (1, None))))]
    assert read(r, "list") == [(v,) for v in lists]
    assert read(r, "length") == [(v, n) for n, v in enumerate(lists)]
    assert read(r, "empty") == [(1,)]
    assert read(r, "not_nil") == [(1,), (2,), (3,), (4,)]


def test_records_compare_by_their_fields_and_join_on_equal_records():
    text = """
    .decl a(p: Point)
    .input a
    .decl b(p: Point)
    .input b
    .decl both(p: Point)
    both(p) :- a(p), b(p).
    .decl differ(p: Point, q: Point)
    differ(p, q) :- a(p), b(q), p != q.
    .decl origin(n: number)
    origin(1) :- a(p), p = [0, 0].
    .decl only_a(p: Point)
    only_a(p) :- a(p), !b(p).
    .decl no_b_with_x(p: Point)
    no_b_with_x([x, y]) :- a([x, y]), !b([x, _]).
    """
    r = run(text, {"a": [((0, 0),), ((1, 2),)], "b": [((1, 2),), ((1, 5),)]})
    assert read(r, "both") == [((1, 2),)]
    assert read(r, "differ") == [((0, 0), (1, 2)), ((0, 0), (1, 5)), ((1, 2), (1, 5))]
    assert read(r, "origin") == [(1,)]
    assert read(r, "only_a") == [((0, 0),)]
    assert read(r, "no_b_with_x") == [((0, 0),)]


def test_anonymous_records_are_folded_into_their_fields():
    text = """
    .decl a(x: number, y: number)
    .input a
    .decl r(z: number)
    r(z) :- a(x, y), p = [x, y], q = p, q = [v, w], w = z, v < z.
    .decl s(x: number)
    s(x) :- a(x, y), [x, y] != [y, x].
    """
    r = run(text, {"a": [(1, 2), (3, 3), (4, 1)]})
    assert read(r, "r") == [(2,)]
    assert read(r, "s") == [(1,), (4,)]


def test_adt_values_are_built_matched_and_ordered_by_branch():
    text = """
    .decl e(x: Expr)
    e($Add($Num(1), $Neg($Num(2)))).
    e($Zero).
    e($Num(7)).
    .decl value(x: Expr, v: number)
    value(x, n) :- e(x), x = $Num(n).
    value($Zero, 0) :- e($Zero).
    .decl sub(x: Expr)
    sub(x) :- e(x).
    sub(l), sub(r) :- sub($Add(l, r)).
    sub(x) :- sub($Neg(x)).
    .decl negated(n: number)
    negated(n) :- sub($Neg($Num(n))).
    .decl sums(l: Expr)
    sums(l) :- sub(s), s = $Add(l, _).
    .decl leaf(x: Expr)
    leaf(x) :- sub(x), !sub($Add(x, _)), x != $Zero.
    """
    r = run(text)
    # Branches are numbered in name order (Add, Neg, Num, Zero), and values listed so.
    assert read(r, "sub") == [
        (Branch("Add", (Branch("Num", (1,)), Branch("Neg", (Branch("Num", (2,)),)))),),
        (Branch("Neg", (Branch("Num", (2,)),)),), (Branch("Num", (1,)),), (Branch("Num", (2,)),),
        (Branch("Num", (7,)),), (Branch("Zero"),)]  # fmt: skip
    assert read(r, "value") == [(Branch("Num", (7,)), 7), (Branch("Zero"), 0)]
    assert read(r, "negated") == [(2,)]
    assert read(r, "sums") == [(Branch("Num", (1,)),)]
    assert read(r, "leaf") == [(read(r, "e")[0][0],), (Branch("Neg", (Branch("Num", (2,)),)),), (Branch("Num", (2,)),), (Branch("Num", (7,)),)]


def test_enum_adts_are_their_branch_numbers():
    text = """
    .decl next(a: Day, b: Day)
    next($Mon, $Tue).
    next($Tue(), $Wed).
    .decl after(a: Day, b: Day)
    after(a, b) :- next(a, b).
    after(a, c) :- after(a, b), next(b, c).
    .decl not_monday(d: Day)
    not_monday(d) :- after(_, d), d != $Mon.
    """
    r = run(text)
    mon, tue, wed = Branch("Mon"), Branch("Tue"), Branch("Wed")
    assert read(r, "after") == [(mon, tue), (mon, wed), (tue, wed)]
    assert read(r, "not_monday") == [(tue,), (wed,)]
    # Soufflé's ord of an enum value is its branch number (ord has no meaning the oracle could know).
    session = compiler.compile_datalog(TYPES + ".decl d(d: Day)\nd($Wed). d($Mon).\n.decl n(d: Day, n: number)\nn(d, ord(d)) :- d(d).").session()
    session.commit()
    assert session.read("n") == [(mon, 0), (wed, 2)]


def test_plus_concatenates_symbols():
    text = """
    .decl s(x: symbol)
    s("a").
    s("b").
    .decl joined(x: symbol)
    joined("<" + x + ">") :- s(x).
    joined(x + y) :- s(x), s(y), x != y.
    .decl sum(n: number)
    sum(1 + 2).
    """
    r = run(text)
    assert read(r, "joined") == [("<a>",), ("<b>",), ("ab",), ("ba",)]
    assert read(r, "sum") == [(3,)]


def test_subset_types_aliases_and_unions_hold_their_base_values():
    text = """
    .type Id <: number
    .number_type Age
    .symbol_type Name
    .type Key = Id
    .type Label = Name | symbol
    .type Person = [id: Id, name: Name]
    .decl person(p: Person)
    .input person
    .decl id(i: Key)
    id(i) :- person([i, _]).
    .decl next_id(i: Id)
    next_id(i + 1) :- id(i).
    .decl label(l: Label)
    label(n) :- person([_, n]).
    label("none").
    .decl age(a: Age)
    age(30).
    """
    r = run(text, {"person": [((1, "ann"),), ((2, "bob"),)]})
    assert read(r, "id") == [(1,), (2,)]
    assert read(r, "next_id") == [(2,), (3,)]
    assert read(r, "label") == [("ann",), ("bob",), ("none",)]
    assert r.program.relations["person"].kinds[0].name == "Person"
    assert r.program.relations["id"].types == ("number",)


def test_updates_to_records_and_adts_equal_recomputation():
    text = """
    .decl edge(a: Point, b: Point)
    .input edge
    .decl reach(a: Point, b: Point)
    reach(a, b) :- edge(a, b).
    reach(a, c) :- reach(a, b), edge(b, c).
    .decl far(x: number)
    far(x) :- reach([0, 0], [x, _]), x > 1.
    .decl tagged(e: Expr)
    .input tagged
    .decl nums(n: number)
    nums(n) :- tagged($Num(n)).
    nums(n) :- tagged($Neg($Num(n))).
    .decl lonely(p: Point)
    lonely(p) :- edge(p, _), !edge(_, p).
    """
    r = run(text, {"edge": [((0, 0), (1, 0)), ((1, 0), (2, 0))], "tagged": [(Branch("Num", (1,)),), (Branch("Zero"),)]})
    assert read(r, "far") == [(2,)]
    r.insert("edge", [((2, 0), (3, 1)), ((3, 1), (0, 0))])
    r.insert("tagged", [(Branch("Neg", (Branch("Num", (5,)),)),)])
    r.commit()
    assert read(r, "far") == [(2,), (3,)]
    assert read(r, "lonely") == []
    assert read(r, "nums") == [(1,), (5,)]
    r.remove("edge", [((1, 0), (2, 0))])
    r.remove("tagged", [(Branch("Num", (1,)),)])
    r.commit()
    assert read(r, "far") == []
    assert read(r, "lonely") == [((2, 0),)]
    assert read(r, "nums") == [(5,)]
    r.insert("edge", [((1, 0), (2, 0))])
    r.commit()
    assert read(r, "far") == [(2,), (3,)]


# ---- values in and out --------------------------------------------------------------------------


PROGRAM = TYPES + """
.decl inp(l: List, e: Expr, d: Day, s: Named)
.input inp
.decl out(l: List, e: Expr, d: Day, s: Named)
out(l, e, d, s) :- inp(l, e, d, s).
"""


def test_python_values_go_in_and_come_out_as_tuples_none_and_branches():
    session = compiler.compile_datalog(PROGRAM).session()
    row = ((1, (2, None)), Branch("Add", (Branch("Num", (-3,)), Branch("Zero"))), Branch("Wed"), ("a, b", (4, 5)))
    session.insert("inp", [row, (None, Branch("Zero"), Branch("Mon"), ("", (0, 0)))])
    session.commit()
    assert session.read("out") == [(None, Branch("Zero"), Branch("Mon"), ("", (0, 0))), row]
    session.remove("inp", [row])
    assert session.commit()["out"] == [(row, -1)]


@pytest.mark.parametrize("bad, message", [
    ((1, 2), "column 'l': field 'tail' of 'List': 2 is not a record of type 'List' (2 fields, or None for nil)"),
    ((1,), "column 'l': (1,) is not a record of type 'List' (2 fields, or None for nil)"),
    (("x", None), "column 'l': field 'head' of 'List': 'x' is not a number"),
])
def test_a_row_with_a_bad_record_is_refused_naming_its_column(bad, message):
    session = compiler.compile_datalog(PROGRAM).session()
    with pytest.raises(SessionError) as info:
        session.insert("inp", [(None, Branch("Zero"), Branch("Mon"), ("a", (1, 2))), (bad, Branch("Zero"), Branch("Mon"), ("a", (1, 2)))])
    assert str(info.value) == f"'inp': row {(bad, Branch('Zero'), Branch('Mon'), ('a', (1, 2)))!r}: {message}"
    with pytest.raises(SessionError, match=r"\$Sub\(1\) is not a value of the ADT 'Expr'"):
        session.insert("inp", [(None, Branch("Sub", (1,)), Branch("Mon"), ("a", (1, 2)))])


def test_fact_files_hold_records_and_adts_in_souffles_text(tmp_path):
    (tmp_path / "inp.facts").write_text(
        "[1, [2, nil]]\t$Add($Num(-3), $Zero)\t$Wed\t[\"a, b\", [4, 5]]\n"
        "nil\t$Zero\t$Mon\t[plain text, [0,0]]\n"
    )
    session = compiler.compile_datalog(PROGRAM).session()
    assert session.load_facts(tmp_path) == {"inp": 2}
    session.commit()
    assert session.read("out") == [
        (None, Branch("Zero"), Branch("Mon"), ("plain text", (0, 0))),
        ((1, (2, None)), Branch("Add", (Branch("Num", (-3,)), Branch("Zero"))), Branch("Wed"), ("a, b", (4, 5))),
    ]
    (tmp_path / "inp.facts").write_text("nil\t$Zero\t$Mon\t[a, [1, 2]]\n[1, 2]\t$Zero\t$Mon\t[a, [1, 2]]\n")
    with pytest.raises(SessionError) as info:
        compiler.compile_datalog(PROGRAM).session().load_facts(tmp_path)
    assert str(info.value).endswith("column 'l': row 2: '[1, 2]': expected '[' at character 5, found '2'")


@pytest.mark.parametrize("value, kind, text", [
    ((1, (2, None)), "List", "[1, [2, nil]]"),
    (None, "List", "nil"),
    (Branch("Add", (Branch("Num", (1,)), Branch("Zero"))), "Expr", "$Add($Num(1), $Zero)"),
    (Branch("Tue"), "Day", "$Tue"),
    (("a]b", (1, 2)), "Named", '["a]b", [1, 2]]'),
    (('"hi" there', (1, 2)), "Named", '["\\"hi\\" there", [1, 2]]'),
    (('say "hi"', (1, 2)), "Named", '[say "hi", [1, 2]]'),
])
def test_souffle_text_of_values_reads_back(value, kind, text):
    kinds = compiler.check_datalog(TYPES).types.kinds
    assert to_text(value, kinds[kind]) == text
    assert from_text(text, kinds[kind]) == value


def test_arrow_gives_records_as_structs_and_adts_as_branch_structs():
    session = compiler.compile_datalog(PROGRAM).session()
    session.insert("inp", [((1, (2, None)), Branch("Neg", (Branch("Num", (3,)),)), Branch("Tue"), ("a", (4, 5)))])
    session.commit()
    table = session.arrow("out")
    assert table.column("l").to_pylist() == [{"head": 1, "tail": {"head": 2, "tail": None}}]
    assert table.column("d").to_pylist() == ["Tue"]
    assert table.column("s").type == pa.struct([("name", pa.string()), ("at", pa.struct([("x", pa.int64()), ("y", pa.int64())]))])
    expr = table.column("e").to_pylist()[0]
    assert expr["branch"] == "Neg" and expr["Neg"]["e"]["branch"] == "Num" and expr["Neg"]["e"]["Num"] == {"n": 3}
    assert expr["Add"] is None
    # The same columns are an input table again; so are columns of Soufflé's text.
    again = compiler.compile_datalog(PROGRAM).session()
    again.insert("inp", table)
    again.insert("inp", pa.table({"l": ["nil"], "e": ["$Zero"], "d": ["$Mon"], "s": ['["x", [0, 0]]']}))
    again.commit()
    assert again.read("out") == [(None, Branch("Zero"), Branch("Mon"), ("x", (0, 0))), session.read("out")[0]]


def test_encoding_and_decoding_columns_round_trip_through_the_record_table():
    checked = compiler.check_datalog(TYPES)
    session = compiler.compile_datalog(PROGRAM).session()
    symbols = session.dataflow.symbols
    lists = [None, (1, None), (1, (2, None)), (1, None)]
    ids = encode(lists, checked.types.kinds["List"], symbols)
    assert ids[0] == 0 and ids[1] == ids[3] and len(set(ids.tolist())) == 3
    assert decode(ids, checked.types.kinds["List"], symbols) == lists
    assert decode(np.array([], dtype=np.int64), checked.types.kinds["Expr"], symbols) == []


# ---- errors --------------------------------------------------------------------------------------

T = ".type P = [x: number, y: symbol]\n.type E = A {x: number} | B {}\n"  # lines 1-2: every case below has them

ERRORS = [
    # records
    (TypeMismatchError, T + ".decl r(p: P)\nr([1]).", 4, 3, "the record [...] has 1 field, but is a record of type 'P', which has 2"),
    (TypeMismatchError, T + ".decl r(p: P)\nr([1, 2]).", 4, 7, "2 is numeric, but field 'y' of 'P' must be a symbol (declared at line 1, column 1)"),
    (TypeMismatchError, T + ".decl r(n: number)\nr([1, \"a\"]).", 4, 3,
     "the record [...] is a record of type 'P', but argument 1 of 'r' is a number (declared at line 3, column 9)"),
    (TypeMismatchError, T + ".decl r(s: symbol)\nr(nil).", 4, 3, "nil is a record of type 'P', but argument 1 of 'r' is a symbol (declared at line 3, column 9)"),
    (TypeMismatchError, T + ".type Q = [a: number, b: symbol]\nr(x) :- x = [1, \"a\"].", 4, 13,
     "cannot tell which record type the record [...] is (it could be P, Q): declare the type of the column or variable it stands for"),
    (TypeMismatchError, "r(x) :- x = [1, 2].", 1, 13, "the record [...] has no type: the program declares no record type"),
    (TypeMismatchError, T + ".decl r(p: P)\nq(p) :- r(p), p < [1, \"a\"].", 4, 15,
     "variable 'p' is a record of type 'P' (declared at line 3, column 9), but an operand of '<' must be a number or a symbol"),
    (UnsafeVariableError, T + ".decl r(p: P)\nr([x, \"a\"]).", 4, 4, "variable 'x' is not grounded: it only occurs in the head, never in a positive body atom"),
    (UnsafeVariableError, T + ".decl r(p: P)\nr([_, \"a\"]).", 4, 4, "'_' is not allowed in the head"),
    (UnsafeVariableError, T + ".decl r(p: P)\nq(x) :- r(p), p != [x, _].", 4, 24, "'_' is not allowed in a comparison"),
    # ADTs
    (TypeMismatchError, T + ".decl r(e: E)\nr($C(1)).", 4, 3, "unknown ADT branch '$C' (the branches: $A, $B)"),
    (ArityError, T + ".decl r(e: E)\nr($A(1, 2)).", 4, 3, "branch '$A' of 'E' has 1 field, but is given 2"),
    (TypeMismatchError, T + ".decl r(e: E)\nr($A(\"s\")).", 4, 6, "\"s\" is a symbol, but field 'x' of $A must be a number (declared at line 2, column 11)"),
    (TypeMismatchError, T + ".decl r(e: E)\nq(x) :- r(x), x < $B.", 4, 15,
     "variable 'x' is a value of the ADT 'E' (declared at line 3, column 9), but an operand of '<' must be a number or a symbol"),
    (TypeMismatchError, T + ".decl r(e: E, p: P)\nr(x, x) :- r(x, _).", 4, 6,
     "variable 'x' is a value of the ADT 'E' (declared at line 3, column 9), but argument 2 of 'r' is a record of type 'P' (declared at line 3, column 15)"),
    (TypeMismatchError, T + ".decl r(e: E) max(e)", 3, 15, "max(e) needs a numeric column, but 'e' is a E"),
    # subset types: sources and sinks
    (TypeMismatchError, ".type N <: number\n.type M <: number\n.decl a(x: N)\n.decl b(x: M)\nc(x) :- a(x), b(x).", 5, 17,
     "variable 'x' is a 'M' (argument 1 of 'b') and a 'N' (argument 1 of 'a'), types with no value in common"),
    (TypeMismatchError, ".type N <: number\n.decl a(x: number)\n.decl b(x: N)\nb(x) :- a(x).", 4, 3,
     "variable 'x' is a 'number' (argument 1 of 'a'), but argument 1 of 'b' is declared 'N', which 'number' is not a subtype of"
     " (as(x, N) takes it as one, unchecked)"),
    (TypeMismatchError, ".type N <: number\n.type M <: number\n.decl a(x: N)\n.decl b(x: M)\nc(x) :- a(x), b(y), x < y.", 5, 25,
     "variable 'y' is a 'M' (argument 1 of 'b'), but is compared with variable 'x', a 'N' (argument 1 of 'a'): types with no value in common"),
    (TypeMismatchError, ".type N <: number\n.type M <: number\n.type P = [n: N]\n.decl a(x: M)\n.decl r(p: P)\nq(x) :- a(x), r([x]).", 6, 18,
     "variable 'x' is a 'N' (field 'n' of 'P') and a 'M' (argument 1 of 'a'), types with no value in common"),
    # declarations
    (DeclarationError, ".type T = [x: number]\n.type U = T | number", 2, 1, "union type 'U' holds 'T', which is not a primitive or subset type"),
    (DeclarationError, ".type T = [x: number]\n.type U <: T", 2, 1, "subset type 'U' cannot be derived from the record type 'T'"),
    (DeclarationError, ".type N <: number\n.type U = N | number\n.type V <: U", 3, 1, "subset type 'V' cannot be derived from the union type 'U'"),
    (DeclarationError, ".type E = A {} | B {}\n.type F = A {x: number}", 2, 11, "branch 'A' is defined twice (first at line 1, column 11)"),
    (DeclarationError, ".type T = [x: Foo]", 1, 12, "unknown type 'Foo' in the definition of record type 'T'"),
    (DeclarationError, ".type E = A {x: number, x: symbol}", 1, 25, "branch 'A' has two fields named 'x'"),
    (DeclarationError, ".type T = [x]", 1, 12, "field 'x' of record type 'T' needs a type ('x: number')"),
    (DeclarationError, ".type T = number | unsigned", 1, 1, "union type 'T' mixes number and unsigned"),
]


@pytest.mark.parametrize("cls, text, line, column, message", ERRORS, ids=[f"{e[0].__name__}-{i}" for i, e in enumerate(ERRORS)])
def test_type_errors_are_positioned(cls, text, line, column, message):
    with pytest.raises(cls) as info:
        compiler.check_datalog(text)
    err = info.value
    assert (err.line, err.column, err.message) == (line, column, message)


def test_symbols_are_ordered_and_overloads_take_them_as_souffle_does():
    text = """
    .decl s(x: symbol)
    s("b"). s("a"). s("bb"). s("a0").
    .decl less(x: symbol, y: symbol)
    less(x, y) :- s(x), s(y), x < y, y <= "b".
    .decl bounds(lo: symbol, hi: symbol)
    bounds(min(x, y, "c"), max(x, y)) :- s(x), s(y), x != y, strlen(x) = 2.
    .decl same(x: symbol)
    same(to_string(x)) :- s(x).
    """
    r = run(text)
    assert read(r, "less") == [("a", "a0"), ("a", "b"), ("a0", "b")]
    assert read(r, "bounds") == [("a", "a0"), ("a", "bb"), ("a0", "b"), ("a0", "bb"), ("b", "bb")]
    assert read(r, "same") == [("a",), ("a0",), ("b",), ("bb",)]


def test_change_tables_written_by_watch_hold_records_as_text():
    from compiler.cli.inputs import text_columns

    program = compiler.compile_datalog(PROGRAM)
    row = ((1, None), Branch("Zero"), Branch("Tue"), ("a", (1, 2)))
    specs, rows = text_columns(program, "out", [row + (5, -1)])
    assert [(c.name, c.kind) for c in specs] == [("l", "str"), ("e", "str"), ("d", "str"), ("s", "str")]
    assert rows == [("[1, nil]", "$Zero", "$Tue", "[a, [1, 2]]", 5, -1)]


def test_the_empty_record_is_a_record_and_not_nil():
    text = """
    .type Unit = []
    .decl u(x: Unit)
    .input u
    u([]).
    .decl seen(n: number)
    seen(1) :- u([]).
    seen(2) :- u(x), x != [].
    """
    r = run(text, {"u": [(None,)]})
    assert read(r, "u") == [(None,), ((),)]
    assert read(r, "seen") == [(1,), (2,)]
    r.remove("u", [(None,)])
    r.commit()
    assert read(r, "seen") == [(1,)]

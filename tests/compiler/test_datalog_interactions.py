"""Soufflé's types, records and ADTs together with the relation kinds and rewrites.

Records, ADTs and subset types (compiler.datalog.types) were built beside inline
relations, eqrel, choice-domain, subsumptive rules, magic sets and Python functors;
these tests hold each pair that meets in one program. Every program runs through
tests.compiler.replay: after every commit each relation equals the naive oracle (a
recomputation from scratch that knows records as tuples and ADT values as Branch)
and the commit's changes are the oracle's difference; the assertions pin the answers.
"""

import pytest

import compiler
from compiler import InlineError, TypeMismatchError, UnsupportedError
from compiler.values import Branch
from tests.compiler.replay import run

TYPES = """
.type Pair = [a: number, b: number]
.type Id <: number
.type Val = Num {n: number} | Sym {s: symbol} | Zero {}
"""


def test_inline_relations_with_records_and_adt_values_in_their_heads():
    text = TYPES + """
    .decl e(x: number, y: number)
    .input e
    .decl pair(p: Pair) inline
    pair([x, y]) :- e(x, y).
    .decl val(v: Val) inline
    val($Num(x)) :- e(x, _).
    val($Zero()) :- e(0, _).
    .decl second_of(x: number)
    second_of(x) :- pair([x, 2]).
    .decl whole(p: Pair)
    whole(p) :- pair(p), !pair([2, 5]).
    .decl no_successor(x: number)
    no_successor(x) :- e(x, _), !pair([x, x + 1]).
    .decl numbered(v: Val)
    numbered(v) :- val(v), !val($Num(7)).
    """
    r = run(text, {"e": [(1, 2), (3, 2), (4, 5)]})
    assert r.session.read("second_of") == [(1,), (3,)]
    assert r.session.read("whole") == [((1, 2),), ((3, 2),), ((4, 5),)]
    assert r.session.read("no_successor") == [(3,)]  # no [3, 4]
    assert sorted(r.session.read("numbered"), key=str) == [(Branch("Num", (1,)),), (Branch("Num", (3,)),), (Branch("Num", (4,)),)]
    r.insert("e", [(2, 5), (0, 0), (7, 1)])
    r.commit()
    assert r.session.read("whole") == []  # pair([2, 5]) now holds
    assert r.session.read("numbered") == []  # val($Num(7)) holds
    r.remove("e", [(7, 1)])
    r.commit()
    assert (Branch("Zero"),) in r.session.read("numbered")


@pytest.mark.parametrize(
    "rule, line, column, message",
    [
        ("r(x) :- e(x, _), !pair(p), p = [x, x].", 8, 19,
         "cannot inline the negated relation 'pair': the head of its clause at line 7 takes apart a record or ADT value "
         "that the negated atom does not write out, which negation cannot express"),
        ("r(x) :- e(x, _), !pair([x, _]).", 8, 28,
         "cannot inline the negated atom 'pair(...)' with '_' among its arguments: it would mean 'there is no value such that ...'"),
    ],
)  # fmt: skip
def test_a_negated_inline_atom_must_give_every_variable_of_a_head_record(rule, line, column, message):
    text = TYPES + ".decl e(x: number, y: number)\n.decl pair(p: Pair) inline\npair([x, y]) :- e(x, y).\n" + rule
    with pytest.raises(InlineError) as info:
        compiler.compile_datalog(text)
    assert (info.value.line, info.value.column, info.value.message) == (line, column, message)


def test_an_inline_relations_subset_types_are_checked_before_it_is_inlined():
    text = TYPES + ".decl e(x: number)\n.decl ids(x: Id) inline\nids(x) :- e(x).\n.decl r(x: Id)\nr(x) :- ids(x).\n"
    with pytest.raises(TypeMismatchError) as info:
        compiler.compile_datalog(text)
    assert (info.value.line, info.value.column) == (7, 5)
    assert info.value.message == (
        "variable 'x' is a 'number' (argument 1 of 'e'), but argument 1 of 'ids' is declared 'Id', which 'number' is not a subtype of"
        " (as(x, Id) takes it as one, unchecked)"
    )


def test_eqrel_over_a_subset_type_records_and_adt_values():
    text = TYPES + """
    .decl e(x: Id, y: Id)
    .input e
    .decl same(x: Id, y: Id) eqrel
    same(x, y) :- e(x, y).
    .decl ordered(x: Id, y: Id)
    ordered(x, y) :- same(x, y), x < y.
    .decl linked(p: Pair, q: Pair) eqrel
    linked([x, 0], [y, 1]) :- e(x, y).
    .decl partners(x: number, y: number)
    partners(x, y) :- linked([x, _], [y, 1]).
    .decl unlinked(x: number)
    unlinked(x) :- e(x, _), !linked([x, _], [100, 1]).
    .decl tagged(u: Val, v: Val) eqrel
    tagged($Num(x), $Sym(to_string(y))) :- e(x, y).
    .decl shares_a_tag(x: number, y: number)
    shares_a_tag(x, y) :- tagged($Num(x), $Num(y)), x != y.
    .output ordered, partners, unlinked, linked, shares_a_tag
    """
    r = run(text, {"e": [(1, 2), (2, 3), (7, 8), (5, 2)]})
    assert r.session.read("ordered") == [(1, 2), (1, 3), (1, 5), (2, 3), (2, 5), (3, 5), (7, 8)]
    assert r.session.read("shares_a_tag") == [(1, 5), (5, 1)]
    assert r.session.read("unlinked") == [(1,), (2,), (5,), (7,)]
    r.insert("e", [(2, 100)])
    r.commit()
    assert r.session.read("unlinked") == [(1,), (5,), (7,)]  # [2, 0] is linked to [100, 1] now
    r.remove("e", [(2, 3), (2, 100)])
    r.commit()
    assert r.session.read("ordered") == [(1, 2), (1, 5), (2, 5), (7, 8)]


def test_choice_over_adt_and_record_columns_keeps_the_least_value_not_the_first_stored():
    text = TYPES + """
    .decl e(k: number, x: number, s: symbol)
    .input e
    .decl pick(k: number, v: Val) choice-domain k
    pick(k, $Num(x)) :- e(k, x, _).
    pick(k, $Sym(s)) :- e(k, _, s).
    pick(k, $Zero()) :- e(k, 0, _).
    .decl pair_of(k: number, p: Pair) choice-domain k
    pair_of(k, [x, k]) :- e(k, x, _).
    pair_of(k, nil) :- e(k, 0, _).
    """
    r = run(text, {"e": [(1, 5, "b")]})
    assert r.session.read("pick") == [(1, Branch("Num", (5,)))]
    # Stored after $Num(5), but less: branches in name order (Num, Sym, Zero), then fields.
    r.insert("e", [(1, 3, "a"), (2, 0, "x")])
    r.commit()
    assert sorted(r.session.read("pick"), key=str) == [(1, Branch("Num", (3,))), (2, Branch("Num", (0,)))]
    assert r.session.read("pair_of") == [(1, (3, 1)), (2, None)]  # nil comes first
    r.remove("e", [(1, 3, "a"), (2, 0, "x")])
    r.commit()
    assert r.session.read("pick") == [(1, Branch("Num", (5,)))]


def test_choice_with_several_domains_over_a_record_column():
    text = TYPES + """
    .decl e(x: number, y: number)
    .input e
    .decl matched(x: number, p: Pair) choice-domain x, p
    matched(x, [y, y]) :- e(x, y).
    """
    r = run(text, {"e": [(1, 3), (2, 3), (3, 3)]})
    r.insert("e", [(1, 2), (2, 2)])  # stored after [3, 3], less by value
    r.commit()
    # in order: (1, [2, 2]) kept; (1, [3, 3]) has x 1 taken; (2, [2, 2]) p; (2, [3, 3]) kept; (3, [3, 3]) p
    assert r.session.read("matched") == [(1, (2, 2)), (2, (3, 3))]
    r.remove("e", [(1, 2)])
    r.commit()
    assert r.session.read("matched") == [(1, (3, 3)), (2, (2, 2))]


def test_recursive_choice_over_records_with_a_record_fact():
    text = TYPES + """
    .decl e(x: number, y: number)
    .input e
    .decl reached(p: Pair, d: number) choice-domain p
    reached([1, 1], 0).
    reached([y, y], d + 1) :- reached([x, x], d), e(x, y), d < 10.
    """
    r = run(text, {"e": [(1, 2), (2, 3), (3, 1)]})
    assert r.session.read("reached") == [((1, 1), 0), ((2, 2), 1), ((3, 3), 2)]
    r.insert("e", [(1, 3)])
    r.commit()
    assert r.session.read("reached") == [((1, 1), 0), ((2, 2), 1), ((3, 3), 1)]


def test_subsumptive_rules_over_records_and_adt_patterns_with_wildcards():
    text = TYPES + """
    .decl e(x: number, y: number)
    .input e
    .decl widest(p: Pair)
    widest([x, y]) :- e(x, y).
    widest([x, y]) <= widest([x, z]) :- y < z.
    .decl best(k: number, v: Val)
    best(x, $Num(y)) :- e(x, y).
    best(x, $Sym(to_string(y))) :- e(x, y), y > 4.
    best(x, $Num(_)) <= best(x, $Sym(_)) :- x = x.
    """
    r = run(text, {"e": [(1, 2), (1, 5), (2, 3)]})
    assert r.session.read("widest") == [((1, 5),), ((2, 3),)]
    assert r.session.read("best") == [(1, Branch("Sym", ("5",))), (2, Branch("Num", (3,)))]
    r.remove("e", [(1, 5)])
    r.commit()
    assert r.session.read("best") == [(1, Branch("Num", (2,))), (2, Branch("Num", (3,)))]


def test_magic_sets_over_a_recursion_of_records():
    text = TYPES + """
    .pragma "magic-transform" "*"
    .decl edge(x: number, y: number)
    .input edge
    .decl path(p: Pair)
    path([x, y]) :- edge(x, y).
    path([x, z]) :- path([x, y]), edge(y, z).
    .decl from_one(y: number)
    from_one(y) :- path([1, y]).
    .decl asked(p: Pair)
    .input asked
    .decl confirmed(p: Pair)
    confirmed(p) :- asked(p), path(p).
    .output from_one, confirmed
    """
    r = run(text, {"edge": [(1, 2), (2, 3), (3, 1), (4, 5)], "asked": [((1, 3),), ((4, 1),)]})
    assert r.program.checked.magic == ("path",)
    assert r.session.read("from_one") == [(1,), (2,), (3,)]
    assert r.session.read("confirmed") == [((1, 3),)]
    r.insert("edge", [(5, 1)])
    r.commit()
    assert r.session.read("confirmed") == [((1, 3),), ((4, 1),)]


def test_python_functors_over_subset_types_and_never_over_records():
    text = TYPES + ".functor twice(x: Id): Id\n.decl e(x: Id)\n.input e\n.decl r(x: Id)\nr(@twice(x)) :- e(x).\n"
    r = run(text, {"e": [(1,), (2,)]}, functors={"twice": lambda x: 2 * x})
    assert r.session.read("r") == [(2,), (4,)]
    with pytest.raises(UnsupportedError) as info:
        compiler.compile_datalog(TYPES + ".functor swap(p: Pair): Pair\n", functors={"swap": lambda p: p})
    assert (info.value.line, info.value.column) == (5, 15)
    assert info.value.message == "functor 'swap' takes or gives 'Pair', a record or ADT type, whose values a Python callable cannot take or give"


def test_an_eqrel_relates_values_of_one_subset_type_not_a_subset_and_its_base():
    with pytest.raises(TypeMismatchError) as info:
        compiler.compile_datalog(TYPES + ".decl same(x: Id, y: number) eqrel\n")
    assert (info.value.line, info.value.column) == (5, 19)
    assert info.value.message == "attribute 'y' of eqrel relation 'same' is a 'number', but attribute 'x' is a 'Id': an equivalence relates values of one type"
    compiler.compile_datalog(TYPES + ".type Alias = Id\n.decl same(x: Id, y: Alias) eqrel\n")  # an alias is the type it names

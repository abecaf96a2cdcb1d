"""eqrel relations: the least equivalence relation containing their pairs, kept as classes.

Every program runs through tests.compiler.replay: after every commit each readable
relation equals the naive oracle (which closes eqrel relations by union-find, sharing
nothing with the class labels of compiler.lowering.eqrel), and the commit's changes
are the oracle's difference; the assertions pin the answers themselves.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from compiler.program import SessionError
from tests.compiler.replay import replay_updates, run

PAIRS = ".decl p(x: number, y: number)\n.input p\n.decl same(x: number, y: number) eqrel\n.output same\nsame(x, y) :- p(x, y).\n"



def test_closure_is_reflexive_symmetric_and_transitive():
    r = run(PAIRS, {"p": [(1, 2), (3, 2), (7, 8)]})
    same = set(r.session.read("same"))
    assert same == {(a, b) for a in (1, 2, 3) for b in (1, 2, 3)} | {(a, b) for a in (7, 8) for b in (7, 8)}


def test_removing_a_pair_splits_a_class_and_inserting_merges_two():
    r = run(PAIRS, {"p": [(1, 2), (2, 3), (4, 5)]})
    r.remove("p", [(2, 3)])
    r.commit()
    assert set(r.session.read("same")) == {(1, 1), (1, 2), (2, 1), (2, 2), (4, 4), (4, 5), (5, 4), (5, 5)}
    r.insert("p", [(3, 4), (2, 3)])
    r.commit()
    assert len(r.session.read("same")) == 25  # one class of five
    r.remove("p", [(1, 2), (2, 3), (3, 4), (4, 5)])
    r.commit()
    assert r.session.read("same") == []


def test_reading_an_eqrel_with_bound_constant_and_wildcard_arguments():
    text = PAIRS + (
        ".decl q(x: number)\n.input q\n"
        "mates(x, y) :- q(x), same(x, y), x != y.\n"
        "of_one(y) :- same(1, y).\n"
        "member(x) :- q(x), same(x, _).\n"
        "loner(x) :- q(x), !same(x, _).\n"
        "apart(x, y) :- q(x), q(y), !same(x, y).\n"
        "nothing() :- !same(_, _).\n"
    )
    r = run(text, {"p": [(1, 2), (2, 3), (5, 6)], "q": [(1,), (5,), (9,)]})
    read = r.session.read
    assert read("mates") == [(1, 2), (1, 3), (5, 6)]
    assert read("of_one") == [(1,), (2,), (3,)]
    assert read("member") == [(1,), (5,)]
    assert read("loner") == [(9,)]
    # 9 is in no pair, so not even equivalent to itself
    assert read("apart") == [(1, 5), (1, 9), (5, 1), (5, 9), (9, 1), (9, 5), (9, 9)]
    assert read("nothing") == []
    r.remove("p", [(1, 2), (2, 3), (5, 6)])
    r.commit()
    assert read("nothing") == [()]


def test_counting_over_an_eqrel_counts_its_pairs():
    text = PAIRS + "pairs(c) :- c = count : { same(_, _) }.\nclass_size(x, c) :- p(x, _), c = count : { same(x, _) }.\n"
    r = run(text, {"p": [(1, 2), (2, 3), (7, 8)]})
    assert r.session.read("pairs") == [(13,)]  # 3 x 3 + 2 x 2
    assert r.session.read("class_size") == [(1, 3), (2, 3), (7, 2)]


def test_recursive_eqrel_as_soufflé_evaluates_it():
    # Soufflé's eqrel_inc: a pair per round, each read back through the closure.
    text = ".decl e(x: number, y: number) eqrel\ne(0, 0).\ne(x, x + 1) :- x < 20, e(x, x).\n.output e"
    r = run(text)
    assert len(r.session.read("e")) == 21 * 21


def test_eqrel_in_a_recursion_with_another_relation():
    text = (
        ".decl edge(x: symbol, y: symbol)\n.input edge\n"
        ".decl reach(x: symbol, y: symbol) eqrel\n.output reach\n"
        "node(x) :- edge(x, _).\nnode(y) :- edge(_, y).\n"
        "reach(x, x) :- node(x).\nreach(x, y) :- reach(x, z), edge(z, y).\n"
        "big(x) :- reach(x, y), reach(x, z), y != z.\n"
    )
    r = run(text, {"edge": [("a", "b"), ("b", "c"), ("d", "e"), ("f", "f")]})
    assert r.session.read("big") == [("a",), ("b",), ("c",), ("d",), ("e",)]
    r.remove("edge", [("b", "c")])
    r.insert("edge", [("c", "f"), ("e", "a")])
    r.commit()
    assert r.session.read("big") == [("a",), ("b",), ("c",), ("d",), ("e",), ("f",)]


def test_facts_only_eqrel_and_an_empty_one():
    text = (
        '.decl housemates(x: symbol, y: symbol) eqrel\nhousemates("Michael", "Pete").\n'
        ".decl empty(x: number, y: number) eqrel\n.output empty\n"
        'statement(x, r, y) :- housemates(x, y), r = "lives with".\n'
    )
    r = run(text)
    assert r.session.read("statement") == [
        ("Michael", "lives with", "Michael"), ("Michael", "lives with", "Pete"),
        ("Pete", "lives with", "Michael"), ("Pete", "lives with", "Pete"),
    ]  # fmt: skip
    assert r.session.read("empty") == []


def test_an_eqrel_no_output_names_is_not_materialised():
    program = compiler.compile_datalog(PAIRS.replace(".output same\n", "") + "r(x) :- same(x, 1).\n.output r")
    assert "same" not in program.readable()
    session = program.session()
    session.insert("p", [(1, 2)])
    session.commit()
    assert session.read("r") == [(1,), (2,)]
    try:
        session.read("same")
    except SessionError as e:
        assert "'same' is an eqrel relation that no output names" in str(e)
    else:
        raise AssertionError("reading a non-output eqrel should say why it cannot")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(st.booleans(), st.integers(0, 7), st.integers(0, 7)), max_size=8), min_size=1, max_size=5))
def test_random_updates_equal_recomputation(batches):
    text = PAIRS + ".decl q(x: number)\n.input q\nq(0).\nwith0(y) :- q(x), same(x, y).\napart(x, y) :- p(x, _), p(y, _), !same(x, y).\n"
    replay_updates(text, "p", batches)

"""Existence tests (compiler.plan.rewrites.existence): a part of a join nothing reads is
planned apart, reduced to one row of no columns, and crossed with the rest.

Plan shapes say the rewrite happens where it may and nowhere else; the programs
run against the naive oracle (tests.compiler.replay) through updates that make the
tested part empty and non-empty again, so "after updates == recomputation".
"""

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from compiler.plan import Aggregate, Binding, Distinct, Join, Plan, Project, Scan, walk
from compiler.plan.rewrites import isolate_existence_tests, push_filters
from compiler.sql import compile_sql
from tests.compiler.replay import Replay

N = "number"
UNARY = ".decl b(x: number)\n.decl c(x: number)\n.decl d(x: number)\n.input b, c, d\n"


def bodies(program):
    return {b.name: b.body for b in program.plan.bindings()}


def existence_tests(body):
    """The 0-ary Distincts of a body: its isolated existence tests."""
    return [n for n in walk(body) if isinstance(n, Distinct) and n.arity == 0]


def scans(node):
    return {n.name for n in walk(node) if isinstance(n, Scan)}


def test_a_part_sharing_no_variable_and_not_read_becomes_an_existence_test():
    a = bodies(compiler.compile_datalog(UNARY + "a(x) :- b(x), c(y), d(y)."))["a"]
    (test,) = existence_tests(a)
    assert scans(test) == {"c", "d"}
    # b is crossed with the test only, never with c: every Join either lies inside the
    # test or has the test as one side.
    for join in (n for n in walk(a) if isinstance(n, Join)):
        inside = any(join is n for n in walk(test))
        assert inside or test in (join.left, join.right)
        if not inside:
            assert scans(join.left if join.right is test else join.right) == {"b"}


def test_each_unread_component_is_its_own_test_and_a_zero_ary_head_tests_everything():
    program = compiler.compile_datalog(UNARY + "a(x) :- b(x), c(_), d(z), z > 2.\nt() :- b(x), c(y), x < y, d(_).")
    a, t = bodies(program)["a"], bodies(program)["t"]
    assert sorted(sorted(scans(test)) for test in existence_tests(a)) == [["c"], ["d"]]
    # t's body: {b, c} linked by x < y, and d apart: two tests under t's own Distinct.
    assert sorted(sorted(scans(test)) for test in existence_tests(t.input)) == [["b", "c"], ["d"]]


def test_what_is_read_above_or_linked_by_a_condition_stays_in_the_join():
    program = compiler.compile_datalog(UNARY + "r(x, y) :- b(x), c(y).\ns(x) :- b(x), c(y), x < y.\nu(x) :- b(x), c(y), !d(y).")
    for name in ("r", "s", "u"):
        assert existence_tests(bodies(program)[name]) == [], name


def test_counted_rows_keep_their_multiplicities():
    # count(*) over a cross product counts pairs: c must stay a side of the join.
    pairs = Aggregate(Project(Join(Scan("b", (N,)), Scan("c", (N,)), ()), (), span=None), (), "count", None)
    plan = Plan({"b": (N,), "c": (N,)}, (Binding("n", pairs),), ("n",))
    assert isolate_existence_tests(push_filters(plan)).bindings()[0].body == pairs


@pytest.mark.parametrize("query, tested", [("SELECT count(*) AS n FROM b, c", False), ("SELECT DISTINCT b.x FROM b, c WHERE c.y > 1", True)])
def test_sql_bags_and_sets_against_duckdb(query, tested):
    program = compile_sql(query, {"b": {"x": "int"}, "c": {"y": "int"}})
    assert bool([t for b in program.plan.bindings() for t in existence_tests(b.body)]) == tested
    rows = {"b": [(1,), (2,), (2,)], "c": [(5,), (6,), (1,)]}
    session = program.session()
    con = duckdb.connect()
    for table, column in (("b", "x"), ("c", "y")):
        session.insert(table, rows[table])
        con.execute(f"CREATE TABLE {table} ({column} INT)")
        con.executemany(f"INSERT INTO {table} VALUES (?)", rows[table])
    session.commit()
    assert sorted(session.read(program.plan.outputs[0])) == sorted(con.execute(query).fetchall())


def test_updates_empty_and_refill_an_existence_test():
    text = UNARY + "a(x) :- b(x), c(y), d(y).\nt() :- c(y), d(y), b(_).\nn(x) :- b(x), !c(x), d(_)."
    replay = Replay(compiler.compile_datalog(text))  # each commit: session == oracle
    states = []
    replay.insert("b", [(1,), (2,), (3,)])
    replay.insert("c", [(5,), (6,)])
    for inserts, removes in [({}, {}), ({"d": [(6,)]}, {}), ({}, {"c": [(6,)]}), ({"c": [(6,), (1,)], "d": [(7,)]}, {"b": [(2,)]})]:
        for relation, rows in inserts.items():
            replay.insert(relation, rows)
        for relation, rows in removes.items():
            replay.remove(relation, rows)
        replay.commit()
        states.append(bool(replay.session.read("t")))
    assert states == [False, True, False, True]  # c ⋈ d empty, then not, then empty again, then not


RECURSIVE = """
.decl c(x: number)
.decl d(x: number)
.input c, d
.decl a(x: number)
.decl b(x: number)
a(x) :- b(x), c(y), d(y).
b(0).
b(x + 1) :- a(x), x < 12.
.output a
"""


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(st.sampled_from("cd"), st.booleans(), st.integers(0, 3)), max_size=5), min_size=1, max_size=5))
def test_a_recursion_through_an_existence_test_follows_every_update(batches):
    """independent_body3's shape: each loop round crosses one new b row with the test."""
    program = compiler.compile_datalog(RECURSIVE)
    assert len(existence_tests(bodies(program)["a"])) == 1
    replay = Replay(program)
    present = set()
    for batch in batches:
        for relation, insert, value in batch:
            row = (relation, value)
            if insert and row not in present:
                replay.insert(relation, [(value,)])
                present.add(row)
            elif not insert and row in present:
                replay.remove(relation, [(value,)])
                present.discard(row)
        replay.commit()

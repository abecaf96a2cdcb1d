"""Recursive CTEs beyond DuckDB's reach, against other oracles: mutual recursion
equals its Datalog twin under random edge changes; UNION ALL recursion equals DuckDB
within the iteration limit and is an error at the CTE past it; a scalar
subquery with two rows is an error at commit, as in SQL engines."""

from __future__ import annotations

import random

import duckdb

import pytest

import compiler
from compiler.sql import SQLRuntimeError, compile_sql

from tests.compiler.sql.oracle import SCHEMA, Tables, as_multiset

MUTUAL_SQL = """
with recursive a(v) as (
    select 0 union select e.dst from b join edge e on b.v = e.src where e.src < e.dst
), b(v) as (
    select a.v from a union select e.dst from a join edge e on a.v = e.src where e.src > e.dst
)
select v from b
"""

MUTUAL_DATALOG = """
.decl edge(src: number, dst: number)
.input edge
a(0).
a(y) :- b(x), edge(x, y), x < y.
b(x) :- a(x).
b(y) :- a(x), edge(x, y), x > y.
.output b
"""


def test_mutual_recursion_equals_datalog_under_changes():
    sql = compile_sql(MUTUAL_SQL, {"edge": {"src": "int not null", "dst": "int not null"}})
    assert len([s for s in sql.plan.steps if hasattr(s, "bindings")]) == 1  # one fixpoint for both CTEs
    datalog = compiler.compile_datalog(MUTUAL_DATALOG)
    s, d = sql.session(), datalog.session()
    rnd = random.Random(3)
    edges = set()
    for step in range(6):
        for _ in range(8):
            e = (rnd.randrange(10), rnd.randrange(10))
            if e in edges:
                edges.discard(e)
                s.remove("edge", [e]), d.remove("edge", [e])
            else:
                edges.add(e)
                s.insert("edge", [e]), d.insert("edge", [e])
        s.commit(), d.commit()
        assert s.read("result") == d.read("b")
    assert len(d.read("b")) > 1


def test_union_all_recursion_within_the_limit_equals_duckdb():
    q = "with recursive r(n) as (select 1 union all select n + 1 from r where n < 30) select n from r"
    tables = Tables(1)
    session = compile_sql(q, SCHEMA, dialect="duckdb", recursion_limit=40).session()
    session.commit()
    assert as_multiset(session.read("result")) == as_multiset(tables.duck_rows(q))


def test_union_all_recursion_within_the_limit_finishes_and_past_it_is_an_error_at_the_cte():
    """The guard trips only if a row it kept from being extended would have made a row:
    11 rows need exactly 10 iterations, 12 rows need 11."""
    q = "with recursive walk(n) as (select 1 union all select n + 1 from walk where n < {}) select n from walk"
    session = compile_sql(q.format(11), SCHEMA, recursion_limit=10).session()
    session.commit()
    assert session.read("result") == [(n,) for n in range(1, 12)]
    session = compile_sql(q.format(12), SCHEMA, recursion_limit=10, source_name="walk.sql").session()
    with pytest.raises(SQLRuntimeError) as info:
        session.commit()
    err = info.value
    assert (err.line, err.column) == (1, 16)
    assert err.message == ("recursive CTE 'walk' (UNION ALL) did not finish within 10 iterations; raise the limit"
                           " (deltalog --recursion-limit N, compile_sql(..., recursion_limit=N)), or use UNION for set semantics")
    assert str(err).startswith("walk.sql:1:16: SQLRuntimeError: recursive CTE 'walk'")


def test_the_default_guard_lets_a_long_series_finish_as_in_duckdb():
    q = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM t WHERE n < 5000) SELECT sum(n) FROM t"
    session = compile_sql(q, SCHEMA).session()
    session.commit()
    assert session.read("result") == Tables(1).duck_rows(q) == [(12502500,)]


def test_union_all_over_a_cycle_is_an_error_then_recovers():
    q = "with recursive p(x, y) as (select src, dst from edge union all select p.x, e.dst from p join edge e on p.y = e.src) select x, y from p"
    session = compile_sql(q, SCHEMA, dialect="duckdb", recursion_limit=50).session()  # a cycle runs to the limit
    session.insert("edge", [(1, 2), (2, 3)])
    session.commit()
    assert sorted(session.read("result")) == [(1, 2), (1, 3), (2, 3)]
    session.insert("edge", [(3, 1)])
    with pytest.raises(SQLRuntimeError, match="'p'"):
        session.commit()
    session.remove("edge", [(3, 1)])
    session.commit()
    assert sorted(session.read("result")) == [(1, 2), (1, 3), (2, 3)]


SHORTEST = """with recursive d(n, w) as (
    select n, min(w) from (select 0 as n, 0 as w union all select e.dst, d.w + 1 from d join edge e on d.n = e.src) s group by n
) select n, w from d"""


def test_min_recursion_within_the_limit_finishes_and_past_it_is_an_error_at_the_cte():
    """Shortest distances along a chain 0 -> 1 -> ... -> 29 need 30 iterations: under a limit of
    40 they are right, and under 20 the commit is an error naming the CTE, after which the
    session (stopped mid-step) refuses to go on."""
    chain = [(i, i + 1) for i in range(29)]
    session = compile_sql(SHORTEST, SCHEMA, recursion_limit=40).session()
    session.insert("edge", chain)
    session.commit()
    assert sorted(session.read("result")) == [(n, n) for n in range(30)]
    session = compile_sql(SHORTEST, SCHEMA, recursion_limit=20, source_name="d.sql").session()
    session.insert("edge", chain)
    with pytest.raises(SQLRuntimeError) as info:
        session.commit()
    err = info.value
    assert (err.line, err.column) == (1, 16)
    assert err.message.startswith("recursive CTE 'd' did not settle within 20 iterations: MIN and MAX over a recursion")
    with pytest.raises(compiler.SessionError, match="stopped at an error and cannot go on: d.sql:1:16"):
        session.commit()
    with pytest.raises(compiler.SessionError, match="stopped at an error"):
        session.read("result")


def test_a_recursion_that_is_not_a_union_reads_its_own_columns_unqualified():
    """Inside a derived table of its own definition, the CTE's columns need no qualifier
    (sqlglot sees a recursive CTE's columns only in a UNION's first branch), with or without
    a column list, and mean what the qualified ones do."""
    qualified = SHORTEST
    unqualified = SHORTEST.replace("e.dst, d.w + 1 from d join edge e on d.n = e.src", "dst, w + 1 from d join edge on n = src")
    bare = unqualified.replace("d(n, w) as (\n    select n, min(w)", "d as (\n    select n, min(w) as w")
    assert unqualified != qualified and bare != unqualified
    chain = [(i, i + 1) for i in range(5)] + [(0, 3)]
    answers = []
    for q in (qualified, unqualified, bare):
        session = compile_sql(q, SCHEMA).session()
        session.insert("edge", chain)
        session.commit()
        answers.append(sorted(session.read("result")))
    assert answers == [[(0, 0), (1, 1), (2, 2), (3, 1), (4, 2), (5, 3)]] * 3


def test_max_recursion_that_never_settles_is_an_error_instead_of_a_hang():
    """MAX climbing to a bound, past it back to the start, and up again: no fixpoint (DuckDB's
    iteration on the newest rows only would stop; deltalog's least-fixpoint meaning has none)."""
    q = ("with recursive r(k, v) as (select 1, 0 union select k, max(v + 1) from r where v < 5 group by k)"
         " select k, v from r")
    session = compile_sql(q, SCHEMA).session()
    with pytest.raises(SQLRuntimeError, match="recursive CTE 'r' did not settle within 10000 iterations"):
        session.commit()


def test_scalar_subquery_with_two_rows_is_an_error():
    session = compile_sql("select a, (select b from s) as x from t", SCHEMA).session()
    session.insert("t", [(1, 2, "x", 1.0)])
    session.insert("s", [(1, 5, "y")])
    session.commit()
    assert session.read("result") == [(1, 5)]
    session.insert("s", [(2, 6, "z")])
    with pytest.raises(SQLRuntimeError) as info:
        session.commit()
    assert (info.value.line, info.value.column, info.value.message) == (1, 19, "a scalar subquery returned more than one row")


def test_correlated_scalar_subquery_in_a_recursive_member_checks_its_rows_at_the_fixpoint():
    """The check that a correlated scalar subquery gives one row per outer row reads the
    fixpoint's rows, so it follows it: an error at the commit that breaks it, as in DuckDB,
    and the same rows as DuckDB once it is repaired."""
    q = ("with recursive r(v) as (select 0 union select e.dst from r join edge e on r.v = e.src"
         " where e.dst <> (select s.b from s where s.a = e.src)) select v from r")
    tables = Tables(1, sizes={"t": 0, "s": 0, "edge": 0})
    session = compile_sql(q, SCHEMA, dialect="duckdb").session()
    edges, s_rows = [(0, 1), (1, 2), (2, 3)], [(0, 5, "x"), (1, 5, "y"), (2, 3, "z")]  # 3 <> 3 stops at 2
    for name, rows in (("edge", edges), ("s", s_rows)):
        session.insert(name, rows)
        tables.duck.execute(f"insert into {name} values " + ", ".join(str(r) for r in rows))
    session.commit()
    assert session.read("result") == [(0,), (1,), (2,)] == tables.duck_rows(q + " order by v")
    session.insert("s", [(1, 7, "w")])
    tables.duck.execute("insert into s values (1, 7, 'w')")
    with pytest.raises(duckdb.Error, match="More than one row"):
        tables.duck_rows(q)
    with pytest.raises(SQLRuntimeError) as info:
        session.commit()
    err = info.value
    assert (err.line, err.column, err.message) == (1, 110, "a correlated scalar subquery returned more than one row for an outer row")
    session.remove("s", [(1, 7, "w")])
    session.commit()
    assert session.read("result") == [(0,), (1,), (2,)]


def test_a_plan_that_cannot_be_built_is_a_positioned_error(monkeypatch):
    """A gap in the translation (a PlanError) is reported at the statement, not as an internal error."""
    from compiler.plan.errors import PlanError
    from compiler.sql.errors import UnsupportedSQLError
    from compiler.sql.translator import Translator

    def broken(self, q):
        raise PlanError("ordered: Ref 'r' is not defined before, or has other types")

    monkeypatch.setattr(Translator, "ordered_query", broken)
    with pytest.raises(UnsupportedSQLError) as info:
        compile_sql("select 1;\n  select a from t", SCHEMA)
    err = info.value
    assert (err.line, err.column) == (1, 8)
    assert err.message == ("this SQL could not be planned (ordered: Ref 'r' is not defined before, or has other types);"
                           " it is a deltalog limitation -- please report it")


def test_the_cli_takes_a_recursion_limit_and_exits_1_at_the_cte_past_it(tmp_path, capsys, monkeypatch):
    from compiler.cli import main
    from runtime.spark import SparkProvider

    monkeypatch.setattr(SparkProvider, "_start", lambda self: pytest.fail("Spark was started"))
    program = tmp_path / "series.sql"
    program.write_text("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM t WHERE n < 1000)\nSELECT sum(n) FROM t\n")
    assert main(["run", str(program)]) == 0  # the default lets it finish
    out, err = capsys.readouterr()
    assert (out.split()[-1], err) == ("500500", "")
    assert main(["run", str(program), "--recursion-limit", "500"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0] == (f"{program}:1:16: SQLRuntimeError: recursive CTE 't' (UNION ALL) did not finish within 500 iterations;"
                                   " raise the limit (deltalog --recursion-limit N, compile_sql(..., recursion_limit=N)), or use UNION for set semantics")
    assert main(["check", str(program), "--recursion-limit", "999"]) == 0  # every command that compiles takes it
    with pytest.raises(SystemExit) as info:
        main(["run", str(program), "--recursion-limit", "0"])
    assert info.value.code == 2

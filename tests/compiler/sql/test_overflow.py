"""Integer overflow and division by zero: SQL's integers are 64 bits, and a result that
does not fit is an error at commit (as DuckDB raises one), never a wrapped-around value;
so is an integer division or remainder by zero. Each case is checked against DuckDB on
the same rows: where DuckDB raises its out-of-range or division-by-zero error, the
commit raises SQLRuntimeError at the expression; where it answers (the failing
expression is in a CASE branch, or on the side of AND / OR that is not evaluated), the
rows are DuckDB's."""

from __future__ import annotations

import random

import duckdb
import pytest

from compiler.sql import SQLRuntimeError, compile_sql

SCHEMA = {"t": {"k": "int", "a": "int", "b": "int"}}
BIG = 2**63 - 1
EDGES = [0, 1, -1, 2, -2, 3, 2**31, -(2**31), 2**32, 3037000499, 3037000500, -3037000500,
         2**62, -(2**62), BIG, BIG - 1, -BIG, -BIG - 1]  # fmt: skip


def duck(query: str, rows) -> list | None:
    """DuckDB's rows, or None where it raises an out-of-range (overflow or cast) or a
    division-by-zero error."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (k BIGINT, a BIGINT, b BIGINT)")
    if rows:
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    try:
        return sorted(con.execute(query).fetchall(), key=repr)
    except (duckdb.OutOfRangeException, duckdb.ConversionException):
        return None
    except duckdb.InvalidInputException as e:
        assert "Division by zero" in str(e)
        return None


def ours(query: str, rows) -> list | None:
    session = compile_sql(query, SCHEMA, dialect="duckdb").session()
    session.insert("t", rows)
    try:
        session.commit()
    except SQLRuntimeError as e:
        assert "does not fit in a 64-bit integer" in e.message or e.message.startswith("division by zero in "), e.message
        return None
    return sorted(session.read("result"), key=repr)


@pytest.mark.parametrize("op", ["+", "-", "*"])
def test_arithmetic_overflows_exactly_where_duckdb_does(op):
    """Pairs from values at the edges of int64 (and of its square root), in random
    groups: an error exactly when DuckDB has one, and otherwise DuckDB's values."""
    rng = random.Random(op)
    pairs = [(a, b) for a in EDGES for b in EDGES]
    rng.shuffle(pairs)
    query = f"select k, a {op} b from t"
    errors = 0
    for start in range(0, len(pairs), 9):
        rows = [(i, a, b) for i, (a, b) in enumerate(pairs[start:start + 9])]
        expected = duck(query, rows)
        errors += expected is None
        assert ours(query, rows) == expected, rows
    assert errors > 10  # the groups did overflow, so agreeing says something


@pytest.mark.parametrize("query", [
    "select -a from t",
    "select abs(a) from t",
    "select a // b from t",
    "select cast(a * 1.0e10 as bigint) from t",
])
def test_unary_division_and_cast_overflow_where_duckdb_does(query):
    for rows in ([(1, -BIG - 1, -1)], [(1, -BIG, -1)], [(1, 10**9, -1)], [(1, 10**8, 1)]):
        assert ours(query, rows) == duck(query, rows), (query, rows)


@pytest.mark.parametrize("query", ["select k, a // b from t", "select k, a % b from t", "select k, (a + 1) // b from t"])
def test_integer_division_by_zero_is_an_error_where_duckdb_has_one(query):
    for rows in ([(1, 7, 2), (2, -7, 0)], [(1, 7, 2), (2, None, 0), (3, 5, None)], [(1, 0, -3)]):
        assert ours(query, rows) == duck(query, rows), (query, rows)
    assert ours(query, [(2, -7, 0)]) is None


@pytest.mark.parametrize("query", [
    "select k, case when b <> 0 then a // b else 0 end from t",
    "select k from t where b <> 0 and a % b <> 99",
    "select k, case when a < 100 then a * b else 0 end from t",
    "select k, case when a >= 100 then 0 when b > 0 then a * b end from t",
    "select k, coalesce(a, a * b) from t",
    "select k from t where a < 100 and a * b > 0",
    "select k from t where a >= 100 or a * b > 0",
    "select k, if(a < 100, a * b, -1) from t",
    "select k, try_cast(a * 1.0e15 as bigint) from t",
])
def test_an_expression_that_is_not_evaluated_does_not_overflow(query):
    rows = [(1, 5, 7), (2, 2**40, 2**40), (3, -3, 2), (4, 3, None), (5, 4, 0)]
    expected = duck(query, rows)
    assert expected  # DuckDB answers, with rows
    assert ours(query, rows) == expected


def test_sum_is_an_error_where_a_group_total_does_not_fit():
    """DuckDB sums BIGINTs into a 128-bit total; deltalog's totals are 64 bits, so a group
    whose total does not fit is an error -- not the total wrapped around -- and a total
    that fits is exact even if a partial sum on the way did not."""
    query = "select k, sum(a) from t group by k"
    fits = [(1, BIG, None), (1, 5, None), (1, -9, None), (2, 3, None)]
    assert ours(query, fits) == duck(query, fits) == [(1, BIG - 4), (2, 3)]
    over = fits + [(2, BIG, None)]
    total = dict(duck(query, over))[2]
    assert total > BIG
    assert ours(query, over) is None


def test_an_overflow_is_reported_at_its_expression_and_goes_when_its_row_goes():
    session = compile_sql("select k,\n  a + b as s from t", SCHEMA, source_name="q.sql").session()
    session.insert("t", [(1, 2, 3), (2, BIG, 1)])
    with pytest.raises(SQLRuntimeError) as info:
        session.commit()
    err = info.value
    assert (err.line, err.column, err.message) == (2, 3, "integer overflow: t.a + t.b does not fit in a 64-bit integer")
    session.remove("t", [(2, BIG, 1)])
    session.commit()
    assert session.read("result") == [(1, 5)]


def test_overflow_checks_of_one_relation_share_one_binding_and_report_the_first():
    """Three expressions over t's rows: one check binding, and the error is the first
    expression (in the select list's order) that overflows."""
    program = compile_sql("select a + b, a - b, a * b from t", SCHEMA)
    assert len(program.checks) == 1
    session = program.session()
    session.insert("t", [(1, -BIG, 2)])  # a - b and a * b overflow; a + b does not
    with pytest.raises(SQLRuntimeError) as info:
        session.commit()
    assert info.value.message == "integer overflow: t.a - t.b does not fit in a 64-bit integer"


def test_a_join_condition_is_checked_on_its_side_without_a_cross_product():
    from compiler.plan import Join
    from compiler.plan.nodes import walk

    schema = {"t": SCHEMA["t"], "u": {"x": "int"}}
    program = compile_sql("select t.k from t join u on t.a + 1 = u.x", schema)
    (check,) = program.checks
    body = next(b.body for b in program.plan.bindings() if b.name == check)
    assert not any(isinstance(n, Join) for n in walk(body))
    session = program.session()
    session.insert("t", [(1, BIG, 0)])  # DuckDB computes the key for every row of t: an error without rows in u
    with pytest.raises(SQLRuntimeError, match=r"t\.a \+ 1 does not fit"):
        session.commit()

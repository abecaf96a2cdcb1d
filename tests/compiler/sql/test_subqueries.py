"""Scalar subqueries, correlated ones decorrelated: one value per outer row (NULL when the
subquery has no row, COUNT 0), kept current as both sides change, and more than one row
an SQLRuntimeError at commit -- exactly when DuckDB raises its error for the same data."""

from __future__ import annotations

import re

import duckdb
import pytest

from compiler.sql import SQLRuntimeError, compile_sql

from tests.compiler.sql.oracle import SCHEMA, Tables, as_multiset

ORDERS = {"o": {"id": "int", "cust": "int"}, "p": {"cust": "int", "amount": "int", "note": "text"}}


def test_correlated_aggregates_by_hand():
    sql = "select id, (select max(amount) from p where p.cust = o.cust) as top, (select count(*) from p where p.cust = o.cust) as n from o"
    session = compile_sql(sql, ORDERS).session()
    session.insert("o", [(1, 10), (2, 20), (3, None), (4, 10)])
    session.insert("p", [(10, 5, "a"), (10, 7, "b"), (30, 1, "c")])
    session.commit()
    assert sorted(session.read("result")) == [(1, 7, 2), (2, None, 0), (3, None, 0), (4, 7, 2)]
    session.remove("p", [(10, 7, "b")])
    session.insert("p", [(20, 3, "d")])
    assert dict(session.commit()["result"]) == {(1, 7, 2): -1, (4, 7, 2): -1, (1, 5, 1): 1, (4, 5, 1): 1, (2, None, 0): -1, (2, 3, 1): 1}


def test_correlated_scalar_in_where_by_hand():
    sql = "select id from o where id > (select avg(amount) from p where p.cust = o.cust)"
    session = compile_sql(sql, ORDERS).session()
    session.insert("o", [(1, 10), (6, 10), (9, 20), (9, 30)])
    session.insert("p", [(10, 2, "a"), (10, 4, "b"), (20, 10, "c")])
    session.commit()
    assert session.read("result") == [(6,)]  # 9 > NULL (customer 30 has no rows) is not TRUE


def test_more_than_one_row_is_an_error_until_the_data_is_repaired():
    sql = "select id, (select note from p where p.cust = o.cust) as note from o"
    session = compile_sql(sql, ORDERS).session()
    session.insert("o", [(1, 10), (2, 20)])
    session.insert("p", [(10, 1, "x")])
    session.commit()
    assert sorted(session.read("result")) == [(1, "x"), (2, None)]
    session.insert("p", [(10, 2, "y")])
    with pytest.raises(SQLRuntimeError) as info:
        session.commit()
    err = info.value
    assert (err.line, err.column, err.message) == (1, 20, "a correlated scalar subquery returned more than one row for an outer row")
    session.remove("p", [(10, 1, "x")])
    session.commit()
    assert sorted(session.read("result")) == [(1, "y"), (2, None)]


def test_outer_rows_that_share_values_share_one_evaluation():
    sql = "select id, (select max(amount) from p where p.cust = o.cust) from o"
    program = compile_sql(sql, ORDERS)
    text = program.explain()
    # decorrelated: one grouped aggregate over p per distinct customer, no per-row cross product
    assert "Aggregate max" in text and "(cross product)" not in text


# Non-aggregate scalar subqueries can have several rows: then both engines must fail.
MAY_FAIL = [
    "select a, (select e from s where s.a = t.a and s.b = t.b) as e from t",
    "select a, (select s.b from s where s.a = t.a and s.e = t.c) as m from (select distinct a, c from t) as t",
    "select a, b from t where b = (select s.b from s where s.a = t.a and s.b > 2)",
    "select a, (select b from s where s.e = 'fig') as f from t",
]


def _duck(tables, sql):
    try:
        return tables.duck_rows(sql), None
    except duckdb.InvalidInputException as e:
        assert re.search("More than one row returned by a subquery", str(e))
        return None, e


@pytest.mark.parametrize("sql", MAY_FAIL)
def test_errors_and_answers_agree_with_duckdb_under_changes(sql):
    outcomes = set()
    for seed in range(3):
        tables = Tables(seed=seed * 31 + len(sql), sizes={"t": 16, "s": 10, "edge": 2})
        session = compile_sql(sql, SCHEMA, dialect="duckdb").session()
        tables.load(session)
        for _ in range(6):
            want, failed = _duck(tables, sql)
            if failed is None:
                session.commit()
                assert as_multiset(session.read("result")) == as_multiset(want), sql
            else:
                with pytest.raises(SQLRuntimeError, match="returned more than one row"):
                    session.commit()
            outcomes.add(failed is None)
            tables.change(session, 3)
    assert outcomes == {True, False}, "the data should exercise both answers and errors"

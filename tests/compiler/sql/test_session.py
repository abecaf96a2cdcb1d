"""The SQL session API: rows with None for NULL, bags (a row read as often as it
occurs), ORDER BY order on read, commits reporting count changes, views as outputs,
and usage errors that name the table and change nothing."""

from __future__ import annotations

import pytest

from compiler import Program
from compiler.program import SessionError
from compiler.sql import compile_sql

from tests.compiler.sql.oracle import SCHEMA, Tables, normalize


def test_program_kind_and_outputs():
    p = compile_sql("create view big as select a from t where a > 1; select a, count(*) as n from big group by a order by a", SCHEMA)
    assert isinstance(p, Program)
    assert p.outputs == ("big", "result")
    assert set(p.inputs) == {"t", "s", "edge"}


def test_nulls_bags_and_order():
    p = compile_sql("select a, c from t order by a desc, c", SCHEMA, dialect="duckdb")
    s = p.session()
    rows = [(1, "x"), (None, "y"), (1, "x"), (2, None)]
    s.insert("t", [(a, 0, c, None) for a, c in rows])
    changes = s.commit()
    assert changes["result"] == [((2, None), 1), ((1, "x"), 2), ((None, "y"), 1)]
    assert s.read("result") == [(2, None), (1, "x"), (1, "x"), (None, "y")]
    s.remove("t", [(1, 0, "x", None)])
    assert s.commit() == {"result": [((1, "x"), -1)]}
    assert s.read("result") == [(2, None), (1, "x"), (None, "y")]


def test_maintained_top_k_equals_duckdb_after_every_commit():
    q = "select a, b from t order by a desc, b limit 3"
    tables = Tables(11)
    s = compile_sql(q, SCHEMA, dialect="duckdb").session()
    tables.load(s)
    s.commit()
    for _ in range(6):
        assert normalize(s.read("result")) == normalize(tables.duck_rows(q))
        tables.change(s, 3)
        s.commit()


def test_booleans_come_back_as_booleans():
    s = compile_sql("select a > 1 as big from t", SCHEMA).session()
    s.insert("t", [(0, 0, "", 0.0), (5, 0, "", 0.0), (None, 0, "", 0.0)])
    s.commit()
    assert sorted(s.read("result"), key=str) == [(False,), (None,), (True,)]


@pytest.mark.parametrize(
    "table,row,message",
    [
        ("nope", (1,), "unknown relation 'nope'"),
        ("t", (1, 2), "has 2 values, but 't' has 4 columns"),
        ("t", ("x", 2, "c", 1.0), "column 'a' is int, got 'x'"),
        ("result", (1,), "'result' is not an input relation"),
    ],
)
def test_bad_rows_raise_and_change_nothing(table, row, message):
    s = compile_sql("select a from t", SCHEMA).session()
    with pytest.raises(SessionError, match=message):
        s.insert(table, [(1, 1, "a", 1.0), row])
    s.commit()
    assert s.read("result") == []


def test_not_null_columns_reject_none():
    s = compile_sql("select src from edge", {"edge": {"src": "int not null", "dst": "int"}}).session()
    with pytest.raises(SessionError, match="column 'src' is NOT NULL"):
        s.insert("edge", [(None, 1)])
    s.insert("edge", [(1, None)])
    s.commit()
    assert s.read("result") == [(1,)]


def test_deleting_a_row_that_is_not_there_is_refused():
    s = compile_sql("select a, c from t", SCHEMA).session()
    s.insert("t", [(1, 0, "x", None), (1, 0, "x", None)])
    s.commit()
    s.remove("t", [(1, 0, "x", None)])  # one of two copies
    with pytest.raises(SessionError, match=r"'t': cannot remove \(None, 0, 'x', None\) at time 1: it is not there"):
        s.remove("t", [(None, 0, "x", None)])
    s.commit()
    assert s.read("result") == [(1, "x")]

"""SQL's floats compare by value: -0.0 equals 0.0 wherever rows are compared (DISTINCT,
GROUP BY, joins, IN, EXCEPT), as in DuckDB, whether the -0.0 comes from a table or is
computed. deltalog stores it as 0.0 (rows are compared by their codes), so that is what
it reads back."""

from __future__ import annotations

import duckdb
import pytest

from compiler.sql import compile_sql

SCHEMA = {"t": {"k": "int", "d": "double"}, "u": {"d": "double"}}


@pytest.mark.parametrize("query", [
    "select distinct d from t",
    "select d, count(*) from t group by d",
    "select count(distinct d) from t",
    "select t.k from t join u on t.d = u.d",
    "select k from t where d in (select d from u)",
    "select d from t except select d from u",
    "select distinct -d from t",
    "select distinct d * 0 from t",
])
def test_negative_zero_equals_zero_as_in_duckdb(query):
    t, u = [(1, -0.0), (2, 0.0), (3, -1.0), (4, 1.0)], [(-0.0,)]
    con = duckdb.connect()
    con.execute("create table t (k bigint, d double)")
    con.execute("create table u (d double)")
    con.executemany("insert into t values (?, ?)", t)
    con.executemany("insert into u values (?)", u)
    expected = sorted(con.execute(query).fetchall())
    session = compile_sql(query, SCHEMA).session()
    session.insert("t", t)
    session.insert("u", u)
    session.commit()
    got = session.read("result")
    assert sorted(got) == expected  # -0.0 == 0.0 in Python too: the counts are what is compared
    assert all(str(v) != "-0.0" for row in got for v in row)  # stored as 0.0
    session.remove("t", [(1, -0.0)])  # and removed as the row it was stored as
    session.commit()
    con.execute("delete from t where k = 1")
    assert sorted(session.read("result")) == sorted(con.execute(query).fetchall())

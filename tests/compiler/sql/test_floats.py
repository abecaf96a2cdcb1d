"""SQL's floats compare by value: -0.0 equals 0.0 wherever rows are compared (DISTINCT,
GROUP BY, joins, IN, EXCEPT), as in DuckDB, whether the -0.0 comes from a table or is
computed. deltalog stores it as 0.0 (rows are compared by their codes), so that is what
it reads back. NaN is DuckDB's too: equal to NaN, above every other float, in filters
as in joins, sorting and aggregates."""

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


NAN = float("nan")


@pytest.mark.parametrize("query", [
    "select k from t where d = d",
    "select k from t where d > 0",
    "select k from t where d <> 1.0",
    "select k from t where d between 0 and 2",
    "select t.k, u.d from t join u on t.d = u.d",
    "select k, greatest(d, 0), least(d, 0) from t",
    "select distinct d from t",
    "select max(d), min(d), count(distinct d) from t",
    "select k from t where d in (select d from u)",
    "select k, d / 0.0 < 5 from t",
])
def test_nan_is_equal_to_itself_and_above_every_float_as_in_duckdb(query):
    t, u = [(1, NAN), (2, 1.0), (3, -NAN), (4, 0.5)], [(NAN,), (1.0,)]
    con = duckdb.connect()
    con.execute("create table t (k bigint, d double)")
    con.execute("create table u (d double)")
    con.executemany("insert into t values (?, ?)", t)
    con.executemany("insert into u values (?)", u)
    expected = con.execute(query).fetchall()
    session = compile_sql(query, SCHEMA).session()
    session.insert("t", t)
    session.insert("u", u)
    session.commit()
    key = lambda row: repr(row)  # noqa: E731 - NaN != NaN: rows compare by their text
    assert sorted(map(key, session.read("result"))) == sorted(map(key, expected))


def test_round_rounds_the_exact_value_halves_away_from_zero_as_duckdb():
    """2.675 is below 2.675 as a double (2.67), 0.125 is exactly a half (0.13): random values,
    values one digit past a half, and exact halves, at several numbers of decimals."""
    import random

    rng = random.Random(7)
    values = [2.675, 1.005, 0.125, -0.125, 2.5, -2.5, 1250.0, 5e-324, 1e300, float("inf")]
    values += [rng.uniform(-1000, 1000) for _ in range(300)]
    values += [round(rng.uniform(-100, 100), 3) + 0.0005 for _ in range(300)]
    values += [rng.randint(-10**6, 10**6) / 8 for _ in range(300)]
    rows = list(enumerate(values))
    query = "select k, round(d, -2), round(d, -1), round(d), round(d, 1), round(d, 2), round(d, 3), round(d, 5) from t"
    con = duckdb.connect()
    con.execute("create table t (k bigint, d double)")
    con.executemany("insert into t values (?, ?)", rows)
    session = compile_sql(query, SCHEMA).session()
    session.insert("t", rows)
    session.commit()
    assert sorted(session.read("result")) == sorted(con.execute(query).fetchall())

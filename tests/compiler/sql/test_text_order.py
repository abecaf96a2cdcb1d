"""Texts in string order: comparisons, MIN/MAX and ORDER BY compare the strings
(code point order, as DuckDB does), never the symbol ids, which number strings in
order of arrival -- here the strings arrive in reverse order on purpose -- and the
answers stay exact as rows come and go."""

from __future__ import annotations

import pytest

from compiler.sql import compile_sql

from tests.compiler.sql.oracle import SCHEMA, Tables, as_multiset, normalize

SCHEMA_W = {"w": {"k": "int", "s": "text"}}


def test_min_and_max_follow_the_strings_not_their_arrival():
    session = compile_sql("select k, min(s) as lo, max(s) as hi from w group by k", SCHEMA_W).session()
    session.insert("w", [(1, "pear"), (1, "banana"), (1, "Zebra"), (2, "b")])
    session.commit()
    session.insert("w", [(1, "apple"), (2, "a"), (2, "ä")])  # interned after the others
    session.commit()
    assert sorted(session.read("result")) == [(1, "Zebra", "pear"), (2, "a", "ä")]
    session.remove("w", [(1, "Zebra"), (2, "ä")])  # deleting an extreme exposes the next one
    assert dict(session.commit()["result"]) == {(1, "Zebra", "pear"): -1, (1, "apple", "pear"): 1, (2, "a", "ä"): -1, (2, "a", "b"): 1}
    session.remove("w", [(2, "a"), (2, "b")])
    session.commit()
    assert session.read("result") == [(1, "apple", "pear")]


def test_comparisons_rank_the_strings_of_each_batch():
    session = compile_sql("select s from w where s >= 'b' and s < 'ba'", SCHEMA_W).session()
    session.insert("w", [(0, "bz"), (0, "b"), (0, "b\x00"), (0, "az"), (0, "ba"), (0, "B")])
    session.commit()
    assert sorted(session.read("result")) == [("b",), ("b\x00",)]  # "B" < "az" < "b" < "b\0" < "ba" < "bz"


def test_order_by_text_and_limit_follow_the_strings():
    session = compile_sql("select s from w order by s desc limit 2", SCHEMA_W).session()
    session.insert("w", [(0, "b"), (0, "a"), (0, "c"), (0, "")])
    session.commit()
    assert session.read("result") == [("c",), ("b",)]
    session.remove("w", [(0, "c")])
    session.commit()
    assert session.read("result") == [("b",), ("a",)]


QUERIES = [
    "select a, c from t where c < 'c'",
    "select c from t where c between 'b' and 'd'",
    "select t.c, s.e from t join s on t.a = s.a where t.c >= s.e",
    "select min(c), max(c) from t",
    "select a, min(c), max(c), count(c) from t group by a",
    "select b, max(c) from t group by b having max(c) > 'b'",
    "select c, count(*) from t group by c order by c nulls first",
    "select greatest(c, e), least(c, e) from t join s on t.b = s.b",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_text_order_maintained_under_changes(sql):
    tables = Tables(seed=11 + len(sql))
    session = compile_sql(sql, SCHEMA, dialect="duckdb").session()
    tables.load(session)
    session.commit()
    for _ in range(5):
        tables.change(session, 4)
        session.commit()
        got, want = session.read("result"), tables.duck_rows(sql)
        if "order by" in sql:
            assert normalize(got) == normalize(want), sql
        else:
            assert as_multiset(got) == as_multiset(want), sql

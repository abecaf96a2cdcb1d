"""The SQL corpus against DuckDB: every query of corpus.sql, on generated tables
with NULLs and duplicates, gives DuckDB's rows (as a multiset, or in order where the
query orders); then, under random inserts and deletes, the maintained answer equals
DuckDB re-running the query after every commit."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import duckdb
import pytest

from compiler.sql import SQLRuntimeError, compile_sql

from tests.compiler.sql.oracle import SCHEMA, Tables, as_multiset, normalize


def _corpus() -> list[str]:
    text = (Path(__file__).parent / "corpus.sql").read_text()
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [q.strip() for q in re.split(r";\s*$", text, flags=re.M) if q.strip()]


QUERIES = _corpus()


def _ordered(sql: str) -> bool:
    return re.search(r"\border by\b", sql.split(")")[-1], re.I) is not None


def _compare(session, tables: Tables, sql: str) -> None:
    got = session.read("result")
    want = tables.duck_rows(sql)
    if _ordered(sql):
        assert normalize(got) == normalize(want), sql
    else:
        assert as_multiset(got) == as_multiset(want), sql


def test_corpus_is_large():
    assert len(QUERIES) >= 100


@pytest.mark.parametrize("sql", QUERIES)
def test_query_matches_duckdb(sql):
    tables = Tables(seed=len(sql))
    session = compile_sql(sql, SCHEMA, dialect="duckdb").session()
    tables.load(session)
    session.commit()
    _compare(session, tables, sql)


@pytest.mark.parametrize("sql", QUERIES)
def test_maintained_under_changes(sql):
    """After each of several commits of mixed changes, the maintained answer is DuckDB's re-run.

    Where the data makes the query an SQL error (a scalar subquery with
    several rows), both engines must fail at that commit.
    """
    tables = Tables(seed=zlib.crc32(sql.encode()))
    session = compile_sql(sql, SCHEMA, dialect="duckdb").session()
    tables.load(session)
    read = [name for name in SCHEMA if re.search(rf"\b{name}\b", sql, re.I)]  # change what the query reads (names ignore case)
    for commit in range(5):
        if commit:
            tables.mixed_changes(session, 8, read)
        try:
            tables.duck_rows(sql)
        except duckdb.Error:
            with pytest.raises(SQLRuntimeError):
                session.commit()
            continue
        session.commit()
        _compare(session, tables, sql)

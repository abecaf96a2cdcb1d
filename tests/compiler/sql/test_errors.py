"""SQL compile errors: each asserts the class, the line and column of the offending
text, and the message that names it."""

from __future__ import annotations

import pytest

from compiler.errors import CompileError, ParseError, TypeMismatchError, UnknownRelationError
from compiler.sql import UnknownColumnError, UnsupportedSQLError, compile_sql

from tests.compiler.sql.oracle import SCHEMA

CASES = [
    ("select a, row_number() over () from t", UnsupportedSQLError, 1, 11, "window functions (OVER) are not supported"),
    ("select x from nope", UnknownRelationError, 1, 15, "unknown table 'nope' (the schema's tables: edge, s, t)"),
    ("select a,\n  zz from t", UnknownColumnError, 2, 3, "unknown column 'zz'"),
    ("select t.a from t join s on t.a = s.a where a > 1", UnknownColumnError, 1, 45, "column 'a' is ambiguous: t and s both have it (write t.a)"),
    ("select a + c from t", TypeMismatchError, 1, 12, "t.c is a text, not a number"),
    ("select a from t where", ParseError, 1, 17, "incomplete WHERE: its operand is missing"),
    ("select a + from t", ParseError, 1, 12, "incomplete ADD: its right operand is missing"),
    ("select a, b from t order by 3", UnknownColumnError, 1, 29, "position 3 is past the select list (2 columns)"),
    ("select a from t group by", ParseError, 1, 8, "GROUP BY needs at least one expression"),
    ("select distinct a from t\norder by b", UnknownColumnError, 2, 10, "ORDER BY b of SELECT DISTINCT must be in the select list"),
    ("select a from t union select a from s order by b", UnknownColumnError, 1, 48,
     "ORDER BY b of a set operation must name one of its columns (by name or position)"),
    (
        "with recursive r(v) as (select 0 union select e.dst from edge e\n"
        "  where not exists (select 1 from r where r.v = e.dst)) select v from r",
        UnsupportedSQLError, 2, 35, "recursive CTE 'r' is read under NOT EXISTS / NOT IN in the definition of 'r': not monotone",
    ),
    (
        "with recursive r(v, f) as (select 0, false union select e.dst, e.dst in (select v from r)\n"
        "  from edge e join r on r.v = e.src) select v from r",
        UnsupportedSQLError, 1, 88,
        "recursive CTE 'r' is read under EXISTS / IN used as a value (it may turn from false to true) in the definition of 'r': not monotone",
    ),
    ("select a from t intersect all select a from s", UnsupportedSQLError, 1, 8, "INTERSECT ALL is not supported (INTERSECT and EXCEPT are)"),
    # A view's query that does not parse (sqlglot keeps the statement as text): its own error, where it is.
    ("select 1;\n  create view v as select a from t where;", ParseError, 2, 36, "incomplete WHERE: its operand is missing"),
    ("select a from t\nwhere (a > 1) < (b > 1)", UnsupportedSQLError, 2, 8, "ordering comparison (<) of boolean values is not supported"),
    ("select sum(c) from t", TypeMismatchError, 1, 8, "SUM needs a number, not a text"),
    ("select a from t where a in (select a, b from s)", UnsupportedSQLError, 1, 36, "IN (subquery) needs a subquery of one column, not 2"),
    ("select avg(c) from t", TypeMismatchError, 1, 8, "AVG needs a number, not a text"),
    ("select a from t limit a", UnsupportedSQLError, 1, 23, "LIMIT and OFFSET must be integer constants"),
    ("delete from t", UnsupportedSQLError, 1, 13, "statement DELETE is not supported (only queries and CREATE VIEW)"),
    ("select a from t where c", TypeMismatchError, 1, 23, "a condition must be a boolean, but t.c is a text"),
    ("select a, count(*) from t", UnknownColumnError, 1, 8, "column t.a must appear in GROUP BY or be used in an aggregate"),
    ("select a, (select max(b) from s where s.a = t.a limit 1) from t", UnsupportedSQLError, 1, 55, "LIMIT in a correlated scalar subquery is not supported"),
    ("select a, count(*) from t group by (select max(b) from s)", UnsupportedSQLError, 1, 48, "a subquery in GROUP BY is not supported"),
    ("select sum((select max(b) from s where s.a = t.a)) from t", UnsupportedSQLError, 1, 24, "a subquery in the argument of SUM is not supported"),
    ("select a, (select b from s where s.a = t.a union select 1) from t", UnsupportedSQLError, 1, 19, "a correlated scalar subquery must be a plain SELECT"),
    ("select * from t asof right join s on t.a = s.a and t.b >= s.b", UnsupportedSQLError, 1, 33, "ASOF RIGHT JOIN is not supported (ASOF JOIN and ASOF LEFT JOIN are)"),
    ("select *\nfrom t asof join s using (a, b)", UnsupportedSQLError, 2, 18, "ASOF JOIN ... USING is not supported (write ON l.k = r.k AND l.t >= r.t)"),
    ("select * from t asof join s on t.a = s.a and t.b >= s.b and t.d > s.b", UnsupportedSQLError, 1, 61, "ASOF JOIN takes one inequality (of times) in ON, not two"),
    ("select * from t asof join s on t.a = s.a", UnsupportedSQLError, 1, 32, "ASOF JOIN needs an inequality of times in ON (such as o.t >= p.t)"),
    ("select * from t asof join s on t.a = s.a and t.c >= s.e", UnsupportedSQLError, 1, 46, "ASOF JOIN compares times of int or float type, not text"),
    ("select * from t asof join s on t.a = s.a and t.b >= s.b and s.e = 'x'", UnsupportedSQLError, 1, 61, "ASOF JOIN's ON takes equalities and one inequality, each between a left and a right expression"),
    ("with recursive r(a, b) as (select a, b from s union\n  select s.a, r.b + 1 from r asof join s on r.a = s.a and r.b >= s.b where r.b < 9) select * from r",
     UnsupportedSQLError, 2, 40, "ASOF JOIN in the recursive CTE 'r' is not supported"),
    ("with recursive r(v) as (select 0 union select e.dst from r join edge e on r.v = e.src\n"
     "  where e.dst > (select min(x.v) from r as x where x.v < e.src)) select v from r",
     UnsupportedSQLError, 2, 39, "recursive CTE 'r' is read under a scalar subquery in the definition of 'r': not monotone"),
    ("with recursive r(v) as (select 0 union select e.dst from edge e\n  where e.src in (select max(x.v) from r as x)) select v from r",
     UnsupportedSQLError, 2, 40, "recursive CTE 'r' is read under MIN / MAX in an EXISTS or IN subquery in the definition of 'r': not monotone"),
    ("with recursive r(v) as (select 0 union select v + 1 from (select v from r order by v desc limit 1) as x where v < 3) select v from r",
     UnsupportedSQLError, 1, 73, "recursive CTE 'r' is read under LIMIT / OFFSET in the definition of 'r': not monotone"),
    ("with recursive r(n) as (select 1 union all\n  select s.b from s where exists (select 1 from r where r.n = s.a)) select n from r",
     UnsupportedSQLError, 2, 49, "a UNION ALL recursive member must read 'r' in its own FROM or JOIN, not in a subquery"),
    ("select * from t join edge using (a)", UnknownColumnError, 1, 34, "JOIN ... USING (a): both sides need a column 'a'"),
    ("select *\nfrom s natural join edge", UnsupportedSQLError, 2, 21, "NATURAL JOIN with edge: no column in common (write CROSS JOIN for a cross product)"),
]


@pytest.mark.parametrize("sql,cls,line,column,message", CASES)
def test_error(sql, cls, line, column, message):
    with pytest.raises(cls) as info:
        compile_sql(sql, SCHEMA, dialect="duckdb")
    err = info.value
    assert isinstance(err, CompileError)
    assert (err.line, err.column, err.message) == (line, column, message)
    assert str(err).splitlines()[1].strip() == sql.splitlines()[line - 1].strip()  # the caret excerpt quotes the line


def test_unsupported_is_a_compile_error_with_a_caret():
    with pytest.raises(UnsupportedSQLError) as info:
        compile_sql("select a,\n  b from t except all select a, b from s", SCHEMA, dialect="duckdb", source_name="q.sql")
    text = str(info.value)
    assert text.startswith("q.sql:1:8: UnsupportedSQLError: EXCEPT ALL is not supported")
    assert text.splitlines()[-1] == "         ^"


def test_unknown_schema_type():
    with pytest.raises(CompileError, match="column 'x' has unknown type 'blob'"):
        compile_sql("select x from u", {"u": {"x": "blob"}})


def test_using_columns_are_listed_once_by_star_as_in_duckdb():
    """The names of DuckDB's table made from the query: USING columns once, and a name that
    both sides have otherwise (b) suffixed the second time."""
    import duckdb

    duck = duckdb.connect()
    for name, cols in SCHEMA.items():
        duck.execute(f"create table {name} ({', '.join(f'{c} {t}' for c, t in cols.items())})")
    for i, sql in enumerate(("select * from t full join s using (a)", "select * from t natural join s", "select * from s join t using (b, a)")):
        program = compile_sql(sql, SCHEMA, dialect="duckdb")
        duck.execute(f"create table made{i} as {sql}")
        want = [row[0] for row in duck.execute(f"describe made{i}").fetchall()]
        assert list(program.relations["result"].attribute_names) == want, sql

"""Names in SQL text against names of tables and columns (compiler.sql.names).

Unquoted identifiers ignore case everywhere a name is resolved -- CTEs
(recursive too), views, schema tables and columns, table aliases -- with the
rows DuckDB gives for the same text; quoted identifiers keep their case in
the default dialect (PostgreSQL's rule) and ignore it in DuckDB's; schema
names keep the case they were given for sessions and the CLI, whether given
to compile_sql or read from a Parquet file.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from compiler.cli import main
from compiler.errors import DeclarationError, UnknownRelationError
from compiler.sql import UnsupportedSQLError, compile_sql

from tests.compiler.sql.oracle import SCHEMA, Tables, as_multiset

MIXED_CASE = [
    "WITH Tx(n) AS (SELECT 1) SELECT n FROM Tx",
    "WITH RECURSIVE FibonacciNumbers(N, Nxt) AS (SELECT 0, 1 UNION ALL SELECT Nxt, N + Nxt FROM FibonacciNumbers"
    " WHERE N < 100) SELECT n, NXT FROM fibonaccinumbers",
    "WITH RECURSIVE Reach(V) AS (SELECT 0 UNION SELECT E.Dst FROM REACH JOIN Edge AS e ON reach.v = E.SRC) SELECT v FROM Reach",
    "SELECT T.A, S.E FROM T JOIN s ON t.a = S.a WHERE T.B > 0",
    'SELECT Big.A, COUNT(*) AS "N" FROM (SELECT A FROM T) AS Big GROUP BY BIG.a',
    'SELECT "a", "t"."b" FROM "t" WHERE "c" IS NOT NULL',
]


@pytest.mark.parametrize("sql", MIXED_CASE)
@pytest.mark.parametrize("dialect", [None, "duckdb"])
def test_unquoted_names_ignore_case_as_in_duckdb(sql, dialect):
    tables = Tables(seed=7)
    session = compile_sql(sql, SCHEMA, dialect=dialect).session()
    tables.load(session)
    session.commit()
    got = session.read("result")
    assert got and as_multiset(got) == as_multiset(tables.duck_rows(sql))


def test_views_are_found_whatever_the_case():
    program = compile_sql("CREATE VIEW Pairs AS SELECT A, B FROM T; SELECT pairs.a FROM PAIRS WHERE Pairs.B = 1", SCHEMA)
    assert program.outputs == ("pairs", "result")
    session = program.session()
    session.insert("t", [(1, 1, "x", 0.5), (2, 3, "y", 1.0)])
    session.commit()
    assert session.read("result") == [(1,)]


def test_a_views_column_list_names_its_columns():
    # CREATE VIEW v (x, y) AS ...: the view is v (it was nameless) and its columns x and y.
    program = compile_sql("CREATE VIEW Pairs (X, y) AS SELECT a, b FROM t; SELECT x FROM pairs WHERE y = 1", SCHEMA)
    assert program.outputs == ("pairs", "result")
    assert program.relations["pairs"].attribute_names == ("x", "y")
    session = program.session()
    session.insert("t", [(1, 1, "x", 0.5), (2, 3, "y", 1.0)])
    session.commit()
    assert (session.read("pairs"), session.read("result")) == ([(1, 1), (2, 3)], [(1,)])
    with pytest.raises(UnsupportedSQLError) as info:
        compile_sql("CREATE VIEW v (x, y) AS SELECT a FROM t", SCHEMA)
    assert (info.value.line, info.value.column, info.value.message) == (1, 13, "view 'v' names 2 columns, its query makes 1")


def test_a_quoted_name_keeps_its_case_in_the_default_dialect():
    sql = 'with "Tx" as (select 1 as n)\nselect n from Tx'
    with pytest.raises(UnknownRelationError) as info:
        compile_sql(sql, SCHEMA)
    err = info.value
    assert (err.line, err.column, err.message) == (2, 15, "unknown table 'tx' (the schema's tables: edge, s, t)")
    session = compile_sql(sql, SCHEMA, dialect="duckdb").session()  # DuckDB ignores case even when quoted
    session.commit()
    assert session.read("result") == [(1,)]


def test_schema_names_keep_their_case_and_are_found_by_any():
    schema = {"Emp": {"Id": "int not null", "Salary": "int"}}
    sql = 'select ID, emp.salary, "Salary" from EMP where "Emp"."Id" > 1'
    program = compile_sql(sql, schema)
    assert program.inputs == ("Emp",) and program.relations["Emp"].attribute_names == ("Id", "Salary")
    session = program.session()
    session.insert("Emp", [(1, 10), (2, 20)])
    session.commit()
    assert session.read("result") == [(2, 20, 20)]


@pytest.mark.parametrize("schema,message", [
    ({"u": {"Total": "int", "TOTAL": "int"}}, "table 'u': columns 'Total' and 'TOTAL' are one name in SQL (unquoted names ignore case)"),
    ({"Emp": {"x": "int"}, "EMP": {"x": "int"}}, "tables 'Emp' and 'EMP' are one name in SQL (unquoted names ignore case)"),
])
def test_schema_names_differing_only_in_case_are_refused(schema, message):
    with pytest.raises(DeclarationError) as info:
        compile_sql("select 1", schema)
    assert info.value.message == message


def test_parquet_table_and_column_names_ignore_case_in_the_cli(tmp_path, capsys):
    pq.write_table(pa.table({"Id": [1, 2, 3], "Name": ["ann", "bob", "cy"], "Salary": [10, 30, 20]}), tmp_path / "Emp.parquet")
    program = tmp_path / "q.sql"
    program.write_text('select NAME, "Salary" from EMP where emp.salary > 15 and "Emp"."Id" > 0\n')
    code = main(["run", str(program), "--input-dir", str(tmp_path), "--reader", "arrow"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "result (2 rows)" and out.split()[-4:] == ["bob", "30", "cy", "20"]


@pytest.mark.parametrize("query", [
    "select * from edge a join edge b on a.dst = b.src",
    "select 1 as a, 2 as a, 3 as a_1, 4 as a",
    "select t.a, s.a, t.b, s.b, t.a from t join s on t.a = s.a",
])
def test_repeated_output_names_are_suffixed_as_duckdb_names_a_table_made_from_them(query):
    """Outputs are written and read by their column names: a repeated name takes the first
    free suffix _1, _2, ... as DuckDB's CREATE TABLE ... AS does (never two columns of one name)."""
    con = Tables(1).duck
    con.execute(f"CREATE TABLE made AS {query}")
    expected = [row[0] for row in con.execute("DESCRIBE made").fetchall()]
    assert len(set(expected)) == len(expected)
    program = compile_sql(query, SCHEMA)
    assert list(program.relations["result"].attribute_names) == expected

"""SQL programs on the Spark engine against the in-process session.

Every query of the DuckDB corpus (corpus.sql) and every SQL example runs on
local[2] with the same generated rows (NULLs and duplicates included) as the
in-process session, and gives the session's rows as a multiset (a DataFrame
has no order; ORDER BY ... LIMIT selects rows, and is compared that way).
Where the in-process commit raises SQLRuntimeError (a scalar subquery with
several rows), the Spark engine raises it too; as-of joins, which depend on
update times, are refused by name. One Spark session serves the module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import compiler
from compiler.spark_engine import SparkEngineUnsupported
from compiler.sql import SQLRuntimeError, compile_sql
from runtime.spark.session import SparkProvider
from tests.compiler.sql.oracle import SCHEMA, Tables, as_multiset
from tests.compiler.sql.test_corpus import QUERIES

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
QUICK = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC", "spark.sql.shuffle.partitions": "1",
         "spark.sql.adaptive.enabled": "false", "spark.default.parallelism": "1"}
_SPARK = {"int": "bigint", "float": "double", "text": "string", "bool": "boolean"}


@pytest.fixture(scope="module")
def spark():
    provider = SparkProvider("local[2]", QUICK)
    yield provider.get()
    provider.stop()


def frames(spark, program, rows: dict) -> dict:
    out = {}
    for name, table in program.tables.items():
        ddl = ", ".join(f"`{c}` {_SPARK[t]}" for c, t, _ in table.columns)
        out[name] = spark.createDataFrame(rows.get(name, []), ddl)
    return out


def in_process(program, rows: dict):
    session = program.session()
    for name, table_rows in rows.items():
        session.insert(name, table_rows)
    try:
        session.commit()
    except SQLRuntimeError as e:
        return e
    return {name: session.read(name) for name in program.outputs}


def on_spark(spark, program, rows: dict):
    try:
        outputs = program.run_on_spark(spark, inputs=frames(spark, program, rows))
        return {name: [tuple(r) for r in df.collect()] for name, df in outputs.items()}
    except SQLRuntimeError as e:
        return e


def same(spark, program, rows):
    expected = in_process(program, rows)
    got = on_spark(spark, program, rows)
    if isinstance(expected, SQLRuntimeError):
        assert isinstance(got, SQLRuntimeError) and str(got) == str(expected)
        return
    assert not isinstance(got, SQLRuntimeError), got
    assert {n: as_multiset(r) for n, r in got.items()} == {n: as_multiset(r) for n, r in expected.items()}


def test_corpus_queries_give_the_in_process_rows(spark):
    """All corpus queries in one test: one Spark session, and a failure names its query."""
    refused = []
    for sql in QUERIES:
        program = compile_sql(sql, SCHEMA, dialect="duckdb")
        rows = Tables(seed=len(sql)).rows
        try:
            same(spark, program, rows)
        except SparkEngineUnsupported as e:
            assert e.what == "AsOfJoin", sql
            refused.append(sql)
        except AssertionError as e:
            raise AssertionError(f"{sql}\n{e}") from None
    assert all("asof" in q.lower() for q in refused)


@pytest.mark.parametrize("name,twin", [("reach", "reach"), ("tc", "tc"), ("shortest_path", "bfs")])
def test_sql_examples_give_the_in_process_rows(spark, name, twin):
    """Each SQL example on its Datalog twin's data (as tests/e2e/test_sql_examples.py feeds it)."""
    datalog = compiler.compile_file(EXAMPLES / f"{twin}.dl")
    schema = {r: {a: "int not null" for a in datalog.relations[r].attribute_names} for r in datalog.inputs}
    program = compile_sql((EXAMPLES / f"{name}.sql").read_text(), schema, source_name=f"{name}.sql")
    session = datalog.session()
    session.load_facts(EXAMPLES / twin)
    session.commit()
    rows = {relation: session.read(relation) for relation in datalog.inputs}
    expected = in_process(program, rows)
    assert all(expected.values())  # non-empty answers, so equality says something
    same(spark, program, rows)


def test_an_as_of_join_is_refused_by_name(spark):
    program = compile_sql((EXAMPLES / "asof.sql").read_text(), {
        "orders": {"id": "int", "item": "text", "at": "int"},
        "prices": {"item": "text", "since": "int", "cents": "int"},
    })
    with pytest.raises(SparkEngineUnsupported, match="cannot run AsOfJoin"):
        on_spark(spark, program, {})


def test_a_null_in_a_not_null_column_is_an_error(spark):
    from compiler.spark_engine import SparkEngineError

    program = compile_sql("select a from t", {"t": {"a": "int not null"}})
    with pytest.raises(SparkEngineError, match=r"table 't': a NULL in a NOT NULL column \(a\)"):
        program.run_on_spark(spark, inputs={"t": spark.createDataFrame([(1,), (None,)], "a bigint")})


def test_union_all_recursion_runs_by_deltas():
    """A UNION ALL recursion (linear in its CTE) goes to the delta loop, compiler.spark_engine.bags;
    a UNION recursion (a set: Distinct) goes to the semi-naive loop. The corpus checks both answers."""
    from compiler.plan import Fixpoint
    from compiler.spark_engine.bags import linear_bodies

    def linear(sql):
        steps = compile_sql(sql, SCHEMA, dialect="duckdb").plan.steps
        return [linear_bodies(s) is not None for s in steps if isinstance(s, Fixpoint)]

    paths = "with recursive p(x, y, len) as (select src, dst, 1 from edge union all select p.x, e.dst, p.len + 1 from p join edge e on p.y = e.src where p.len < 3) select x, y, len from p"
    assert paths in QUERIES
    assert linear(paths) == [True]
    assert linear(paths.replace("union all", "union")) == [False]

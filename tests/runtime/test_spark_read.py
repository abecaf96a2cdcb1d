"""Reading tables with Spark as Arrow batch streams (runtime.spark.read): the batches of
a many-partition DataFrame arrive as the JVM sends them and together hold exactly the
DataFrame's rows; `read_encoded` encodes them into the blocks `encode_source` gives for
the collected table; a bad value in a late partition is named by its row in the table's
order; a stream abandoned midway leaves Spark usable; and the CLI loader inserts nothing
when a load fails.

One local[2] Spark session serves the module, with the quick-JVM options of the CLI tests.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import compiler
from compiler.cli.common import UserError
from compiler.cli.inputs import Loader
from runtime.spark.arrow import LoadError
from runtime.spark.read import (
    ColumnSpec, TableSource, dataframe_batches, encode_source, first_malformed_line, read_encoded, read_table, spark_cause,
)
from runtime.spark.session import SparkProvider
from runtime.symbols import SymbolTable
from tests.e2e.test_cli_spark import REACH

QUICK_JVM = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
EDGE = (ColumnSpec("src", "int"), ColumnSpec("dst", "int"))


@pytest.fixture(scope="module")
def provider():
    p = SparkProvider("local[2]", QUICK_JVM)
    p.get().conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "1000")  # several batches per partition
    yield p
    p.stop()


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    """A Parquet directory of 4 part files (4 read tasks), 12,000 edges with duplicates."""
    d = tmp_path_factory.mktemp("edges") / "edge"
    d.mkdir()
    rng = np.random.default_rng(11)
    for i in range(4):
        src = rng.integers(0, 500, 3000)
        pq.write_table(pa.table({"dst": rng.integers(0, 500, 3000), "src": src}), d / f"part-{i}.parquet")
    return d


def rows_of(table: pa.Table) -> Counter:
    return Counter(zip(table.column("src").to_pylist(), table.column("dst").to_pylist()))


def test_batches_stream_every_row_of_a_many_partition_dataframe(provider):
    spark = provider.get()
    df = spark.range(0, 50_000, numPartitions=6).selectExpr("id AS src", "id * 7 % 1000 AS dst")
    batches = list(dataframe_batches(df))
    assert len(batches) >= 6 * 8  # 1,000-row batches of six partitions
    assert all(isinstance(b, pa.RecordBatch) and b.schema.names == ["src", "dst"] for b in batches)
    assert rows_of(pa.Table.from_batches(batches)) == rows_of(df.toArrow())
    assert sum(b.num_rows for b in batches) == 50_000


def test_read_encoded_gives_the_blocks_of_the_collected_table(provider, edges):
    spark = provider.get()
    source = TableSource(str(edges), "edge", EDGE)
    symbols = SymbolTable()
    timings = {}
    seen = []
    blocks = read_encoded(spark, source, symbols, on_rows=seen.append, timings=timings)
    streamed = np.concatenate([b for b, _ in blocks], axis=1)
    collected = np.concatenate([b for b, _ in encode_source(read_table(spark, source), source, symbols)], axis=1)
    assert Counter(map(tuple, streamed.T.tolist())) == Counter(map(tuple, collected.T.tolist()))
    on_disk = rows_of(pq.read_table(edges))
    assert Counter(map(tuple, streamed.T.tolist())) == on_disk  # columns mapped by name (dst is stored first)
    assert sum(seen) == 12_000 and set(timings) == {"spark", "encode"} and all(v >= 0 for v in timings.values())


def test_a_bad_value_in_a_late_partition_is_named_by_its_table_row(provider, tmp_path):
    spark = provider.get()
    d = tmp_path / "edge"
    d.mkdir()
    for i in range(3):
        lines = [f"{i * 100 + k},{k}" for k in range(100)]
        if i == 2:
            lines[57] = "257,abc"
        (d / f"part-{i}.csv").write_text("src,dst\n" + "\n".join(lines) + "\n")
    source = TableSource(str(d), "edge", EDGE, format="csv")
    ordered = read_table(spark, source).column("dst").to_pylist()
    with pytest.raises(LoadError) as err:
        read_encoded(spark, source, SymbolTable())
    assert str(err.value) == f"'edge': {d}: column 'dst': row {ordered.index('abc') + 1}: 'abc' is not an integer"


def test_an_abandoned_stream_leaves_spark_usable(provider):
    spark = provider.get()
    df = spark.range(0, 200_000, numPartitions=4).selectExpr("id AS src", "id AS dst")
    stream = dataframe_batches(df)
    assert next(stream).num_rows > 0
    stream.close()  # closes the socket; Spark's sending thread ends with a broken pipe, not raised here
    assert sum(b.num_rows for b in dataframe_batches(df)) == 200_000


def test_the_loader_streams_a_table_and_inserts_nothing_when_it_fails(provider, edges, tmp_path):
    program = compiler.compile_file(REACH)
    session = program.session()
    loader = Loader(session, provider, progress=False)
    assert loader.load("edge", str(edges)) == 12_000
    assert loader.rows == 12_000 and loader.spark_seconds > 0 and loader.transfer_seconds > 0
    bad = tmp_path / "bad.csv"
    bad.write_text("src,dst\n" + "".join(f"{k},{k + 1}\n" for k in range(600, 700)) + "700,x\n")
    with pytest.raises(UserError, match=r"row 101: 'x' is not an integer"):
        loader.load("edge", str(bad))
    session.insert("root", [(0,), (600,)])
    session.commit()
    assert (600, 601) not in session.read("reach")  # none of the bad table's edges (600 -> 601 -> ...) arrived
    expected = program.session()
    table = pq.read_table(edges)
    expected.insert("edge", list(zip(table.column("src").to_pylist(), table.column("dst").to_pylist())))
    expected.insert("root", [(0,), (600,)])
    expected.commit()
    assert session.read("reach") == expected.read("reach")


def test_spark_cause_is_the_error_class_line_not_the_py4j_call():
    message = ("An error occurred while calling o43.parquet.\n"
               ": org.apache.spark.SparkException: Job aborted due to stage failure\n"
               "Caused by: org.apache.spark.SparkException: [RECURSION_ROW_LIMIT_EXCEEDED] The recursion row limit 1000000"
               " was reached. SQLSTATE: 42836\n\tat org.apache.spark.Foo.bar(Foo.scala:1)")
    assert spark_cause(Exception(message)) == "[RECURSION_ROW_LIMIT_EXCEEDED] The recursion row limit 1000000 was reached."
    plain = "An error occurred while calling o9.csv.\n: java.io.FileNotFoundException: /x (Permission denied)\n\tat y"
    assert spark_cause(Exception(plain)) == "/x (Permission denied)"
    assert spark_cause(Exception("one line")) == "one line"


def test_first_malformed_line_of_each_text_format(tmp_path):
    (tmp_path / "a.csv").write_text('src,dst\n1,"2,3"\n\n4,5\n6\n')
    assert first_malformed_line(str(tmp_path / "a.csv"), "csv") == "line 5: 1 field, the header has 2"
    (tmp_path / "ok.facts").write_text("1\t2\n3\t4\n")
    assert first_malformed_line(str(tmp_path / "ok.facts"), "facts") is None
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.jsonl").write_text('{"x": 1}\n')
    (parts / "b.jsonl").write_text('{"x": 2}\n[3]\n')
    (parts / "_SUCCESS").write_text("")
    assert first_malformed_line(str(parts), "json") == f"{parts / 'b.jsonl'}: line 2: a JSON list, not an object"


def test_a_change_table_in_several_blocks_is_refused_whole():
    """A change table larger than one encoding block goes in as one submission: a removal
    of an edge that is not there in its last block refuses its first block too."""
    from compiler.cli.inputs import make_source

    session = compiler.compile_file(REACH).session()
    session.insert("edge", [(1, 2)])
    session.insert("root", [(1,)])
    session.commit()
    loader = Loader(session, None, progress=False)
    source = make_source(session.program, "edge", "changes.parquet", changes=True)
    first = (np.array([[2], [3]]), {"diff": np.array([1])})
    last = (np.array([[1, 8], [2, 9]]), {"diff": np.array([-1, -1])})  # (8, 9) is not there
    with pytest.raises(UserError, match=r"'edge': changes.parquet: cannot remove \(8, 9\) at time 1: it is not there"):
        loader._insert_all(source, [first, last], 1, None)
    session.commit()
    assert session.read("reach") == [(1, 1), (1, 2)]  # (2, 3) did not arrive, (1, 2) is still there
    assert loader._insert_all(source, [first, (last[0][:, :1], {"diff": np.array([-1])})], 1, None) == 2
    session.commit()
    assert session.read("reach") == [(1, 1)]


def test_a_sql_change_table_is_refused_whole():
    from compiler.cli.inputs import make_source
    from compiler.sql import compile_sql

    session = compile_sql("select src, dst from edge", {"edge": {"src": "int", "dst": "int"}}).session()
    session.insert("edge", [(1, 2), (None, 3)])
    session.commit()
    loader = Loader(session, None, progress=False)
    source = make_source(session.program, "edge", "changes.parquet", changes=True)
    bad = pa.table({"src": [5, None, 7], "dst": [6, 3, 8], "diff": [1, -1, -1]})  # (7, 8) is not there
    with pytest.raises(UserError, match=r"'edge': changes.parquet: cannot remove \(7, 8\) at time 1: it is not there"):
        loader.feed(source, bad)
    session.commit()
    assert sorted(session.read("result"), key=str) == [(1, 2), (None, 3)]
    loader.feed(source, bad.slice(0, 2))
    session.commit()
    assert sorted(session.read("result"), key=str) == [(1, 2), (5, 6)]


def test_spark_reads_fact_files_as_the_local_reader_does(provider, tmp_path):
    """Fact files at paths only Spark can open take the same options and give the same rows:
    empty fields are empty symbols, an empty file is an empty relation, delimiter and headers."""
    from runtime.spark.facts import read_facts

    names = (ColumnSpec("id", "int"), ColumnSpec("s", "str"))
    cases = [
        ("tabs.facts", "1\t\n2\tb\n", {}),
        ("empty.facts", "", {}),
        ("named.csv", "s,id\nx,1\n,2\n", {"delimiter": ",", "header": True}),
    ]
    for file, text, options in cases:
        (tmp_path / file).write_text(text)
        source = TableSource(str(tmp_path / file), "name", names, format="facts", **options)
        local, spark = read_facts(source), read_table(provider.get(), source)
        assert spark.column_names == local.column_names == ["id", "s"]
        assert spark.to_pylist() == local.to_pylist(), file
    assert local.to_pylist() == [{"id": "1", "s": "x"}, {"id": "2", "s": ""}]

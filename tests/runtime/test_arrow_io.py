"""Local tables without Spark (runtime.spark.read.read_arrow, runtime.spark.write.write_arrow).

`read_arrow` must read .facts, CSV and JSON lines (files and directories) as
Spark does: the same rows after encoding, and the same `LoadError` message
(file and line) for malformed rows, values that do not fit and empty fields;
empty files give no rows. Each case is read both ways and compared. Tables
written by `write_arrow` (and by Spark through `write_table`) read back
equal in every format.

One local[2] Spark session serves the module, with the quick-JVM options of the CLI tests.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from runtime.spark.arrow import LoadError
from runtime.spark.read import ColumnSpec, TableSource, encode_source, read_arrow, read_table
from runtime.spark.session import SparkProvider
from runtime.spark.write import write_arrow, write_table
from runtime.symbols import SymbolTable, decode_floats

QUICK_JVM = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
MIXED = (ColumnSpec("n", "int"), ColumnSpec("s", "str"), ColumnSpec("f", "float"))


@pytest.fixture(scope="module")
def spark():
    p = SparkProvider("local[2]", QUICK_JVM)
    yield p.get()
    p.stop()


def decoded(table, source) -> list[tuple]:
    """The rows as the runtime gets them: encoded like a load, then decoded."""
    symbols = SymbolTable()
    rows = []
    for block, _ in encode_source(table, source, symbols):
        columns = [symbols.strings(block[j]) if c.kind == "str" else decode_floats(block[j]).tolist() if c.kind == "float"
                   else block[j].tolist() for j, c in enumerate(source.columns)]
        rows += list(zip(*columns))
    return rows


def both(spark, source):
    """(outcome with Spark, outcome with Arrow): rows, or the LoadError's message."""
    outcomes = []
    for read in (lambda: read_table(spark, source), lambda: read_arrow(source)):
        try:
            outcomes.append(decoded(read(), source))
        except LoadError as e:
            outcomes.append(str(e))
    return outcomes


CASES = {
    "facts": ("t.facts", "facts", "1\tab c\t2.5\n\n-7\t\"q\"\t1e3\n3\t007\t-0.0\n"),
    "facts empty": ("t.facts", "facts", ""),
    "facts ragged": ("t.facts", "facts", "1\ta\t2.5\n2\tb\n"),
    "facts bad number": ("t.facts", "facts", "1\ta\t2.5\nx\tb\t1\n"),
    "facts empty field": ("t.facts", "facts", "1\t\t2.5\n"),
    "csv": ("t.csv", "csv", "f,n,s\n2.5,1,\"a,b\"\n-1, 3 ,x y\n"),
    "csv header only": ("t.csv", "csv", "n,s,f\n"),
    "csv empty": ("t.csv", "csv", ""),
    "csv ragged": ("t.csv", "csv", "n,s,f\n1,a,2\n2,b\n"),
    "csv bad float": ("t.csv", "csv", "n,s,f\n1,a,2\n2,b,abc\n"),
    "jsonl": ("t.jsonl", "json", '{"n": 1, "s": "a\\"b", "f": 2.5}\n\n{"s": "é", "n": -2, "f": 1}\n'),
    "jsonl empty": ("t.jsonl", "json", ""),
    "jsonl broken": ("t.jsonl", "json", '{"n": 1, "s": "a", "f": 2.5}\n{"n": 2, "s": \n'),
    "jsonl missing field": ("t.jsonl", "json", '{"n": 1, "s": "a", "f": 2.5}\n{"n": 2, "f": 1.5}\n'),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_arrow_reads_text_formats_as_spark_does(spark, tmp_path, case):
    name, fmt, text = CASES[case]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    source = TableSource(str(path), "t", MIXED, fmt)
    with_spark, with_arrow = both(spark, source)
    assert with_arrow == with_spark
    if case in ("facts", "csv", "jsonl"):
        assert len(with_arrow) == 2 + (case == "facts")  # rows, not an error
    if "ragged" in case or "broken" in case:
        assert f"{name}: line {3 if fmt == 'csv' else 2}: " in with_arrow  # file lines, the header included


def test_arrow_reads_a_directory_of_parts_as_spark_does(spark, tmp_path):
    parts = tmp_path / "t"
    parts.mkdir()
    (parts / "part-0.csv").write_text("n,s,f\n1,a,1.5\n")
    (parts / "part-1.csv").write_text("n,s,f\n2,b,2.5\n3,c,3.5\n")
    (parts / "_SUCCESS").write_text("")
    with_spark, with_arrow = both(spark, TableSource(str(parts), "t", MIXED, "csv"))
    assert sorted(with_arrow) == sorted(with_spark) == [(1, "a", 1.5), (2, "b", 2.5), (3, "c", 3.5)]


TABLE = pa.table({"n": pa.array([3, -1, 2**62], pa.int64()), "u": pa.array([0, 2**64 - 1, 5], pa.uint64()),
                  "s": ["a,b", 'q"uote', "é\nnew line"], "f": [1.5, -0.25, 1e300], "b": [True, None, False]})


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_written_tables_read_back_equal(spark, tmp_path, fmt):
    import pyarrow.csv as pacsv
    import pyarrow.dataset as ds
    import pyarrow.json as pajson

    readers = {"parquet": lambda p: ds.dataset(p, format="parquet").to_table(),
               "csv": lambda p: pacsv.read_csv(p, convert_options=pacsv.ConvertOptions(column_types=TABLE.schema)),
               "jsonl": lambda p: pajson.read_json(p, parse_options=pajson.ParseOptions(explicit_schema=TABLE.schema))}

    def read_back(directory):
        files = sorted(f for f in directory.iterdir() if f.name.startswith("part-") and not f.name.endswith(".crc"))
        return pa.concat_tables([readers[fmt](str(f)) for f in files]).cast(TABLE.schema).to_pylist()

    write_arrow(TABLE, str(tmp_path / "arrow"), fmt)
    write_arrow(TABLE.slice(0, 1), str(tmp_path / "arrow"), fmt)  # replaces what was there
    assert read_back(tmp_path / "arrow") == TABLE.slice(0, 1).to_pylist()
    write_arrow(TABLE, str(tmp_path / "arrow"), fmt)
    assert read_back(tmp_path / "arrow") == TABLE.to_pylist()
    if fmt == "parquet":  # Spark's JSON and CSV spell unsigned and text in their own ways
        write_table(spark, TABLE.drop_columns(["u"]), str(tmp_path / "spark"), fmt, single_file=False)
        assert sorted(map(str, read_back_spark(tmp_path / "spark"))) == sorted(map(str, TABLE.drop_columns(["u"]).to_pylist()))


def read_back_spark(directory):
    import pyarrow.dataset as ds

    return ds.dataset(str(directory), format="parquet").to_table().to_pylist()


@pytest.mark.parametrize("single_file", [True, False])
def test_a_table_larger_than_a_slice_goes_to_spark_in_slices_and_reads_back_whole(spark, tmp_path, monkeypatch, single_file):
    from runtime.spark import write

    # A 40,000-row table in 16 KB slices: 40 DataFrames, written one after another into one
    # directory (what keeps a 16M-row answer within the driver's 1 GB heap).
    monkeypatch.setattr(write, "_SLICE_BYTES", 16 << 10)
    n = 40_000
    table = pa.table({"x": pa.array(range(n), pa.int64()), "y": pa.array([i % 7 for i in range(n)], pa.int64())})
    write_table(spark, TABLE.drop_columns(["u"]), str(tmp_path / "out"), "parquet")  # replaced below
    write_table(spark, table, str(tmp_path / "out"), "parquet", single_file=single_file)
    parts = [f for f in (tmp_path / "out").iterdir() if f.name.startswith("part-") and not f.name.endswith(".crc")]
    assert len(parts) == 40 if single_file else len(parts) >= 40  # one part file per slice, or up to one per core
    assert sorted(r["x"] for r in read_back_spark(tmp_path / "out")) == list(range(n))
    assert sorted((r["x"], r["y"]) for r in read_back_spark(tmp_path / "out")) == [(i, i % 7) for i in range(n)]

"""`deltalog run --engine spark` as a subprocess: the in-process answer, written the same ways,
and the errors of what the Spark engine does not do.

The oracle is the in-process answer -- the same command with `--reader arrow`
(which starts no Spark) or the session API -- never numbers written here.
Every Spark-engine run starts its own JVM, so there are four: the SQL
reachability example read from Parquet and printed, BFS distances (min inside
the recursion) from .facts written as Parquet (against the session API), a
CSV table with a value that is not an integer, and an as-of program. Change
tables and unsigned columns are refused before Spark starts. The remaining
examples' answers on the Spark engine are checked in-process by
tests/compiler/test_spark_engine.py (one shared Spark session).
"""

from pathlib import Path

import pyarrow.parquet as pq

import compiler
from tests.e2e.test_cli_spark import ROOT, cli

EXAMPLES = ROOT / "examples"


def spark_engine(*args):
    return cli("run", *args, "--engine", "spark")  # cli() adds the quick-JVM options


def test_sql_reach_from_parquet_prints_the_in_process_answer():
    """The SQL twin of reach.dl: nullable Parquet columns (the schema is read from the tables)."""
    args = [str(EXAMPLES / "reach.sql"), "--input-dir", str(EXAMPLES / "reach")]
    expected = cli("run", *args, "--reader", "arrow")
    assert expected.returncode == 0, expected.stderr
    assert "reach (77 rows)" in expected.stdout  # a non-empty answer, so equality says something
    got = spark_engine(*args)
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout


def test_bfs_distances_written_as_parquet_equal_the_in_process_answer(tmp_path: Path):
    session = compiler.compile_file(EXAMPLES / "bfs.dl").session()
    session.load_facts(EXAMPLES / "bfs")
    session.commit()
    want = session.read("dist")
    assert want  # a non-empty answer, so equality says something
    got = spark_engine(str(EXAMPLES / "bfs.dl"), "--facts-dir", str(EXAMPLES / "bfs"), "--output-dir", str(tmp_path))
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == f"wrote dist to {tmp_path} (parquet, Spark engine)"
    table = pq.read_table(tmp_path / "dist")
    assert table.column_names == list(session.program.relations["dist"].attribute_names)
    assert sorted(zip(*(c.to_pylist() for c in table.columns))) == want


def test_a_value_that_is_not_an_integer_is_named(tmp_path: Path):
    (tmp_path / "edge.csv").write_text("src,dst\n1,2\n2, 3 \n3,1.5\n")
    (tmp_path / "root.csv").write_text("r\n1\n")
    args = [str(EXAMPLES / "reach.dl"), "--input-dir", str(tmp_path)]
    got = spark_engine(*args)
    assert got.returncode == 1
    assert got.stderr.strip() == f"deltalog: error: 'edge': {tmp_path / 'edge.csv'}: column 'dst': '1.5' is not an integer"
    in_process = cli("run", *args, "--reader", "arrow")  # the same refusal in-process (it also gives the row)
    assert in_process.returncode == 1 and "column 'dst': row 3: '1.5' is not an integer" in in_process.stderr


def test_change_tables_need_the_in_process_engine():
    got = cli("run", str(EXAMPLES / "reach.dl"), "--input-dir", str(EXAMPLES / "reach"), "--engine", "spark",
              "--changes", f"edge={EXAMPLES / 'reach' / 'edge.parquet'}")
    assert got.returncode == 2
    assert "usage error: --changes needs the in-process engine" in got.stderr
    assert "Traceback" not in got.stderr


def test_an_as_of_join_is_refused_by_name(tmp_path: Path):
    got = spark_engine(str(EXAMPLES / "billing.dl"), "--facts-dir", str(EXAMPLES / "billing"))
    assert got.returncode == 1
    assert got.stderr.strip() == (
        "deltalog: error: the Spark engine cannot run AsOfJoin: an as-of join depends on the times of updates,"
        " which a batch Spark run does not have"
    )


def test_unsigned_columns_are_refused_by_name(tmp_path: Path):
    program = tmp_path / "u.dl"
    program.write_text(".decl u(x: unsigned)\n.input u\n.decl v(x: unsigned)\nv(x + 1) :- u(x).\n.output v\n")
    (tmp_path / "u.facts").write_text("1\n2\n")
    got = spark_engine(str(program), "--facts-dir", str(tmp_path))
    assert (got.returncode, got.stdout) == (1, "")
    assert got.stderr.strip() == (
        "deltalog: error: the Spark engine cannot run unsigned column of input 'u':"
        " Spark has no 64-bit unsigned type with the same wrap-around and order"
    )

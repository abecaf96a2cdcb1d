"""runtime.spark.arrow and the column mapping of runtime.spark.read, without Spark:
Arrow columns cast to declared kinds and encoded in bulk, and the errors for values
and columns that do not fit."""

import numpy as np
import pyarrow as pa
import pytest

from runtime.spark.arrow import LoadError, encode_column, encode_table
from runtime.spark.read import ColumnSpec, TableSource, map_columns
from runtime.symbols import Codec, SymbolTable


def decode(block, kinds, symbols):
    types = ["str" if k == "str" else "float" if k == "float" else "int" for k in kinds]
    return Codec(symbols).decode_rows(block, tuple(types))


def test_encoded_columns_decode_to_the_values():
    symbols = SymbolTable()
    table = pa.table({
        "a": pa.array([3, -1, 2**62], pa.int64()),
        "b": pa.array(["x", "y", "x"]),
        "c": pa.array([1.5, -0.0, float("inf")]),
        "d": pa.array(["7", " 8", "9"]),  # text parsed as numbers (CSV, .facts)
        "e": pa.array([1, 2, 3], pa.int32()),  # widened
    })
    kinds = ["int", "str", "float", "int", "float"]
    block = encode_table(table, kinds, symbols)
    assert block.dtype == np.int64 and block.shape == (5, 3)
    rows = decode(block, kinds, symbols)
    expected = [tuple(r.values()) for r in table.to_pylist()]
    expected = [(a, b, c, int(d), float(e)) for a, b, c, d, e in expected]
    assert rows == expected
    assert len(symbols) == 2  # each distinct string interned once
    assert block[1, 0] == block[1, 2] == symbols.lookup("x")


def test_unsigned_keeps_its_bits():
    symbols = SymbolTable()
    column = pa.array([0, 2**64 - 1], pa.uint64())
    encoded = encode_column(column, "unsigned", symbols)
    assert encoded.view(np.uint64).tolist() == [0, 2**64 - 1]


@pytest.mark.parametrize(
    "column, kind, message",
    [
        (pa.array(["1", "abc"]), "int", "row 2: 'abc' is not an integer"),
        (pa.array([1.0, 2.5]), "int", "row 2: 2.5 is not an integer"),
        (pa.array([1, -1]), "unsigned", "row 2: -1 is not a non-negative integer"),
        (pa.array(["1", " 99999999999999999999"]), "int", "row 2: '99999999999999999999' is out of range: numbers are 64-bit integers"),
        (pa.array([2**63], pa.uint64()), "int", f"row 1: {2**63} is out of range: numbers are 64-bit integers"),
        (pa.array(["18446744073709551616"]), "unsigned", "row 1: '18446744073709551616' is out of range: unsigned numbers have 64 bits"),
        (pa.array([1, None]), "int", "1 empty (null) values, the first in row 2"),
        (pa.array([True, False]), "int", "values of type bool cannot be read as an integer"),
        (pa.array([True]), "str", "values of type bool cannot be read as a string"),
    ],
)
def test_values_that_do_not_fit_are_named(column, kind, message):
    with pytest.raises(LoadError) as err:
        encode_column(column, kind, SymbolTable(), "column 'x'")
    assert str(err.value) == f"column 'x': {message}"


def source(names, changes=False):
    extras = (ColumnSpec("diff", "int"), ColumnSpec("time", "int")) if changes else ()
    return TableSource("t.parquet", "edge", tuple(ColumnSpec(n, "int") for n in names), extras=extras,
                       optional_extras=("time",) if changes else ())


def test_columns_map_by_name_else_by_position():
    assert map_columns(["DST", "x", "src"], source(["src", "dst"]), "parquet", "w") == (["src", "DST"], ["src", "dst"])
    assert map_columns(["a", "b"], source(["src", "dst"]), "parquet", "w") == (["a", "b"], ["src", "dst"])
    assert map_columns(["src", "dst"], source(["src", "dst"]), "facts", "w") == (["src", "dst"], ["src", "dst"])
    # change tables: diff by name, time optional
    assert map_columns(["diff", "dst", "src"], source(["src", "dst"], True), "parquet", "w") == (["src", "dst", "diff"], ["src", "dst", "diff"])
    assert map_columns(["a", "b", "c", "d"], source(["src", "dst"], True), "csv", "w") == (["a", "b", "c", "d"], ["src", "dst", "diff", "time"])
    with pytest.raises(LoadError, match=r"^w: no column 'diff' \(columns: src, dst\)$"):
        map_columns(["src", "dst"], source(["src", "dst"], True), "parquet", "w")
    with pytest.raises(LoadError, match=r"^w: columns \(a, b, c\) do not match: wanted src, dst \(by name, or exactly 2 columns by position\)$"):
        map_columns(["a", "b", "c"], source(["src", "dst"]), "parquet", "w")


def test_a_change_tables_columns_are_all_meaningful():
    # A column that is none of the relation's, diff and time would be dropped: a misspelled
    # time would put every row at the file's time. (An input table may carry other columns.)
    with pytest.raises(LoadError, match=r"^w: unknown column 'tme' \(a change table has the columns src, dst, diff and optionally time\)$"):
        map_columns(["src", "dst", "diff", "tme"], source(["src", "dst"], True), "csv", "w")
    # By position, a named diff or time must be in its place, not read as another column.
    with pytest.raises(LoadError, match=r"^w: columns \(p, q, w, diff\) do not match: wanted src, dst, diff, time \(time optional\) by name, or by position with diff in place 3$"):
        map_columns(["p", "q", "w", "diff"], source(["src", "dst"], True), "csv", "w")
    assert map_columns(["p", "q", "diff"], source(["src", "dst"], True), "csv", "w") == (["p", "q", "diff"], ["src", "dst", "diff"])
    assert map_columns(["p", "q", "diff", "time"], source(["src", "dst"], True), "csv", "w") == (["p", "q", "diff", "time"], ["src", "dst", "diff", "time"])


def test_arrow_reader_maps_and_projects_like_spark(tmp_path):
    import pyarrow.parquet as pq

    from runtime.spark.read import read_arrow

    path = tmp_path / "edge.parquet"
    pq.write_table(pa.table({"extra": ["a", "b"], "DST": [2, 3], "src": [1, 2]}), path)
    table = read_arrow(source(["src", "dst"]).__class__(str(path), "edge", source(["src", "dst"]).columns))
    assert table.column_names == ["src", "dst"]
    assert [tuple(r.values()) for r in table.to_pylist()] == [(1, 2), (2, 3)]
    with pytest.raises(LoadError, match="no such file or directory"):
        read_arrow(TableSource(str(tmp_path / "nope.parquet"), "edge", source(["src"]).columns))


def test_batches_are_encoded_into_blocks_of_whole_batches_and_give_the_table():
    from runtime.spark.read import encode_source

    symbols = SymbolTable()
    rng = np.random.default_rng(3)
    sizes = [5, 3, 40, 0, 7, 1]  # small batches are grouped up to chunk_rows; an empty one is skipped
    batches = [pa.record_batch({"a": rng.integers(-9, 9, n), "b": pa.array([f"s{i % 4}" for i in range(n)], pa.string())}) for n in sizes]
    src = TableSource("t", "r", (ColumnSpec("a", "int"), ColumnSpec("b", "str")))
    seen = []
    blocks = list(encode_source(iter(batches), src, symbols, chunk_rows=8, on_rows=seen.append))
    assert [b.shape for b, _ in blocks] == [(2, 8), (2, 40), (2, 8)]
    assert seen == [8, 40, 8]
    whole = encode_table(pa.Table.from_batches(batches), ["int", "str"], symbols)
    assert np.array_equal(np.concatenate([b for b, _ in blocks], axis=1), whole)
    # a table gives the same blocks as its batches
    table_blocks = list(encode_source(pa.Table.from_batches(batches), src, symbols, chunk_rows=8))
    assert all(np.array_equal(x, y) for (x, _), (y, _) in zip(blocks, table_blocks))
    # an empty table: one empty block
    empty = list(encode_source(pa.table({"a": pa.array([], pa.int64()), "b": pa.array([], pa.string())}), src, symbols))
    assert [b.shape for b, _ in empty] == [(2, 0)]


def test_errors_name_the_row_of_the_table_not_of_the_batch():
    from runtime.spark.read import encode_source

    batches = [pa.record_batch({"src": [1, 2, 3], "dst": ["4", "5", "6"]}), pa.record_batch({"src": [7, 8], "dst": ["9", "x"]})]
    src = TableSource("t.csv", "edge", (ColumnSpec("src", "int"), ColumnSpec("dst", "int")))
    with pytest.raises(LoadError) as err:
        list(encode_source(iter(batches), src, SymbolTable(), chunk_rows=2))
    assert str(err.value) == "'edge': t.csv: column 'dst': row 5: 'x' is not an integer"
    nulls = [pa.record_batch({"src": [1, 2], "dst": [1, 2]}), pa.record_batch({"src": [1, None], "dst": [1, 2]})]
    with pytest.raises(LoadError, match=r"column 'src': 1 empty \(null\) values, the first in row 4$"):
        list(encode_source(iter(nulls), src, SymbolTable(), chunk_rows=1))


def test_change_table_extras_are_encoded_beside_the_block():
    from runtime.spark.read import encode_source

    batch = pa.record_batch({"src": [1, 2], "dst": [3, 4], "diff": [1, -1], "time": pa.array([0, 5], pa.int32())})
    (block, extras), = encode_source([batch], source(["src", "dst"], True), SymbolTable())
    assert block.tolist() == [[1, 2], [3, 4]]
    assert {k: v.tolist() for k, v in extras.items()} == {"diff": [1, -1], "time": [0, 5]}

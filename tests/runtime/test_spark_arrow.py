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


def test_arrow_reader_maps_and_projects_like_spark(tmp_path):
    import pyarrow.parquet as pq

    from runtime.spark.read import read_parquet_arrow

    path = tmp_path / "edge.parquet"
    pq.write_table(pa.table({"extra": ["a", "b"], "DST": [2, 3], "src": [1, 2]}), path)
    table = read_parquet_arrow(source(["src", "dst"]).__class__(str(path), "edge", source(["src", "dst"]).columns))
    assert table.column_names == ["src", "dst"]
    assert [tuple(r.values()) for r in table.to_pylist()] == [(1, 2), (2, 3)]
    with pytest.raises(LoadError, match="no such file or directory"):
        read_parquet_arrow(TableSource(str(tmp_path / "nope.parquet"), "edge", source(["src"]).columns))

"""Columnar input: Arrow tables, pandas DataFrames and numpy columns as a session's rows.

`is_columns(x)` tells columns from a list of row tuples. `encode_columns`
turns columns into the int64 block `Session.update_columns` takes, with no
Python work per row:

- a pandas DataFrame becomes Arrow (its index dropped), a dict of arrays or
  lists an Arrow table with those names, a 2-D numpy array (one row per row)
  an Arrow table of its columns;
- columns map to the relation's by name (case-insensitive) when every name is
  there, else by position when there are exactly as many: the rule files
  follow (runtime.spark.read.map_columns);
- each column is cast with Arrow's safe casts and encoded as files are
  (runtime.spark.arrow.encode_column), so a value that does not fit is a
  `SessionError` naming the column and the row;
- a SQL column that may be NULL takes its NULL flags from Arrow's nulls (the
  value column holds the type's zero, as for rows); a null anywhere else is an
  error;
- a column of records or ADT values holds them as `Result.arrow` gives them
  (structs) or as Soufflé's text (compiler.values.from_arrow).
"""

from __future__ import annotations

import numpy as np

from compiler.results import Layout

_KIND = {"number": "int", "unsigned": "unsigned", "float": "float", "symbol": "str", "bool": "int", "record": "int"}


def is_columns(data) -> bool:
    """Whether `data` is columnar input (Arrow, pandas, a dict of columns, a 2-D numpy array)."""
    if isinstance(data, (dict, np.ndarray)):
        return True
    module = type(data).__module__
    return module.startswith("pyarrow") or module.startswith("pandas")


def as_arrow(data):
    """Columnar input as one pyarrow.Table."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, dict):
        return pa.table({str(name): np.asarray(values) if isinstance(values, np.ndarray) else values for name, values in data.items()})
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ValueError(f"a numpy array of rows has two dimensions (rows, columns), not {data.ndim}")
        return pa.table({str(j): data[:, j] for j in range(data.shape[1])})
    return pa.Table.from_pandas(data, preserve_index=False)


def encode_columns(data, relation: str, layout: Layout, symbols) -> np.ndarray:
    """The (plan columns, n) int64 block of columnar input for `relation` (SessionError if it does not fit)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from compiler.program import SessionError
    from runtime.spark.arrow import LoadError, encode_column
    from runtime.spark.read import ColumnSpec, TableSource, map_columns

    try:
        table = as_arrow(data)
    except (ValueError, TypeError, pa.ArrowException) as e:
        raise SessionError(f"'{relation}': cannot read the columns given: {e}", relation) from None
    wanted = TableSource("<columns>", relation, tuple(ColumnSpec(c.name, _KIND[c.type]) for c in layout.columns))
    try:
        picked, _ = map_columns(table.column_names, wanted, "arrow", f"'{relation}'")
        block = np.zeros((len(layout.plan_types), table.num_rows), dtype=np.int64)
        for column, name in zip(layout.columns, picked):
            values = table.column(name)
            what = f"'{relation}': column '{name}'"
            if column.null is not None:
                nulls = values.is_null()
                block[column.null] = nulls.to_numpy(zero_copy_only=False)
                values = pc.if_else(nulls, pa.scalar(_zero(column.type), values.type), values) if values.null_count else values
            if column.type == "bool" and pa.types.is_boolean(values.type):
                values = pc.cast(values, pa.int64())
            if column.kind is not None:
                block[column.value] = _records(values, column.kind, symbols, what)
                continue
            block[column.value] = encode_column(values, _KIND[column.type], symbols, what)
    except LoadError as e:
        raise SessionError(str(e), relation) from None
    return block


def _records(values, kind, symbols, what: str) -> np.ndarray:
    from compiler.values import BadValue, from_arrow
    from runtime.spark.arrow import LoadError

    try:
        return from_arrow(values.combine_chunks(), kind, symbols)
    except BadValue as e:
        raise LoadError(f"{what}: {e}") from None


def _zero(column_type: str):
    return {"symbol": "", "float": 0.0, "bool": False}.get(column_type, 0)


__all__ = ["as_arrow", "encode_columns", "is_columns"]

"""Arrow columns to the runtime's int64 columns, in bulk.

`encode_table(table, kinds, symbols)` turns an Arrow table whose columns are
in relation order into the `(arity, n)` int64 block an input handle takes
(`InputHandle.update_columns`). Each column is cast to its kind with Arrow's
safe casts, so a value that does not fit ("abc" for a number, 1.5 for an
integer, -1 for an unsigned) raises `LoadError` naming the relation, column
and value instead of being silently changed; nulls are refused (relations
have no nulls). Strings are dictionary-encoded by Arrow and only the distinct
strings are interned, so the Python work is per distinct symbol, not per row.
Floats become their order-preserving int64 image (runtime.symbols).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.symbols import SymbolTable, encode_floats

KINDS = ("int", "unsigned", "float", "str")
_WORDS = {"int": "an integer", "unsigned": "a non-negative integer", "float": "a number", "str": "a string"}


class LoadError(Exception):
    """A table that cannot be loaded as a relation: its path, columns or values."""


def encode_table(table: pa.Table, kinds, symbols: SymbolTable, where: str = "") -> np.ndarray:
    """The table's columns (already in relation order) as one (arity, n) int64 block."""
    n = table.num_rows
    out = np.empty((len(kinds), n), dtype=np.int64)
    for j, kind in enumerate(kinds):
        out[j] = encode_column(table.column(j), kind, symbols, f"{where}column '{table.column_names[j]}'")
    return out


def encode_column(column, kind: str, symbols: SymbolTable, what: str = "column", first_row: int = 0) -> np.ndarray:
    """One column as int64 values; `first_row` is the column's first row in its table
    (for the row numbers of error messages)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if column.null_count:
        first = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise LoadError(f"{what}: {column.null_count} empty (null) values, the first in row {first_row + first + 1}")
    if kind == "str":
        return _encode_strings(column, symbols, what)
    if pa.types.is_boolean(column.type) or not (
        pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or _is_text(column.type) or pa.types.is_decimal(column.type)
    ):
        raise LoadError(f"{what}: values of type {column.type} cannot be read as {_WORDS[kind]}")
    target = {"int": pa.int64(), "unsigned": pa.uint64(), "float": pa.float64()}[kind]
    if _is_text(column.type):
        column = pc.utf8_trim_whitespace(column)
    if column.type == target:  # already the kind's type: no cast, no copy
        values = column.to_numpy(zero_copy_only=False)
        return encode_floats(values) if kind == "float" else values.view(np.int64) if kind == "unsigned" else values
    try:
        cast = pc.cast(column, target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        bad = _first_bad(column, target, kind, first_row) or f"{e}: not {_WORDS[kind]}"
        raise LoadError(f"{what}: {bad}") from None
    values = cast.to_numpy(zero_copy_only=False)
    if kind == "float":
        return encode_floats(values)
    if kind == "unsigned":
        return values.view(np.int64)
    return values


def _encode_strings(column, symbols: SymbolTable, what: str) -> np.ndarray:
    if not _is_text(column.type):
        if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
            column = pc.cast(column, pa.string())
        else:
            raise LoadError(f"{what}: values of type {column.type} cannot be read as a string")
    encoded = pc.dictionary_encode(column)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    ids = symbols.intern_many(encoded.dictionary.to_pylist())
    return ids[encoded.indices.to_numpy(zero_copy_only=False)] if len(ids) else np.zeros(len(column), dtype=np.int64)


def _is_text(t) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _first_bad(column, target, kind: str, first_row: int = 0) -> str | None:
    """The first value that does not cast safely, quoted, with its row and why (for the message)."""
    step = 4096
    for start in range(0, len(column), step):
        part = column.slice(start, step)
        try:
            pc.cast(part, target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            for i, value in enumerate(part.to_pylist()):
                try:
                    pc.cast(pa.array([value], type=part.type), target, safe=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    return f"row {first_row + start + i + 1}: {value!r} {_why_not(value, kind)}"
    return None


def _why_not(value, kind: str) -> str:
    """Why a value that did not cast is not of the kind: an integer beyond 64 bits says so."""
    number = _integer(value) if kind in ("int", "unsigned") else None
    if number is not None and kind == "int" and not -(2**63) <= number < 2**63:
        return "is out of range: numbers are 64-bit integers"
    if number is not None and kind == "unsigned" and number >= 2**64:
        return "is out of range: unsigned numbers have 64 bits"
    return f"is not {_WORDS[kind]}"


def _integer(value) -> int | None:
    if isinstance(value, int):
        return value
    try:
        return int(value.strip()) if isinstance(value, str) else None
    except ValueError:
        return None

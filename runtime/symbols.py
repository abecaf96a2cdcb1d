"""Values: how Python ints, floats and strings become int64 columns and back.

Operators see only int64 arrays. At the boundary each column has a type:
`int` values are stored as they are; `float` values are stored as an
order-preserving int64 image of their IEEE bits (so comparisons, min and max work
on the stored form); `str` values are interned by a `SymbolTable` to dense int64
ids (as Soufflé does) and decoded on output. Ids order by first appearance, not
alphabetically.

Records -- tuples of stored values, Soufflé's records and ADT values, which the
compiler builds and takes apart (compiler.values) -- are interned the same way, by
the `RecordTable` each symbol table holds (`SymbolTable.records`, so whatever
decodes a dataflow's strings can decode its records): equal tuples get one id, so
records compare by id, and a column of records is an int column like any other.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

import numpy as np

INT, FLOAT, STR = "int", "float", "str"
COLUMN_TYPES = (INT, FLOAT, STR)
_SIGN = np.int64(0x7FFFFFFFFFFFFFFF)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@contextmanager
def collection_paused():
    """No cyclic garbage collection inside: for building millions of row tuples.

    Tuples of ints, floats and strings cannot form reference cycles, but each
    allocation counts towards the collector's thresholds, so building a million
    of them runs full collections over the whole heap again and again (half
    the cost of decoding a large answer).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def encode_floats(values: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.int64)
    return bits ^ ((bits >> 63) & _SIGN)


def decode_floats(codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.int64)
    return (codes ^ ((codes >> 63) & _SIGN)).view(np.float64)


class RecordTable:
    """Interns records, tuples of int64 values, to int64 ids, as Soufflé's record table
    does; one table per dataflow. Id 0 is `nil`, no record. Columns go in and out whole:
    `pack` interns the rows of an (arity, n) block (a Python step per distinct row, as for
    strings), `field` gathers one field of many records."""

    NIL = 0

    def __init__(self):
        self._ids: dict[tuple, int] = {}
        self._start = np.zeros(16, dtype=np.int64)  # per id: where its fields begin in _fields
        self._arity = np.zeros(16, dtype=np.int64)  # per id: how many fields it has (nil: 0)
        self._fields = np.zeros(64, dtype=np.int64)  # every record's fields, one after another
        self._count, self._used = 1, 1  # ids given (nil included); slots of _fields used (slot 0: a spare)

    def __len__(self):
        return self._count - 1

    def pack(self, columns: np.ndarray) -> np.ndarray:
        """The ids of the records that are the columns' rows ((arity, n) int64; n ids)."""
        columns = np.asarray(columns, dtype=np.int64)
        arity, n = columns.shape
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if arity == 0:
            return np.full(n, self._intern([()])[0], dtype=np.int64)
        uniques, inverse = np.unique(columns, axis=1, return_inverse=True)
        return self._intern([tuple(row) for row in uniques.T.tolist()])[inverse.reshape(-1)]

    def _intern(self, records: list[tuple]) -> np.ndarray:
        ids = np.empty(len(records), dtype=np.int64)
        for i, record in enumerate(records):
            found = self._ids.get(record)
            ids[i] = self._append(record) if found is None else found
        return ids

    def _append(self, record: tuple) -> int:
        i, width = self._count, len(record)
        if i == len(self._start):
            self._start = np.concatenate([self._start, np.zeros_like(self._start)])
            self._arity = np.concatenate([self._arity, np.zeros_like(self._arity)])
        while self._used + width > len(self._fields):
            self._fields = np.concatenate([self._fields, np.zeros_like(self._fields)])
        self._start[i], self._arity[i] = self._used, width
        self._fields[self._used : self._used + width] = record
        self._used += width
        self._count += 1
        self._ids[record] = i
        return i

    def field(self, ids: np.ndarray, index: int) -> np.ndarray:
        """Field `index` of each record; 0 where a record has no such field (nil, or fewer fields)."""
        ids = np.asarray(ids, dtype=np.int64)
        present = self._arity[ids] > index
        return np.where(present, self._fields[np.where(present, self._start[ids] + index, 0)], 0)

    def arity(self, ids: np.ndarray) -> np.ndarray:
        """How many fields each record has (nil: 0)."""
        return self._arity[np.asarray(ids, dtype=np.int64)]

    def record(self, i: int) -> tuple:
        """The fields of record `i` (nil: no fields)."""
        start = int(self._start[i])
        return tuple(self._fields[start : start + int(self._arity[i])].tolist())


class SymbolTable:
    """Interns strings to int64 ids; one table per dataflow. `records` is the dataflow's RecordTable."""

    def __init__(self):
        self.records = RecordTable()
        self._ids: dict[str, int] = {}
        self._strings: list[str] = []
        self._objects = np.empty(0, dtype=object)  # the strings as an array, for decoding columns
        self._arrow = None  # and as an Arrow string array (built on first use)

    def __len__(self):
        return len(self._strings)

    def intern(self, s: str) -> int:
        i = self._ids.get(s)
        if i is None:
            i = self._ids[s] = len(self._strings)
            self._strings.append(s)
        return i

    def intern_many(self, strings) -> np.ndarray:
        intern = self.intern
        return np.fromiter((intern(s) for s in strings), dtype=np.int64, count=len(strings))

    def lookup(self, s: str) -> int | None:
        """The id of `s` if it was ever interned (a constant filter can use it)."""
        return self._ids.get(s)

    def string(self, i: int) -> str:
        return self._strings[i]

    def strings(self, ids: np.ndarray) -> list[str]:
        table = self._strings
        return [table[i] for i in ids.tolist()]

    def objects(self) -> np.ndarray:
        """Every string by id as a numpy object array: `objects()[ids]` decodes a column of
        ids in one gather, sharing the table's string objects. Extended, not rebuilt, as
        strings are interned."""
        if len(self._objects) < len(self._strings):
            new = np.empty(len(self._strings) - len(self._objects), dtype=object)
            new[:] = self._strings[len(self._objects):]
            self._objects = np.concatenate([self._objects, new])
        return self._objects

    def arrow(self):
        """Every string by id as a pyarrow string array: `arrow().take(ids)` decodes a column
        of ids without Python objects per row."""
        import pyarrow as pa

        if self._arrow is None or len(self._arrow) < len(self._strings):
            done = 0 if self._arrow is None else len(self._arrow)
            new = pa.array(self._strings[done:], type=pa.string())
            self._arrow = new if self._arrow is None else pa.concat_arrays([self._arrow, new])
        return self._arrow


class Codec:
    """Encodes Python values of declared column types to int64 and back."""

    def __init__(self, symbols: SymbolTable):
        self.symbols = symbols

    def encode_value(self, value, column_type: str):
        if column_type == STR:
            if not isinstance(value, str):
                raise TypeError(f"expected a string, got {type(value).__name__} {value!r}")
            return self.symbols.intern(value)
        if column_type == FLOAT:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"expected a number, got {type(value).__name__} {value!r}")
            return int(encode_floats(np.array([float(value)]))[0])
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"expected an integer, got {type(value).__name__} {value!r}")
        value = int(value)
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise TypeError(f"integer {value} does not fit in 64 bits")
        return value

    def encode_rows(self, rows, types: tuple[str, ...]) -> np.ndarray:
        """Rows of Python values -> (arity, n) int64; raises TypeError/ValueError."""
        rows = rows if isinstance(rows, list) else list(rows)
        arity = len(types)
        for row in rows:
            if not isinstance(row, (tuple, list)) or len(row) != arity:
                raise ValueError(f"row {row!r} has arity {_arity(row)}, expected {arity}")
        if all(t == INT for t in types) and all(type(v) is int for row in rows for v in row):
            try:
                return np.array(rows, dtype=np.int64).reshape(len(rows), arity).T.copy()
            except OverflowError:
                pass  # the per-value path below names the offending value
        out = np.empty((arity, len(rows)), dtype=np.int64)
        for i, row in enumerate(rows):
            for j, (v, t) in enumerate(zip(row, types)):
                try:
                    out[j, i] = self.encode_value(v, t)
                except TypeError as e:
                    raise TypeError(f"row {row!r}, column {j}: {e}") from None
        return out

    def decode_column(self, codes: np.ndarray, column_type: str) -> list:
        if column_type == STR:
            return self.symbols.strings(codes)
        if column_type == FLOAT:
            return decode_floats(codes).tolist()
        return codes.tolist()

    def decode_rows(self, data: np.ndarray, types: tuple[str, ...] | None) -> list[tuple]:
        if types is None:
            types = (INT,) * data.shape[0]
        with collection_paused():
            columns = [self.decode_column(data[j], t) for j, t in enumerate(types)]
            return list(zip(*columns)) if columns else [()] * data.shape[1]


def _arity(row) -> str:
    return str(len(row)) if isinstance(row, (tuple, list)) else f"? (not a tuple: {type(row).__name__})"

"""Results: a relation's rows or changes as columns, decoded to Python tuples only on demand.

A `Result` is what a session reads out of the runtime -- a relation's contents,
the changes a commit closed, or a relation's change log -- kept as the
runtime's consolidated int64 columns together with the relation's `Layout`:
the name and type of each column, the plan columns holding its value and (in
SQL) its NULL flag, and the order rows are listed in.

`arrow()` decodes it column by column into a `pyarrow.Table`: numbers without
a copy, floats from their order-preserving codes, symbols by one gather from
the symbol table's Arrow array, records and ADT values as structs (compiler.values),
NULL flags as Arrow nulls; changes add `time` and `diff` columns. `df()` is that table in pandas. The Result is also a
read-only sequence of Python tuples -- rows, `(row, diff)` or
`(row, time, diff)` -- built from the same decoded columns the first time it
is indexed, iterated or compared. So a bulk answer never becomes tuples unless
someone asks for tuples (3.5M tuples cost half a second, the Arrow table a few
milliseconds), and the two views cannot disagree.

Order: rows by the layout's ORDER BY columns, then by every column ascending
(numbers and floats by value, strings by code point, records and ADT values
by `compiler.values.sort_key`, NULL flags after values); changes in the order of their rows; a change log by time first.
Contents are a set (each row with a positive count, once: Datalog) or, for a
`bag` layout, each row as often as its count (SQL).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from runtime.batch import Batch
from runtime.grouping import dense_ids
from runtime.kernels import radix_lexsort
from runtime.symbols import SymbolTable, collection_paused, decode_floats

from compiler.values import decode, sort_key, to_arrow, to_text

_SIGN = np.int64(-(2**63))
_NEGATIVE_ZERO = np.int64(-1)  # the code of -0.0 (runtime.symbols.encode_floats)


@dataclass(frozen=True)
class Column:
    """An output column: its name, type (number, unsigned, float, symbol, record or bool), the
    plan column holding its value and the one holding its NULL flag (None: never NULL); a
    record column's `kind` is the record type or ADT of its values (compiler.datalog.types)."""

    name: str
    type: str
    value: int
    null: int | None = None
    kind: object = None


@dataclass(frozen=True)
class Layout:
    """How a relation's plan rows read as a table: its columns, the type of every plan column
    (values and NULL flags), the (plan column, descending) pairs it is ordered by first, and
    whether its contents are a bag."""

    columns: tuple[Column, ...]
    plan_types: tuple[str, ...]
    order: tuple[tuple[int, bool], ...] = ()
    bag: bool = False

    @property
    def shown(self) -> list[int]:
        """The plan columns some column shows (values and NULL flags): the others are hidden
        (SQL's ORDER BY keys no select item lists, kept only to order the rows)."""
        return sorted({c.value for c in self.columns} | {c.null for c in self.columns if c.null is not None})

    @staticmethod
    def of_relation(names, types, kinds=None) -> "Layout":
        """A Datalog relation: one plan column per column (a record column with its kind), no NULLs, a set."""
        kinds = kinds or types
        columns = tuple(Column(n, t, j, kind=k if t == "record" else None) for j, (n, t, k) in enumerate(zip(names, types, kinds)))
        return Layout(columns, tuple(types))

    @property
    def kinds(self) -> list:
        """The kind of each plan column's values: a record column's record type or ADT, else None."""
        kinds = [None] * len(self.plan_types)
        for c in self.columns:
            kinds[c.value] = c.kind
        return kinds


def order_keys(data: np.ndarray, plan_types, symbols: SymbolTable, order=(), kinds=()) -> list[np.ndarray]:
    """int64 sort keys of the plan rows `data`, most significant first: the `order` columns
    (descending ones bit-inverted, which reverses int64 order exactly; -0.0 counts as 0.0
    there, as in SQL), then every column ascending, so distinct rows never tie. Numbers and
    floats sort on their codes (floats' codes preserve order), unsigned with the sign bit
    flipped, strings by their rank in code point order among the strings being sorted,
    records and ADT values (of the given `kinds`) by their rank among the values sorted."""
    kinds = list(kinds) or [None] * len(plan_types)
    columns = [_column_key(data[j], t, symbols, k) for j, (t, k) in enumerate(zip(plan_types, kinds))]
    keys = []
    for col, descending in order:
        key = columns[col]
        if plan_types[col] == "float":
            key = np.where(key == _NEGATIVE_ZERO, 0, key)
        keys.append(~key if descending else key)
    return keys + columns


def _column_key(column: np.ndarray, plan_type: str, symbols: SymbolTable, kind=None) -> np.ndarray:
    if plan_type == "record" and kind is not None:
        ids, inverse = np.unique(column, return_inverse=True)
        keys = [sort_key(v, kind) for v in decode(ids, kind, symbols)]
        rank = np.empty(len(ids), dtype=np.int64)
        rank[sorted(range(len(ids)), key=keys.__getitem__)] = np.arange(len(ids))
        return rank[inverse.reshape(-1)]
    if plan_type == "symbol":
        ids, inverse = np.unique(column, return_inverse=True)
        rank = np.empty(len(ids), dtype=np.int64)
        rank[np.argsort(symbols.objects()[ids], kind="stable")] = np.arange(len(ids))
        return rank[inverse]
    if plan_type == "unsigned":
        return column ^ _SIGN
    return column


ROWS, CHANGES, LOG = "rows", "changes", "log"


class Result(Sequence):
    """Rows (`ROWS`), changes at closed times (`CHANGES`: tuples `(row, diff)`) or a change
    log (`LOG`: tuples `(row, time, diff)`) of one relation, as columns; see the module."""

    def __init__(self, batch: Batch, layout: Layout, symbols: SymbolTable, shape: str = ROWS):
        if shape == ROWS:  # contents: distinct rows, their counts in diff
            batch = batch.take(batch.diff > 0)
        elif len(layout.shown) < len(layout.plan_types):
            batch = _merged_by_shown(batch, layout.shown)
        self._batch, self.layout, self._symbols, self.shape = batch, layout, symbols, shape
        self._ordered: Batch | None = None
        self._tuples: list | None = None
        self._length = int(batch.diff.sum()) if shape == ROWS and layout.bag else len(batch)

    @staticmethod
    def empty(layout: Layout, symbols: SymbolTable, shape: str = ROWS) -> "Result":
        return Result(Batch.empty(len(layout.plan_types), 1), layout, symbols, shape)

    # ---- columns ----

    def arrow(self, ordered: bool = True, records_as_text: bool = False):
        """The result as a pyarrow.Table: the relation's columns (plus `time` and `diff` for changes),
        in the result's order, or with `ordered=False` in no order (saves a sort: for writers);
        `records_as_text`: records and ADT values as Soufflé writes them (`[1, nil]`), not structs."""
        import pyarrow as pa

        batch = self._in_order() if ordered else self._expanded(self._batch)
        arrays = [self._arrow_column(batch, c, records_as_text) for c in self.layout.columns]
        names = [c.name for c in self.layout.columns]
        if self.shape != ROWS:
            arrays += [pa.array(batch.time[0]), pa.array(batch.diff)]
            names += ["time", "diff"]
        return pa.Table.from_arrays(arrays, names=names)

    def df(self):
        """The result as a pandas DataFrame (`arrow().to_pandas()`; needs pandas)."""
        return self.arrow().to_pandas()

    def fetchall(self) -> list[tuple]:
        """The result as a list of Python tuples (rows, `(row, diff)` or `(row, time, diff)`)."""
        return list(self._decoded())

    def _in_order(self) -> Batch:
        """The batch in the result's order, a bag's rows repeated by their counts (once)."""
        if self._ordered is None:
            batch, layout = self._batch, self.layout
            keys = order_keys(batch.data, layout.plan_types, self._symbols, layout.order, layout.kinds)
            if self.shape == LOG:
                keys.insert(0, batch.time[0])
            elif self.shape == CHANGES:
                keys += [batch.time[0], batch.diff]
            batch = batch.take(radix_lexsort(keys[::-1])) if len(batch) > 1 else batch
            self._ordered = self._expanded(batch)
        return self._ordered

    def _expanded(self, batch: Batch) -> Batch:
        """A bag's contents with each row as often as its count; anything else as it is (a set's
        rows are distinct already, and rows carry no counts)."""
        if self.shape == ROWS and self.layout.bag:
            return batch.take(np.repeat(np.arange(len(batch)), batch.diff))
        return batch

    def _arrow_column(self, batch: Batch, column: Column, records_as_text: bool = False):
        import pyarrow as pa

        codes = batch.data[column.value]
        nulls = batch.data[column.null] != 0 if column.null is not None else None
        if nulls is not None and not nulls.any():
            nulls = None
        if column.type == "symbol":
            return self._symbols.arrow().take(pa.array(codes, mask=nulls))
        if column.kind is not None:
            values = decode(codes, column.kind, self._symbols)
            if records_as_text:
                return pa.array([to_text(v, column.kind) for v in values], pa.string())
            return to_arrow(values, column.kind)
        return pa.array(_natural(codes, column.type), mask=nulls)

    # ---- tuples ----

    def _decoded(self) -> list:
        if self._tuples is None:
            batch = self._in_order()
            with collection_paused():  # millions of tuples, none of them cyclic
                columns = [self._python_column(batch, c) for c in self.layout.columns]
                rows = list(zip(*columns)) if columns else [()] * len(batch)
                if self.shape == CHANGES:
                    rows = list(zip(rows, batch.diff.tolist()))
                elif self.shape == LOG:
                    rows = list(zip(rows, batch.time[0].tolist(), batch.diff.tolist()))
            self._tuples = rows
        return self._tuples

    def _python_column(self, batch: Batch, column: Column) -> list:
        codes = batch.data[column.value]
        if column.type == "symbol":
            values = self._symbols.objects()[codes].tolist()
        elif column.kind is not None:
            values = decode(codes, column.kind, self._symbols)
        else:
            values = _natural(codes, column.type).tolist()
        if column.null is not None:
            nulls = batch.data[column.null]
            if nulls.any():
                values = [None if null else v for v, null in zip(values, nulls.tolist())]
        return values

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):
        return self._decoded()[index]

    def __iter__(self):
        return iter(self._decoded())

    def __eq__(self, other) -> bool:
        if isinstance(other, Result):
            return self._decoded() == other._decoded()
        if isinstance(other, (list, tuple)):
            return self._decoded() == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._decoded())


def _merged_by_shown(batch: Batch, shown: list[int]) -> Batch:
    """Changes that differ only in hidden plan columns are one change of what is read: their
    diffs summed (zeros dropped), the hidden values taken from one of them (for ordering)."""
    if len(batch) < 2:
        return batch
    ids, representative = dense_ids(np.zeros(len(batch), np.int64), np.concatenate([batch.data[shown], batch.time]))
    summed = np.zeros(len(representative), np.int64)
    np.add.at(summed, ids, batch.diff)
    keep = representative[summed != 0]
    return Batch(batch.data[:, keep], batch.time[:, keep], summed[summed != 0])


def _natural(codes: np.ndarray, column_type: str) -> np.ndarray:
    """A column's int64 codes as the numpy array of its values (not symbols)."""
    if column_type == "float":
        return decode_floats(codes)
    if column_type == "unsigned":
        return codes.view(np.uint64)
    if column_type == "bool":
        return codes != 0
    return codes


__all__ = ["Column", "Layout", "Result", "ROWS", "CHANGES", "LOG", "order_keys"]

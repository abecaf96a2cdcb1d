"""ORDER BY ... LIMIT as a maintained top-k, and the order rows are read in.

`TopK` is a plan node: the first `limit` rows (after skipping `offset`) of
its input in the order of `order`, a tuple of (plan column, descending)
pairs; rows equal on those columns are ordered by all columns ascending, so
the answer is one definite multiset. A row that occurs n times fills n
places.

It lowers to a *hierarchical* top-k (Materialize's): every row gets a bucket
from a hash of the whole row, one of 16^LEVELS; a reduce keyed by bucket
keeps the first offset + limit places of each bucket; the surviving rows are
re-bucketed sixteen times coarser (the bucket shifted right four bits) and
reduced again, and so on, until a last reduce over no key takes the places
offset .. offset + limit of what is left. A row in the answer is in the top
of its bucket at every level, so each level loses nothing the next needs. A
change touches one bucket per level, and a bucket above the first holds at
most 16 x (offset + limit) rows whatever the input size, so a change costs
about LEVELS + 1 reduces over small groups instead of a sort of the whole
input. The reduces are vectorised (compiler.lowering.places.TopPlaces): one
lexsort per call over the order columns, strings ranked in code point order
(as DuckDB and Python compare them) among the strings present.

Without LIMIT, rows after the first `offset` places are the input minus its
top `offset` (the same hierarchy), so OFFSET alone is incremental too.

An SQL ORDER BY item becomes up to two order columns: the NULL flag first
(NULLS LAST sorts flag 0 before 1) and then the value (a NULL's value is its
type's zero, so NULLs tie among themselves and fall back to the rest).
"""

from __future__ import annotations

import numpy as np

from compiler.lowering.places import SortKeys, TopPlaces
from compiler.plan.nodes import Node, _derived, _span, node
from runtime.kernels import hash_columns

# 16^LEVELS = 65,536 first-level buckets: up to about 65,536 x limit input
# rows they stay near limit rows each; beyond that they grow, and so does the
# cost of a change. Each level costs about a millisecond of operator overhead
# per change (bench/sql_topk.py: 3 levels were faster at 100,000 rows, 4 at
# 1,000,000), so more levels would buy only inputs larger than this engine holds.
FAN_IN_BITS = 4
LEVELS = 4


@node
class TopK(Node):
    input: Node
    order: tuple
    limit: int | None
    offset: int
    span: object = _span()
    types: tuple = _derived()
    _child_fields = ("input",)

    def __post_init__(self):
        object.__setattr__(self, "order", tuple((int(c), bool(d)) for c, d in self.order))
        object.__setattr__(self, "types", self.input.types)

    def lower(self, inputs):
        (rows,) = inputs
        return lower_top(rows, self.order, self.types, self.limit, self.offset)


def lower_top(rows, order, plan_types, limit: int | None, offset: int, levels: int = LEVELS, fan_in_bits: int = FAN_IN_BITS):
    """The collection of `rows` at places offset .. offset + limit (limit None: to the end) in `order`."""
    keys = SortKeys(order, plan_types, rows.dataflow.codec.symbols)
    if limit is None:
        if offset == 0:
            return rows
        return rows.concat(hierarchical_top(rows, keys, 0, offset, levels, fan_in_bits).negate())
    if limit == 0:
        return rows.filter_columns(lambda data: np.zeros(data.shape[1], dtype=bool))
    return hierarchical_top(rows, keys, offset, offset + limit, levels, fan_in_bits)


def hierarchical_top(rows, keys: "SortKeys", first: int, end: int, levels: int = LEVELS, fan_in_bits: int = FAN_IN_BITS):
    """The rows at places first .. end of `rows` in the order of `keys`, by levels of bucketed reduces.

    The first level has 2^(fan_in_bits x levels) buckets, each next one
    2^fan_in_bits times fewer, the last a single group.
    """
    arity = rows.arity
    if levels == 0:
        return rows.reduce_columns(TopPlaces(keys, first, end), 0, rows.types, "top-k")
    shift = np.uint64(64 - fan_in_bits * levels)
    per_bucket = TopPlaces(keys, 0, end)

    def with_bucket(data):
        bucket = (hash_columns(np.ascontiguousarray(data)).view(np.uint64) >> shift).astype(np.int64)
        return np.concatenate((bucket[None, :], data), axis=0)

    def coarser(data):
        out = data.copy()
        out[0] >>= fan_in_bits
        return out

    bucketed = rows.map_columns(with_bucket, types=("int",) + rows.types)
    for level in range(levels):
        if level:
            bucketed = bucketed.map_columns(coarser)
        bucketed = bucketed.reduce_columns(per_bucket, 1, rows.types, "top-k bucket")
    survivors = bucketed.select(range(1, arity + 1))
    return survivors.reduce_columns(TopPlaces(keys, first, end), 0, rows.types, "top-k")


def sort_rows(rows: list, order) -> list:
    """rows (tuples) sorted by the (column, descending) pairs, then by the whole row ascending."""
    rows = sorted(rows)
    for col, desc in reversed(order):
        rows.sort(key=lambda r: r[col], reverse=desc)
    return rows


def select_top(values, order, limit, offset):
    """[(row, count)] -> the rows (with counts) at places offset .. offset+limit of the order."""
    by_row = {}
    for row, count in values:
        if count > 0:
            by_row[row] = by_row.get(row, 0) + count
    end = None if limit is None else offset + limit
    out, place = [], 0
    for row in sort_rows(list(by_row), order):
        count = by_row[row]
        lo, hi = max(place, offset), place + count if end is None else min(place + count, end)
        if hi > lo:
            out.append((row, hi - lo))
        place += count
        if end is not None and place >= end:
            break
    return out

"""Soufflé's `range(start, stop[, step])`: several values for one row.

`x = range(a, b)` binds x to a, a + 1, ... up to b, excluded; with a step, to
a, a + step, ... while short of b; without one the step is 1 counting up and
-1 counting down, and a step away from b (or 0) gives nothing (`range_values`,
Soufflé's loop, accumulating the step as it does, which matters for floats).

With constant bounds the values are known when compiling: a Values node the
rule joins (compiler.lowering.rules). With bounds computed from each row,
`RangeValues` extends every row of its input with each value of its range: a
flat map, its bounds computed column-wise, then one Python loop per row.
"""

from __future__ import annotations

import numpy as np

from compiler.lowering.columns import projection, runtime_types
from compiler.plan.expr import Expr, show
from compiler.plan.nodes import Node, _check_expr, _derived, _span, node

_TWO64 = 2**64


def range_values(start, stop, step=None) -> list:
    """Soufflé's range: start, start + step, ... while short of stop (exclusive); without a
    step, 1 counting up and -1 counting down; a step away from stop (or 0) gives nothing."""
    if step is None:
        step = 1 if start <= stop else -1
    values, x = [], start
    while step != 0 and (x < stop if step > 0 else x > stop):
        values.append(x)
        x += step  # accumulated, as Soufflé's loop does (it matters for float steps)
    return values


@node
class RangeValues(Node):
    """Each row of `input`, once per value of range(*bounds) computed on it (the value
    last: a column of type `type`, the type of every bound)."""

    input: Node
    bounds: tuple[Expr, ...]
    type: str
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("input",)
    passes_multiplicities = True  # each input row's copies each become the same value rows

    def __post_init__(self):
        object.__setattr__(self, "bounds", tuple(self.bounds))
        for bound in self.bounds:
            _check_expr(bound, self.input.types, "RangeValues")
        object.__setattr__(self, "types", self.input.types + (self.type,))

    def describe(self) -> str:
        return f"RangeValues range({', '.join(show(b) for b in self.bounds)})"

    def lower(self, inputs):
        (rows,) = inputs
        arity = rows.arity
        value_type = runtime_types((self.type,))
        # The bounds as extra columns (encoded as the range's column is), then a flat map.
        bounds = projection(self.bounds, tuple(range(arity)), rows.dataflow.symbols)
        bounded = rows.map_columns(lambda data: np.concatenate((data, bounds(data))), types=rows.types + value_type * len(self.bounds))
        unsigned = self.type == "unsigned"

        def expand(row):
            kept, limits = row[:arity], row[arity:]
            if unsigned:  # an unsigned is held as the int64 with the same bits
                limits = [v % _TWO64 for v in limits]
            for value in range_values(*limits):
                yield (*kept, value - _TWO64 if unsigned and value >= 2**63 else value)

        return bounded.flat_map(expand, types=rows.types + value_type)

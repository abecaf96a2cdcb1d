"""Delta queries: a multiway join maintained from its base relations' arrangements alone.

A conjunctive query `Q = R1(x..) , R2(y..) , ... , Rk(z..)` (atoms over named
variables, the same relation possibly several times) changes, when its inputs
change at time t, by the telescoping sum

    dQ = dR1 x R2  x ... x Rk
       + R1' x dR2 x ... x Rk
       + ...
       + R1' x R2' x ... x dRk

where `Ri` is the relation before t (updates at times < t) and `Ri'` after it
(times <= t). Each term starts from the stream of one atom's updates and
extends it, one atom at a time, with `half_join` lookups: atoms before it in the
query as of `<= t` (neu), atoms after it as of `< t` (alt). That is the alt/neu
ordering of the calculus post; it is what makes simultaneous updates -- all
three edges of a triangle arriving at once -- count once rather than up to k
times. No intermediate result is ever arranged: the only state is one
arrangement per (relation, key columns), shared by every term and every query
that needs it (including the strict and non-strict lookups, see
runtime.operators.half_join), and the terms' candidates flow in bounded chunks.

Each term orders its lookups greedily: next the atom with the most variables
already bound (the earliest on a tie), keyed by its bound columns. Variables
repeated within an atom become equality filters.

`delta_query(atoms, output)`: `atoms` is a list of `(collection, variables)`
with one variable name per column; `output` names the variables of the result,
a collection with one row per combination of matching rows (multiplicities
multiply, as in `join`).
"""

from __future__ import annotations

import numpy as np

from runtime.operators.half_join import FUEL
from runtime.worker import DataflowError


def _keep_distinct(collection, names):
    """Filter rows whose repeated variables agree; the first column of each variable, and their names."""
    first: dict[str, int] = {}
    pairs = []
    for c, v in enumerate(names):
        if v in first:
            pairs.append((first[v], c))
        else:
            first[v] = c
    if pairs:
        collection = collection.filter_columns(lambda d: np.logical_and.reduce([d[a] == d[b] for a, b in pairs]))
    return collection.select(tuple(first.values())), list(first)


def term_order(atoms_vars: list[tuple[str, ...]], start: int) -> list[int]:
    """The order in which term `start` visits the other atoms: most bound variables first."""
    bound = set(atoms_vars[start])
    order, remaining = [], [j for j in range(len(atoms_vars)) if j != start]
    while remaining:
        best = max(remaining, key=lambda j: (len(set(atoms_vars[j]) & bound), -j))
        order.append(best)
        remaining.remove(best)
        bound |= set(atoms_vars[best])
    return order


def delta_query(atoms, output, fuel: int = FUEL):
    """The join of `atoms` ((collection, variable names) pairs) as rows of the `output` variables."""
    if len(atoms) < 2:
        raise DataflowError("delta_query needs at least two atoms")
    atoms = [(c, tuple(vs)) for c, vs in atoms]
    scope = atoms[0][0].scope
    for c, vs in atoms:
        if c.scope is not scope:
            raise DataflowError("delta_query: every atom must be in one scope")
        if len(vs) != c.arity:
            raise DataflowError(f"delta_query: {len(vs)} variables for a collection of arity {c.arity}")
    everything = {v for _, vs in atoms for v in vs}
    missing = [v for v in output if v not in everything]
    if missing:
        raise DataflowError(f"delta_query: output variables {missing} occur in no atom")
    terms = [_term(atoms, i, output, fuel, as_of=False) for i in range(len(atoms))]
    return terms[0].concat(*terms[1:])


def as_of_query(atoms, output, fuel: int = FUEL):
    """Updates of the first atom joined with the other atoms as of each update's time (an as-of join)."""
    atoms = [(c, tuple(vs)) for c, vs in atoms]
    return _term(atoms, 0, output, fuel, as_of=True)


def _term(atoms, i: int, output, fuel: int, as_of: bool):
    """Atom i's updates extended by lookups in the others: before i as of <= t, after i as of < t
    (or all as of <= t for an as-of join)."""
    vars_of = [vs for _, vs in atoms]
    stream, bound = _keep_distinct(*atoms[i])
    for j in term_order(vars_of, i):
        relation, names = atoms[j]
        key_cols = [c for c, v in enumerate(names) if v in bound]
        val_cols = [c for c, v in enumerate(names) if v not in bound]
        arranged = relation.select(key_cols + val_cols)
        # The stream with the key variables first (in the arrangement's key order).
        key_vars = [names[c] for c in key_cols]
        front = [bound.index(v) for v in key_vars]
        stream = stream.select(front + list(range(len(bound))))
        stream = stream.half_join(arranged, key=len(key_cols), strict=j > i and not as_of, fuel=fuel)
        # Rows are (key copies, bound..., values...): drop the key copies, and check
        # variables repeated among the new values.
        k = len(key_cols)
        stream, bound = _keep_distinct(stream.select(range(k, stream.arity)), bound + [names[c] for c in val_cols])
    return stream.select([bound.index(v) for v in output])


__all__ = ["as_of_query", "delta_query", "term_order"]

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
already bound (the earliest on a tie), keyed by its bound columns; the atoms
that would bind exactly the same new variables (each once) join it in one step,
an intersection (runtime.operators.half_join.ExtendOp): for each update the
atom with the fewest matches under its key proposes the new values and the
others validate them. So a triangle term extends an edge (a, c) by the b's of
whichever of edge(a, _) and edge(_, c) is smaller -- a hub's two-paths are
never formed -- and the only arrangements are edge by source and by target.
Variables repeated within an atom become equality filters.

`delta_query(atoms, output)`: `atoms` is a list of `(collection, variables)`
with one variable name per column; `output` names the variables of the result,
a collection with one row per combination of matching rows (multiplicities
multiply, as in `join`).
"""

from __future__ import annotations

import numpy as np

from runtime.collection import Collection
from runtime.operators.half_join import FUEL, ExtendOp, Lookup
from runtime.operators.half_join_kernels import LOOKUPS
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


def term_steps(atoms_vars: list[tuple[str, ...]], start: int) -> list[list[tuple[int, tuple[int, ...]]]]:
    """The lookups of term `start`, step by step, as (atom, its key columns) pairs: each step
    the atom with the most variables bound so far (the earliest on a tie), then the other
    atoms that bind exactly its new variables, when no atom of the step repeats a new
    variable (they are intersected; at most LOOKUPS atoms a step, the others come later,
    their variables bound). An atom's key is its columns bound before its step."""
    bound = set(atoms_vars[start])
    steps, remaining = [], [j for j in range(len(atoms_vars)) if j != start]

    def new_of(j):
        return [v for v in atoms_vars[j] if v not in bound]

    while remaining:
        best = max(remaining, key=lambda j: (len(set(atoms_vars[j]) & bound), -j))
        new = new_of(best)
        step = [best]
        if len(set(new)) == len(new):
            step += [j for j in remaining if j != best and sorted(new_of(j)) == sorted(new)][: LOOKUPS - 1]
        steps.append([(j, tuple(c for c, v in enumerate(atoms_vars[j]) if v in bound)) for j in step])
        remaining = [j for j in remaining if j not in step]
        bound |= set(new)
    return steps


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
    stream, bound = _keep_distinct(*atoms[i])
    for step in term_steps([vs for _, vs in atoms], i):
        first, first_names = atoms[step[0][0]]
        new_cols = [c for c in range(first.arity) if c not in step[0][1]]
        new = [first_names[c] for c in new_cols]  # the step's new columns, in its first atom's order
        lookups = []
        for j, key_cols in step:
            relation, names = atoms[j]
            val_cols = [c for c in range(relation.arity) if c not in key_cols]
            arranged = relation.select(list(key_cols) + val_cols).arrange_by_key(len(key_cols))
            place = range(len(val_cols)) if j == step[0][0] else [new.index(names[c]) for c in val_cols]
            key = tuple(bound.index(names[c]) for c in key_cols)
            lookups.append(Lookup(arranged, key, tuple(place), strict=j > i and not as_of))
        op = ExtendOp(stream.dataflow, stream.stream, lookups, fuel)
        stream = Collection(stream.scope, op.output(), stream.types + tuple(first.types[c] for c in new_cols))
        # Variables repeated among one atom's new values become filters.
        stream, bound = _keep_distinct(stream, bound + new)
    return stream.select([bound.index(v) for v in output])


__all__ = ["as_of_query", "delta_query", "term_steps"]

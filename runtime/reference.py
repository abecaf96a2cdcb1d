"""The reference evaluator: the collection API computed from scratch.

`Multiset` mirrors `Collection`'s methods, but holds whole contents
(`{row: count}`) and computes every operator directly: a join by nested loops, a
reduce key by key, an iterate by applying the body until nothing changes. There
are no times, traces, frontiers or deltas in it. Tests write a program once as a
function of its inputs, run it on both, and compare the dataflow's accumulated
output at every time with this evaluation of the accumulated inputs (the idea of
differential dataflow's `reduce_reference`). Only tests use it.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

MAX_ITERATIONS = 10_000


def _clean(counter) -> Counter:
    return Counter({r: c for r, c in counter.items() if c != 0})


class Multiset:
    def __init__(self, contents=None):
        self.contents = _clean(Counter(contents or {}))

    def __eq__(self, other):
        return isinstance(other, Multiset) and self.contents == other.contents

    def __repr__(self):
        return f"Multiset({dict(self.contents)})"

    # stateless
    def map(self, fn, types=None, arity=None):
        out = Counter()
        for row, c in self.contents.items():
            r = fn(row)
            out[tuple(r) if isinstance(r, (tuple, list)) else (r,)] += c
        return Multiset(out)

    def select(self, columns):
        return self.map(lambda r: tuple(r[c] for c in columns))

    def map_columns(self, fn, types=None, arity=None):
        rows = list(self.contents)
        if not rows:
            return Multiset()
        data = np.asarray(fn(np.array(rows, dtype=np.int64).T), dtype=np.int64)
        out = Counter()
        for row, new in zip(rows, data.T.tolist()):
            out[tuple(new)] += self.contents[row]
        return Multiset(out)

    def filter(self, predicate):
        return Multiset({r: c for r, c in self.contents.items() if predicate(r)})

    def filter_columns(self, predicate):
        rows = list(self.contents)
        if not rows:
            return Multiset()
        mask = np.asarray(predicate(np.array(rows, dtype=np.int64).T), dtype=bool)
        return Multiset({r: self.contents[r] for r, keep in zip(rows, mask) if keep})

    def flat_map(self, fn, types=None, arity=None):
        out = Counter()
        for row, c in self.contents.items():
            for r in fn(row):
                out[tuple(r) if isinstance(r, (tuple, list)) else (r,)] += c
        return Multiset(out)

    def negate(self):
        return Multiset({r: -c for r, c in self.contents.items()})

    def concat(self, *others):
        out = Counter(self.contents)
        for o in others:
            for r, c in o.contents.items():
                out[r] += c
        return Multiset(out)

    def inspect(self, fn):
        return self

    def consolidate(self):
        return self

    # joins
    def _index(self, key):
        index = defaultdict(list)
        for row, c in self.contents.items():
            index[row[:key]].append((row[key:], c))
        return index

    def join(self, other, key=1):
        index = other._index(key)
        out = Counter()
        for row, c in self.contents.items():
            for val, d in index.get(row[:key], ()):
                out[row + val] += c * d
        return Multiset(out)

    def join_map(self, other, fn, key=1, types=None, arity=None):
        return self.join(other, key).map(lambda row: fn(*row))

    def semijoin(self, keys, key=1):
        present = {r for r, c in keys.contents.items() if c > 0}
        return Multiset({r: c for r, c in self.contents.items() if r[:key] in present})

    def antijoin(self, keys, key=1):
        present = {r for r, c in keys.contents.items() if c > 0}
        return Multiset({r: c for r, c in self.contents.items() if r[:key] not in present})

    # reductions
    def _groups(self, key):
        groups = defaultdict(list)
        for row, c in sorted(self.contents.items()):
            groups[row[:key]].append((row[key:], c))
        return groups

    def reduce(self, fn, key=1, types=None, arity=None):
        out = Counter()
        for k, vals in self._groups(key).items():
            for val, c in fn(k[0] if len(k) == 1 else k, vals):
                out[k + (tuple(val) if isinstance(val, (tuple, list)) else (val,))] += c
        return Multiset(out)

    def distinct(self):
        return Multiset({r: 1 for r, c in self.contents.items() if c > 0})

    def threshold(self, fn):
        out = {r: int(fn(np.array([c]))[0]) for r, c in self.contents.items()}
        return Multiset(out)

    def count(self, key=None):
        key = len(next(iter(self.contents))) if key is None and self.contents else (key or 0)
        out = Counter()
        for k, vals in self._groups(key).items():
            total = sum(c for _, c in vals)
            if total:
                out[k + (total,)] += 1
        return Multiset(out)

    def sum(self, key=1):
        return Multiset({k + (sum(v[0] * c for v, c in vals),): 1 for k, vals in self._groups(key).items()})

    def mean(self, key=1):
        out = {}
        for k, vals in self._groups(key).items():
            n = sum(c for _, c in vals)
            if n > 0:
                out[k + (float(sum(v[0] * c for v, c in vals)) / n,)] = 1
        return Multiset(out)

    def min(self, key=1):
        out = {}
        for k, vals in self._groups(key).items():
            present = [v for v, c in vals if c > 0]
            if present:
                out[k + min(present)] = 1
        return Multiset(out)

    def max(self, key=1):
        out = {}
        for k, vals in self._groups(key).items():
            present = [v for v, c in vals if c > 0]
            if present:
                out[k + max(present)] = 1
        return Multiset(out)

    # loops
    def enter(self, scope=None):
        return self

    def leave(self):
        return self

    def iterate(self, body):
        return iterate([self], lambda x: [body(x)])[0]


def iterate(sources: list[Multiset], body) -> list[Multiset]:
    """Jacobi iteration of all variables at once, as in differential dataflow."""
    current = list(sources)
    for _ in range(MAX_ITERATIONS):
        nxt = list(body(*current))
        if nxt == current:
            return nxt
        current = nxt
    raise RuntimeError(f"reference iterate did not converge in {MAX_ITERATIONS} iterations")

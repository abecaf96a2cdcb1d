"""Times: the partially ordered timestamps that order updates.

A time is a tuple of int64 coordinates. The outermost coordinate is the input
epoch (totally ordered; as fine as one epoch per update). Each `iterate` scope
appends an iteration coordinate and orders times as a *product* (both coordinates
must be <=). A delta-query scope appends an *AltNeu* flag (0 = alt, 1 = neu): at
equal inner times alt < neu, otherwise the flag is ignored. A `Lattice` describes
which of these a scope's times are and supplies `less_equal`, `join` (least upper
bound) and `meet` (greatest lower bound), both on scalar tuples and vectorised on
`(depth, n)` int64 arrays, the form operators use. `advance_by(t, F)` is the meet
over `f` in frontier `F` of `join(t, f)`: the compaction rule, which leaves every
comparison with times in advance of `F` unchanged.

An `Antichain` is a set of mutually incomparable times (a frontier): the times
that may still appear are exactly those in advance of some element.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from runtime.kernels import in_advance_product

EPOCH, ITERATION, ALTNEU = "epoch", "iteration", "altneu"


class Lattice:
    """The time structure of one scope: a tuple of coordinate layers."""

    __slots__ = ("layers", "depth", "is_product")

    def __init__(self, layers: tuple[str, ...] = (EPOCH,)):
        if not layers or layers[0] != EPOCH or any(l not in (ITERATION, ALTNEU) for l in layers[1:]):
            raise ValueError(f"bad lattice layers {layers!r}")
        self.layers = layers
        self.depth = len(layers)
        self.is_product = ALTNEU not in layers

    def nested(self, layer: str) -> "Lattice":
        return Lattice(self.layers + (layer,))

    def outer(self) -> "Lattice":
        return Lattice(self.layers[:-1])

    def __eq__(self, other):
        return isinstance(other, Lattice) and other.layers == self.layers

    def __hash__(self):
        return hash(self.layers)

    def __repr__(self):
        return "Lattice(" + " x ".join(self.layers) + ")"

    def minimum(self) -> tuple[int, ...]:
        return (0,) * self.depth

    # -- scalar forms (tuples) -------------------------------------------------

    def le(self, a: tuple, b: tuple) -> bool:
        if self.is_product:
            return all(x <= y for x, y in zip(a, b))
        return self._le_rec(a, b, self.depth)

    def _le_rec(self, a, b, d) -> bool:
        if d == 1:
            return a[0] <= b[0]
        if self.layers[d - 1] == ALTNEU:
            if a[: d - 1] == b[: d - 1]:
                return a[d - 1] <= b[d - 1]
            return self._le_rec(a, b, d - 1)
        return a[d - 1] <= b[d - 1] and self._le_rec(a, b, d - 1)

    def join(self, a: tuple, b: tuple) -> tuple:
        return tuple(int(x) for x in self.join_arrays(_col(a), _col(b))[:, 0])

    def meet(self, a: tuple, b: tuple) -> tuple:
        return tuple(int(x) for x in self.meet_arrays(_col(a), _col(b))[:, 0])

    # -- vectorised forms on (depth, n) arrays ----------------------------------

    def le_arrays(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise a <= b; either side may be a single (depth, 1) column."""
        if self.is_product:
            if self.depth == 1:
                return a[0] <= b[0]
            return np.all(a <= b, axis=0)
        return self._le_arrays_rec(a, b, self.depth)

    def _le_arrays_rec(self, a, b, d):
        if d == 1:
            return a[0] <= b[0]
        last = a[d - 1] <= b[d - 1]
        if self.layers[d - 1] == ALTNEU:
            same = np.all(a[: d - 1] == b[: d - 1], axis=0)
            return np.where(same, last, self._le_arrays_rec(a, b, d - 1))
        return last & self._le_arrays_rec(a, b, d - 1)

    def join_arrays(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.is_product:
            return np.maximum(a, b)
        return self._bound_rec(a, b, self.depth, np.maximum, np.logical_or)

    def meet_arrays(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.is_product:
            return np.minimum(a, b)
        return self._bound_rec(a, b, self.depth, np.minimum, np.logical_and)

    def _bound_rec(self, a, b, d, pick, combine):
        """Join (pick=max) or meet (pick=min), recursing through AltNeu layers.

        For AltNeu the inner bound decides; the flag is taken from each side whose
        inner time equals the bound (as in differential dataflow's AltNeu).
        """
        a, b = np.broadcast_arrays(a[:d], b[:d])
        if d == 1:
            return pick(a, b)
        inner = self._bound_rec(a, b, d - 1, pick, combine)
        if self.layers[d - 1] != ALTNEU:
            return np.vstack([inner, pick(a[d - 1], b[d - 1])[None, :]])
        a_is = np.all(inner == a[: d - 1], axis=0)
        b_is = np.all(inner == b[: d - 1], axis=0)
        af, bf = a[d - 1].astype(bool), b[d - 1].astype(bool)
        if pick is np.maximum:  # join: neu if any side equal to the bound is neu
            flag = (a_is & af) | (b_is & bf)
        else:  # meet: alt unless every side equal to the bound is neu
            flag = np.where(a_is, af, True) & np.where(b_is, bf, True)
        return np.vstack([inner, flag.astype(np.int64)[None, :]])

    def advance_by(self, times: np.ndarray, frontier: "Antichain") -> np.ndarray:
        """advance_by(t, F) = meet over f in F of join(t, f), vectorised."""
        elems = frontier.elements
        if not elems:
            return times
        out = self.join_arrays(times, _col(elems[0]))
        for f in elems[1:]:
            out = self.meet_arrays(out, self.join_arrays(times, _col(f)))
        return out

    def lower_bound(self, times: np.ndarray) -> tuple:
        """One time <= every column of `times` (their meet); a cheap pointstamp."""
        if self.is_product:
            return tuple(times.min(axis=1).tolist())
        acc = times[:, :1]
        for i in range(1, times.shape[1]):
            acc = self.meet_arrays(acc, times[:, i : i + 1])
        return tuple(int(x) for x in acc[:, 0])


def _col(t) -> np.ndarray:
    return np.asarray(t, dtype=np.int64).reshape(-1, 1)


class Antichain:
    """An immutable set of mutually incomparable times (a frontier)."""

    __slots__ = ("lattice", "elements", "_columns")

    def __init__(self, lattice: Lattice, elements: Iterable[tuple] = ()):
        self.lattice = lattice
        self._columns = None
        distinct = set(tuple(map(int, e)) for e in elements)
        if len(distinct) <= 1:
            self.elements = tuple(distinct)
            return
        # Sorted lexicographically (a linear extension), so no later element can
        # be strictly below an earlier one.
        ordered = sorted(distinct)
        if lattice.depth == 1:
            self.elements = (ordered[0],)
        elif lattice.depth == 2 and lattice.is_product:
            # A staircase: a pair is minimal iff its y is below every earlier y.
            minimal = []
            for t in ordered:
                if not minimal or t[1] < minimal[-1][1]:
                    minimal.append(t)
            self.elements = tuple(minimal)
        else:
            minimal = []
            for t in ordered:
                if not any(lattice.le(m, t) for m in minimal):
                    minimal.append(t)
            self.elements = tuple(minimal)

    @classmethod
    def of_minimal(cls, lattice: Lattice, elements: list[tuple]) -> "Antichain":
        """The antichain of `elements`, tuples of ints already mutually incomparable (what a
        caller that derives frontiers knows), without the constructor's minimisation."""
        chain = object.__new__(cls)
        chain.lattice, chain.elements, chain._columns = lattice, tuple(elements), None
        return chain

    def __iter__(self):
        return iter(self.elements)

    def __len__(self):
        return len(self.elements)

    def __eq__(self, other):
        return isinstance(other, Antichain) and self.elements == other.elements

    def __hash__(self):
        return hash(self.elements)

    def __repr__(self):
        return f"Antichain({list(self.elements)})"

    def is_empty(self) -> bool:
        return not self.elements

    def less_equal(self, t: tuple) -> bool:
        """True when `t` is in advance of this frontier (some element <= t)."""
        return any(self.lattice.le(f, t) for f in self.elements)

    def in_advance_mask(self, times: np.ndarray) -> np.ndarray:
        """Vectorised `less_equal` over the columns of a (depth, n) array."""
        if self.lattice.is_product:
            return in_advance_product(self.columns(), times)
        mask = np.zeros(times.shape[1], dtype=bool)
        for f in self.elements:
            mask |= self.lattice.le_arrays(_col(f), times)
        return mask

    def columns(self) -> np.ndarray:
        """The elements as the columns of a (depth, k) int64 array."""
        if self._columns is None:
            if self.elements:
                self._columns = np.array(tuple(zip(*self.elements)), dtype=np.int64)
            else:
                self._columns = np.zeros((self.lattice.depth, 0), dtype=np.int64)
        return self._columns

    def meet(self, other: "Antichain") -> "Antichain":
        """The lower envelope: times in advance of either antichain."""
        return Antichain(self.lattice, self.elements + other.elements)

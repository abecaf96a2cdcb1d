"""Collections: the Python API for building dataflows.

A `Collection` is a stream of updates in a scope, with column types. Its
methods add operators and return new collections, in the style of differential
dataflow: `map`, `filter`, `join`, `reduce`, `iterate`, ... Rows are tuples;
operators keyed by a prefix of the row take `key=` (the number of leading
columns that form the key, default 1). Row functions (`map`, `filter`, ...)
receive decoded Python values; `map_columns` and `filter_columns` receive and
return the int64 column block for speed.

Arrangements are shared: a collection arranged by the same key twice is arranged
once; a reduce's output comes already arranged by its key, and a loop variable
that starts empty is read by joins through its result's arrangement when the
result is distinct's output (runtime.trace.delayed). A collection from an
enclosing scope used inside an `iterate` body is entered automatically.
"""

from __future__ import annotations

from collections.abc import Callable

from runtime.operators import reduce as reducers
from runtime.operators.arrange import Arranged, ArrangeOp
from runtime.operators.basic import (
    Unary,
    enter_times,
    feedback_times,
    filter_columns,
    identity,
    leave_times,
    map_columns,
    negate,
    select_columns,
)
from runtime.operators.capture import Capture, CaptureOp
from runtime.operators.consolidate import ConsolidateOp
from runtime.operators.half_join import FUEL, HalfJoinOp
from runtime.operators.join import JoinOp
from runtime.operators.reduce import ReduceOp
from runtime.operators.rows import filter_rows, flat_map_rows, map_rows
from runtime.progress import Summary
from runtime.symbols import COLUMN_TYPES, FLOAT, INT, STR
from runtime.trace.delayed import DelayedTrace
from runtime.worker import DataflowError, Scope, Stream


def normalize_types(types, arity=None) -> tuple[str, ...]:
    if types is None:
        types = arity
    if isinstance(types, int):
        return (INT,) * types
    types = tuple(types)
    for t in types:
        if t not in COLUMN_TYPES:
            raise DataflowError(f"unknown column type {t!r}; expected one of {COLUMN_TYPES}")
    return types


class Collection:
    def __init__(self, scope: Scope, stream: Stream, types, arrangement: Arranged | None = None, is_set=False):
        self.scope = scope
        self.stream = stream
        self.types = tuple(types)
        self.is_set = is_set
        self._arranged: dict[int, Arranged] = {}
        self._entered: dict[int, Collection] = {}
        self._selected: dict[tuple, Collection] = {}
        self._variable: Variable | None = None  # the loop variable this collection is, when it starts empty
        if arrangement is not None:
            self._arranged[arrangement.key_arity] = arrangement

    def __repr__(self):
        return f"Collection({self.stream.op}, types={self.types})"

    @property
    def arity(self) -> int:
        return len(self.types)

    @property
    def dataflow(self):
        return self.scope.dataflow

    def _unary(self, fn, name, types=None, is_set=False) -> "Collection":
        op = Unary(self.dataflow, [self.stream], fn, name, self.scope.lattice)
        return Collection(self.scope, op.output(), self.types if types is None else types, is_set=is_set)

    def _in_my_scope(self, other: "Collection") -> "Collection":
        if other.scope is self.scope:
            return other
        if self.scope.is_within(other.scope):
            return other.enter(self.scope)
        raise DataflowError(f"{other} is not visible from the scope of {self}")

    def _key(self, key: int) -> int:
        if not 0 <= key <= self.arity:
            raise DataflowError(f"key={key} is out of range for a collection of arity {self.arity}")
        return key

    # -- stateless ------------------------------------------------------------

    def map(self, fn: Callable, types=None, arity=None) -> "Collection":
        """Apply a row function; `types`/`arity` give the output columns (default: same)."""
        out = self.types if types is None and arity is None else normalize_types(types, arity)
        return self._unary(map_rows(fn, self.dataflow.codec, self.types, out, "map"), "map", out)

    def map_columns(self, fn: Callable, types=None, arity=None) -> "Collection":
        out = self.types if types is None and arity is None else normalize_types(types, arity)
        return self._unary(map_columns(fn, len(out)), "map_columns", out)

    def filter(self, predicate: Callable) -> "Collection":
        return self._unary(filter_rows(predicate, self.dataflow.codec, self.types), "filter", is_set=self.is_set)

    def filter_columns(self, predicate: Callable) -> "Collection":
        return self._unary(filter_columns(predicate), "filter_columns", is_set=self.is_set)

    def flat_map(self, fn: Callable, types=None, arity=None) -> "Collection":
        out = self.types if types is None and arity is None else normalize_types(types, arity)
        return self._unary(flat_map_rows(fn, self.dataflow.codec, self.types, out), "flat_map", out)

    def select(self, columns) -> "Collection":
        """The given columns, in that order (built once per column tuple, so arrangements of it are shared)."""
        columns = tuple(int(c) for c in columns)
        if columns == tuple(range(self.arity)):
            return self
        done = self._selected.get(columns)
        if done is None:
            done = self._selected[columns] = self._unary(
                select_columns(columns), "select", tuple(self.types[c] for c in columns)
            )
        return done

    def negate(self) -> "Collection":
        return self._unary(negate, "negate")

    def concat(self, *others: "Collection") -> "Collection":
        others = [self._in_my_scope(o) for o in others]
        for o in others:
            if o.arity != self.arity:
                raise DataflowError(f"concat of arity {self.arity} with arity {o.arity}")
        op = Unary(self.dataflow, [self.stream] + [o.stream for o in others], identity, "concat", self.scope.lattice)
        return Collection(self.scope, op.output(), self.types)

    def inspect(self, fn: Callable) -> "Collection":
        """Call fn(row, time, diff) for every update passing through."""
        codec, types = self.dataflow.codec, self.types

        def look(batch):
            for row, t, d in zip(codec.decode_rows(batch.data, types), batch.time.T.tolist(), batch.diff.tolist()):
                fn(row, t[0] if len(t) == 1 else tuple(t), d)
            return batch

        return self._unary(look, "inspect", is_set=self.is_set)

    # -- scopes ---------------------------------------------------------------

    def enter(self, scope: Scope) -> "Collection":
        if scope is self.scope:
            return self
        if scope.parent is not self.scope:
            return self.enter(scope.parent).enter(scope)
        cached = self._entered.get(id(scope))
        if cached is None:
            d = self.scope.lattice.depth
            op = Unary(self.dataflow, [self.stream], enter_times, "enter", self.scope.lattice, scope.lattice, Summary(d, 0, (0,)), scope)
            cached = self._entered[id(scope)] = Collection(scope, op.output(), self.types, is_set=self.is_set)
        return cached

    def leave(self) -> "Collection":
        parent = self.scope.parent
        if parent is None:
            raise DataflowError("leave() on a collection of the root scope")
        d = self.scope.lattice.depth
        op = Unary(self.dataflow, [self.stream], leave_times, "leave", self.scope.lattice, parent.lattice, Summary(d - 1))
        return Collection(parent, op.output(), self.types)

    def enter_at(self, scope: Scope, neu: bool = False) -> "Collection":
        """Enter an AltNeu child scope at alt (default) or neu times (runtime.calculus)."""
        from runtime import calculus

        return calculus.enter_at(self, scope, neu)

    def differentiate(self, scope: Scope | None = None) -> "Collection":
        """Each update as a blip in an AltNeu scope: at (t, alt), retracted at (t, neu) (runtime.calculus)."""
        from runtime import calculus

        return calculus.differentiate(self, scope)

    def integrate(self) -> "Collection":
        """Leave an AltNeu scope keeping alt updates and dropping neu ones (runtime.calculus)."""
        from runtime import calculus

        return calculus.integrate(self)

    def iterate(self, body: Callable[["Collection"], "Collection"]) -> "Collection":
        """The limit of x0 = self, x(i+1) = body(x(i)), computed incrementally."""
        return iterate([self], lambda x: [body(x)])[0]

    # -- arrangements and joins -----------------------------------------------

    def arrange_by_key(self, key: int = 1) -> Arranged:
        key = self._key(key)
        arranged = self._arranged.get(key)
        if arranged is None:
            op = ArrangeOp(self.dataflow, self.stream, key, self.arity - key)
            arranged = self._arranged[key] = Arranged(op.output(), op.trace, key)
        return arranged

    def arrange_by_self(self) -> Arranged:
        return self.arrange_by_key(self.arity)

    def join(self, other: "Collection", key: int = 1) -> "Collection":
        """Rows (key..., self's values..., other's values...) for matching keys."""
        other = self._in_my_scope(other)
        op = JoinOp(self.dataflow, self._join_side(key), other._join_side(other._key(key)))
        types = self.types + other.types[key:]
        return Collection(self.scope, op.output(), types)

    def _join_side(self, key: int) -> Arranged:
        """What a join reads of this collection: its arrangement by the first `key` columns, or,
        for a loop variable that starts empty, its result's arrangement one iteration later."""
        if self._variable is not None:
            return self._variable.delayed(key)
        return self.arrange_by_key(self._key(key))

    def join_map(self, other: "Collection", fn: Callable, key: int = 1, types=None, arity=None) -> "Collection":
        """join, then fn(*joined_row) -> output row."""
        return self.join(other, key).map(lambda row: fn(*row), types=types, arity=arity)

    def half_join(self, other: "Collection", key: int = 1, strict: bool = False, fuel: int = FUEL) -> "Collection":
        """Each update of self looked up in `other` as of the update's time (runtime.operators.half_join).

        Rows are (self's columns..., other's values...) for matching first `key`
        columns; `strict` leaves out other's updates at the same time. Self is
        never arranged; other is arranged by its key (shared like any arrangement).
        """
        key = self._key(key)
        other = self._in_my_scope(other)
        arranged = other.arrange_by_key(other._key(key))
        op = HalfJoinOp(self.dataflow, self.stream, key, arranged, strict, fuel)
        return Collection(self.scope, op.output(), self.types + other.types[key:])

    def as_of_join(self, other: "Collection", key: int = 1) -> "Collection":
        """Each update of self joined with `other` as it was at the update's time.

        Later changes of `other` never rewrite earlier results (the calculus post's
        orders and prices). A retraction of a row of self is an event of its own,
        looked up as of *its* time: if `other` changed in between, the retraction
        does not cancel the original match (see runtime.calculus).
        """
        return self.half_join(other, key)

    def semijoin(self, keys: "Collection", key: int = 1) -> "Collection":
        """Rows of self whose key is in `keys` (a collection of key tuples)."""
        keys = self._in_my_scope(keys)
        if keys.arity != key:
            raise DataflowError(f"semijoin keys have arity {keys.arity}, expected {key}")
        op = JoinOp(self.dataflow, self._join_side(key), keys.distinct().arrange_by_self())
        return Collection(self.scope, op.output(), self.types)

    def antijoin(self, keys: "Collection", key: int = 1) -> "Collection":
        """Rows of self whose key is not in `keys`."""
        return self.concat(self.semijoin(keys, key).negate())

    # -- reductions -------------------------------------------------------------

    def reduce_columns(self, reducer: reducers.Reducer, key: int, out_types, label: str = "reduce", is_set=False) -> "Collection":
        """A vectorised reduction: `reducer(group, val, count)` over every changed key at once.

        The reducer gets the consolidated (group id, value columns, count) of all
        keys and times in play, sorted by group then value, and returns its output
        the same way (see `runtime.operators.reduce.Reducer`); `out_types` are the
        output value columns' types. `is_set` promises the output has no
        duplicate rows (later `distinct` calls become free).
        """
        op = ReduceOp(self.dataflow, self.arrange_by_key(self._key(key)), reducer, label)
        return Collection(self.scope, op.output(), self.types[:key] + tuple(out_types), op.arranged(), is_set=is_set)

    def reduce(self, fn: Callable, key: int = 1, types=None, arity=None) -> "Collection":
        """fn(key, [(value, count), ...]) -> [(output value, count), ...] for each key."""
        key = self._key(key)
        out = self.types[key:] if types is None and arity is None else normalize_types(types, arity)
        reducer = reducers.PythonReducer(fn, self.dataflow.codec, self.types[:key], self.types[key:], out)
        return self.reduce_columns(reducer, key, out, "reduce")

    def distinct(self) -> "Collection":
        if self.is_set:
            return self
        return self.reduce_columns(reducers.Distinct(), self.arity, (), "distinct", is_set=True)

    def threshold(self, fn: Callable) -> "Collection":
        """Each distinct row with multiplicity fn(count), fn vectorised over int64 arrays."""
        return self.reduce_columns(reducers.Threshold(fn), self.arity, (), "threshold")

    def count(self, key: int | None = None) -> "Collection":
        """(key..., number of rows with that key); key defaults to the whole row."""
        key = self.arity if key is None else self._key(key)
        return self.reduce_columns(reducers.Count(), key, (INT,), "count", is_set=True)

    def sum(self, key: int = 1) -> "Collection":
        """(key..., sum of the single value column) per key (int columns wrap, float columns add as floats)."""
        if self.arity - self._key(key) != 1:
            raise DataflowError("sum() needs exactly one value column after the key")
        return self.reduce_columns(reducers.Sum(self.types[key] == FLOAT), key, self.types[key:], "sum", is_set=True)

    def mean(self, key: int = 1) -> "Collection":
        """(key..., mean of the single value column, a float) per key with rows."""
        if self.arity - self._key(key) != 1:
            raise DataflowError("mean() needs exactly one value column after the key")
        if self.types[key] == STR:
            raise DataflowError("mean() needs a numeric value column, not str")
        return self.reduce_columns(reducers.Mean(self.types[key] == FLOAT), key, (FLOAT,), "mean", is_set=True)

    def min(self, key: int = 1) -> "Collection":
        """(key..., smallest value) per key, values compared as tuples."""
        key = self._key(key)
        return self.reduce_columns(reducers.Extreme(self.arity - key, False), key, self.types[key:], "min", is_set=True)

    def max(self, key: int = 1) -> "Collection":
        key = self._key(key)
        return self.reduce_columns(reducers.Extreme(self.arity - key, True), key, self.types[key:], "max", is_set=True)

    def consolidate(self) -> "Collection":
        op = ConsolidateOp(self.dataflow, self.stream)
        return Collection(self.scope, op.output(), self.types, is_set=self.is_set)

    # -- outputs -----------------------------------------------------------------

    def capture(self) -> Capture:
        if self.scope.parent is not None:
            raise DataflowError("capture() a collection of the root scope (leave() the loop first)")
        return Capture(CaptureOp(self.dataflow, self.stream, self.types))


class Variable:
    """A loop variable: starts as `source`, then takes the value `set` gives it.

    Its contents at iteration i+1 are the result at iteration i: the back edge
    carries `result - source`, advanced one iteration, consolidated unless the
    result already comes out of a reduce (whose output is final per time); then the
    result and the source's negation go back on two edges, and the second waits for
    its turn in the round, so the two meet in the variable's readers' queues.

    A variable that starts empty (`source` None; its scope and column types given)
    is the result one iteration later and nothing else. Joins read it through
    `DelayedTrace`s (runtime.trace.delayed), bound when the result is set to
    distinct's output trace: the variable keeps no arrangement of its own.
    """

    def __init__(self, source: Collection | None, scope: Scope | None = None, types=None):
        if source is not None:
            scope, types = source.scope, source.types
        if scope.parent is None:
            raise DataflowError("a Variable lives in an iterative scope")
        self.source = source
        self.scope = scope
        inputs = [] if source is None else [source.stream]
        self._head = Unary(scope.dataflow, inputs, identity, "variable", scope.lattice, scope=scope)
        self.collection = Collection(scope, self._head.output(), types)
        self.result: Collection | None = None
        self._delayed: dict[int, Arranged] = {}  # key arity -> what joins read of a variable that starts empty
        if source is None:
            self.collection._variable = self

    def delayed(self, key: int) -> Arranged:
        """The variable keyed by its first `key` columns, as joins read it: its stream, and a
        delayed trace of its result's arrangement (bound by `set`)."""
        arranged = self._delayed.get(key)
        if arranged is None:
            arity = self.collection.arity
            if not 0 <= key <= arity:
                raise DataflowError(f"key={key} is out of range for a collection of arity {arity}")
            trace = DelayedTrace(self.scope.lattice, key, arity - key)
            arranged = self._delayed[key] = Arranged(self.collection.stream, trace, key)
        return arranged

    def set(self, result: Collection) -> Collection:
        if self.result is not None:
            raise DataflowError("Variable.set called twice")
        if result.scope is not self.scope:
            raise DataflowError("the result of an iterate body must be in the loop's scope")
        if result.arity != self.collection.arity:
            raise DataflowError(f"loop body returns arity {result.arity}, the variable has arity {self.collection.arity}")
        self.result = result
        op = result.stream.op
        if self._delayed:
            if not (isinstance(op, ReduceOp) and isinstance(op.reducer, reducers.Distinct)):
                raise DataflowError("joins read a loop variable that starts empty through its result's arrangement: "
                                    "the result must be distinct()'s output")
            for arranged in self._delayed.values():
                arranged.trace.bind(op.out_trace)
        if self.source is None:
            self._feed_back(result if isinstance(op, ReduceOp) else result.consolidate())
        elif isinstance(op, ReduceOp):
            self._feed_back(result)
            # The source's negation waits for its turn, the last of the round (its operator is
            # the loop's newest): sent on delivery, when the source enters, it would reach the
            # variable's readers a round before the result it cancels, and a first load's
            # joins would see negative counts (which keep distinct reading its input:
            # ReduceOp._input_before). Now both come in one queue and cancel when arranged.
            self._feed_back(self.source.negate()).eager = False
        else:
            self._feed_back(result.concat(self.source.negate()).consolidate())
        return result

    def _feed_back(self, delta: Collection) -> Unary:
        """The back edge from `delta` to the variable: its updates one iteration later."""
        d = self.scope.lattice.depth
        back = Unary(self.scope.dataflow, [delta.stream], feedback_times, "feedback", self.scope.lattice, None, Summary(d, 1))
        self.scope.dataflow.connect(back.output(), self._head, 0)
        return back


def iterate(sources: list, body, scope: Scope | None = None, round_limit: int | None = None, label=None) -> list[Collection]:
    """Mutually recursive variables in one loop scope.

    `body(*variables)` returns one result per variable; each variable starts as
    its source and takes its result's value from one iteration to the next. A
    source given as column types instead of a collection is a variable that
    starts empty (see `Variable`); `scope`, the scope the loop is in, is needed
    when no source is a collection. With a `round_limit`, work left at a later
    iteration raises RoundLimitError(label) from `step()` (a guard on a body
    that need not converge).
    """
    scopes = {id(s.scope): s.scope for s in sources if isinstance(s, Collection)}
    if scope is not None:
        scopes.setdefault(id(scope), scope)
    if len(scopes) != 1:
        raise DataflowError("iterate() sources must all be in one scope (given as `scope` when every source starts empty)")
    inner = next(iter(scopes.values())).iterative()
    inner.round_limit, inner.label = round_limit, label
    variables = [Variable(s.enter(inner)) if isinstance(s, Collection) else Variable(None, inner, normalize_types(s)) for s in sources]
    results = list(body(*[v.collection for v in variables]))
    if len(results) != len(variables):
        raise DataflowError(f"iterate body returned {len(results)} results for {len(variables)} variables")
    for v, r in zip(variables, results):
        v.set(r)
    return [v.result.leave() for v in variables]

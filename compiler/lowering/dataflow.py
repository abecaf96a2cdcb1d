"""An optimized plan as a runtime dataflow.

`build_dataflow(plan)` makes a new `runtime.Dataflow` with one input per plan
input, lowers every step bottom-up, and captures the relations asked for.
Each node becomes (at most) one runtime collection, built once: nodes are
memoized per scope, and the optimizer has already made equal subplans one
node (compiler.plan.rewrites.share).

Views. A lowered node is a collection plus a *layout*: which of the
collection's columns holds each plan column. A pure projection is then free
(a new layout over the same collection), a Join's output keeps the runtime's
(key, left values, right values) order, and a Filter or computed Project
reads through the layout. Columns are reordered only where the runtime needs
a particular order -- key columns first for Join, Antijoin and Aggregate,
exact columns for Union, Distinct and captures -- and each (node, columns)
order is built once, so one collection keyed by the same columns is one
arrangement, however many joins read it. A Union asked for in an order is the
union of its inputs in that order, so no operator reorders its rows: an input's
reorder is free, or done by the operator making it (a join writes the columns a
select after it keeps: runtime.worker.Dataflow._fuse_selects).

Fixpoints become one `runtime.iterate` over all their bindings. A binding's
variable starts from the part of its body that does not depend on the
fixpoint (the union branches of its non-recursive rules, facts, inputs),
which is below the answer and saves iterations; the body, evaluated on the
variables, is the next iteration, and its top Distinct (or min/max) keeps
each iteration a set. Subplans that do not depend on the fixpoint are built
outside the loop and entered, so they are computed once, not per iteration.
A binding whose top Distinct is built and that a Join reads directly is the
exception: its variable starts empty and holds its columns in the order that
join reads them (key first), so the join reads the Distinct's own output trace
one iteration later instead of an arrangement of its own (runtime.trace.delayed):
a trace as large as the answer fewer, for one more iteration.

A Distinct whose input is already a set is built as nothing at all (no
arrangement, no distinct, no traces): a Join of sets (its rows carry all of
both sides' columns), a Filter or Antijoin of a set, a Project that keeps
every input column (or its equal across a join key), distinct Values, an
Aggregate, and a Ref to a binding, whose body is a Distinct or an Aggregate.
Inside a fixpoint this is an induction over the iterations: the first is a
set, and if every binding is a set at iteration i, each body whose Distinct
is dropped is one at i + 1 (a join's counts multiply counts of 0 or 1).
Soufflé's `a(x) :- b(x), c(y).` or `q(x) :- a(x), x < 10.` keep no index or
history of their own. (The plan -- what `explain` prints first, and what the
Spark engine runs semi-naively -- keeps these Distincts.)

Values (facts, constant rows) become inputs loaded at time 0 and closed by
the session at its first commit (`Built.constants`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from runtime import Dataflow, iterate

from compiler.lowering.capture import ChangeCapture
from compiler.lowering.delta import lower_delta_join
from compiler.lowering.columns import predicate, projection, runtime_types
from compiler.plan.delta import DeltaJoin
from compiler.plan.nodes import walk
from compiler.plan import (
    Aggregate,
    Antijoin,
    Col,
    Distinct,
    Filter,
    Fixpoint,
    Join,
    Node,
    Plan,
    PlanError,
    Project,
    Ref,
    Scan,
    Union,
    Values,
)


@dataclass
class Built:
    """A dataflow built from a plan, and the handles a session drives it with."""

    dataflow: Dataflow
    inputs: dict  # input name -> runtime.InputHandle
    constants: list  # input handles of Values, loaded at time 0
    captures: dict = field(default_factory=dict)  # relation name -> runtime.Capture


@dataclass
class View:
    collection: object  # runtime.Collection
    layout: tuple[int, ...]  # plan column i is collection column layout[i]


class _Context:
    """Where nodes are being lowered: the root scope, or a fixpoint's loop scope."""

    def __init__(self, parent: "_Context | None" = None, scope=None, variables: dict | None = None, inner: dict | None = None):
        self.parent, self.scope = parent, scope
        self.variables = variables or {}  # binding name -> View of its loop variable
        self.inner = inner or {}  # binding name -> body: the fixpoint's bindings computed within each iteration
        self.names = frozenset(self.variables) | frozenset(self.inner)  # what the loop's iterations change
        self.views: dict[Node, View] = {}
        self.ordered: dict[tuple, object] = {}  # (node, columns) -> collection with exactly those columns


def build_dataflow(plan: Plan, capture=None) -> Built:
    """The dataflow computing `plan`; captures the named relations (default: every input and
    binding), the plan's outputs as ChangeCaptures (compiler.lowering.capture)."""
    return _Lowering(plan).build(capture)


class _Lowering:
    def __init__(self, plan: Plan):
        self.plan = plan
        self.df = Dataflow()
        self.symbols = self.df.symbols
        self.root = _Context()
        self.inputs: dict[str, tuple] = {}
        self.bindings: dict[str, object] = {}  # binding name -> root collection (exact columns)
        self.constants: list = []
        self._depends: dict[tuple[Node, frozenset], bool] = {}
        self._bodies = {b.name: b.body for step in plan.steps for b in (step.bindings if isinstance(step, Fixpoint) else (step,))}
        self._sets: dict[Node, bool] = {}

    def build(self, capture) -> Built:
        for name, types in self.plan.inputs.items():
            self.inputs[name] = self.df.new_input(name, runtime_types(types))
        for step in self.plan.steps:
            if isinstance(step, Fixpoint):
                self._fixpoint(step)
            else:
                self.bindings[step.name] = self.exact(step.body, self.root)
        built = Built(self.df, {n: h for n, (h, _) in self.inputs.items()}, self.constants)
        names = list(self.plan.inputs) + list(self.bindings) if capture is None else capture
        for name in dict.fromkeys(list(names) + list(self.plan.outputs)):
            collection = self.bindings[name] if name in self.bindings else self.inputs[name][1]
            built.captures[name] = ChangeCapture(collection) if name in self.plan.outputs else collection.capture()
        return built

    # ---- fixpoints ----

    def _fixpoint(self, step: Fixpoint) -> None:
        names = frozenset(b.name for b in step.bindings)
        looped = _loop_variables(step, self._reads, self._distinct_built) if _monotone(step, self._reads) else step.bindings
        inner = {b.name: b.body for b in step.bindings if b not in looped}
        orders = [self._shared_order(b, step) for b in looped]
        sources = []
        for b, order in zip(looped, orders):
            if order is not None:  # starts empty, columns in that order
                sources.append(runtime_types(b.types[c] for c in order))
                continue
            seed = self._seed(b.body, names)
            sources.append(self.exact(seed if seed is not None else Values((), b.types), self.root))
        within = {}

        def body(*variables):
            views = {b.name: View(v, _inverse(order) if order else tuple(range(b.body.arity))) for b, v, order in zip(looped, variables, orders)}
            context = _Context(self.root, variables[0].scope, views, inner)
            within.update((name, self.exact(node, context)) for name, node in inner.items())
            return [self.exact(b.body, context) if order is None else self.ordered(b.body.input, order, context).distinct()
                    for b, order in zip(looped, orders)]

        for b, order, result in zip(looped, orders, iterate(sources, body, self.df.root_scope, step.round_limit, names)):
            self.bindings[b.name] = result if order is None else result.select(_inverse(order))
        for name, collection in within.items():
            self.bindings[name] = collection.leave()

    def _shared_order(self, b, step: Fixpoint) -> tuple[int, ...] | None:
        """The column order of binding b's variable when it reads its Distinct's output trace (the
        key columns of the first Join of the fixpoint that reads it directly, then the others), or
        None when it keeps an arrangement of its own (its top Distinct is not built, or no Join reads it)."""
        if not self._distinct_built(b.body):
            return None
        for binding in step.bindings:
            for node in walk(binding.body):
                if not isinstance(node, Join):
                    continue
                for side, keys in ((node.left, tuple(a for a, _ in node.keys)), (node.right, tuple(c for _, c in node.keys))):
                    if isinstance(side, Ref) and side.name == b.name and len(set(keys)) == len(keys):
                        return keys + tuple(c for c in range(b.body.arity) if c not in keys)
        return None

    def _seed(self, node: Node, names) -> Node | None:
        """The part of a binding's body that does not read the fixpoint's own bindings."""
        if not self._reads(node, names):
            return node
        if isinstance(node, Union):
            kept = [c for c in node.inputs if not self._reads(c, names)]
            return None if not kept else kept[0] if len(kept) == 1 else node.with_children(kept)
        if isinstance(node, (Distinct, Aggregate, Project, Filter)):
            inner = self._seed(node.input, names)
            return None if inner is None else node.with_children([inner])
        return None

    def _reads(self, node: Node, names: frozenset) -> bool:
        key = (node, names)
        if key not in self._depends:
            own = isinstance(node, Ref) and node.name in names
            self._depends[key] = own or any(self._reads(c, names) for c in node.children())
        return self._depends[key]

    # ---- nodes ----

    def view(self, node: Node, context: _Context) -> View:
        if context.parent is not None and not self._reads(node, context.names):
            outer = self.view(node, context.parent)  # loop-invariant: build it outside, enter it
            return View(outer.collection.enter(context.scope), outer.layout)
        done = context.views.get(node)
        if done is None:
            done = context.views[node] = self._lower(node, context)
        return done

    def ordered(self, node: Node, columns: tuple[int, ...], context: _Context):
        """A collection with exactly the plan columns `columns` of `node`, in that order."""
        key = (node, columns)
        done = context.ordered.get(key)
        if done is None and isinstance(node, Union) and columns != tuple(range(node.arity)) and all(
                tuple(c.types[i] for i in columns) == tuple(node.types[i] for i in columns) for c in node.inputs):
            # Each input in this order, then their union: the inputs' own reorders are free or
            # done by the operators that make them (a select after a join is the join's own).
            first, *others = [self.ordered(c, columns, context) for c in node.inputs]
            done = context.ordered[key] = first.concat(*others) if others else first
        if done is None:
            v = self.view(node, context)
            wanted = [v.layout[c] for c in columns]
            types = tuple(runtime_types(node.types[c] for c in columns))
            if tuple(v.collection.types[w] for w in wanted) == types:
                # A selection of the collection's columns, shared with every other reader of
                # the same columns (runtime Collection.select), and so are its arrangements.
                done = v.collection.select(wanted)
            else:  # the plan reads the columns as other types (SQL casts): convert them
                fn = projection(tuple(Col(c, node.types[c]) for c in columns), v.layout, self.symbols)
                done = v.collection.map_columns(fn, types=types)
            context.ordered[key] = done
        return done

    def exact(self, node: Node, context: _Context):
        return self.ordered(node, tuple(range(node.arity)), context)

    def keyed(self, node: Node, keys: tuple[int, ...], context: _Context):
        """(collection with the key columns first, then the others; layout of node's columns in it)."""
        rest = tuple(c for c in range(node.arity) if c not in keys)
        collection = self.ordered(node, keys + rest, context)
        layout = {}
        for i, c in enumerate(keys + rest):
            layout.setdefault(c, i)
        return collection, tuple(layout[c] for c in range(node.arity)), len(rest)

    def _lower(self, node: Node, context: _Context) -> View:
        identity = tuple(range(node.arity))
        if isinstance(node, Scan):
            return View(self.inputs[node.name][1], identity)
        if isinstance(node, Ref):
            if node.name in context.variables:
                return context.variables[node.name]
            if node.name in context.inner:
                return self.view(context.inner[node.name], context)
            return View(self.bindings[node.name], identity)
        if isinstance(node, Values):
            handle, collection = self.df.new_input(f"values#{len(self.constants)}", runtime_types(node.types))
            rows = list(node.rows)
            if "unsigned" in node.types:  # the runtime's int columns hold an unsigned as its int64 bits
                rows = [tuple(v - 2**64 if t == "unsigned" and v >= 2**63 else v for v, t in zip(r, node.types)) for r in rows]
            handle.insert(rows, time=0)
            self.constants.append(handle)
            return View(collection, identity)
        if isinstance(node, Filter):
            v = self.view(node.input, context)
            return View(v.collection.filter_columns(predicate(node.predicate, v.layout, self.symbols)), v.layout)
        if isinstance(node, Project):
            v = self.view(node.input, context)
            if all(isinstance(e, Col) for e in node.exprs):
                return View(v.collection, tuple(v.layout[e.index] for e in node.exprs))
            fn = projection(node.exprs, v.layout, self.symbols)
            return View(v.collection.map_columns(fn, types=runtime_types(node.types)), identity)
        if isinstance(node, Join):
            return self._join(node, context)
        if isinstance(node, Antijoin):
            left, layout, _ = self.keyed(node.left, tuple(a for a, _ in node.keys), context)
            right = self.ordered(node.right, tuple(b for _, b in node.keys), context)
            return View(left.antijoin(right, key=len(node.keys)), layout)
        if isinstance(node, Union):
            first, *others = [self.exact(c, context) for c in node.inputs]
            return View(first.concat(*others) if others else first, identity)
        if isinstance(node, Distinct):
            if self._is_set(node.input):
                return self.view(node.input, context)
            return View(self.exact(node.input, context).distinct(), identity)
        if isinstance(node, Aggregate):
            return View(self._aggregate(node, context), identity)
        if isinstance(node, DeltaJoin):
            return View(*lower_delta_join([self.exact(i, context) for i in node.inputs], node))
        lower = getattr(node, "lower", None)  # a front end's own node (SQL's TopK) lowers itself
        if lower is not None:
            return View(lower([self.exact(c, context) for c in node.children()]), identity)
        raise PlanError(f"cannot lower {type(node).__name__}")

    def _distinct_built(self, node: Node) -> bool:
        """Whether `node` is lowered to a distinct operator (not dropped as a Distinct of a set)."""
        return isinstance(node, Distinct) and not self._is_set(node.input)

    def _is_set(self, node: Node) -> bool:
        """Whether every row of `node` has multiplicity one (the module says when)."""
        found = self._sets.get(node)
        if found is None:
            found = self._sets[node] = self._proves_set(node)
        return found

    def _proves_set(self, node: Node) -> bool:
        if isinstance(node, (Distinct, Aggregate)):
            return True
        if isinstance(node, Ref):
            return isinstance(self._bodies.get(node.name), (Distinct, Aggregate))
        if isinstance(node, Values):
            try:
                return len(set(node.rows)) == len(node.rows)
            except TypeError:  # a value that cannot be hashed: no proof
                return False
        if isinstance(node, (Filter, Antijoin)):
            return self._is_set(node.children()[0])
        if isinstance(node, Join):
            return self._is_set(node.left) and self._is_set(node.right)
        if isinstance(node, Project):  # one-to-one when the kept columns give back every input column
            kept = _determined(node.input, {e.index for e in node.exprs if isinstance(e, Col)})
            return kept >= set(range(node.input.arity)) and self._is_set(node.input)
        return False

    def _join(self, node: Join, context: _Context) -> View:
        k = len(node.keys)
        left, left_layout, left_rest = self.keyed(node.left, tuple(a for a, _ in node.keys), context)
        right, right_layout, _ = self.keyed(node.right, tuple(b for _, b in node.keys), context)
        joined = left.join(right, key=k)
        # Runtime rows are (key, left's other columns, right's other columns).
        shift = left_rest  # right's non-key columns come after left's
        layout = tuple(left_layout) + tuple(p if p < k else p + shift for p in right_layout)
        return View(joined, layout)

    def _aggregate(self, node: Aggregate, context: _Context):
        k = len(node.group)
        if node.func == "count":
            return self.ordered(node.input, node.group, context).count(key=k)
        values = self.ordered(node.input, node.group + (node.arg,), context)
        arg_type = node.input.types[node.arg]
        if node.func in ("min", "max"):
            if arg_type != "unsigned":
                return getattr(values, node.func)(key=k)
            # An unsigned value is held as its int64 bits; with the sign bit
            # flipped, int64 order is unsigned order.
            return getattr(values.map_columns(_flip_last), node.func)(key=k).map_columns(_flip_last)
        if node.func == "sum":
            return values.sum(key=k)  # int64 arithmetic wraps, as unsigned and number do
        return values.mean(key=k)


# Nodes whose output only grows as their inputs grow (an Antijoin's right side is checked apart).
_MONOTONE = (Scan, Ref, Values, Filter, Project, Join, Union, Distinct, Antijoin)


def _monotone(step: Fixpoint, reads) -> bool:
    """Whether every body is monotone in the fixpoint's bindings: then the order in which
    the bindings are brought up to date does not change the least fixpoint reached."""
    names = frozenset(b.name for b in step.bindings)
    for b in step.bindings:
        for n in walk(b.body):
            if not isinstance(n, _MONOTONE) or (isinstance(n, Antijoin) and reads(n.right, names)):
                return False
    return True


def _loop_variables(step: Fixpoint, reads, distinct_built) -> tuple:
    """The bindings that go round the loop's back edge: enough to break every cycle of
    references among the fixpoint's bindings (a feedback vertex set, found greedily). The
    others are computed within each iteration from them, so a cycle through several
    relations (Soufflé's `a :- b.` `b :- a.`) takes one iteration per step, not one per
    relation, and keeps one back edge."""
    uses = {b.name: {o.name for o in step.bindings if reads(b.body, frozenset([o.name]))} for b in step.bindings}
    bodies = {b.name: b.body for b in step.bindings}
    order = {b.name: i for i, b in enumerate(step.bindings)}
    looped = {n for n, used in uses.items() if n in used}  # reads itself: always a variable
    while True:
        cyclic = _on_cycles({n: used - looped for n, used in uses.items() if n not in looped})
        if not cyclic:
            break
        # Break the most cycles first; among equals, put a distinct operator's output on the
        # back edge (it needs no consolidation there), then the earlier binding.
        fan = {n: len(uses[n] & cyclic) * sum(n in uses[m] for m in cyclic) for n in cyclic}
        looped.add(min(cyclic, key=lambda n: (-fan[n], not distinct_built(bodies[n]), order[n])))
    return tuple(b for b in step.bindings if b.name in looped)


def _on_cycles(uses: dict[str, set[str]]) -> set[str]:
    """What is left of `uses` (name -> the names it reads) after repeatedly removing names
    that read nothing left or are read by nothing left: the names on cycles and on paths
    between them; empty exactly when `uses` has no cycle."""
    left = {n: set(u) & set(uses) for n, u in uses.items()}
    while True:
        read = {m for u in left.values() for m in u}
        drop = {n for n, u in left.items() if not u or n not in read}
        if not drop:
            return set(left)
        left = {n: u - drop for n, u in left.items() if n not in drop}


def _determined(node: Node, columns: set[int]) -> set[int]:
    """The columns of `node` whose values `columns` fix: a Join's key columns are equal in
    pairs, so either of a pair gives the other."""
    columns = set(columns)
    if isinstance(node, Join):
        shift = node.left.arity
        for _ in range(len(node.keys)):  # chains of pairs settle in as many passes
            for a, b in node.keys:
                if a in columns or b + shift in columns:
                    columns |= {a, b + shift}
    return columns


def _inverse(order: tuple[int, ...]) -> tuple[int, ...]:
    """Where each column went in `order`: the columns to select to put them back."""
    return tuple(order.index(c) for c in range(len(order)))


def _flip_last(columns):
    out = columns.copy()
    out[-1] ^= np.int64(-(2**63))
    return out


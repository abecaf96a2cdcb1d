"""One Datalog rule body as a plan: atoms joined, then the other literals applied.

A body is translated the simple way, leaving the clever part to the
optimizer: its positive atoms become a cross product of the atoms' relations
under one Filter that says which columns must be equal (repeated variables)
or constant; compiler.plan.rewrites turns that into a join tree. Each
variable is then a column of the current node (`Body.cols`). The remaining
literals are applied once the variables they need are bound, in a worklist:
comparisons and `contains`/`match` become Filters (after a Filter on the
domain of any partial op, compiler.plan.expr.domain), `x = e` with `x` unbound
extends the rows with a column for `x` (a Project), and a negated atom
becomes an Antijoin on its bound arguments (constants filter the negated
relation; `_` is no key, and neither is an existential variable, one local
to the negated atom, whose repeated occurrences filter the negated relation
on equal columns). `x = range(a, b[, step])` joins the rows with the constant
rows of the range's values, or with bounds computed per row extends each row
with its values (compiler.lowering.ranges). The head is a Project of its argument expressions.

Aggregates (`count`, `sum e`, `min e`, `max e`, `mean e` over `{ body }`), with
Soufflé's meaning. Variables of the aggregate body that also occur outside
are bound from outside: they group the aggregate. The body is translated as
its own Body, starting from the *demand* -- the distinct outside values of
those variables -- when the body's own atoms do not bind them all, and is
aggregated per group; the result joins the outer rows on the group columns,
adding a column for the aggregate's value. count and sum of an empty group
are 0 (outer rows without a matching group get 0 by an Antijoin); min, max
and mean of an empty group have no value, so the outer row fails. count
counts the body's satisfying assignments (a join of sets, so each
combination of matching tuples once), and sum and mean take the target over
them -- or, where Soufflé materialises the body (`Aggregate.counted`,
compiler.datalog.counting), over the distinct bindings of its named variables:
a Distinct of them, and of the target, before the Aggregate.
A min or max with witnesses (compiler.datalog.scope: variables grounded only
inside it but used outside) joins its result back onto the body's rows on the
group and the value, so the witnesses come from the tuples reaching the optimum.
"""

from __future__ import annotations

from compiler.datalog.ast import (
    CONSTANTS,
    PATTERNS,
    Aggregate as AggregateTerm,
    Atom,
    BinaryOp,
    BranchTerm,
    Comparison,
    Float,
    Functor,
    Negation,
    Nil,
    Number,
    Record,
    String,
    StringTest,
    Term,
    TypeCast,
    UnaryOp,
    Unsigned,
    Variable,
    Wildcard,
    subterms,
)
from compiler.datalog.scope import Scope
from compiler.datalog.types import ADTType, plan_type
from compiler.lowering.eqrel import eqrel_leaf, pairs_body, without_equivalent
from compiler.lowering.ranges import RangeValues, range_values
from compiler.plan import (
    Aggregate,
    Antijoin,
    Call,
    Col,
    Const,
    Distinct,
    Filter,
    Join,
    Node,
    PlanError,
    Project,
    Union,
    Values,
    conjoin,
)
from compiler.plan.delta import DeltaJoin
from compiler.plan.expr import domain
from compiler.plan.ops import FLOAT, NUMBER, RECORD, UNSIGNED
from compiler.values import EMPTY_RECORD

NIL = Const(0, RECORD)
EMPTY_RECORD_FIELDS = tuple(Const(v, NUMBER) for v in EMPTY_RECORD)  # what `[]` is stored as (compiler.values)
# Functors whose Soufflé meaning is C++'s (compiler.plan.ops): to_string writes floats with six
# decimals, substr takes what std::string::substr takes.
_SOUFFLE_OPS = {"to_string": "to_string_c", "substr": "substr_c"}

_UNARY = {"-": "neg", "bnot": "bnot", "lnot": "lnot"}
_LITERAL_TYPES = {Number: "number", Unsigned: "unsigned", Float: "float", String: "symbol"}


def cast(value, target: str):
    """Soufflé's `as(x, T)` of a value to the plan type `target`, for the pairs
    compiler.datalog.checks.check_casts allows: the value itself within a type; between
    number, unsigned and float the same 64 bits; a symbol's or record's id (`ord`)."""
    source = value.type
    if source == target:
        return value
    if source not in (NUMBER, UNSIGNED):  # a float's bits, or a symbol's or record's id
        value, source = Call("ord", (value,)), NUMBER
    if target == FLOAT:
        return Call("float_of_bits", (value,))
    if target == source:
        return value
    return Call("to_unsigned" if target == UNSIGNED else "to_number", (value,))


def constant(value, column_type: str) -> Const:
    """A literal's value as a constant of `column_type` (an integer literal may be a float)."""
    if column_type == "float":
        return Const(float(value), "float")
    if column_type in ("number", "unsigned"):
        return Const(int(value), column_type)
    return Const(str(value), column_type)


class Body:
    """The rows of a (partly translated) body: `node`, with variable name -> column in `cols`."""

    def __init__(self, rule: "RuleContext", scope: Scope, node: Node, cols: dict[str, int]):
        self.rule, self.scope = rule, scope
        self.node, self.cols = node, cols
        self.aggregates: dict[int, int] = {}  # id(aggregate term) -> column of its value

    # ---- building ----

    def guard(self, expr):
        """Keep only rows where `expr` is defined (no integer division by zero, ...); returns expr."""
        conditions = domain(expr)
        if conditions:
            self.node = Filter(self.node, conjoin(conditions), span=self.node.span)
        return expr

    def extend(self, expr) -> int:
        """Add a column computed by `expr`; returns its index."""
        self.guard(expr)
        n = self.node
        self.node = Project(n, tuple(Col(i, t) for i, t in enumerate(n.types)) + (expr,), span=n.span)
        return n.arity

    def filter(self, predicate, span) -> None:
        self.guard(predicate)
        self.node = Filter(self.node, predicate, span=span)

    # ---- terms ----

    def ready(self, term: Term) -> bool:
        """Whether `term` can be computed now: its variables are bound, and so are its aggregates' groups."""
        for sub in subterms(term):
            if isinstance(sub, Variable) and sub.name not in self.cols:
                return False
            if isinstance(sub, Wildcard):
                return False
            if isinstance(sub, AggregateTerm) and id(sub) not in self.aggregates:
                if not all(name in self.cols for name in self.scope.child(sub).outer):
                    return False
        return True

    def expr(self, term: Term):
        """The expression computing `term` over the current columns (aggregates are joined in first)."""
        if isinstance(term, Variable):
            i = self.cols[term.name]
            return Col(i, self.node.types[i])
        if isinstance(term, CONSTANTS):
            return constant(term.value, self.rule.type_of(term))
        if isinstance(term, Nil):
            return NIL
        if isinstance(term, Record):
            return Call("pack", tuple(self.expr(a) for a in term.args) or EMPTY_RECORD_FIELDS)
        if isinstance(term, BranchTerm):
            adt, branch = self.rule.branch(term)
            if adt.enum:
                return Const(branch.index, RECORD)
            return Call("pack", (Const(branch.index, NUMBER), *(self.expr(a) for a in term.args)))
        if isinstance(term, BinaryOp):
            left, right = self.expr(term.left), self.expr(term.right)
            if term.op == "+" and left.type == "symbol":  # Soufflé's + concatenates symbols
                return Call("cat", (left, right))
            return Call(term.op, (left, right))
        if isinstance(term, UnaryOp):
            return Call(_UNARY[term.op], (self.expr(term.operand),))
        if isinstance(term, TypeCast):
            return cast(self.expr(term.args[0]), plan_type(self.rule.type_of(term)))
        if isinstance(term, Functor):
            args = tuple(self.expr(a) for a in term.args)
            if term.user_defined:
                return Call(self.rule.functors[term.name], args)
            if term.name == "to_string" and args[0].type == "symbol":  # Soufflé's to_string of a symbol is itself
                return args[0]
            return Call(_SOUFFLE_OPS.get(term.name, term.name), args)
        if isinstance(term, AggregateTerm):
            if id(term) not in self.aggregates:
                self.aggregates[id(term)] = self.rule.join_aggregate(self, term)
            i = self.aggregates[id(term)]
            return Col(i, self.node.types[i])
        raise PlanError(f"cannot translate term {term!r}")


class RuleContext:
    """Translates the bodies of one rule (and of the aggregates inside it)."""

    def __init__(self, relation_node, term_types: dict, span, classes=lambda name: None, functors=None):
        self.relation_node = relation_node  # relation name -> plan node of its rows (a set)
        self.classes = classes  # relation name -> its (value, label) classes if it is eqrel (compiler.lowering.eqrel)
        self.functors = functors or {}  # user functor name (with its '@') -> its op, a compiler.plan.ops.PythonFunctor
        self.term_types = term_types
        self.span = span

    def type_of(self, term: Term):
        """The term's kind (compiler.datalog.types): a plan type, or a record type or ADT."""
        t = self.term_types.get(term)
        return t if t is not None else _LITERAL_TYPES[type(term)]

    def branch(self, term: BranchTerm):
        """The ADT of `$Branch(...)` and the branch."""
        adt = self.type_of(term)
        return adt, next(b for b in adt.branches if b.name == term.name)

    # ---- bodies ----

    def body(self, literals, scope: Scope, start: Body | None = None, as_of: bool = False) -> Body:
        """Translate a conjunctive body; `start` (the demand of an aggregate) joins in first.

        `as_of` (a rule of a relation declared `asof`): the first atom is a stream of
        events and the other atoms are looked up as they were at each event's time,
        a DeltaJoin(as_of=True) (compiler.plan.delta) instead of a cross product.
        """
        atoms = [lit for lit in literals if isinstance(lit, Atom)]
        node, cols, conditions, pending = None, {}, [], []
        if as_of:
            if start is not None or len(atoms) < 2:
                raise PlanError("a rule of an asof relation needs an event atom and at least one atom to look up")
            leaves, equalities = [], []
        if start is not None:
            node, cols = start.node, dict(start.cols)
        for atom in atoms:
            leaf, args = self._leaf(atom, scope)
            offset = 0 if node is None else node.arity
            if as_of:
                leaves.append(leaf)
                node = leaf if node is None else DeltaJoin(tuple(leaves), tuple(equalities), as_of=True, span=atom.span)
            else:
                node = leaf if node is None else Join(node, leaf, (), span=atom.span)
            for i, arg in args:
                c = offset + i
                column = Col(c, leaf.types[i])
                if isinstance(arg, Variable):
                    if as_of and arg.name in cols and cols[arg.name] < offset:
                        equalities.append((cols[arg.name], c))
                    elif arg.name in cols:
                        conditions.append(Call("=", (Col(cols[arg.name], leaf.types[i]), column)))
                    else:
                        cols[arg.name] = c
                elif isinstance(arg, CONSTANTS):
                    conditions.append(Call("=", (column, constant(arg.value, leaf.types[i]))))
                elif isinstance(arg, Nil):
                    conditions.append(Call("=", (column, NIL)))
                elif not isinstance(arg, Wildcard):
                    pending.append(("argument", column, arg))  # an expression: a filter once it can be computed
        if as_of:
            node = DeltaJoin(tuple(leaves), tuple(equalities), as_of=True, span=self.span)
        if node is None:  # no atoms: one empty row, which the other literals filter and extend
            node = Values(((),), ())
        if conditions:
            node = Filter(node, conjoin(conditions), span=self.span)
        b = Body(self, scope, node, cols)
        pending += [("literal", None, lit) for lit in literals if not isinstance(lit, Atom)]
        while pending:
            item = self._next(b, pending)
            pending.remove(item)
            pending += self._apply(b, item)
        return b

    def _leaf(self, atom: Atom, scope: Scope):
        """The rows an atom reads, and (column, term) for each argument that needs one. An eqrel
        relation is read as its classes (compiler.lowering.eqrel); a record or ADT pattern is
        taken apart there (its fields become columns, matched like arguments), so a variable
        inside it joins like any other."""
        classes = self.classes(atom.relation)
        if classes is None:
            node, columns = self.relation_node(atom.relation, atom.span), range(len(atom.args))
        else:
            # Where multiplicities count (count, sum, mean), `_` stands for each value.
            counting = scope.aggregate is not None and scope.aggregate.kind not in ("min", "max")
            node, columns = eqrel_leaf(classes, atom.args, lambda a: isinstance(a, Wildcard) and not counting)
        placed = [(i, arg) for i, arg in zip(columns, atom.args) if i is not None]
        args = [(i, arg) for i, arg in placed if not isinstance(arg, PATTERNS)]
        patterns = [(i, arg) for i, arg in placed if isinstance(arg, PATTERNS)]
        if not patterns:
            return node, args
        view = Body(self, None, node, {})
        for i, pattern in patterns:
            args += [(view.extend(value), term) for value, term in self._fields(view, i, pattern)]
        return view.node, args

    def _next(self, b: Body, pending):
        """The first pending item that can be applied, cheapest kind first."""
        ranked = sorted(pending, key=lambda item: self._rank(b, item))
        for item in ranked:
            if self._rank(b, item) < 9:
                return item
        raise PlanError(f"no literal can be applied next among {[item[2] for item in pending]} (safety should prevent this)")

    def _rank(self, b: Body, item) -> int:
        """0 filter, 1 negation, 2 binding equality, 3 anything joining an aggregate; 9 not ready."""
        kind, _, lit = item
        terms = (lit,) if kind == "argument" else _literal_terms(lit)
        has_aggregate = any(isinstance(s, AggregateTerm) for t in terms for s in subterms(t))
        if kind == "literal" and isinstance(lit, Comparison) and lit.op == "=":
            for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                if _binds(side, b) and b.ready(other):
                    return 3 if has_aggregate else 2
        if isinstance(lit, Negation):
            ok = all(_matchable(a, b) for a in lit.atom.args)
            return (3 if has_aggregate else 1) if ok else 9
        if all(b.ready(t) for t in terms):
            return 3 if has_aggregate else 0
        return 9

    def _apply(self, b: Body, item) -> list:
        """Apply a pending item to the rows; the items it leaves pending (a pattern's fields
        that are expressions not computable yet)."""
        kind, column, lit = item
        if kind == "argument":
            b.filter(Call("=", (column, b.expr(lit))), lit.span)
        elif isinstance(lit, Comparison):
            if lit.op == "=":
                for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(other, Functor) and other.name == "range":
                        self._range(b, side, other)
                        return []
                    if isinstance(side, Variable) and side.name not in b.cols:
                        b.cols[side.name] = b.extend(b.expr(other))
                        return []
                    if _binds(side, b) and b.ready(other):
                        value = b.expr(other)
                        return self._match(b, value.index if isinstance(value, Col) else b.extend(value), side)
            b.filter(Call(lit.op, (b.expr(lit.left), b.expr(lit.right))), lit.span)
        elif isinstance(lit, StringTest):
            args = tuple(b.expr(a) for a in lit.args)
            if lit.negated:  # !match is its own test: a bad pattern makes it false too
                test = Call("not_match", args) if lit.name == "match" else Call("not", (Call(lit.name, args),))
            else:
                test = Call(lit.name, args)
            b.filter(test, lit.span)
        elif isinstance(lit, Negation):
            self._negation(b, lit)
        else:
            raise PlanError(f"cannot translate literal {lit!r}")
        return []

    # ---- records and ADT values ----

    def _match(self, b: Body, column: int, pattern) -> list:
        """Keep the rows whose value in `column` matches the record or ADT `pattern`, binding
        its unbound variables; the fields left to compare once they can be computed."""
        later = []
        for value, leaf in self._fields(b, column, pattern):
            if isinstance(leaf, Variable) and leaf.name not in b.cols:
                b.cols[leaf.name] = b.extend(value)
            elif b.ready(leaf):
                b.filter(Call("=", (value, b.expr(leaf))), leaf.span)
            else:
                later.append(("argument", Col(b.extend(value), value.type), leaf))
        return later

    def _fields(self, b: Body, column: int, pattern) -> list:
        """Take the record or ADT value in `column` apart as `pattern` says: keep the rows where
        it has the pattern's shape; (field expression, field term) for each field that is not a
        record or ADT pattern itself (those are taken apart in turn) or `_`."""
        record, kind = Col(column, RECORD), self.type_of(pattern)
        if isinstance(kind, ADTType):
            adt, branch = self.branch(pattern)
            if adt.enum:
                b.filter(Call("=", (record, Const(branch.index, RECORD))), pattern.span)
                return []
            first, fields = 1, branch.fields  # field 0: the branch's number
            b.filter(Call("=", (Call("field_number", (record, Const(0, NUMBER))), Const(branch.index, NUMBER))), pattern.span)
        else:
            first, fields = 0, kind.fields
            b.filter(Call("!=", (record, NIL)), pattern.span)
        out = []
        for j, (arg, (_, field_kind)) in enumerate(zip(pattern.args, fields)):
            value = Call(f"field_{plan_type(field_kind)}", (record, Const(first + j, NUMBER)))
            if isinstance(arg, PATTERNS):
                out += self._fields(b, b.extend(value), arg)
            elif not isinstance(arg, Wildcard):
                out.append((value, arg))
        return out

    def _range(self, b: Body, var: Variable, term: Functor) -> None:
        """Bind `var` to each value of the range (or keep the rows whose `var` is one):
        a join with the values of constant bounds, else a RangeValues (compiler.lowering.ranges)."""
        t = self.type_of(term)
        if all(isinstance(a, CONSTANTS) for a in term.args):
            bounds = [constant(a.value, t).value for a in term.args]
            values = Values(tuple((v,) for v in range_values(*bounds)), (t,), span=term.span)
            keys = ((b.cols[var.name], 0),) if var.name in b.cols else ()
            width = b.node.arity
            b.node = Join(b.node, values, keys, span=term.span)
        else:
            bounds = tuple(b.guard(b.expr(a)) for a in term.args)
            width = b.node.arity
            b.node = RangeValues(b.node, bounds, t, span=term.span)
            if var.name in b.cols:
                b.filter(Call("=", (Col(b.cols[var.name], t), Col(width, t))), term.span)
        b.cols.setdefault(var.name, width)

    def _negation(self, b: Body, lit: Negation) -> None:
        atom = lit.atom
        classes = self.classes(atom.relation)
        partial = any(isinstance(arg, PATTERNS) and not b.ready(arg) for arg in atom.args)
        if classes is not None and not partial:
            a, c = (None if isinstance(arg, Wildcard) or _existential(arg, b) else self._column(b, arg) for arg in atom.args)
            b.node = without_equivalent(b.node, a, c, classes, lit.span)
            return
        # An eqrel relation's pairs are only needed for a pattern matched field by field.
        right = self.relation_node(atom.relation, atom.span) if classes is None else pairs_body(classes, atom.span)
        keys, conditions = [], []
        existential: dict[str, int] = {}  # name -> its first column in the negated relation
        matched = Body(self, b.scope, right, {})  # the negated relation, its patterns taken apart
        for i, arg in enumerate(atom.args):
            if isinstance(arg, PATTERNS) and not b.ready(arg):  # a pattern with `_`: matched field by field
                for value, leaf in self._fields(matched, i, arg):
                    keys.append((self._column(b, leaf), matched.extend(value)))
                continue
            if isinstance(arg, Wildcard):
                continue
            if _existential(arg, b):
                if arg.name in existential:
                    j = existential[arg.name]
                    conditions.append(Call("=", (Col(j, right.types[j]), Col(i, right.types[i]))))
                else:
                    existential[arg.name] = i
            elif isinstance(arg, CONSTANTS):
                conditions.append(Call("=", (Col(i, right.types[i]), constant(arg.value, right.types[i]))))
            else:
                keys.append((self._column(b, arg), i))
        right = matched.node
        if conditions:
            right = Filter(right, conjoin(conditions), span=atom.span)
        b.node = Antijoin(b.node, right, tuple(keys), span=lit.span)

    @staticmethod
    def _column(b: Body, arg: Term) -> int:
        """The column of b holding a ready argument's value (added if it is computed)."""
        return b.cols[arg.name] if isinstance(arg, Variable) else b.extend(b.expr(arg))

    # ---- aggregates ----

    def join_aggregate(self, b: Body, agg: AggregateTerm) -> int:
        """Join the value of `agg` (per group of outer variables) onto b's rows; its column."""
        inner_scope = b.scope.child(agg)
        group = sorted(inner_scope.outer, key=b.cols.__getitem__)
        atom_vars = {a.name for lit in agg.body if isinstance(lit, Atom) for a in lit.args if isinstance(a, Variable)}
        start = None
        if any(g not in atom_vars for g in group):
            # Some group variable is only used in a comparison or negation inside: start from the demand.
            demand = Distinct(Project(b.node, tuple(Col(b.cols[g], b.node.types[b.cols[g]]) for g in group)), span=agg.span)
            start = Body(self, inner_scope, demand, {g: i for i, g in enumerate(group)})
        inner = self.body(agg.body, inner_scope, start)
        exprs = [Col(inner.cols[g], inner.node.types[inner.cols[g]]) for g in group]
        k = len(group)
        if agg.counted is None:  # each combination of the body's tuples
            target = k
        else:  # each distinct binding of its named variables (compiler.datalog.counting)
            named = [n for n in sorted(agg.counted) if n in inner.cols and n not in group]
            exprs += [Col(inner.cols[n], inner.node.types[inner.cols[n]]) for n in named]
            target = k + len(named)
        if agg.target is not None:
            exprs.append(inner.guard(inner.expr(agg.target)))
        values = Project(inner.node, tuple(exprs), span=agg.span)
        if agg.counted is not None:
            values = Distinct(values, span=agg.span)
        result = Aggregate(values, tuple(range(k)), agg.kind, None if agg.target is None else target, span=agg.span)
        witnesses = sorted(inner_scope.witnesses)
        if witnesses:  # (group, value, witnesses) of the body rows whose target is the optimum
            candidates = Project(
                inner.node, tuple(exprs) + tuple(Col(inner.cols[w], inner.node.types[inner.cols[w]]) for w in witnesses), span=agg.span
            )
            best = Join(result, candidates, tuple((i, i) for i in range(k + 1)), span=agg.span)
            # Keep result's (group, value) and the candidates' witnesses (after their own group and value).
            kept = list(range(k + 1)) + list(range(2 * (k + 1), best.arity))
            result = Distinct(Project(best, tuple(Col(i, best.types[i]) for i in kept), span=agg.span), span=agg.span)
        keys = tuple((b.cols[g], i) for i, g in enumerate(group))
        keys += tuple((b.cols[w], k + 1 + i) for i, w in enumerate(witnesses) if w in b.cols)
        outer = b.node
        joined = Join(outer, result, keys, span=agg.span)
        for i, w in enumerate(witnesses):
            b.cols.setdefault(w, outer.arity + k + 1 + i)
        if agg.kind in ("count", "sum"):
            # An empty group counts (and sums) to zero: outer rows with no group get a 0.
            groups = Project(result, tuple(Col(i, t) for i, t in enumerate(result.types[:k])))
            missing = Antijoin(outer, groups, keys, span=agg.span)
            zero = constant(0, result.types[-1])
            filled = Project(
                missing,
                tuple(Col(i, t) for i, t in enumerate(outer.types)) + tuple(Col(b.cols[g], outer.types[b.cols[g]]) for g in group) + (zero,),
                span=agg.span,
            )
            joined = Union((joined, filled), span=agg.span)
        b.node = joined
        return outer.arity + k


def _binds(term: Term, b: Body) -> bool:
    """Whether matching `term` against a value binds a variable: an unbound variable, or a
    record or ADT pattern with one."""
    return (isinstance(term, Variable) and term.name not in b.cols) or (isinstance(term, PATTERNS) and not b.ready(term))


def _matchable(term: Term, b: Body) -> bool:
    """Whether a negated atom's argument can be matched now: `_`, an existential variable, a
    computable term, or a record or ADT pattern of such terms."""
    if isinstance(term, PATTERNS):
        return all(_matchable(a, b) for a in term.args)
    return isinstance(term, Wildcard) or _existential(term, b) or b.ready(term)


def _existential(term: Term, b: Body) -> bool:
    """Whether `term` is a variable local to its negated atom ("there is no value such that")."""
    return isinstance(term, Variable) and term.name in b.scope.existential


def _literal_terms(lit) -> tuple[Term, ...]:
    if isinstance(lit, Comparison):
        return (lit.left, lit.right)
    if isinstance(lit, StringTest):
        return lit.args
    if isinstance(lit, Negation):
        return tuple(a for a in lit.atom.args if not isinstance(a, Wildcard))
    return ()

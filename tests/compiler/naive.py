"""A naive Datalog evaluator: the oracle the compiled dataflows are tested against.

It shares nothing with compiler.plan or compiler.lowering: it walks the
checked AST (relations, facts, rules, strata and term types from
compiler.check_datalog) and evaluates rules by nested loops over Python sets,
stratum by stratum. A recursive stratum is iterated from empty relations,
applying all its rules to the previous iteration's relations, until nothing
changes. Semantics (Soufflé's, as deltalog documents them):

- a relation's value is a set: its input rows, its facts and its rules' rows;
  a `min(c)`/`max(c)` relation keeps per value of its other columns only the
  least/greatest c; an `eqrel` relation is the equivalence closure of those rows;
  a relation with subsumptive rules keeps the rows no other of them dominates
  (its own atoms in a subsumptive rule read those candidate rows); in a recursive
  stratum, the rows such a relation or a min/max one kept in one iteration are
  among its candidate rows in the next (a row goes only for a better one);
- a stratum with a `choice-domain` relation runs as Soufflé runs it, round by
  round, each round's new candidates taken one by one in ascending order (records
  after nil and field by field, ADT values by branch name, then fields) and kept
  unless a kept tuple has the same key in one of the domains (the order is what
  deltalog fixes where Soufflé takes the order its evaluation happens to produce);
- negation is "no matching tuple" (`_` matches anything);
- an aggregate's outer variables group it; count/sum of nothing are 0,
  min/max/mean of nothing make the rule fail; count counts the satisfying
  combinations of the aggregate body's tuples, or, where the front end marks the
  aggregate `counted` (Soufflé materialises its body: compiler.datalog.counting),
  the distinct bindings of those variables, and sum and mean take the target over
  the same; which variables are outer,
  local or witnesses is compiler.datalog.scope's rule (the one thing shared), and
  a min/max binds its witnesses to each distinct binding of an optimal tuple;
- a user-defined functor `@f(...)` is its Python callable;
- integers are 64-bit and wrap; `/` and `%` truncate like C; an operation
  outside its domain (division by zero, to_number("x"), ...) makes the rule
  fail for that assignment; `+` of symbols concatenates them;
- records are Python tuples of their fields (nil is None), ADT values
  compiler.values.Branch (the public Python form of values, nothing of how they
  are stored); a record or ADT term is built where it is computed and matched,
  field by field, where it meets a value (an atom's argument, `v = [a, _]`), a
  nil or another branch not matching.
"""

from __future__ import annotations

import math
import operator
import re
import struct

from compiler.datalog.ast import (
    CONSTANTS,
    Aggregate,
    Atom,
    BinaryOp,
    BranchTerm,
    Comparison,
    Functor,
    Negation,
    Nil,
    Record,
    Rule,
    StringTest,
    TypeCast,
    UnaryOp,
    Variable,
    Wildcard,
)
from compiler.datalog.scope import rule_scope
from compiler.plan.regex import regex_match
from compiler.values import Branch

MAX_ITERATIONS = 10_000


class Undefined(Exception):
    """An operation outside its domain: the current assignment fails."""


def evaluate(checked, inputs: dict[str, set]) -> dict[str, set]:
    """Every relation's rows, given the input relations' rows."""
    rels = checked.relations
    base = {name: set() for name in rels}
    for name, rows in inputs.items():
        base[name] |= {tuple(r) for r in rows}
    for fact in checked.facts:
        kinds = checked.term_types.get(fact, {})
        types = rels[fact.relation].types
        base[fact.relation].add(tuple(_ground(a, t, kinds) for a, t in zip(fact.args, types)))
    rules_of = {}
    for rule in checked.rules:
        rules_of.setdefault(rule.heads[0].relation, []).append(rule)
    subsumptions_of = {}
    for sub in checked.subsumptions:
        subsumptions_of.setdefault(sub.relation, []).append(_Subsumption(sub, checked.term_types[sub.as_rule()], checked.functors))

    def derive(name, view) -> set:
        rows = set(base[name])
        for rule in rules_of.get(name, ()):
            rows |= _Rule(rule, checked.term_types[rule], checked.functors).rows(view)
        return rows

    def settle(name, rows, view) -> set:
        """A relation's rows from its candidate rows: qualified, closed, or undominated."""
        info = rels[name]
        if info.eqrel:
            return _closure(rows)
        if name in subsumptions_of and view is not None:  # (None: before its stratum runs)
            candidates = {**view, name: rows}
            return rows - {t for sub in subsumptions_of[name] for t in sub.dominated(candidates)}
        return _qualify(rows, info)

    db = {name: _choose_sorted(rows, rels[name].choice_domains, {}) if rels[name].choice_domains else settle(name, rows, None)
          for name, rows in base.items()}
    for stratum in checked.strata:
        names = stratum.relations
        if any(rels[n].choice_domains for n in names):
            db.update(_choice_stratum(names, rels, derive, db))
            continue
        current = {n: set() for n in names}
        kept_in_loop = lambda n: stratum.recursive and (rels[n].qualifier is not None or n in subsumptions_of)  # noqa: E731
        for _ in range(MAX_ITERATIONS if stratum.recursive else 1):
            view = {**db, **current}
            nxt = {n: settle(n, derive(n, view) | (current[n] if kept_in_loop(n) else set()), view) for n in names}
            if nxt == current:
                break
            current = nxt
        else:
            if stratum.recursive:
                raise RuntimeError(f"no fixpoint after {MAX_ITERATIONS} iterations for {names}")
        db.update(current)
    return db


def _typed(value, t):
    return float(value) if t == "float" else value


def _ground(term, t, kinds):
    """The value of a fact's argument (`t`: its column's type, for a number standing for a float)."""
    if isinstance(term, Nil):
        return None
    if isinstance(term, Record):
        return tuple(_ground(a, kinds.get(a), kinds) for a in term.args)
    if isinstance(term, BranchTerm):
        return Branch(term.name, tuple(_ground(a, kinds.get(a), kinds) for a in term.args))
    return _typed(term.value, kinds.get(term, t))


def _unify(term, value, env) -> list | None:
    """Match `term` against `value` in `env` (extended in place with the variables it binds);
    None if they do not match, else the (expression, value) pairs left to check."""
    if isinstance(term, Wildcard):
        return []
    if isinstance(term, Variable):
        if term.name not in env:
            env[term.name] = value
            return []
        return [] if env[term.name] == value else None
    if isinstance(term, Nil):
        return [] if value is None else None
    if isinstance(term, Record):
        if not isinstance(value, tuple) or len(value) != len(term.args):
            return None
        parts = zip(term.args, value)
    elif isinstance(term, BranchTerm):
        if not isinstance(value, Branch) or value.name != term.name:
            return None
        parts = zip(term.args, value.args)
    else:
        return [(term, value)]
    checks = []
    for arg, v in parts:
        more = _unify(arg, v, env)
        if more is None:
            return None
        checks += more
    return checks


def _qualify(rows: set, info) -> set:
    q = info.qualifier
    if q is None:
        return rows
    col = info.attribute_names.index(q.column)
    best = {}
    for row in rows:
        key = row[:col] + row[col + 1 :]
        if key not in best or (row[col] < best[key][col] if q.kind == "min" else row[col] > best[key][col]):
            best[key] = row
    return set(best.values())


def _closure(pairs: set) -> set:
    """The least equivalence relation containing `pairs` (reflexive on their values)."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        parent[find(a)] = find(b)
    classes = {}
    for x in list(parent):
        classes.setdefault(find(x), []).append(x)
    return {(a, b) for members in classes.values() for a in members for b in members}


def _value_key(value):
    """The order of the values of one column: Python's, but records (tuples) come after nil
    (None) and compare field by field, and ADT values (Branch) by branch name, then fields."""
    if value is None:
        return (0,)
    if isinstance(value, tuple):
        return (1, tuple(_value_key(v) for v in value))
    if isinstance(value, Branch):
        return (1, value.name, tuple(_value_key(v) for v in value.args))
    return (1, value)


def row_key(row):
    """The order of rows: column by column, each in its values' order (`_value_key`)."""
    return tuple(_value_key(v) for v in row)


def _choose_sorted(candidates, domains, taken: dict) -> set:
    """Soufflé's choice as deltalog fixes it: the candidates one by one in ascending
    order (`row_key`), each kept unless a kept tuple already has its key in some domain.
    `taken` (domain -> keys, updated) holds the keys kept before."""
    kept = set()
    for row in sorted(candidates, key=row_key):
        keys = [(domain, tuple(row[i] for i in domain)) for domain in domains]
        if all(key not in taken.get(domain, ()) for domain, key in keys):
            kept.add(row)
            for domain, key in keys:
                taken.setdefault(domain, set()).add(key)
    return kept


def _choice_stratum(names, rels, derive, db) -> dict:
    """A stratum with choice-domain relations, as Soufflé evaluates it: round by round,
    each round deriving from the tuples kept so far; a tuple first derived in round r
    is a candidate of round r, and each round's candidates are chosen in ascending order
    (the order of deltalog's choice) against the keys taken in earlier rounds."""
    current = {n: set() for n in names}
    seen = {n: set() for n in names}  # every candidate derived so far
    taken = {n: {} for n in names}
    for _ in range(MAX_ITERATIONS):
        view = {**db, **current}
        fresh = {n: derive(n, view) - seen[n] for n in names}
        if not any(fresh.values()):
            return current
        for n in names:
            seen[n] |= fresh[n]
            domains = rels[n].choice_domains
            current[n] = current[n] | (_choose_sorted(fresh[n], domains, taken[n]) if domains else fresh[n])
    raise RuntimeError(f"no fixpoint after {MAX_ITERATIONS} rounds for {names}")


class _Subsumption:
    """A subsumptive rule: the tuples of its relation that another tuple dominates."""

    def __init__(self, sub, types, functors):
        self.rule = _Rule(sub.as_rule(), types, functors)  # its heads' `_` named: tuples are read back
        self.dominated_args, self.dominating_args = (atom.args for atom in self.rule.rule.body[:2])

    def dominated(self, db) -> set:
        out = set()
        visible = _direct_names(self.rule.rule.body)
        for env in self.rule.solve(self.rule.rule.body, {}, db, visible):
            try:
                t = tuple(self.rule.value(a, env, db, visible) for a in self.dominated_args)
                u = tuple(self.rule.value(a, env, db, visible) for a in self.dominating_args)
            except Undefined:
                continue
            if t != u:
                out.add(t)
        return out


def _names(term) -> set[str]:
    """Variables of a term, inside nested aggregates too."""
    if isinstance(term, Variable):
        return {term.name}
    if isinstance(term, (BinaryOp,)):
        return _names(term.left) | _names(term.right)
    if isinstance(term, UnaryOp):
        return _names(term.operand)
    if isinstance(term, (Functor, Record, BranchTerm)):
        return set().union(*(_names(a) for a in term.args))
    if isinstance(term, Aggregate):
        inner = set().union(*(_literal_names(lit) for lit in term.body))
        return inner | (_names(term.target) if term.target is not None else set())
    return set()


def _literal_names(lit) -> set[str]:
    if isinstance(lit, Atom):
        return set().union(*(_names(a) for a in lit.args))
    if isinstance(lit, Negation):
        return _literal_names(lit.atom)
    if isinstance(lit, Comparison):
        return _names(lit.left) | _names(lit.right)
    return set().union(*(_names(a) for a in lit.args))


def _aggregates(term):
    """The aggregates in a term, outside nested aggregates."""
    if isinstance(term, Aggregate):
        return [term]
    parts = (term.left, term.right) if isinstance(term, BinaryOp) else (term.operand,) if isinstance(term, UnaryOp) else term.args if isinstance(term, (Functor, Record, BranchTerm)) else ()
    return [a for p in parts for a in _aggregates(p)]


def _direct_names(literals, extra_terms=()) -> set[str]:
    """Variables occurring in these literals/terms outside any aggregate."""
    out = set()

    def visit(term):
        if isinstance(term, Variable):
            out.add(term.name)
        elif isinstance(term, BinaryOp):
            visit(term.left)
            visit(term.right)
        elif isinstance(term, UnaryOp):
            visit(term.operand)
        elif isinstance(term, (Functor, Record, BranchTerm)):
            for a in term.args:
                visit(a)

    for lit in literals:
        args = lit.atom.args if isinstance(lit, Negation) else (lit.left, lit.right) if isinstance(lit, Comparison) else lit.args
        for a in args:
            visit(a)
    for t in extra_terms:
        visit(t)
    return out


class _Rule:
    def __init__(self, rule, types, functors):
        self.rule = rule
        self.types = types
        self.functors = functors  # user functor name -> compiler.datalog.checks.UserFunctor
        self.scopes = {}  # id(aggregate) -> its Scope
        pending = [rule_scope(rule.heads, rule.body)]
        while pending:
            scope = pending.pop()
            self.scopes.update(scope.children)
            pending += scope.children.values()

    def rows(self, db) -> set:
        head = self.rule.heads[0]
        outer = _direct_names(self.rule.body, head.args)
        out = set()
        for env in self.solve(self.rule.body, {}, db, outer):
            try:
                out.add(tuple(self.value(a, env, db, outer) for a in head.args))
            except Undefined:
                pass
        return out

    # ---- bodies ----

    def solve(self, literals, env, db, visible):
        """Every assignment satisfying the conjunction, once per combination of atom tuples."""
        atoms = [lit for lit in literals if isinstance(lit, Atom)]
        rest = [lit for lit in literals if not isinstance(lit, Atom)]
        yield from self._atoms(atoms, rest, env, db, visible)

    def _atoms(self, atoms, rest, env, db, visible):
        if not atoms:
            yield from self._rest(rest, env, db, visible)
            return
        atom, *others = atoms
        for row in db[atom.relation]:
            env2, checks = dict(env), []
            for arg, value in zip(atom.args, row):
                left = _unify(arg, value, env2)
                if left is None:
                    break
                for term, v in left:
                    if isinstance(term, CONSTANTS):
                        if _typed(term.value, self.types.get(term, "number")) != v:
                            break
                    else:
                        checks.append(_ArgumentCheck(term, v))  # an expression: test it once it can be computed
                else:
                    continue
                break
            else:
                yield from self._atoms(others, rest + checks, env2, db, visible)

    def _ready(self, term, env, visible) -> bool:
        if isinstance(term, Aggregate):
            return all(n in env for n in self.scopes[id(term)].outer)
        if isinstance(term, Wildcard):
            return True
        if isinstance(term, Variable):
            return term.name in env
        parts = {BinaryOp: lambda t: (t.left, t.right), UnaryOp: lambda t: (t.operand,), Functor: lambda t: t.args,
                 Record: lambda t: t.args, BranchTerm: lambda t: t.args}
        for kind, children in parts.items():
            if isinstance(term, kind):
                return all(self._ready(c, env, visible) for c in children(term))
        return True

    def _rest(self, rest, env, db, visible):
        # Atom arguments that are expressions are checked like equalities.
        if not rest:
            yield env
            return
        for agg in self._unfixed_witnessing(rest, env):
            for value, binding in self.optimal(agg, env, db, visible):
                if all(env.get(w, v) == v for w, v in binding.items()):
                    yield from self._rest(rest, {**env, **binding, id(agg): value}, db, visible)
            return
        for i, lit in enumerate(rest):
            others = rest[:i] + rest[i + 1 :]
            if isinstance(lit, Comparison) and lit.op == "=":
                for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(other, Functor) and other.name == "range":  # one assignment per value
                        bounds = [self.value(a, env, db, visible) for a in other.args]
                        for v in _range(*bounds):
                            if env.get(side.name, v) == v:
                                yield from self._rest(others, {**env, side.name: v}, db, visible)
                        return
                    binds = isinstance(side, Variable) and side.name not in env
                    binds |= isinstance(side, (Record, BranchTerm)) and not self._computable(side, env, visible)
                    if binds and self._computable(other, env, visible):
                        try:
                            value = self.value(other, env, db, visible)
                        except Undefined:
                            return
                        env2 = dict(env)
                        left = _unify(side, value, env2)
                        if left is not None:
                            checks = [_ArgumentCheck(t, v) for t, v in left]
                            yield from self._rest(others + checks, env2, db, visible)
                        return
            terms = _lit_terms(lit)
            if isinstance(lit, Negation) and all(isinstance(o, Negation) for o in others):
                # Last come negations: their variables still unbound now are existential.
                terms = [t for t in terms if not (isinstance(t, Variable) and t.name not in env)]
            if all(self._ready(t, env, visible) for t in terms):
                try:
                    ok = self.holds(lit, env, db, visible)
                except Undefined:
                    return
                if ok:
                    yield from self._rest(others, env, db, visible)
                return
        raise AssertionError(f"no literal is ready among {rest} with {env}")

    def _computable(self, term, env, visible) -> bool:
        """Whether `term`'s value can be computed now (its variables bound, no `_` in it)."""
        if isinstance(term, Wildcard):
            return False
        if isinstance(term, (Record, BranchTerm)):
            return all(self._computable(a, env, visible) for a in term.args)
        return self._ready(term, env, visible)

    def _unfixed_witnessing(self, rest, env):
        """The first ready min/max aggregate among `rest` with witnesses, not yet evaluated."""
        for lit in rest:
            for term in _lit_terms(lit):
                for agg in _aggregates(term):
                    if self.scopes[id(agg)].witnesses and id(agg) not in env and self._ready(agg, env, None):
                        return [agg]
        return []

    def optimal(self, agg, env, db, visible):
        """(optimum, witness binding) for each distinct binding of a tuple reaching the optimum."""
        scope = self.scopes[id(agg)]
        found = []
        for e in self.solve(agg.body, {n: env[n] for n in scope.outer}, db, visible):
            try:
                found.append((self.value(agg.target, e, db, visible), {w: e[w] for w in sorted(scope.witnesses)}))
            except Undefined:
                pass
        if found:
            best = (min if agg.kind == "min" else max)(v for v, _ in found)
            for binding in {tuple(b.items()) for v, b in found if v == best}:
                yield best, dict(binding)

    def holds(self, lit, env, db, visible) -> bool:
        if isinstance(lit, _ArgumentCheck):
            return self.value(lit.term, env, db, visible) == lit.value
        if isinstance(lit, Comparison):
            a, b = self.value(lit.left, env, db, visible), self.value(lit.right, env, db, visible)
            return _COMPARE[lit.op](a, b)
        if isinstance(lit, StringTest):
            a, b = (self.value(x, env, db, visible) for x in lit.args)
            if lit.name == "contains":
                return (a in b) != lit.negated
            matched = regex_match(a, b)  # None for a pattern std::regex rejects: match and !match fail
            return matched is not None and matched != lit.negated
        assert isinstance(lit, Negation)
        return not any(self._matches(lit.atom.args, row, env, db, visible) for row in db[lit.atom.relation])

    def _matches(self, args, row, env, db, visible) -> bool:
        """Whether `row` matches the arguments of a negated atom; its unbound variables
        (existential) match any value, the same value at each of their occurrences."""
        local = {}
        for arg, x in zip(args, row):
            if isinstance(arg, Wildcard):
                continue
            if isinstance(arg, Variable) and arg.name not in env:
                if local.setdefault(arg.name, x) != x:
                    return False
            elif isinstance(arg, (Record, BranchTerm)) and not self._computable(arg, env, visible):
                left = _unify(arg, x, dict(env))  # a pattern with `_`: its other fields are bound
                if left is None or any(self.value(t, env, db, visible) != v for t, v in left):
                    return False
            elif self.value(arg, env, db, visible) != x:
                return False
        return True

    # ---- terms ----

    def value(self, term, env, db, visible):
        t = self.types.get(term, "number")
        if isinstance(term, Variable):
            return env[term.name]
        if isinstance(term, CONSTANTS):
            return _typed(term.value, t)
        if isinstance(term, Nil):
            return None
        if isinstance(term, Record):
            return tuple(self.value(a, env, db, visible) for a in term.args)
        if isinstance(term, BranchTerm):
            return Branch(term.name, tuple(self.value(a, env, db, visible) for a in term.args))
        if isinstance(term, BinaryOp):
            return _binary(term.op, self.value(term.left, env, db, visible), self.value(term.right, env, db, visible), t)
        if isinstance(term, UnaryOp):
            v = self.value(term.operand, env, db, visible)
            if term.op == "-":
                return _wrap(-v, t)
            if term.op == "bnot":
                return _wrap(~v, t)
            return int(v == 0)
        if isinstance(term, TypeCast):
            value = self.value(term.args[0], env, db, visible)
            return _cast(value, self.types.get(term.args[0], "number"), self.types.get(term, "number"))
        if isinstance(term, Functor):
            values = [self.value(a, env, db, visible) for a in term.args]
            if term.user_defined:
                return self.functors[term.name[1:]].function(*values)
            return _functor(term.name, values, [self.types.get(a, "number") for a in term.args])
        assert isinstance(term, Aggregate)
        return self.aggregate(term, env, db, visible)

    def aggregate(self, agg, env, db, visible):
        if id(agg) in env:  # a min/max with witnesses, evaluated by _rest
            return env[id(agg)]
        inner_env = {n: env[n] for n in self.scopes[id(agg)].outer}
        inner_visible = visible | _direct_names(agg.body, () if agg.target is None else (agg.target,))
        values, bindings = [], {}
        for e in self.solve(agg.body, inner_env, db, inner_visible):
            try:
                value = 1 if agg.target is None else self.value(agg.target, e, db, inner_visible)
            except Undefined:
                continue
            if agg.counted is None:  # each combination of the body's tuples
                values.append(value)
            else:  # each distinct binding of the named variables (a materialised body)
                bindings[tuple((n, e[n]) for n in sorted(agg.counted) if n in e)] = value
        values += bindings.values()
        t = self.types.get(agg, "number")
        if agg.kind == "count":
            return len(values)
        if agg.kind == "sum":
            return _wrap(sum(values), t) if t != "float" else float(sum(values))
        if not values:
            raise Undefined
        if agg.kind == "min":
            return min(values)
        if agg.kind == "max":
            return max(values)
        return sum(values) / len(values)


_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


class _ArgumentCheck:
    """An atom argument that is an expression: the tuple's value must equal it."""

    def __init__(self, term, value):
        self.term, self.value = term, value


def _lit_terms(lit):
    if isinstance(lit, _ArgumentCheck):
        return (lit.term,)
    if isinstance(lit, Comparison):
        return (lit.left, lit.right)
    if isinstance(lit, Negation):
        return lit.atom.args
    return lit.args


def _wrap(v, t):
    if t == "float":
        return float(v)
    if t == "unsigned":
        return v % 2**64
    return (v + 2**63) % 2**64 - 2**63


def _cast(value, have, want):
    """Soufflé's as(x, T) between numeric kinds (64-bit build): the same 64 bits."""
    if have == want:
        return value
    if have not in ("number", "unsigned", "float"):
        raise AssertionError("as() of a symbol or record has no naive meaning (ord: the ids of a session's tables)")
    bits = struct.unpack("<Q", struct.pack("<d", value))[0] if have == "float" else value % 2**64
    return struct.unpack("<d", struct.pack("<Q", bits))[0] if want == "float" else _wrap(bits, want)


def _binary(op, a, b, t):
    if t == "symbol":  # Soufflé's + of symbols
        return a + b
    if t == "float":
        if op == "/":
            return a / b if b != 0 else (math.copysign(math.inf, a) if a != 0 else math.nan)
        if op == "%":
            return math.fmod(a, b) if b != 0 else math.nan
        if op == "^":
            return float(a**b)
        return float({"+": a + b, "-": a - b, "*": a * b}[op])
    if op in ("/", "%"):
        if b == 0:
            raise Undefined
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return _wrap(q if op == "/" else a - b * q, t)
    if op == "^":
        if b < 0:
            raise Undefined
        return _wrap(pow(a, b, 2**64), t)
    if op in ("land", "lor", "lxor"):
        x, y = a != 0, b != 0
        return int({"land": x and y, "lor": x or y, "lxor": x != y}[op])
    if op in ("bshl", "bshr", "bshru"):
        s = min(max(b, 0), 63)
        if op == "bshl":
            return _wrap(a << s, t)
        if op == "bshru" or t == "unsigned":
            return _wrap((a % 2**64) >> s, t)
        return a >> s
    table = {"+": a + b, "-": a - b, "*": a * b, "band": a & b, "bor": a | b, "bxor": a ^ b}
    return _wrap(table[op], t)


_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")


def _functor(name, args, types):
    if name == "min":
        return min(args)
    if name == "max":
        return max(args)
    if name == "cat":
        return "".join(args)
    if name == "strlen":
        return len(args[0])
    if name == "substr":  # C++'s std::string::substr, as Soufflé's
        s, i, n = args
        if i < 0 or i > len(s):
            return ""
        return s[i:] if n < 0 else s[i : i + n]
    if name == "to_number" and isinstance(args[0], str):
        if not _INTEGER.fullmatch(args[0]) or not -(2**63) <= int(args[0]) < 2**63:
            raise Undefined
        return int(args[0])
    if name == "to_string":  # C++'s std::to_string, as Soufflé's
        return "%f" % args[0] if types[0] == "float" else str(args[0])
    if name == "to_float":
        return float(args[0])
    if name in ("to_number", "to_unsigned"):  # of a numeric: C's conversion, wrapping
        fits = not isinstance(args[0], float) or (math.isfinite(args[0]) and abs(args[0]) < 2.0**63)
        whole = math.trunc(args[0]) if fits else 0
        return _wrap(whole, "number" if name == "to_number" else "unsigned")
    raise AssertionError(f"functor {name} has no naive meaning (ord: the ids of a session's symbol table)")


def _range(start, stop, step=None):
    """Soufflé's range(start, stop[, step]): stop excluded; the default step heads for stop."""
    step = (1 if start <= stop else -1) if step is None else step
    out = []
    while step and (stop - start) * step > 0:
        out.append(start)
        start += step
    return out

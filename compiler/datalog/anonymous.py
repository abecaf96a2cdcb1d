"""Anonymous records: records that stand only for their fields, folded away before typing.

Soufflé lets a rule name a record it only takes apart or compares, without any
record type saying what it is: `r(z) :- a(x, y), p = [x, y], q = p, q = [v, w], z = v.`
Nothing types `p` or `q` (no atom has them as arguments), so they are *aliases*
of the records they are equated with, and records compared with records mean
their fields compared. As Soufflé does (its ResolveAnonymousRecordAliases and
FoldAnonymousRecords passes), a rule is rewritten, until nothing changes, by:

- aliases: a grounded variable that nothing types -- it is no argument of an atom
  (not even inside a record there), operand of an operator or functor, or part of
  an aggregate; it occurs only in comparisons, whole or as a field of a record --
  is replaced, everywhere in the rule, by the first record it is `=` to;
- folding: `[a1, ..., an] = [b1, ..., bn]` becomes `a1 = b1, ..., an = bn`, a rule
  with `[a1, ..., an] != [b1, ..., bn]` becomes n rules, the i-th with `ai != bi`, and
  `_ = [a1, ..., an]` is dropped (it holds).

What is left of records after this has a type from where it stands (compiler.datalog.infer).
"""

from __future__ import annotations

import dataclasses

from compiler.datalog.ast import Aggregate, BinaryOp, Comparison, Record, Rule, Span, UnaryOp, Variable, Wildcard, literal_terms, pattern_variables
from compiler.datalog.scope import grounded, plain_names, rule_scope


def fold_anonymous_records(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """The rules with anonymous records resolved and record comparisons folded (see above)."""
    out, pending = [], list(rules)
    while pending:
        rule = pending.pop(0)
        resolved = _resolve_aliases(rule)
        folded = _fold(resolved or rule)
        if folded is not None:
            pending[:0] = folded
        elif resolved is not None:
            pending.insert(0, resolved)
        else:
            out.append(rule)
    return tuple(out)


def _resolve_aliases(rule: Rule) -> Rule | None:
    """The rule with its record aliases replaced by their records; None if it has none."""
    typed: set[str] = set()  # names something gives a type: an atom, an operator, a functor, an aggregate

    def visit(term, typing: bool) -> None:
        if isinstance(term, Variable):
            if typing:
                typed.add(term.name)
        elif isinstance(term, Aggregate):
            for t in ([term.target] if term.target is not None else []) + [t for lit in term.body for t in literal_terms(lit)]:
                visit(t, True)
        else:
            for sub in _children(term):
                visit(sub, typing or not isinstance(term, Record))

    for lit in rule.body:
        for term in literal_terms(lit):
            visit(term, not isinstance(lit, Comparison))
    for term in rule.heads[0].args:
        visit(term, True)
    bound = grounded(rule.body, frozenset(), plain_names)
    own = rule_scope(rule.heads, rule.body).own
    records: dict[str, Record] = {}
    for lit in rule.body:  # the first record each untyped, grounded name is equated with
        if isinstance(lit, Comparison) and lit.op == "=":
            for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(side, Variable) and isinstance(other, Record) and side.name in bound & own - typed:
                    if side.name not in pattern_variables(other):  # `x = [1, x]` has no finite solution to fold into
                        records.setdefault(side.name, other)
    if not records:
        return None

    def replace(node):
        """`node` with the aliases replaced, top-down, leaving aggregates (scopes of their own) alone."""
        if isinstance(node, Variable) and node.name in records:
            return records[node.name]
        if isinstance(node, tuple):
            return tuple(replace(x) for x in node)
        if isinstance(node, Aggregate) or not dataclasses.is_dataclass(node) or isinstance(node, Span):
            return node
        return dataclasses.replace(node, **{f.name: replace(getattr(node, f.name)) for f in dataclasses.fields(node) if f.name != "span"})

    return dataclasses.replace(rule, heads=replace(rule.heads), body=replace(rule.body))


def _children(term) -> tuple:
    if isinstance(term, BinaryOp):
        return (term.left, term.right)
    if isinstance(term, UnaryOp):
        return (term.operand,)
    return getattr(term, "args", ())


def _fold(rule: Rule) -> list[Rule] | None:
    """The rule with `record = record` folded, or the rules one `record != record` becomes;
    None if it has neither."""
    body, unequal, changed = [], None, False
    for lit in rule.body:
        if isinstance(lit, Comparison) and lit.op == "=" and {type(lit.left), type(lit.right)} == {Wildcard, Record}:
            changed = True  # `_ = [a, b]` holds for any record
            continue
        pair = isinstance(lit, Comparison) and isinstance(lit.left, Record) and isinstance(lit.right, Record)
        if pair and len(lit.left.args) == len(lit.right.args) and lit.op in ("=", "!="):
            if lit.op == "=":
                body += [Comparison("=", a, b, span=lit.span) for a, b in zip(lit.left.args, lit.right.args)]
                changed = True
                continue
            if unequal is None:
                unequal = lit
                continue
        body.append(lit)
    if unequal is not None:
        # `[] != []` is false: no rule at all.
        return [dataclasses.replace(rule, body=(*body, Comparison("!=", a, b, span=unequal.span))) for a, b in zip(unequal.left.args, unequal.right.args)]
    return [dataclasses.replace(rule, body=tuple(body))] if changed else None

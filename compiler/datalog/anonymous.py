"""Anonymous records: records that stand only for their fields, folded away before typing.

Soufflé lets a rule name a record it only takes apart or compares, without any
record type saying what it is: `r(z) :- a(x, y), p = [x, y], q = p, q = [v, w], z = v.`
Nothing types `p` or `q` (no atom has them as arguments), so they are *aliases*
of the records they are equated with, and records compared with records mean
their fields compared. As Soufflé does (its ResolveAnonymousRecordAliases and
FoldAnonymousRecords passes), a rule is rewritten, until nothing changes, by:

- aliases: a grounded variable that occurs only as a side of `=` equalities
  whose other sides are records or such variables is replaced, everywhere in the
  rule outside aggregates, by the first record it is equated with;
- folding: `[a1, ..., an] = [b1, ..., bn]` becomes `a1 = b1, ..., an = bn`, and a rule
  with `[a1, ..., an] != [b1, ..., bn]` becomes n rules, the i-th with `ai != bi`.

What is left of records after this has a type from where it stands (compiler.datalog.infer).
"""

from __future__ import annotations

import dataclasses

from compiler.datalog.ast import Aggregate, Comparison, Record, Rule, Span, Term, Variable, literal_terms, subterms
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
    equalities = [lit for lit in rule.body if isinstance(lit, Comparison) and lit.op == "="]
    uses: dict[str, int] = {}  # every occurrence of each name, inside aggregates too
    terms = [*rule.heads[0].args, *(t for lit in rule.body for t in literal_terms(lit))]
    while terms:
        for sub in subterms(terms.pop()):
            if isinstance(sub, Variable):
                uses[sub.name] = uses.get(sub.name, 0) + 1
            elif isinstance(sub, Aggregate):
                terms += [t for lit in sub.body for t in literal_terms(lit)] + ([sub.target] if sub.target is not None else [])
    sides: dict[str, list[Term]] = {}  # a name standing as a whole side: the other sides
    for eq in equalities:
        for side, other in ((eq.left, eq.right), (eq.right, eq.left)):
            if isinstance(side, Variable):
                sides.setdefault(side.name, []).append(other)
    # A name is an alias when every occurrence is a whole side opposite a record or an alias.
    aliases = {n for n, others in sides.items() if len(others) == uses[n] and all(isinstance(o, (Record, Variable)) for o in others)}
    while True:
        dropped = {n for n in aliases if any(isinstance(o, Variable) and o.name not in aliases for o in sides[n])}
        if not dropped:
            break
        aliases -= dropped
    scope = rule_scope(rule.heads, rule.body)
    bound = grounded(rule.body, frozenset(), plain_names)
    records = {}
    for name in sorted(aliases & bound & scope.own):
        first = next((o for o in sides[name] if isinstance(o, Record)), None)
        if first is not None:
            records[name] = first
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


def _fold(rule: Rule) -> list[Rule] | None:
    """The rule with `record = record` folded, or the rules one `record != record` becomes;
    None if it has neither."""
    body, unequal, changed = [], None, False
    for lit in rule.body:
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

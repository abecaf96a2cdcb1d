"""The magic-set transformation: compute only the tuples a program's queries can ask for.

`.pragma "magic-transform" "*"` (or a list of relations) asks Soufflé to evaluate
those relations on demand; deltalog does the same. Bottom-up, `samegen(x, y)` over a
binary tree of 32,767 nodes is every pair of one generation (2.7 x 10^8 of them),
though `query() :- samegen(16384, 32767).` needs a dozen.

The rewrite (the textbook one, with left-to-right sideways information passing):
an atom `r(a, b)` of a transformed relation whose arguments are partly *bound* --
constants, or variables bound by the atoms before it in the body (not expressions
over them: `gen(x) :- gen(x + 1), valid(x).` would demand values without end) --
is read from an
adorned copy `r@bf` (b for bound, f for free, per argument), whose rules are r's
rules restricted to the demanded values, `r@magic@bf(a)`:

    r@bf(x, y) :- r@magic@bf(x), <r's body, its own atoms adorned the same way>.
    s@bf(u, v) ... and for each adorned atom in such a body, a magic rule
    s@magic@bf(u) :- r@magic@bf(x), <the positive atoms and tests before it>.

A magic relation may hold more than is demanded (its rules leave out negations and
aggregates), never less, so the adorned relation holds exactly r's tuples for every
demanded binding and the answers do not change. An atom with no bound argument, or
one under negation or in an aggregate, reads r itself, which then keeps its own
rules. Relations are transformed only where that cannot change their meaning: not
inputs or outputs, not eqrel, choice-domain, min/max or subsumptive relations (what
they keep depends on all of their tuples). If the rewritten program cannot be
stratified (a magic rule closing a cycle through a negation), it is not used.
Soufflé's `magic` / `no_magic` qualifiers are hints deltalog does not read.
"""

from __future__ import annotations

import dataclasses

from compiler.datalog.ast import CONSTANTS, Aggregate, Atom, Comparison, Negation, Program, Rule, Variable, literal_terms, subterms
from compiler.datalog.scope import plain_names
from compiler.datalog.stratify import body_atoms

PRAGMA = "magic-transform"
EXCLUDE = "magic-transform-exclude"


def magic_transform(program: Program, checked) -> Program | None:
    """The program with magic sets for the relations its pragma names (see the module),
    or None when there is nothing to transform. `checked` is the program checked as it is."""
    asked, excluded = _pragma_names(program, PRAGMA), _pragma_names(program, EXCLUDE)
    if not asked:
        return None
    rules = [Rule((head,), r.body, span=r.span) for r in program.rules for head in r.heads]
    rules_of: dict[str, list[Rule]] = {}
    for rule in rules:
        rules_of.setdefault(rule.heads[0].relation, []).append(rule)
    facts_of: dict[str, list] = {}
    for fact in program.facts:
        facts_of.setdefault(fact.relation, []).append(fact)
    subsumptive = {s.relation for s in program.subsumptions}
    transformable = {
        name for name, info in checked.relations.items()
        if name in rules_of and not info.is_input and name not in checked.outputs and not info.eqrel
        and not info.choice_domains and info.qualifier is None and name not in subsumptive
        and ("*" in asked or name in asked) and name not in excluded
    }  # fmt: skip
    if not transformable:
        return None
    rewriter = _Rewriter(transformable)
    # Subsumptive rules are kept as they are: what their bodies read stays whole.
    rewriter.whole |= {a.relation for s in program.subsumptions for a, _ in body_atoms(s.body)} & transformable
    out = [rewriter.rule(rule, None) for rule in rules if rule.heads[0].relation not in transformable]
    kept_whole: set[str] = set()
    while True:
        if rewriter.pending:
            name, adornment = rewriter.pending.pop()
            clauses = rules_of[name] + [Rule((Atom(name, f.args, span=f.span),), (), span=f.span) for f in facts_of.get(name, ())]
            out += [rewriter.rule(rule, adornment) for rule in clauses]
        elif rewriter.whole - kept_whole:
            name = min(rewriter.whole - kept_whole)
            kept_whole.add(name)
            out += [rewriter.rule(rule, None) for rule in rules_of[name]]
        else:
            break
    if not rewriter.adorned:
        return None
    dropped = transformable - kept_whole
    return dataclasses.replace(
        program,
        rules=tuple(out + rewriter.magic_rules),
        facts=tuple(f for f in program.facts if f.relation not in dropped),
        decls=tuple(d for d in program.decls if d.name not in dropped),
    )


def adorned_name(relation: str, adornment: str) -> str:
    return f"{relation}@{adornment}"


def magic_name(relation: str, adornment: str) -> str:
    return f"{relation}@magic@{adornment}"


def _pragma_names(program: Program, key: str) -> set[str]:
    return {n.strip() for p in program.pragmas if p.key == key and p.value for n in p.value.split(",") if n.strip()}


def _bound(term, bound: set[str]) -> bool:
    names = plain_names(term)
    return names is not None and names <= bound


class _Rewriter:
    def __init__(self, transformable: set[str]):
        self.transformable = transformable
        self.adorned: set[tuple[str, str]] = set()
        self.pending: list[tuple[str, str]] = []
        self.whole: set[str] = set()  # transformed relations something reads all of
        self.magic_rules: list[Rule] = []

    def rule(self, rule: Rule, adornment: str | None) -> Rule:
        """The rule of the relation adorned so (None: the relation itself), its atoms adorned."""
        head = rule.heads[0]
        bound: set[str] = set()
        prefix, body = [], []  # prefix: what a magic rule for a later atom may take along
        if adornment is not None:
            demand = Atom(magic_name(head.relation, adornment), _bound_args(head.args, adornment), span=head.span)
            prefix.append(demand)
            body.append(demand)
            bound |= {a.name for a, b in zip(head.args, adornment) if b == "b" and isinstance(a, Variable)}
            head = dataclasses.replace(head, relation=adorned_name(head.relation, adornment))
        for lit in rule.body:
            self._whole_in_aggregates(lit)
            if isinstance(lit, Atom):
                lit = self._atom(lit, bound, prefix, rule.span)
                bound |= {a.name for a in lit.args if isinstance(a, Variable)}
                prefix.append(lit)
            elif isinstance(lit, Negation):
                if lit.atom.relation in self.transformable:
                    self.whole.add(lit.atom.relation)
            elif isinstance(lit, Comparison) and lit.op == "=":
                for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(side, Variable) and side.name not in bound and _bound(other, bound):
                        bound.add(side.name)
                if _bound(lit.left, bound) and _bound(lit.right, bound):
                    prefix.append(lit)
            elif all(_bound(t, bound) for t in literal_terms(lit)):
                prefix.append(lit)
            body.append(lit)
        return Rule((head,), tuple(body), span=rule.span)

    def _atom(self, atom: Atom, bound: set[str], prefix: list, span) -> Atom:
        if atom.relation not in self.transformable:
            return atom
        # Only constants and bound variables: a bound expression such as `x + 1` could
        # demand values without end (`gen(x) :- gen(x + 1), ...`), as Soufflé also holds.
        adornment = "".join("b" if isinstance(a, CONSTANTS) or isinstance(a, Variable) and a.name in bound else "f" for a in atom.args)
        if "b" not in adornment:
            self.whole.add(atom.relation)
            return atom
        key = (atom.relation, adornment)
        if key not in self.adorned:
            self.adorned.add(key)
            self.pending.append(key)
        demand = Atom(magic_name(atom.relation, adornment), _bound_args(atom.args, adornment), span=atom.span)
        self.magic_rules.append(Rule((demand,), tuple(prefix), span=span))
        return dataclasses.replace(atom, relation=adorned_name(atom.relation, adornment))

    def _whole_in_aggregates(self, lit) -> None:
        """Atoms inside aggregates read their relations whole."""
        for term in literal_terms(lit):
            for sub in subterms(term):
                if isinstance(sub, Aggregate):
                    for atom, _ in body_atoms(sub.body):
                        if atom.relation in self.transformable:
                            self.whole.add(atom.relation)


def _bound_args(args, adornment: str) -> tuple:
    return tuple(a for a, b in zip(args, adornment) if b == "b")

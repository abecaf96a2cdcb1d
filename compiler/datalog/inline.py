"""Inlining: relations declared `inline` are substituted into their uses, never materialised.

An inline relation `.decl p(x: number, y: number) inline` is a macro: every atom
`p(a, b)` in a body is replaced by the body of each clause of p (one alternative
per clause, so a rule using p becomes as many rules as p has clauses), with the
clause's variables renamed apart and its head unified with the atom's arguments:
a head variable stands for the argument written at the use (an `_` there becomes a
fresh variable), a record or ADT value written out at both unifies field by field,
anything else -- a constant, an expression, a repeated variable -- becomes an
equality `argument = head term`. A fact of p is a clause with an empty
body. `inline_nats` is why this matters: `nat_pair(x, y) :- nat(x), nat(y).` used as
`nat_pair(x, x)` is `nat(x), nat(x)`, where materialising it would hold 10^8 pairs.

A negated atom `!p(a, b)` becomes the negation of that disjunction: for each clause
of p, one of its literals (or one of the head equalities) fails -- De Morgan, so the
rule is multiplied out again (compiler.datalog.dnf). As in Soufflé this needs every
variable of each clause of p to occur in its head (InlineError "may introduce new
variables" otherwise: "there is no value such that ..." has no literal form; so too
a head's record or ADT value whose fields the negated atom does not write out), and
no `_` among the negated atom's arguments or their fields. Inside an aggregate an inline relation must
have one clause (a count or sum over a disjunction is not the sum over its parts),
and, as in Soufflé, which inlines after it decides what an aggregate ranges over
(compiler.datalog.counting), a count, sum or mean over one inline atom counts the
combinations of the tuples it unfolds to: an `_` in it can count a value twice.

Soufflé's rules about what may be inline hold too (InlineError, at the declaration):
not an input or output (.input/.output/.printsize), not eqrel, choice-domain or
min/max qualified, not subsumptive, and no cycle among inline relations alone (a
cycle through a relation that is not inline is fine: it stays). `no_inline` on the
declaration and `.pragma "inline-exclude" "a, b"` keep a relation materialised.

Inlining runs on the parsed program before checking, so safety is judged on the
inlined rules, as Soufflé does (`a(x, y) :- x = y + 1.` is unsafe alone but fine
inlined into `r(x) :- a(x, 0).`); the inline relations' own clauses are type-checked
first (compiler.datalog.checks).
"""

from __future__ import annotations

import dataclasses
from itertools import count

from compiler.datalog import dnf
from compiler.datalog.ast import (
    Aggregate,
    Atom,
    BranchTerm,
    Comparison,
    Decl,
    Negation,
    Program,
    Record,
    Rule,
    Subsumption,
    Term,
    Variable,
    Wildcard,
    map_nodes,
)
from compiler.datalog.stratify import body_atoms, strongly_connected
from compiler.errors import InlineError, UnsupportedError


def inline_relations(program: Program) -> Program:
    """The program with every inline relation substituted into its uses and removed."""
    excluded = _excluded(program)
    inline = {d.name: d for d in program.decls if d.inline and d.name not in excluded}
    if not inline:
        return program
    # One head per rule: the heads of one rule may be inline or not.
    program = dataclasses.replace(program, rules=tuple(Rule((h,), r.body, span=r.span) for r in program.rules for h in r.heads))
    _check_declarations(program, inline)
    inliner = _Inliner(program, inline)
    rules = tuple(new for rule in program.rules if rule.heads[0].relation not in inline for new in inliner.rules(rule))
    subsumptions = tuple(s for old in program.subsumptions for s in inliner.subsumptions(old))
    return dataclasses.replace(
        program,
        decls=tuple(d for d in program.decls if d.name not in inline),
        facts=tuple(f for f in program.facts if f.relation not in inline),
        rules=rules,
        subsumptions=subsumptions,
    )


def _excluded(program: Program) -> set[str]:
    """Relations `.pragma "inline-exclude" "a, b"` keeps materialised."""
    names = set()
    for pragma in program.pragmas:
        if pragma.key == "inline-exclude" and pragma.value:
            names |= {n.strip() for n in pragma.value.split(",") if n.strip()}
    return names


def _check_declarations(program: Program, inline: dict[str, Decl]) -> None:
    source = program.source
    for directive in (*program.inputs, *program.outputs, *program.printsizes):
        if directive.relation in inline:
            message = f"relation '{directive.relation}' is inline, so it cannot be read or written ('.{directive.kind}'): inline relations are never materialised"
            raise InlineError.at(message, directive.span, source)
    for decl in inline.values():
        what = (
            "eqrel" if decl.eqrel else "choice-domain" if decl.choice_domains else
            f"{decl.qualifier.kind}({decl.qualifier.column})" if decl.qualifier else None
        )  # fmt: skip
        if what:
            raise InlineError.at(f"relation '{decl.name}' cannot be both inline and {what}", decl.span, source)
    for s in program.subsumptions:
        if s.relation in inline:
            raise InlineError.at(f"relation '{s.relation}' is inline, so it cannot have subsumptive rules", s.span, source)
    # Cycles among inline relations alone cannot be unfolded.
    uses = {name: [] for name in inline}
    for rule in program.rules:
        head = rule.heads[0].relation
        if head in inline:
            uses[head] += [a.relation for a, _ in body_atoms(rule.body) if a.relation in inline]
    for component in strongly_connected(list(inline), uses):
        if len(component) > 1 or component[0] in uses[component[0]]:
            names = sorted(component)
            first = min((inline[n] for n in names), key=lambda d: (d.span.line, d.span.column))
            message = f"inline relations that depend on each other cannot be inlined: {', '.join(names)} (a cycle)"
            raise InlineError.at(message, first.span, source)


def _nodes(node):
    found = []
    map_nodes(node, lambda n: found.append(n) or n)
    return found


class _Inliner:
    def __init__(self, program: Program, inline: dict[str, Decl]):
        self.source = program.source
        self.inline = inline
        self.fresh = count(1)
        # Each inline relation's clauses as (head, body) pairs, facts with empty bodies.
        self.clauses: dict[str, list[tuple[Atom, tuple]]] = {name: [] for name in inline}
        for fact in program.facts:
            if fact.relation in inline:
                self.clauses[fact.relation].append((Atom(fact.relation, fact.args, span=fact.span), ()))
        for rule in program.rules:
            head = rule.heads[0]
            if head.relation in inline:
                self.clauses[head.relation].append((head, rule.body))

    def rules(self, rule: Rule) -> list[Rule]:
        return [dataclasses.replace(rule, body=body) for body in self.bodies(rule.body, rule.span)]

    def subsumptions(self, s: Subsumption) -> list[Subsumption]:
        return [dataclasses.replace(s, body=body) for body in self.bodies(s.body, s.span)]

    def bodies(self, literals, span) -> list[tuple]:
        """The alternatives a conjunctive body becomes once its inline atoms are unfolded."""
        parts = [self._literal(self._in_aggregates(lit), span) for lit in literals]
        try:
            alternatives = dnf.to_dnf(("and", parts))
        except dnf.TooManyAlternatives:
            message = f"inlining expands this rule to more than {dnf.MAX_ALTERNATIVES} rules"
            raise UnsupportedError.at(message, span, self.source) from None
        return [tuple(alt) for alt in alternatives]

    def _literal(self, lit, span):
        """The formula (compiler.datalog.dnf) a literal becomes."""
        if isinstance(lit, Atom) and lit.relation in self.inline:
            return ("or", [("and", [("lit", l) for l in body]) for body in self._unfold(lit, span, negated=False)])
        if isinstance(lit, Negation) and lit.atom.relation in self.inline:
            unfolded = self._unfold(lit.atom, span, negated=True)
            return ("not", ("or", [("and", [("lit", l) for l in body]) for body in unfolded]), lit.span)
        return ("lit", lit)

    def _in_aggregates(self, lit):
        """The literal with the inline atoms inside its aggregates unfolded (one clause each)."""

        def unfold(node):
            if not isinstance(node, Aggregate) or not any(a.relation in self.inline for a, _ in body_atoms(node.body)):
                return node
            alternatives = self.bodies(node.body, node.span)
            if len(alternatives) != 1:
                message = "an inline relation used inside an aggregate must have exactly one clause here (it unfolds to a disjunction)"
                raise UnsupportedError.at(message, node.span, self.source)
            return dataclasses.replace(node, body=alternatives[0])

        return map_nodes(lit, unfold)

    def _unfold(self, atom: Atom, span, negated: bool) -> list[tuple]:
        """One body per clause of the inline relation `atom` uses, unified with `atom` and
        with its own inline atoms unfolded."""
        out = []
        for head, body in self.clauses[atom.relation]:
            head, body = self._renamed((head, body))
            binding: dict[str, Term] = {}
            equalities = []
            for arg, term in zip(atom.args, head.args):
                self._unify(arg, term, binding, equalities)
            if negated:
                self._check_negatable(atom, head, body, binding)
            body = _substituted(body, binding)
            literals = [Comparison("=", arg, _substituted(term, binding), span=arg.span) for arg, term in equalities]
            for alternative in self.bodies(body, span):
                out.append(tuple(literals) + alternative)
        return out

    def _unify(self, arg: Term, term: Term, binding: dict[str, Term], equalities: list) -> None:
        """Unify an argument of the use with the head term of a clause: a head variable
        stands for the argument, a record or ADT value written out on both sides unifies
        field by field; anything else is an equality `argument = head term`. A `_` of the
        argument, inside a record or ADT value too, is a variable of its own."""
        if isinstance(term, Variable) and term.name not in binding:
            binding[term.name] = self._named(arg)
        elif _same_shape(arg, term):
            for a, t in zip(arg.args, term.args):
                self._unify(a, t, binding, equalities)
        elif not isinstance(arg, Wildcard):
            equalities.append((self._named(arg), term))

    def _renamed(self, clause):
        """The clause with every variable renamed apart from everything else."""
        names = {}
        n = next(self.fresh)

        def rename(node):
            if isinstance(node, Variable):
                fresh = names.setdefault(node.name, f"<inlined_{node.name}_{n}>")
                return dataclasses.replace(node, name=fresh)
            return node

        return map_nodes(clause, rename)

    def _named(self, term: Term) -> Term:
        """`term` with each `_` in it replaced by a fresh variable."""
        return map_nodes(term, lambda n: self._variable(n.span) if isinstance(n, Wildcard) else n)

    def _variable(self, span) -> Variable:
        return Variable(f"<inlined__{next(self.fresh)}>", span=span)

    def _check_negatable(self, atom: Atom, head: Atom, body, binding: dict[str, Term]) -> None:
        wildcards = [n for n in _nodes(atom.args) if isinstance(n, Wildcard)]  # a field of a record or ADT value too
        if wildcards:
            arg = wildcards[0]
            message = f"cannot inline the negated atom '{atom.relation}(...)' with '_' among its arguments: it would mean 'there is no value such that ...'"
            raise InlineError.at(message, arg.span, self.source)
        in_head = {n.name for n in _nodes(head) if isinstance(n, Variable)}
        local = [n for lit in body for n in _nodes(lit) if isinstance(n, Variable) and n.name not in in_head]
        if local:
            message = (
                f"cannot inline the negated relation '{atom.relation}': its clause at line {head.span.line} "
                f"has variables that are not in its head, which negation cannot express"
            )
            raise InlineError.at(message, atom.span, self.source)
        if not in_head <= set(binding):
            message = (
                f"cannot inline the negated relation '{atom.relation}': the head of its clause at line {head.span.line} "
                f"takes apart a record or ADT value that the negated atom does not write out, which negation cannot express"
            )
            raise InlineError.at(message, atom.span, self.source)


def _same_shape(a: Term, b: Term) -> bool:
    """Two records of as many fields, or two values of one ADT branch."""
    if isinstance(a, Record) and isinstance(b, Record):
        return len(a.args) == len(b.args)
    return isinstance(a, BranchTerm) and isinstance(b, BranchTerm) and (a.name, len(a.args)) == (b.name, len(b.args))


def _substituted(node, binding: dict[str, Term]):
    """`node` with the variables named in `binding` replaced by their terms."""
    if not binding:
        return node
    return map_nodes(node, lambda n: binding.get(n.name, n) if isinstance(n, Variable) else n)

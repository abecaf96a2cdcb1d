"""Relation kinds: what a relation keeps of the tuples its rules, facts and inputs give.

A plain relation keeps them all. The others keep a part, each its own way, and each
is one of the runtime's per-key reduces (compiler.lowering):

- `min(col)` / `max(col)`: `.decl dist(node: number, d: number) min(d)` keeps, per
  value of its other columns, only the least value of column `d`: the shortest
  distance per node, as in breadth-first search written as
  `dist(y, d + 1) :- dist(x, d), edge(x, y).` The column must be numeric. The
  relation may be recursive: keeping the minimum is monotone.
- `eqrel`: a binary relation, both columns of one type (one subset type, not a
  subset type and its base), that is the least
  equivalence relation containing its tuples (compiler.lowering.eqrel).
- `choice-domain x, (y, z)`: one tuple per value of each domain's attributes, the
  least candidate, and in a recursion the one of the earliest round
  (compiler.lowering.choice). A domain of every attribute constrains nothing.
- subsumptive rules `r(..) <= r(..) :- body.`: the tuples no other tuple of the
  relation dominates (compiler.lowering.subsumption); both heads are the relation's
  and it has attributes.

One kind per relation (DeclarationError otherwise: each decides alone which tuples
to keep). A choice-domain relation may recurse, but only with plain relations in
its recursion and not through an aggregate (UnsupportedError): its candidates are
ordered by the round they come in, which those would have to carry too.
"""

from __future__ import annotations

from compiler.datalog.ast import Decl, Program
from compiler.datalog.infer import NUMERIC, Inference
from compiler.datalog.stratify import body_atoms
from compiler.datalog.types import Kind, TypeEnv, is_structured
from compiler.errors import DeclarationError, SubsumptionError, TypeMismatchError, UnsupportedError


def check_qualifier(decl: Decl, types: list[Kind | None], inference: Inference, source) -> None:
    q = decl.qualifier
    names = [a.name for a in decl.attributes]
    if q.column not in names:
        raise DeclarationError.at(f"{q.kind}({q.column}): relation '{decl.name}' has no column '{q.column}'", q.span, source)
    declared = types[names.index(q.column)]
    if declared is not None and declared not in NUMERIC:
        shown = declared.name if is_structured(declared) else declared
        raise TypeMismatchError.at(f"{q.kind}({q.column}) needs a numeric column, but '{q.column}' is a {shown}", q.span, source)
    column = inference.relations[decl.name].columns[names.index(q.column)]
    inference.restrict(column, NUMERIC, q.span, f"column '{q.column}' of '{decl.name}'", f"{q.kind}(...)", q.span, declared=True)


def check_eqrel(decl: Decl, types: TypeEnv, inference: Inference, source) -> None:
    """An equivalence relation is binary, both columns of one type: one kind, and where both
    are declared, types holding the same values (a subset type is not its base, as in Soufflé)."""
    if len(decl.attributes) != 2:
        message = f"eqrel relation '{decl.name}' must have two attributes (an equivalence between values), but has {len(decl.attributes)}"
        raise DeclarationError.at(message, decl.span, source)
    first, second = inference.relations[decl.name].columns
    a, b = decl.attributes
    inference.unify(second, first, b.span, f"attribute '{b.name}' of eqrel relation '{decl.name}'", f"attribute '{a.name}'")
    if a.type_name is not None and b.type_name is not None and types.down[a.type_name] != types.down[b.type_name]:
        message = (f"attribute '{b.name}' of eqrel relation '{decl.name}' is a '{b.type_name}', but attribute '{a.name}' "
                   f"is a '{a.type_name}': an equivalence relates values of one type")  # fmt: skip
        raise TypeMismatchError.at(message, b.span, source)


def choice_domains(decl: Decl, source) -> tuple[tuple[int, ...], ...]:
    """The column indexes of each `choice-domain` of the declaration; a domain of every
    column constrains nothing and is left out, and so are repeated ones."""
    names = [a.name for a in decl.attributes]
    domains = []
    for domain in decl.choice_domains:
        for column in domain.columns:
            if column not in names:
                known = ", ".join(names) or "none"
                message = f"choice-domain: relation '{decl.name}' has no attribute '{column}' (its attributes: {known})"
                raise DeclarationError.at(message, domain.span, source)
        columns = tuple(sorted({names.index(c) for c in domain.columns}))
        if len(columns) < len(names) and columns not in domains:
            domains.append(columns)
    return tuple(domains)


def check_kinds(program: Program, relations: dict, strata, source) -> None:
    """eqrel, choice-domain, min/max qualifiers and subsumptive rules each decide what a
    relation keeps: one of them per relation, and a choice only with plain relations in its
    recursion (the depth of each tuple orders its candidates, see compiler.lowering.choice)."""
    subsumptive = {}
    for s in program.subsumptions:
        if s.dominating.relation != s.relation:
            message = f"a subsumptive rule compares tuples of one relation, but '{s.relation}' <= '{s.dominating.relation}' names two"
            raise SubsumptionError.at(message, s.span, source)
        if relations[s.relation].arity == 0:
            raise SubsumptionError.at(f"relation '{s.relation}' has no attributes: its one tuple cannot dominate another", s.span, source)
        subsumptive.setdefault(s.relation, s)
    for name, info in relations.items():
        kinds = [kind for kind, present in (
            ("eqrel", info.eqrel), ("choice-domain", info.choice_domains),
            (f"{info.qualifier.kind}({info.qualifier.column})" if info.qualifier else "", info.qualifier),
            ("subsumptive rules", name in subsumptive),
        ) if present]  # fmt: skip
        if len(kinds) > 1:
            message = f"relation '{name}' cannot be both {kinds[0]} and {kinds[1]}: each decides alone which tuples it keeps"
            raise DeclarationError.at(message, subsumptive[name].span if name in subsumptive else info.span, source)
    for stratum in strata:
        choices = [n for n in stratum.relations if relations[n].choice_domains]
        if not stratum.recursive or not choices:
            continue
        for name in stratum.relations:
            info = relations[name]
            if info.eqrel or info.qualifier or name in subsumptive:
                message = (f"relation '{name}' is in one recursion with the choice-domain relation '{choices[0]}', "
                           "which only plain relations may share")  # fmt: skip
                raise UnsupportedError.at(message, subsumptive[name].span if name in subsumptive else info.span, source)
        for rule in stratum.rules:
            for atom, mode in body_atoms(rule.body):
                if atom.relation in stratum.relations and atom not in rule.body:
                    message = (f"an aggregate over '{atom.relation}' inside the recursion of the choice-domain relation "
                               f"'{choices[0]}' is not supported")  # fmt: skip
                    raise UnsupportedError.at(message, atom.span, source)

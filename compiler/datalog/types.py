"""Soufflé's user-defined types: the type environment of a program (`TypeEnv`).

A `.type` declaration names a type of one of these kinds:

- a *subset type*, `.type Id <: number` (or `.number_type Id`, `.symbol_type Name`):
  some of the values of its base type, as a type of its own: every `Id` is a number,
  but a number is not an `Id`, and two subset types of one base are disjoint;
- an *alias*, `.type T = number`, which is the type it names, and a *union*,
  `.type T = A | B`, holding the values of its members (primitive, subset, alias or
  union types over one primitive type);
- a *record type*, `.type P = [x: number, next: P]`: the tuples of its fields' types,
  and `nil`. Record types are nominal (two declarations with the same fields are two
  types) and may be recursive;
- an *algebraic data type* (ADT), `.type E = Num {n: number} | Add {l: E, r: E} | Zero {}`:
  the values `$Num(1)`, `$Add(a, b)`, `$Zero`. Branch names are unique in a program, so a
  branch names its ADT. As in Soufflé, branches are numbered in the order of their names
  (`$Add` 0, `$Num` 1, `$Zero` 2); an ADT none of whose branches has fields is an *enum*.

Every type has a *kind*, what its values are: a primitive type (number, unsigned,
float, symbol) for primitive, subset, alias and union types, and the type itself
(a RecordType or ADTType object) for record types and ADTs. Kinds are what relation
columns and terms are inferred to have (compiler.datalog.infer) and decide how
values are stored (compiler.values). Subset types are checked on top of kinds
(compiler.datalog.subtypes) through `TypeEnv.down`: for each type, the set of
non-union types whose values it holds.

Declarations are checked here, each error a DeclarationError at the declaration:
a name defined twice (or a primitive redefined), an unknown type, a cycle of
aliases, unions and subset types (records and ADTs may refer to themselves), a union
mixing primitive types or holding a record or ADT, a subset of a union, record or
ADT, and a branch name used twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.datalog.ast import Span, TypeDecl
from compiler.errors import DeclarationError, Source

PRIMITIVES = ("number", "unsigned", "float", "symbol")


class RecordType:
    """A record type: its name and its fields, (name, kind) pairs, with the type each
    field is declared with (`field_types`, for compiler.datalog.subtypes). One object per
    type: two record types are equal only if they are the same declaration."""

    def __init__(self, name: str, span: Span):
        self.name, self.span = name, span
        self.fields: tuple[tuple[str, "Kind"], ...] = ()  # set once every type is known (they may be recursive)
        self.field_types: tuple[str, ...] = ()

    @property
    def arity(self) -> int:
        return len(self.fields)

    def __repr__(self) -> str:
        return f"RecordType({self.name})"


@dataclass(frozen=True, eq=False)
class ADTBranch:
    """One branch of an ADT: its name, its number among the ADT's branches (in name
    order), its fields, (name, kind) pairs, and the types they are declared with."""

    name: str
    index: int
    fields: tuple[tuple[str, "Kind"], ...]
    field_types: tuple[str, ...]
    span: Span


class ADTType:
    """An algebraic data type: its name and its branches in name order."""

    def __init__(self, name: str, span: Span):
        self.name, self.span = name, span
        self.branches: tuple[ADTBranch, ...] = ()  # set once every type is known

    @property
    def enum(self) -> bool:
        """Whether no branch has fields: its values are then just the branch numbers."""
        return not any(b.fields for b in self.branches)

    def __repr__(self) -> str:
        return f"ADTType({self.name})"


Kind = str | RecordType | ADTType  # a primitive type's name, or a record type or ADT


def is_structured(kind: Kind) -> bool:
    """Whether values of this kind are records or ADT values (not numbers or symbols)."""
    return isinstance(kind, (RecordType, ADTType))


def plan_type(kind: Kind) -> str:
    """The plan type of values of a kind: records and ADT values are plan `record`s, int64
    ids of the dataflow's record table (compiler.values)."""
    return "record" if is_structured(kind) else kind


@dataclass
class TypeEnv:
    """The types of a program: every type name (primitives included) with its kind and the
    non-union types it includes (`down`), and every ADT branch with its ADT."""

    kinds: dict[str, Kind] = field(default_factory=lambda: {p: p for p in PRIMITIVES})
    down: dict[str, frozenset[str]] = field(default_factory=dict)
    branches: dict[str, tuple[ADTType, ADTBranch]] = field(default_factory=dict)


def type_environment(decls: tuple[TypeDecl, ...], source: Source | None) -> TypeEnv:
    """The program's types; a DeclarationError for the first bad declaration."""
    env = TypeEnv()
    by_name: dict[str, TypeDecl] = {}
    for t in decls:
        if t.name in by_name or t.name in PRIMITIVES:
            raise DeclarationError.at(f"type '{t.name}' is defined twice", t.span, source)
        by_name[t.name] = t
    for t in decls:
        for base in t.bases:
            if base not in by_name and base not in PRIMITIVES:
                raise DeclarationError.at(f"unknown type '{base}' in the definition of '{t.name}'", t.span, source)
        for owner, attribute in _fields(t):
            if attribute.type_name not in by_name and attribute.type_name not in PRIMITIVES:
                message = f"unknown type '{attribute.type_name}' in the definition of {owner}"
                raise DeclarationError.at(message, attribute.span, source)
    for t in decls:
        if t.kind == "record":
            env.kinds[t.name] = RecordType(t.name, t.span)
        elif t.kind == "adt":
            env.kinds[t.name] = ADTType(t.name, t.span)
    parents, canonical = _resolve_named(by_name, env, source)
    _fill_structures(by_name, env, source)
    _down_sets(by_name, env, parents, canonical)
    return env


def _fields(t: TypeDecl):
    """(what owns it, field) for each field of a record type or of an ADT's branches."""
    for f in t.fields:
        yield f"record type '{t.name}'", f
    for b in t.branches:
        for f in b.fields:
            yield f"branch '{b.name}' of '{t.name}'", f


def _resolve_named(by_name: dict[str, TypeDecl], env: TypeEnv, source) -> tuple[dict[str, str], dict[str, str]]:
    """Give aliases, unions and subset types their kinds (in dependency order, a cycle being
    an error); returns each subset type's parent (a primitive or subset type) and each
    type's canonical name (an alias's is that of the type it names)."""
    pending = {n: t for n, t in by_name.items() if t.kind in ("equal", "subtype")}
    canonical = {n: n for n in env.kinds}  # an alias stands for the type it names
    parents: dict[str, str] = {}
    while pending:  # a handful of types: repeat until nothing resolves
        ready = [t for t in pending.values() if all(b in env.kinds for b in t.bases)]
        if not ready:
            t = next(iter(pending.values()))
            trail = [t.name]
            while (t := pending[next(b for b in t.bases if b in pending)]).name not in trail:
                trail.append(t.name)
            cycle = " -> ".join(trail[trail.index(t.name) :] + [t.name])
            raise DeclarationError.at(f"type '{t.name}' is defined in terms of itself: {cycle}", t.span, source)
        for t in ready:
            kinds = [env.kinds[b] for b in t.bases]
            if t.kind == "subtype":
                base = canonical[t.bases[0]]
                if base in by_name and by_name[base].kind == "equal" and len(by_name[base].bases) > 1:
                    raise DeclarationError.at(f"subset type '{t.name}' cannot be derived from the union type '{base}'", t.span, source)
                if is_structured(kinds[0]):
                    what = "record type" if isinstance(kinds[0], RecordType) else "ADT"
                    raise DeclarationError.at(f"subset type '{t.name}' cannot be derived from the {what} '{base}'", t.span, source)
                parents[t.name] = base
                canonical[t.name] = t.name
            elif len(t.bases) == 1:
                canonical[t.name] = canonical[t.bases[0]]
            else:
                structured = next((b for b, k in zip(t.bases, kinds) if is_structured(k)), None)
                if structured is not None:
                    message = f"union type '{t.name}' holds '{structured}', which is not a primitive or subset type"
                    raise DeclarationError.at(message, t.span, source)
                if len(set(kinds)) > 1:
                    raise DeclarationError.at(f"union type '{t.name}' mixes {' and '.join(sorted(set(kinds)))}", t.span, source)
                canonical[t.name] = t.name
            env.kinds[t.name] = kinds[0]
            del pending[t.name]
    return parents, canonical


def _fill_structures(by_name: dict[str, TypeDecl], env: TypeEnv, source) -> None:
    """The fields of record types and the branches of ADTs, now that every kind is known."""
    for t in by_name.values():
        if t.kind == "record":
            env.kinds[t.name].fields = tuple((f.name, env.kinds[f.type_name]) for f in t.fields)
            env.kinds[t.name].field_types = tuple(f.type_name for f in t.fields)
        elif t.kind == "adt":
            adt = env.kinds[t.name]
            ordered = sorted(t.branches, key=lambda b: b.name)
            adt.branches = tuple(
                ADTBranch(b.name, i, tuple((f.name, env.kinds[f.type_name]) for f in b.fields), tuple(f.type_name for f in b.fields), b.span)
                for i, b in enumerate(ordered)
            )
            for b in t.branches:
                if b.name in env.branches:
                    first = env.branches[b.name][1].span
                    message = f"branch '{b.name}' is defined twice (first at line {first.line}, column {first.column})"
                    raise DeclarationError.at(message, b.span, source)
                env.branches[b.name] = (adt, next(x for x in adt.branches if x.name == b.name))


def _down_sets(by_name: dict[str, TypeDecl], env: TypeEnv, parents: dict[str, str], canonical: dict[str, str]) -> None:
    """`env.down`: each type with the non-union types it holds -- a primitive or subset type,
    itself and the subset types below it; an alias, what it names; a union, what its members
    hold; a record type or ADT, itself."""
    ancestors: dict[str, set[str]] = {}

    def above(name: str) -> set[str]:
        if name not in ancestors:
            ancestors[name] = {name} | (above(parents[name]) if name in parents else set())
        return ancestors[name]

    leaves = [n for n in env.kinds if canonical[n] == n and not (n in by_name and by_name[n].kind == "equal")]
    below = {n: frozenset(m for m in leaves if n in above(m)) for n in leaves}

    def down(name: str) -> frozenset[str]:
        t = by_name.get(name)
        if t is not None and t.kind == "equal":
            return frozenset().union(*(down(b) for b in t.bases))
        return below[canonical[name]]

    env.down = {n: down(n) for n in env.kinds}

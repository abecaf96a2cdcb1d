"""Random programs and random updates: the session always equals the naive oracle.

Programs are drawn over two binary input relations `e0`, `e1` (values 0..4)
and derived binary relations in three layers: `a0`, `a1` may recurse through
each other; `b0`, `b1` may recurse through each other and negate inputs and
the `a`s; `c*` aggregate (count, sum, min, max, mean) over one or two atoms of lower layers.
Bodies have one to three atoms with variables, constants and `_`, comparisons
between bound variables and constants, arithmetic in non-recursive rules, and
a `min(d)` relation computing bounded shortest distances. Each program is run
through several commits of random inserts and removes (a row may be inserted
twice; only present rows are removed), with the optimizer on or off and both
join orders; after every commit every relation must equal the oracle
(tests.compiler.replay).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from tests.compiler.replay import Replay

INPUTS = ("e0", "e1")
VARS = ("x", "y", "z", "w")
CMP = ("=", "!=", "<", "<=", ">", ">=")


@st.composite
def atom_args(draw, bound: set, allow_new: bool, arity: int = 2):
    args = []
    for _ in range(arity):
        kind = draw(st.sampled_from(["var", "var", "var", "const", "wild"]))
        if kind == "var":
            choices = VARS if allow_new else sorted(bound)
            if not choices:
                kind = "const"
            else:
                args.append(draw(st.sampled_from(choices)))
                continue
        args.append(str(draw(st.integers(0, 4))) if kind == "const" else "_")
    return args


@st.composite
def rule(draw, head: str, positive: list[str], negatable: list[str], recursive_group: set[str]):
    bound: set[str] = set()
    body = []
    for _ in range(draw(st.integers(1, 3))):
        rel = draw(st.sampled_from(positive))
        args = draw(atom_args(bound, allow_new=True))
        bound |= {a for a in args if a in VARS}
        body.append(f"{rel}({', '.join(args)})")
    if not bound:  # make sure the head has something to say
        rel = draw(st.sampled_from(positive))
        body.append(f"{rel}(x, _)")
        bound.add("x")
    recursive = any(b.split("(")[0] in recursive_group for b in body)
    if negatable and draw(st.booleans()):
        rel = draw(st.sampled_from(negatable))
        body.append(f"!{rel}({', '.join(draw(atom_args(bound, allow_new=False)))})")
    for _ in range(draw(st.integers(0, 2))):
        left = draw(st.sampled_from(sorted(bound)))
        right = draw(st.one_of(st.sampled_from(sorted(bound)), st.integers(0, 4).map(str)))
        body.append(f"{left} {draw(st.sampled_from(CMP))} {right}")
    head_args = draw(st.lists(st.sampled_from(sorted(bound)), min_size=2, max_size=2, unique=len(bound) >= 2))
    if not recursive and draw(st.integers(0, 3)) == 0:
        v = draw(st.sampled_from(sorted(bound)))
        op = draw(st.sampled_from(["+", "-", "*", "/", "%"]))
        body.append(f"v = {v} {op} {draw(st.integers(0, 3))}")
        head_args[1] = "v"
    return f"{head}({', '.join(head_args)}) :- {', '.join(body)}."


@st.composite
def programs(draw):
    lines = [f".decl {r}(p: number, q: number)\n.input {r}" for r in INPUTS]
    a, b = ["a0", "a1"], ["b0", "b1"]
    for group, positive, negatable in ((a, list(INPUTS) + a, list(INPUTS)), (b, list(INPUTS) + a + b, list(INPUTS) + a)):
        for head in group:
            lines.append(f".decl {head}(p: number, q: number)")
            for _ in range(draw(st.integers(1, 3))):
                lines.append(draw(rule(head, positive, negatable, set(group))))
    for i in range(draw(st.integers(0, 2))):
        c = f"c{i}"
        kind = draw(st.sampled_from(["count", "sum", "min", "max", "mean"]))
        value_type = "float" if kind == "mean" else "number"
        lines.append(f".decl {c}(p: number, q: {value_type})")
        lines.append(_aggregate_rule(draw, c, kind, list(INPUTS) * 2 + a + b))
    if draw(st.booleans()):
        lines.append(".decl dist(n: number, d: number) min(d)")
        lines.append(f"dist(x, 0) :- {draw(st.sampled_from(INPUTS))}(x, 0).")
        lines.append(f"dist(y, d + 1) :- dist(x, d), {draw(st.sampled_from(list(INPUTS) + a))}(x, y), d < 6.")
    return "\n".join(lines)


def _aggregate_rule(draw, head: str, kind: str, sources: list[str]) -> str:
    outer, inner = draw(st.sampled_from(sources)), draw(st.sampled_from(sources))
    target = "" if kind == "count" else draw(st.sampled_from(["y ", "y + x ", "x * 2 "]))
    extra = draw(st.sampled_from(["", ", y != 2", ", y > x"]))
    if draw(st.booleans()):  # a second atom: Soufflé then ranges over the bindings of x and y
        extra += f", {draw(st.sampled_from(sources))}({draw(st.sampled_from(['x', 'y']))}, _)"
    if draw(st.booleans()):
        return f"{head}(x, n) :- {outer}(x, _), n = {kind} {target}: {{ {inner}(x, y){extra} }}."
    return f"{head}(0, n) :- n = {kind} {target}: {{ {inner}(x, y){extra} }}."


ROW = st.tuples(st.integers(0, 4), st.integers(0, 4))
UPDATE = st.tuples(st.sampled_from(INPUTS), ROW, st.sampled_from(["insert", "insert", "remove"]))
COMMITS = st.lists(st.lists(UPDATE, max_size=8), min_size=1, max_size=5)
OPTIONS = st.sampled_from([{}, {"join_order": "source"}, {"optimize": False}])


def apply(replay: Replay, updates) -> None:
    for relation, row, action in updates:
        if action == "remove" and replay.counts[relation][row] > 0:
            replay.remove(relation, [row])
        else:
            replay.insert(relation, [row])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    text=programs(),
    first=st.lists(st.tuples(st.sampled_from(INPUTS), ROW), min_size=3, max_size=20),
    twice=st.integers(0, 5),
    commits=COMMITS,
    options=OPTIONS,
)
def test_random_program_matches_oracle_after_every_commit(text, first, twice, commits, options):
    program = compiler.compile_datalog(text, **options)
    replay = Replay(program)
    # The first commit loads rows, some of them twice: relations are sets all the same.
    apply(replay, [(rel, row, "insert") for rel, row in first + first[:twice]])
    replay.commit()
    for updates in commits:
        apply(replay, updates)
        replay.commit()

"""The magic-set transformation (`.pragma "magic-transform"`): the same answers, less work.

Each program runs through tests.compiler.replay (the session against the oracle on the
transformed program, after every commit) and its outputs are also compared with the
oracle on the program as written, without the pragma: the transformation must not
change what the outputs hold, before or after updates.
"""

import pytest

import compiler
from tests.compiler.naive import evaluate
from tests.compiler.replay import Replay

PRAGMA = '.pragma "magic-transform" "*"\n'

SAMEGEN = (
    ".decl node(x: number)\n.input node\n.decl parent(x: number, y: number)\n.input parent\n"
    "samegen(x, x) :- node(x).\nsamegen(x, y) :- parent(x, a), samegen(a, b), parent(y, b).\n"
    ".decl query(y: number)\n.output query\nquery(y) :- samegen(12, y).\n"
)


def tree(n: int):
    """A binary tree of nodes 1..n, parent(child, parent)."""
    return [(i,) for i in range(1, n + 1)], [(i, i // 2) for i in range(2, n + 1)]


PROGRAMS = {
    "samegen": (SAMEGEN, {"node": tree(15)[0], "parent": tree(15)[1]}),
    "negation and aggregates read whole relations": (
        ".decl e(x: number, y: number)\n.input e\n"
        "reach(x, y) :- e(x, y).\nreach(x, z) :- reach(x, y), e(y, z).\n"
        "blocked(x) :- e(x, x).\n"
        ".decl out(y: number, n: number)\n.output out\n"
        "out(y, n) :- reach(1, y), !blocked(y), n = count : { reach(y, _) }.\n",
        {"e": [(1, 2), (2, 3), (3, 3), (3, 4), (5, 1), (4, 6)]},
    ),
    "an expression argument binds nothing": (
        ".decl seed(x: number)\n.input seed\n.decl valid(x: number)\n.input valid\n"
        "gen(x) :- seed(x).\ngen(x) :- gen(x + 1), valid(x).\n.decl query()\n.output query\nquery() :- gen(0).\n",
        {"seed": [(3,)], "valid": [(0,), (1,), (2,)]},
    ),
    "a subsumptive rule reads its relations whole": (
        ".decl e(x: number, y: number)\n.input e\n"
        "t(x, y) :- e(x, y).\nt(x, z) :- t(x, y), e(y, z).\n"
        ".decl r(x: number)\nr(x) :- e(x, _).\nr(x) <= r(y) :- t(x, y).\n"
        ".decl q(y: number)\n.output q, r\nq(y) :- t(1, y).\n",
        {"e": [(1, 2), (2, 3), (3, 1), (4, 4), (5, 1), (6, 7)]},
    ),
    "a cycle through a negation keeps the program as written": (
        ".decl e(x: number, y: number)\n.input e\n"
        ".decl r(x: number)\n.output r\n"
        "s(x) :- e(x, x).\nr(x) :- t(x, y), s(y).\nt(x, y) :- e(x, y), !u(x).\nu(x) :- e(x, _), s(x).\n",
        {"e": [(1, 2), (2, 2), (3, 3), (4, 3), (3, 1)]},
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_outputs_equal_the_program_without_magic_sets_after_updates(name):
    text, inputs = PROGRAMS[name]
    program = compiler.compile_datalog(PRAGMA + text)
    plain = compiler.check_datalog(text)
    replay = Replay(program)
    for rel, rows in inputs.items():
        replay.insert(rel, rows)
    replay.commit()
    current = {rel: list(rows) for rel, rows in inputs.items()}
    for step in range(2):
        want = evaluate(plain, current)
        for rel in program.outputs:
            assert set(replay.session.read(rel)) == want[rel], rel
        rel, rows = next(iter(current.items()))
        replay.remove(rel, rows[step::3])
        current[rel] = [r for r in rows if r not in rows[step::3]]
        replay.commit()


def test_samegen_asks_only_for_the_generation_of_its_query():
    program = compiler.compile_datalog(PRAGMA + SAMEGEN)
    assert program.checked.magic == ("samegen",)
    assert "samegen" not in program.relations  # never computed whole
    assert program.explain().splitlines()[0] == 'applied: .pragma "magic-transform" "*": samegen evaluated on demand (magic sets)'
    nodes, parents = tree(1023)
    session = program.session()
    session.insert("node", nodes)
    session.insert("parent", parents)
    session.commit()
    assert session.read("query") == [(y,) for y in range(8, 16)]
    # Demanded: the generations of 12 and its ancestors (1, 2, 4, 8 nodes), with one
    # node each, not every pair of every generation (about 350,000 pairs here).
    assert len(session.read("samegen@bf")) == 1 + 2 + 4 + 8


def test_the_program_as_written_when_nothing_can_be_transformed():
    program = compiler.compile_datalog(PRAGMA + ".decl e(x: number)\n.input e\nr(x) :- e(x).\n")
    assert program.checked.magic == ()
    assert program.explain().splitlines()[0] == 'applied: .pragma "magic-transform" "*": no relation evaluated on demand (magic sets)'

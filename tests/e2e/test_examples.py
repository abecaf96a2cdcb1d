"""The examples/ programs, run on their data and checked against independent answers.

Each example is compiled from its file, loaded with its .facts files and
committed; then a few input rows are removed and re-inserted, one commit each.
After every commit every relation must equal the naive oracle's answer
(tests.compiler.naive via tests.compiler.replay). Each example is also checked
against an answer computed without Datalog at all (BFS with a queue, closure
by repeated squaring, the points-to sets worked out by hand, data-flow facts by
the textbook's iteration to a fixpoint).
"""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path

import pytest

import compiler
from tests.compiler.replay import Replay

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = ["reach", "bfs", "tc", "same_generation", "andersen", "dataflow"]


def read_data(name: str, program) -> dict[str, list[tuple]]:
    """The example's input rows, parsed here (not by the session) from <name>/<relation>.facts."""
    convert = {"number": int, "unsigned": int, "float": float, "symbol": str}
    data = {}
    for relation in program.inputs:
        path = EXAMPLES / name / f"{relation}.facts"
        types = program.relations[relation].types
        lines = [line for line in path.read_text().splitlines() if line]
        data[relation] = [tuple(convert[t](v) for v, t in zip(line.split("\t"), types)) for line in lines]
    return data


def run(name: str):
    program = compiler.compile_file(EXAMPLES / f"{name}.dl")
    replay = Replay(program)
    data = read_data(name, program)
    for relation, rows in data.items():
        replay.insert(relation, rows)
    replay.commit()
    return program, replay, data


@pytest.mark.parametrize("name", NAMES)
def test_example_matches_the_oracle_after_every_commit(name):
    program, replay, data = run(name)
    assert program.outputs and all(replay.session.read(o) for o in program.outputs)
    rnd = random.Random(name)
    removed = []
    for _ in range(4):  # remove rows one commit at a time ...
        relation = rnd.choice(sorted(data))
        present = [r for r in data[relation] if (relation, r) not in removed]
        row = rnd.choice(present)
        replay.remove(relation, [row])
        removed.append((relation, row))
        replay.commit()
    for relation, row in removed:  # ... and put them back, all in one commit
        replay.insert(relation, [row])
    replay.commit()


def _closure(edges: set) -> set:
    path = set(edges)
    while True:
        more = path | {(x, w) for (x, y) in path for (z, w) in path if y == z}
        if more == path:
            return path
        path = more


def test_reach_is_the_closure_from_each_root():
    _, replay, data = run("reach")
    path = _closure(set(data["edge"]))
    roots = [r for (r,) in data["root"]]
    assert len(roots) == 10
    expected = {(r, r) for r in roots} | {(r, n) for r in roots for (x, n) in path if x == r}
    assert replay.session.read("reach") == sorted(expected)


def test_bfs_distances_match_a_queue_based_bfs():
    _, replay, data = run("bfs")

    def bfs(edges):
        dist, queue = {0: 0}, deque([0])
        while queue:
            n = queue.popleft()
            for x, y in edges:
                if x == n and y not in dist:
                    dist[y] = dist[n] + 1
                    queue.append(y)
        return sorted(dist.items())

    assert replay.session.read("dist") == bfs(data["edge"])
    # Removing an edge on a shortest path makes distances grow, incrementally.
    first_hop = next(e for e in sorted(data["edge"]) if e[0] == 0)
    replay.remove("edge", [first_hop])
    replay.commit()
    assert replay.session.read("dist") == bfs([e for e in data["edge"] if e != first_hop])


def test_tc_is_the_transitive_closure():
    _, replay, data = run("tc")
    assert replay.session.read("path") == sorted(_closure(set(data["edge"])))


def test_same_generation_pairs():
    _, replay, _ = run("same_generation")
    sg = set(replay.session.read("sg"))
    assert {("bob", "carol"), ("dave", "frank"), ("hank", "jack"), ("mia", "mia")} & sg == {
        ("bob", "carol"),
        ("dave", "frank"),
        ("hank", "jack"),
    }
    assert all(x != y for x, y in sg) and all((y, x) in sg for x, y in sg)


def test_andersen_points_to_sets():
    _, replay, _ = run("andersen")
    expected = {
        "a": {"x"}, "b": {"y", "z"}, "c": {"z"}, "d": {"x"}, "e": {"x"}, "f": {"x"},
        "p": {"a"}, "q": {"b"}, "r": {"c"}, "s": {"a"},
    }  # fmt: skip
    assert replay.session.read("points_to") == sorted((p, o) for p, objects in expected.items() for o in objects)


def solve_dataflow(data) -> tuple[set, set]:
    """def_use and finding of examples/dataflow.dl by the textbook's round-robin iteration of
    reaching definitions and possibly-undefined variables over sets, until nothing changes."""
    from compiler import Branch

    succ: dict = {}
    for a, b in data["cfg_edge"]:
        succ.setdefault(a, []).append(b)
    nodes = {n for edge in data["cfg_edge"] for n in edge} | {n for n, _ in data["assigns"] + data["reads"] + data["entry"]}
    assigned = {n: {v for m, v in data["assigns"] if m == n} for n in nodes}
    locals_of = {m: {v for k, v in data["local"] if k == m} for _, m in data["entry"]}
    entry_gen = {n: locals_of.get(m, set()) - assigned[n] for n, m in data["entry"]}
    defs_in, undefined_in = {n: set() for n in nodes}, {n: set() for n in nodes}
    while True:
        changed = False
        for n in nodes:
            defs_out = {(n, v) for v in assigned[n]} | {(at, v) for at, v in defs_in[n] if v not in assigned[n]}
            undefined_out = entry_gen.get(n, set()) | (undefined_in[n] - assigned[n])
            for s in succ.get(n, ()):
                if not defs_out <= defs_in[s] or not undefined_out <= undefined_in[s]:
                    defs_in[s] |= defs_out
                    undefined_in[s] |= undefined_out
                    changed = True
        if not changed:
            break
    def_use = {((at, v), u) for u, v in data["reads"] for at, w in defs_in[u] if w == v}
    used = {d for d, _ in def_use}
    findings = {(Branch("Uninitialized", (u, v)),) for u, v in data["reads"] if v in undefined_in[u]}
    findings |= {(Branch("Dead", ((n, v),)),) for n, v in data["assigns"] if (n, v) not in used}
    return {(d, u) for d, u in def_use}, findings


def test_dataflow_facts_match_the_textbook_iteration():
    _, replay, data = run("dataflow")
    def_use, findings = solve_dataflow(data)
    assert set(replay.session.read("def_use")) == def_use and len(def_use) == 9
    assert set(replay.session.read("finding")) == findings and len(findings) == 4
    # A new assignment of v1 at statement 2 kills the loop's definitions of v1 below it.
    replay.insert("assigns", [(2, 1)])
    replay.commit()
    data["assigns"].append((2, 1))
    assert (set(replay.session.read("def_use")), set(replay.session.read("finding"))) == solve_dataflow(data)

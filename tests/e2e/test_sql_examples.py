"""The SQL examples (examples/*.sql) give the answers of their Datalog twins.

Each SQL example is compiled against a schema read off its twin's input
declarations and fed the twin's data; after the first commit, and after each
of a few edge removals and re-insertions (one commit each), its output equals
the Datalog program's output relation on the same data.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import compiler
from compiler.sql import compile_sql

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TWINS = [("reach", "reach"), ("tc", "tc"), ("shortest_path", "bfs")]


@pytest.mark.parametrize("name,twin", TWINS)
def test_sql_example_equals_its_datalog_twin(name, twin):
    datalog = compiler.compile_file(EXAMPLES / f"{twin}.dl")
    schema = {r: {a: "int not null" for a in datalog.relations[r].attribute_names} for r in datalog.inputs}
    sql = compile_sql((EXAMPLES / f"{name}.sql").read_text(), schema, source_name=f"{name}.sql")
    (output,) = sql.outputs
    assert output == datalog.outputs[0]
    d, s = datalog.session(), sql.session()
    d.load_facts(EXAMPLES / twin)
    d.commit()
    for relation in datalog.inputs:
        s.insert(relation, d.read(relation))
    s.commit()
    assert s.read(output) == d.read(output) and d.read(output)
    rnd = random.Random(name)
    edges = d.read("edge")
    removed = rnd.sample(edges, 4)
    for row in removed + removed[:2]:
        present = row in d.read("edge")
        for session in (d, s):
            (session.remove if present else session.insert)("edge", [row])
            session.commit()
        assert s.read(output) == d.read(output)

"""Replay: drive a compiled session and the naive oracle with the same updates.

`Replay(program)` wraps a fresh session. Its `insert`/`remove` go to the
session and to a multiset of input rows kept here; `commit()` commits the
session, evaluates the program from scratch with the oracle (tests.compiler
.naive) on the inputs' current rows, and asserts that `session.read` equals
the oracle for every relation a session can read (all but eqrel relations no
output names) and that the commit's changes are exactly the
difference between the previous and the current oracle answers.
"""

from __future__ import annotations

from collections import Counter

import compiler
from tests.compiler.naive import evaluate, row_key


def _close(a, b) -> bool:
    """Rows equal, floats up to rounding (sums may add in another order)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, float) or isinstance(y, float):
            if not abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y)):
                return False
        elif x != y:
            return False
    return True


def same_rows(got, want) -> bool:
    return len(got) == len(want) and all(_close(a, b) for a, b in zip(sorted(got, key=row_key), sorted(want, key=row_key)))


class Replay:
    def __init__(self, program, **session_options):
        self.program = program
        self.session = program.session(**session_options)
        self.counts = {name: Counter() for name in program.inputs}
        self.previous = {name: set() for name in program.relations}
        self.commits = 0

    def insert(self, relation, rows):
        self.session.insert(relation, rows)
        self.counts[relation].update(map(tuple, rows))

    def remove(self, relation, rows):
        self.session.remove(relation, rows)
        self.counts[relation].subtract(map(tuple, rows))

    def expected(self) -> dict[str, set]:
        inputs = {name: {row for row, c in counts.items() if c > 0} for name, counts in self.counts.items()}
        return evaluate(self.program.checked, inputs)

    def commit(self) -> dict:
        changes = self.session.commit()
        self.commits += 1
        want = self.expected()
        for name in self.program.readable():
            got = self.session.read(name)
            assert same_rows(got, want[name]), (
                f"after commit {self.commits}, {name}:\n  session {got}\n  oracle  {sorted(want[name])}"
            )
        change_key = lambda change: (row_key(change[0]), change[1])  # noqa: E731
        for name in self.program.outputs:
            added = [(row, 1) for row in want[name] - self.previous[name]]
            removed = [(row, -1) for row in self.previous[name] - want[name]]
            got = changes.get(name, [])
            if not any(isinstance(v, float) for row in want[name] | self.previous[name] for v in row):
                assert sorted(got, key=change_key) == sorted(added + removed, key=change_key), f"commit {self.commits} changes of {name}: {got}"
        assert set(changes) <= set(self.program.outputs)
        self.previous = want
        return changes


def run(text: str, inputs: dict | None = None, **options) -> Replay:
    """A Replay of the compiled text after inserting `inputs` ({relation: rows}) and committing."""
    replay = Replay(compiler.compile_datalog(text, **options))
    for name, rows in (inputs or {}).items():
        replay.insert(name, rows)
    replay.commit()
    return replay


def replay_updates(text: str, relation: str, batches) -> Replay:
    """Replay the text through batches of (insert?, row) updates of one input relation, a
    commit after each batch; an insert of a present row or a remove of an absent one is
    skipped, so random batches make valid updates."""
    replay = Replay(compiler.compile_datalog(text))
    present = set()
    for batch in batches:
        for insert, *row in batch:
            row = tuple(row)
            if insert and row not in present:
                replay.insert(relation, [row])
                present.add(row)
            elif not insert and row in present:
                replay.remove(relation, [row])
                present.discard(row)
        replay.commit()
    return replay

"""DuckDB as the oracle for SQL: the same tables, the same query, rows compared.

`Tables` holds generated rows for the corpus schema (NULLs and duplicate rows
included) and applies the same random inserts and deletes to a deltalog
session and to a DuckDB connection. `normalize` makes rows comparable: floats
and decimals rounded to 6 places, so a float sum in another order compares
equal; multisets compare as sorted lists (NULL-safe), ordered results as lists.
"""

from __future__ import annotations

import decimal
import random

import duckdb

SCHEMA = {
    "t": {"a": "int", "b": "int", "c": "text", "d": "double"},
    "s": {"a": "int", "b": "int", "e": "text"},
    "edge": {"src": "int", "dst": "int"},
}
DUCK_TYPES = {"int": "BIGINT", "double": "DOUBLE", "text": "VARCHAR"}
WORDS = ["apple", "banana", "cherry", "Apple", "date", "fig", "grape", ""]


def random_row(rng: random.Random, table: str) -> tuple:
    def maybe(v, p=0.15):
        return None if rng.random() < p else v

    if table == "t":
        return (maybe(rng.randint(0, 6)), maybe(rng.randint(-3, 5)), maybe(rng.choice(WORDS)), maybe(rng.choice([0.5, 1.25, -2.0, 3.0, 10.5])))
    if table == "s":
        return (maybe(rng.randint(0, 6)), maybe(rng.randint(-3, 5)), maybe(rng.choice(WORDS)))
    return (maybe(rng.randint(0, 7), 0.03), maybe(rng.randint(0, 7), 0.03))


class Tables:
    def __init__(self, seed: int, sizes=None):
        self.rng = random.Random(seed)
        sizes = sizes or {"t": 24, "s": 14, "edge": 16}
        self.rows = {name: [random_row(self.rng, name) for _ in range(n)] for name, n in sizes.items()}
        for name in self.rows:  # duplicates
            self.rows[name] += self.rows[name][:3]
        self.duck = duckdb.connect()
        for name, cols in SCHEMA.items():
            self.duck.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {DUCK_TYPES[t]}' for c, t in cols.items())})")
            self._duck_insert(name, self.rows[name])

    def _duck_insert(self, name, rows):
        if rows:  # one statement: executemany costs a statement per row
            marks = "(" + ", ".join("?" * len(SCHEMA[name])) + ")"
            self.duck.execute(f"INSERT INTO {name} VALUES {', '.join([marks] * len(rows))}", [v for r in rows for v in r])

    def load(self, session) -> None:
        for name, rows in self.rows.items():
            session.insert(name, rows)

    def change(self, session, n: int = 4) -> None:
        """n random inserts and deletes of existing rows, in the session and in DuckDB."""
        for _ in range(n):
            name = self.rng.choice(list(self.rows))
            rows = self.rows[name]
            if rows and self.rng.random() < 0.5:
                row = rows.pop(self.rng.randrange(len(rows)))
                session.remove(name, [row])
                self.duck.execute(f"DELETE FROM {name}")
                self._duck_insert(name, rows)
            else:
                row = random_row(self.rng, name)
                rows.append(row)
                session.insert(name, [row])
                self._duck_insert(name, [row])

    def mixed_changes(self, session, n: int, names=None) -> None:
        """n random changes to the tables `names` (default all) for one commit, in the session and in
        DuckDB (each changed table rewritten once).

        Inserts of new rows (NULLs in any column, sometimes in every column),
        inserts of another copy of a present row, deletes of one copy of a
        present row (possibly one inserted earlier in the same commit).
        """
        changed = set()
        for _ in range(n):
            name = self.rng.choice(list(names or self.rows))
            rows = self.rows[name]
            kind = self.rng.random()
            if rows and kind < 0.45:
                row = rows.pop(self.rng.randrange(len(rows)))
                session.remove(name, [row])
            else:
                if rows and kind < 0.6:
                    row = self.rng.choice(rows)
                elif kind < 0.65:
                    row = (None,) * len(SCHEMA[name])
                else:
                    row = random_row(self.rng, name)
                rows.append(row)
                session.insert(name, [row])
            changed.add(name)
        for name in changed:
            self.duck.execute(f"DELETE FROM {name}")
            self._duck_insert(name, self.rows[name])

    def duck_rows(self, sql: str) -> list[tuple]:
        return [tuple(r) for r in self.duck.execute(sql).fetchall()]


def _value(v):
    if isinstance(v, decimal.Decimal):
        v = float(v)
    if isinstance(v, float):
        return round(v, 6) + 0.0
    return v


def normalize(rows) -> list[tuple]:
    return [tuple(_value(v) for v in r) for r in rows]


def _key(row):
    return tuple((v is None, type(v).__name__ if v is not None else "", v if v is not None else 0) for v in row)


def as_multiset(rows) -> list[tuple]:
    return sorted(normalize(rows), key=_key)

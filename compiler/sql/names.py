"""Identifiers: how the names in SQL text meet the names of tables and columns.

SQL folds unquoted identifiers -- `Emp`, `EMP` and `emp` are one name -- and
keeps quoted ones as written (`"Emp"` is only `Emp`), each dialect by its own
rule: the default and PostgreSQL fold to lower case, DuckDB is
case-insensitive even for quoted names. `normalize(statement, ...)` applies
the dialect's rule to a whole parsed statement (sqlglot's
normalize_identifiers) before anything in it is resolved, so CTEs, views,
table aliases and columns are matched by their folded names everywhere.

Tables and columns of the schema (given to compile_sql, or read from
Parquet, CSV or JSON by the CLI) keep the names they were given -- a
session's relations and a table's attribute names are those -- and are
found by their *key*: the name folded as if written unquoted. A quoted
identifier that spells a schema name exactly (`"Emp"` for a table given as
`Emp`) is that schema name, so it is rewritten to its key.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers


def key(name: str, dialect) -> str:
    """The name a schema name is found by: folded as an unquoted identifier of `dialect`."""
    return Dialect.get_or_raise(dialect).normalize_identifier(exp.Identifier(this=str(name), quoted=False)).name


def normalize(statement: exp.Expression, dialect, schema_keys: dict[str, str]) -> exp.Expression:
    """`statement` with its identifiers folded by the dialect's rule, in place (positions kept).

    `schema_keys` maps each schema name (tables and columns) as given to its key;
    a quoted identifier spelling one of them exactly becomes that key."""
    statement = normalize_identifiers(statement, dialect=dialect)
    for ident in statement.find_all(exp.Identifier):
        if ident.quoted and schema_keys.get(ident.name, ident.name) != ident.name:
            ident.set("this", schema_keys[ident.name])
    return statement


__all__ = ["key", "normalize"]

"""The SQL front end: SQL text through sqlglot into the logical plan Datalog uses.

`compile_sql(text, schema=..., dialect=None)` (compiler.sql.program) gives a
Program whose sessions keep SQL answers -- bags with NULLs, recursive CTEs
included -- current as tables change. The translation is split by concept:
identifiers and their case (names), values and NULLs (values), relations
under translation (relation), scalar expressions (expressions), SELECT
blocks (select), GROUP BY (aggregate), MIN/MAX of texts (text_extreme),
ASOF JOIN (asof), subqueries (subquery), WITH and recursion (recursion),
ORDER BY/LIMIT (topk), and the whole text (translator). Errors:
compiler.sql.errors.
"""

from compiler.sql.errors import UnknownColumnError, UnsupportedSQLError
from compiler.sql.program import SQLProgram, SQLRuntimeError, SQLSession, compile_sql

__all__ = ["compile_sql", "SQLProgram", "SQLSession", "SQLRuntimeError", "UnsupportedSQLError", "UnknownColumnError"]

"""deltalog's compiler: source text to running dataflows.

Front ends live in subpackages (`compiler.datalog`); every error they raise is
a CompileError from `compiler.errors`, re-exported here with the entry points.
A checked program becomes a logical plan (`compiler.plan`), is optimized
(`compiler.plan.rewrites`) and lowered to a runtime dataflow
(`compiler.lowering`); `compile_datalog` / `compile_file` give a Program whose
`session()` runs it (`compiler.program`); `compile_sql` does the same for SQL
(`compiler.sql`). A session's answers are `Result`s: columns, as Arrow tables
(`.arrow()`, `.df()`), or tuples when asked for (`compiler.results`).
"""

from compiler.datalog import CheckedProgram, check_datalog, parse_datalog
from compiler.errors import (
    ArityError,
    CompileError,
    ComponentError,
    DeclarationError,
    NameClashError,
    OverrideError,
    ParseError,
    PreprocessorError,
    StratificationError,
    TypeArgumentError,
    TypeMismatchError,
    UnknownComponentError,
    UnknownRelationError,
    UnsafeVariableError,
    UnsupportedError,
)
from compiler.program import Program, Session, SessionError, compile_datalog, compile_file
from compiler.results import Result
from compiler.sql import SQLRuntimeError, UnknownColumnError, UnsupportedSQLError, compile_sql

__all__ = [
    "compile_datalog",
    "compile_file",
    "compile_sql",
    "SQLRuntimeError",
    "UnsupportedSQLError",
    "UnknownColumnError",
    "Program",
    "Session",
    "SessionError",
    "Result",
    "parse_datalog",
    "check_datalog",
    "CheckedProgram",
    "CompileError",
    "ParseError",
    "PreprocessorError",
    "ComponentError",
    "UnknownComponentError",
    "TypeArgumentError",
    "OverrideError",
    "NameClashError",
    "ArityError",
    "UnsafeVariableError",
    "TypeMismatchError",
    "StratificationError",
    "UnknownRelationError",
    "DeclarationError",
    "UnsupportedError",
]

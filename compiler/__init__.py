"""deltalog's compiler: source text to running dataflows.

Front ends live in subpackages (`compiler.datalog`); every error they raise is
a CompileError from `compiler.errors`, re-exported here with the entry points.
A checked program becomes a logical plan (`compiler.plan`), is optimized
(`compiler.plan.rewrites`) and lowered to a runtime dataflow
(`compiler.lowering`); `compile_datalog` / `compile_file` give a Program whose
`session()` runs it (`compiler.program`); `compile_sql` does the same for SQL
(`compiler.sql`). A session's answers are `Result`s: columns, as Arrow tables
(`.arrow()`, `.df()`), or tuples when asked for (`compiler.results`); a record
is a tuple of its fields (nil: None), an ADT value a `Branch` (`compiler.values`).
"""

from compiler.errors import (
    ArityError,
    CompileError,
    ComponentError,
    DeclarationError,
    InlineError,
    NameClashError,
    OverrideError,
    ParseError,
    PreprocessorError,
    StratificationError,
    SubsumptionError,
    TypeArgumentError,
    TypeMismatchError,
    UnknownComponentError,
    UnknownFunctorError,
    UnknownRelationError,
    UnsafeVariableError,
    UnsupportedError,
)

# The entry points are imported on first use (PEP 562): they pull in the runtime and
# numba (about a second), which `import compiler.errors` or the CLI's start need not wait for.
_LAZY = {
    "CheckedProgram": "compiler.datalog",
    "check_datalog": "compiler.datalog",
    "parse_datalog": "compiler.datalog",
    "Program": "compiler.program",
    "Session": "compiler.program",
    "SessionError": "compiler.program",
    "compile_datalog": "compiler.program",
    "compile_file": "compiler.program",
    "Result": "compiler.results",
    "Branch": "compiler.values",
    "SQLRuntimeError": "compiler.sql",
    "UnknownColumnError": "compiler.sql",
    "UnsupportedSQLError": "compiler.sql",
    "compile_sql": "compiler.sql",
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'compiler' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value

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
    "Branch",
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
    "InlineError",
    "SubsumptionError",
    "UnknownFunctorError",
]

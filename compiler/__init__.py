"""deltalog's compiler: source text to checked programs (and, later, dataflow).

Front ends live in subpackages (`compiler.datalog`); every error they raise is
a CompileError from `compiler.errors`, re-exported here with the entry points.
"""

from compiler.datalog import CheckedProgram, check_datalog, parse_datalog
from compiler.errors import (
    ArityError,
    CompileError,
    DeclarationError,
    ParseError,
    StratificationError,
    TypeMismatchError,
    UnknownRelationError,
    UnsafeVariableError,
    UnsupportedError,
)

__all__ = [
    "parse_datalog",
    "check_datalog",
    "CheckedProgram",
    "CompileError",
    "ParseError",
    "ArityError",
    "UnsafeVariableError",
    "TypeMismatchError",
    "StratificationError",
    "UnknownRelationError",
    "DeclarationError",
    "UnsupportedError",
]

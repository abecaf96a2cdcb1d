"""The Datalog front end: Soufflé-style text to a checked program.

`parse_datalog` turns text into an AST (compiler.datalog.ast: parser,
builder, dnf) with Soufflé's components instantiated (components); `check`
substitutes inline relations (inline), infers arities and column types (infer,
scope), checks safety (safety), what relations keep (kinds) and stratifies
(stratify), giving a CheckedProgram (checks), rewritten with magic sets where a
pragma asks (magic); `check_datalog` does both. Lowering to a logical plan starts from a
CheckedProgram.
"""

from compiler.datalog.checks import CheckedProgram, RelationInfo, check, check_datalog
from compiler.datalog.parser import parse_datalog
from compiler.datalog.stratify import Stratum

__all__ = ["parse_datalog", "check", "check_datalog", "CheckedProgram", "RelationInfo", "Stratum"]

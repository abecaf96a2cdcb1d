"""The Datalog front end: Soufflé-style text to a checked program.

`parse_datalog` turns text into an AST (compiler.datalog.ast: parser,
builder, dnf) with Soufflé's components instantiated (components); `check` resolves
the `.type` declarations (types), substitutes inline relations (inline), folds
anonymous records (anonymous), infers arities and column kinds (infer, scope), checks
subset types (subtypes), safety (safety) and what relations keep (kinds) and
stratifies (stratify), giving a CheckedProgram (checks), rewritten with magic sets
where a pragma asks (magic); `check_datalog` does both. Lowering to a logical plan starts from a
CheckedProgram.
"""

from compiler.datalog.checks import CheckedProgram, RelationInfo, check, check_datalog
from compiler.datalog.parser import parse_datalog
from compiler.datalog.stratify import Stratum

__all__ = ["parse_datalog", "check", "check_datalog", "CheckedProgram", "RelationInfo", "Stratum"]

"""From checked programs to running dataflows.

`plan_datalog` (compiler.lowering.datalog, with compiler.lowering.rules for
rule bodies, and choice, eqrel, subsumption and ranges for what those
features need) turns a checked Datalog program into a logical plan;
`build_dataflow` (compiler.lowering.dataflow, with compiler.lowering.columns
for expressions) turns an optimized plan into a runtime dataflow.
"""

from compiler.lowering.datalog import plan_datalog

__all__ = ["plan_datalog"]

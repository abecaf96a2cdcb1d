"""PlanError: a malformed logical plan.

Plans are built by front ends and rewritten by the optimizer, never written by
users, so a PlanError is a bug in deltalog (a front end or a rewrite made a
node whose inputs do not fit), not a mistake in a program. User mistakes are
CompileErrors, raised before a plan is built.
"""


class PlanError(Exception):
    """A plan node was built from inputs that do not fit it."""

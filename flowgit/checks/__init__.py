"""The gate: rules that hold a change of the continuity file to the wrap protocol.

Each rule is a small function from a :class:`CheckContext` (HEAD's document and
store, the staged ones) to findings, registered in :data:`RULES` in the order
they run. A new rule is one function and one line in that list; users switch
or soften rules by name in ``[tool.flowgit.rules]``.
"""

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.checks.registry import RULES, Rule, run_rules

__all__ = ["CheckContext", "Finding", "RULES", "Rule", "run_rules"]

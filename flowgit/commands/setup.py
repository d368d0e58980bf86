"""``flowgit setup claude``: render what :mod:`flowgit.claude_setup` did (or would do, under ``--dry-run``)."""

from __future__ import annotations

from flowgit.claude_setup import SetupReport
from flowgit.output import style


def render(report: SetupReport) -> str:
    verb = "would " if report.dry_run else ""
    warned = [f"{style('warning', 'yellow')}: {w}" for w in [*report.warnings, *report.advice]]
    if not report.changed:
        what = "nothing flowgit added is left" if report.removed else "already set up: nothing to change"
        return "\n".join([f"flowgit setup claude ({report.scope}, {report.base}): {what}", *warned])
    lines = []
    if report.dry_run and report.warnings:  # said first: the diff below would not be written
        lines.append(f"{style('refused', 'red')}: the real run would write nothing: {report.warnings[0]}")
    for change in report.changes:
        if report.dry_run and change.diff:
            lines.append(change.diff.rstrip("\n"))
        if change.action != "unchanged":
            note = f" ({change.note})" if change.note else ""
            lines.append(f"{verb}{style(change.action, 'green' if change.action in ('create', 'update') else 'yellow')}"
                         f" {report.base}/{change.path}{note}")
    if not report.removed and not report.dry_run:
        lines.append("Claude Code now loads the flowgit-wrap and flowgit-ascend skills, /wrap and /ascend, "
                     "primes each session with `flowgit prime` and reminds once to wrap. "
                     "Undo: flowgit setup claude --remove" + (" --user" if report.scope == "user" else ""))
    return "\n".join(lines + warned)

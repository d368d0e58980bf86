"""FlowScript lint findings on the lines a commit adds or changes."""

from __future__ import annotations

from typing import Iterator

from flowgit.checks.context import CheckContext
from flowgit.checks.finding import Finding
from flowgit.continuity.document import has_fence_run
from flowgit.continuity.flowscript import lint_lines


def flowscript(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.candidate_lines:
        return  # only new or changed lines are linted
    fenced = has_fence_run(ctx.new.text)
    # each line lints alike whichever others are asked for, so the candidates are linted and the findings
    # kept for the lines that are really new (a candidate line HEAD has is rarely one with a finding)
    for f in lint_lines(ctx.new.lines, ctx.candidate_lines, fenced=fenced):
        if ctx.line_is_new(f.line - 1):
            yield Finding(f.code, "flowscript", "error" if f.is_error else "warning", ctx.path, f.line,
                          f"col {f.col}: {f.message}")

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
    unfenced = _fenced_in_head(ctx)
    # each line lints alike whichever others are asked for, so the candidates are linted and the findings
    # kept for the lines that are really new (a candidate line HEAD has is rarely one with a finding), or that
    # HEAD held only inside a code fence (taken out of it, a line is read as FlowScript for the first time)
    for f in lint_lines(ctx.new.lines, ctx.candidate_lines, fenced=fenced):
        if ctx.line_is_new(f.line - 1) or ctx.new.lines[f.line - 1].strip() in unfenced:
            yield Finding(f.code, "flowscript", "error" if f.is_error else "warning", ctx.path, f.line,
                          f"col {f.col}: {f.message}")


def _fenced_in_head(ctx: CheckContext) -> frozenset[str]:
    """The lines HEAD holds inside code fences (and nowhere outside one), stripped: none without a fence."""
    if ctx.old is None or not has_fence_run(ctx.old.text):
        return frozenset()
    from flowgit.continuity.document import fence_step

    inside, outside = set(), set()
    fence = None
    for line in ctx.old.lines:
        fence, is_fence = fence_step(line, fence)
        if not is_fence:
            (inside if fence is not None else outside).add(line.strip())
    return frozenset(inside - outside)

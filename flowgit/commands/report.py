"""``flowgit report``: write the memory's life as one self-contained HTML page (and say where)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.output import emit_bytes
from flowgit.report.model import Report


@dataclass
class Written:
    path: Path | None  # None: the page went to standard output (``-o -``)
    size: int
    report: Report

    def to_dict(self) -> dict:
        return {"path": str(self.path) if self.path else None, "bytes": self.size, **self.report.to_dict()}


def run_report(cfg: Config, *, output: str, since: str | None, until: str | None,
               patterns: tuple[str, ...], as_json: bool = False) -> Written:
    """Build the report from history and write it atomically to ``output`` (relative to the current directory).

    ``-`` writes the page to standard output. Any other target is checked
    (:mod:`flowgit.report.target`) before the history is read and again just
    before it is replaced: the page never takes the place of the memory, the
    store, git's files or a file flowgit did not draw.
    """
    from flowgit.report.build import build_report
    from flowgit.report.html import render_html
    from flowgit.report.target import STDOUT, check_target

    if output == STDOUT and as_json:
        raise FlowgitError("the page and the --json summary would both go to standard output", path="-o",
                           fix="write the page to a file with --json (-o report.html), or drop --json")
    if output != STDOUT:
        check_target(cfg, output)
    report = build_report(cfg, since=since, until=until, patterns=patterns)
    page = render_html(report).encode("utf-8")
    if output == STDOUT:
        emit_bytes(page)  # (the page's UTF-8, its declared charset)
        return Written(None, len(page), report)
    return Written(_write(check_target(cfg, output), page), len(page), report)


def _write(target: Path, page: bytes) -> Path:
    from flowgit.fsio import atomic_write

    try:
        atomic_write(target, page)
    except OSError as exc:
        raise FlowgitError(f"cannot write the report ({exc.strerror})", path=target) from None
    return target.resolve()


def render(written: Written) -> str:
    """What was written and where; nothing when the page itself went to standard output."""
    if written.path is None:
        return ""
    r = written.report
    if r.empty:
        what = ("an empty state: the continuity file has no history yet" if r.commits_total == 0
                else "an empty state: nothing in history matches the filters")
    else:
        graduations = sum(len(ln.graduations) for ln in r.lanes)
        errors = sum(1 for f in r.findings if f.is_error)
        overrides = sum(1 for f in r.findings if f.is_override)
        what = (f"{len(r.lanes):,} pattern(s), {graduations:,} promotion(s), {r.commits:,} commit(s), "
                f"{errors:,} audit finding(s)" + (f", {overrides:,} override(s) recorded" if overrides else ""))
    return f"wrote {written.path} ({written.size / 1024:,.0f} KiB): {what}\nopen it: {written.path.as_uri()}"

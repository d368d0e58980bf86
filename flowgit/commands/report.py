"""``flowgit report``: write the memory's life as one self-contained HTML page (and say where)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flowgit.config import Config
from flowgit.errors import FlowgitError
from flowgit.report.model import Report


@dataclass
class Written:
    path: Path
    size: int
    report: Report

    def to_dict(self) -> dict:
        return {"path": str(self.path), "bytes": self.size, **self.report.to_dict()}


def run_report(cfg: Config, *, output: str, since: str | None, until: str | None,
               patterns: tuple[str, ...]) -> Written:
    """Build the report from history and write it atomically to ``output`` (relative to the current directory)."""
    from flowgit.fsio import atomic_write
    from flowgit.report.build import build_report
    from flowgit.report.html import render_html

    target = Path(output).expanduser()
    if target.is_dir():
        raise FlowgitError("is a directory", path=target, fix="give a file name, e.g. -o report.html")
    if not target.parent.exists():
        raise FlowgitError("no such directory", path=target.parent, fix="create it first, or write elsewhere with -o")
    report = build_report(cfg, since=since, until=until, patterns=patterns)
    page = render_html(report).encode("utf-8")
    try:
        atomic_write(target, page)
    except OSError as exc:
        raise FlowgitError(f"cannot write the report ({exc.strerror})", path=target) from None
    return Written(target.resolve(), len(page), report)


def render(written: Written) -> str:
    r = written.report
    if r.empty:
        what = ("an empty state: the continuity file has no history yet" if r.commits_total == 0
                else "an empty state: nothing in history matches the filters")
    else:
        graduations = sum(len(ln.graduations) for ln in r.lanes)
        what = (f"{len(r.lanes):,} pattern(s), {graduations:,} promotion(s), {r.commits:,} commit(s), "
                f"{len(r.findings):,} audit finding(s)")
    return f"wrote {written.path} ({written.size / 1024:,.0f} KiB): {what}\nopen it: {written.path.as_uri()}"

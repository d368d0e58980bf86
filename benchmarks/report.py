"""``flowgit report`` over 10,000 commits, against ``flowgit log`` on the same repository in the same run.

The repository is the history benchmark's (fast-imported wraps over a
500-line file, thousands of patterns over its life). The page's size is
reported next to the time: it must stay under 5 MB however long the history.
"""

from __future__ import annotations

import tempfile
from pathlib import Path


def report_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    from benchmarks.run import FLOWGIT, history_repo, median_time

    root = history_repo(tmp)
    page = Path(tempfile.mkdtemp(dir=tmp)) / "report.html"
    log = median_time(FLOWGIT + ["log", "--json"], runs, cwd=root)
    report = median_time(FLOWGIT + ["report", "-o", str(page)], runs, cwd=root)
    size = page.stat().st_size
    if size >= 5_000_000:
        raise SystemExit(f"the report is {size:,} bytes, over the 5 MB budget")
    return [("flowgit log --json, 10,000 commits", log, None),
            (f"flowgit report ({size / 1e6:.2f} MB of HTML)", report, "flowgit log")]

"""The audit benchmark: every gate rule on every commit of a 10,000-commit history, and a CI-sized range.

    python benchmarks/run.py audit [--runs N]

Baselines, measured in the same run on the same repository:
* ``git log -p -- CONTINUITY.md`` over the whole history (the issue's target: the full audit within 3x);
* the range audit of 20 new commits on top of the 10,000 (target: under 1 s, whole process).

Each command runs ``runs`` times, alternating with the floor so that load falls on both alike.
"""

from __future__ import annotations

import statistics
import subprocess
from pathlib import Path
from typing import Callable


def add_commits(root: Path, count: int) -> None:
    """``count`` legitimate wraps on top: State replaced each time (the rules judge each one)."""
    path = root / "CONTINUITY.md"
    for n in range(count):
        lines = path.read_text().split("\n")
        at = next(i for i, ln in enumerate(lines) if ln.startswith("Focus: "))
        lines[at] = f"Focus: new wrap {n} on top."
        path.write_text("\n".join(lines))
        subprocess.run(["git", "commit", "-qam", f"Session wrap top {n}\n\nFlow-Session: top{n}"], cwd=root,
                       check=True, capture_output=True)


def run_bench(tmp: Path, runs: int, history_repo: Callable[[Path], Path], median_time: Callable,
              flowgit: list[str]) -> list[tuple[str, float, str | None]]:
    root = history_repo(tmp)
    subprocess.run(["git", "tag", "base"], cwd=root, check=True)
    floors, fulls = [], []
    for _ in range(runs):
        floors.append(median_time(["git", "log", "-p", "--", "CONTINUITY.md"], 1, cwd=root))
        fulls.append(median_time(flowgit + ["audit", "--json"], 1, cwd=root))
    floor, full = statistics.median(floors), statistics.median(fulls)
    add_commits(root, 20)
    ranged = median_time(flowgit + ["audit", "--range", "base..HEAD", "--json"], runs, cwd=root)
    return [
        ("git log -p -- CONTINUITY.md (floor), 10,000 commits", floor, None),
        (f"flowgit audit, every rule, 10,000 commits (median of {runs})", full, "git log -p"),
        ("flowgit audit --range, 20 new on 10,000 (target < 1 s)", ranged, None),
    ]

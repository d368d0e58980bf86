"""Memory flat in history and store size: log/audit over 30,000 commits, search over 1,000,000 episodes.

Figures are whole-process medians next to the baseline the issue names
(``git log -p -- CONTINUITY.md``; ``grep -c TERM``), with the peak resident
memory of one run from GNU time. Targets: log/audit under 300 MB and within
2x git; search within 5x grep and under 100 MB plus its output.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import generate  # noqa: E402

HISTORY_COMMITS = 30_000
STORE_EPISODES = 1_000_000


def history_rows(tmp: Path, runs: int, commits: int = HISTORY_COMMITS) -> list[tuple[str, float, str | None]]:
    from benchmarks.run import FLOWGIT, _peak_rss, history_repo, median_time

    root = history_repo(tmp, commits, batch=500)  # the store changes every 500 commits: 60 versions, not 3,000
    floor = median_time(["git", "log", "-p", "--", "CONTINUITY.md"], runs, cwd=root)
    rows: list[tuple[str, float, str | None]] = [
        (f"git log -p -- CONTINUITY.md (floor), {commits:,} commits "
         f"(peak {_peak_rss(['git', 'log', '-p', '--', 'CONTINUITY.md'], root) / 1024:.0f} MB)", floor, None)]
    for cmd in ("log", "audit"):
        argv = FLOWGIT + [cmd, "--json"]
        rows.append((f"flowgit {cmd} (peak {_peak_rss(argv, root) / 1024:.0f} MB)",
                     median_time(argv, runs, cwd=root), "git log -p"))
    return rows


def search_rows(tmp: Path, runs: int, count: int = STORE_EPISODES) -> list[tuple[str, float, str | None]]:
    from benchmarks.run import FLOWGIT, _peak_rss, median_time

    store = tmp / "episodes.jsonl"
    with store.open("w", encoding="utf-8") as fh:  # written in slices: the generator's list stays small
        for start in range(0, count, 100_000):
            generate_slice(fh, min(100_000, count - start), seed=start)
    rows: list[tuple[str, float, str | None]] = []
    for term, label in (("#4242", "rare term"), ("retry", "common term")):
        floor = _median_to_file(["grep", "-c", term, str(store)], runs, tmp)
        argv = FLOWGIT + ["--store", str(store), "episode", "search", term, "--json"]
        rows.append((f"grep -c {term} ({label})", floor, None))
        rows.append((f"flowgit episode search {term} over {count:,} (peak {_peak_rss(argv, tmp) / 1024:.0f} MB)",
                     median_time(argv, runs), f"grep -c {term}"))
    return rows


def _median_to_file(argv: list[str], runs: int, tmp: Path) -> float:
    """Like median_time, but stdout goes to a file: GNU grep stops at the first match when it sees /dev/null."""
    import statistics
    import subprocess
    import time

    times = []
    for _ in range(runs):
        with (tmp / "out.txt").open("wb") as out:
            start = time.perf_counter()
            subprocess.run(argv, stdout=out, stderr=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def generate_slice(fh, count: int, seed: int) -> None:
    import json

    for i, e in enumerate(generate.episodes(count, seed=seed + 2)):
        e["id"], e["content"] = f"ep-{seed + i:012x}", e["content"].rsplit(" #", 1)[0] + f" #{seed + i}"
        fh.write(json.dumps(e, ensure_ascii=False) + "\n")


def memory_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    return history_rows(tmp, runs) + search_rows(tmp, runs)


if __name__ == "__main__":
    import tempfile

    from benchmarks.run import report

    with tempfile.TemporaryDirectory() as d:
        which = sys.argv[1] if len(sys.argv) > 1 else "all"
        runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
        if which in ("all", "history"):
            report("memory: history", history_rows(Path(d), runs))
        if which in ("all", "search"):
            report("memory: search", search_rows(Path(d), runs))

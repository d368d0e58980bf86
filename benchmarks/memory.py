"""Memory flat in history and store size: log/audit over 30,000 commits, search over 1,000,000 episodes.

Figures are whole-process medians next to the baseline the issue names
(``git log -p -- CONTINUITY.md``; ``grep -c TERM``), with the peak resident
memory (of one run from GNU time; for search, the largest of the timed runs, with
their CPU time too). Targets: log/audit under 300 MB and within 2x git; search
within 5x grep and under 100 MB plus its output.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import generate  # noqa: E402

HISTORY_COMMITS = 30_000
STORE_EPISODES = 1_000_000


def history_rows(tmp: Path, runs: int, commits: int = HISTORY_COMMITS) -> list[tuple[str, float, str | None]]:
    from benchmarks.run import FLOWGIT, _peak_rss, _peak_tree_rss, history_repo, median_time

    root = history_repo(tmp, commits, batch=500)  # the store changes every 500 commits: 60 versions, not 3,000
    floor = median_time(["git", "log", "-p", "--", "CONTINUITY.md"], runs, cwd=root)
    rows: list[tuple[str, float, str | None]] = [
        (f"git log -p -- CONTINUITY.md (floor), {commits:,} commits "
         f"(peak {_peak_rss(['git', 'log', '-p', '--', 'CONTINUITY.md'], root) / 1024:.0f} MB)", floor, None)]
    for cmd in ("log", "audit"):
        argv = FLOWGIT + [cmd, "--json"]
        rows.append((f"flowgit {cmd} (peak {_peak_rss(argv, root) / 1024:.0f} MB a process, "
                     f"{_peak_tree_rss(argv, root) / 1024:.0f} MB with its workers)",
                     median_time(argv, runs, cwd=root), "git log -p"))
    return rows


# (what flowgit is asked, what grep counts, what it is); a session is matched under any spelling of its name
# (`S-17` is `s17`), so its floor is grep for the spelling the store happens to hold
SEARCH_TERMS = ((["#4242"], "#4242", "rare term"), (["retry"], "retry", "common term"),
                (["--session", "S-17"], '"session": "s17"', "one session"))


def search_rows(tmp: Path, runs: int, count: int = STORE_EPISODES) -> list[tuple[str, float, str | None]]:
    """``episode search TERM --json`` against ``grep -c TERM``: wall and CPU medians, peak memory, same runs.

    Each round runs grep, then flowgit, so load on a shared machine falls on
    both alike. Both write to a file (GNU grep stops at the first match when it
    sees /dev/null; flowgit's 100 MB of JSON for a common term is part of its work).
    The CPU time counts the worker a large store is searched with (its second
    half); the peak is the largest one process reached, and then both together.
    """
    from benchmarks.run import FLOWGIT, _peak_tree_rss

    store = tmp / "episodes.jsonl"
    with store.open("w", encoding="utf-8") as fh:  # written in slices: the generator's list stays small
        for start in range(0, count, 100_000):
            generate_slice(fh, min(100_000, count - start), seed=start)
    rows: list[tuple[str, float, str | None]] = []
    for asked, term, label in SEARCH_TERMS:
        grep = ["grep", "-c", term, str(store)]
        search = FLOWGIT + ["--store", str(store), "episode", "search", *asked, "--json"]
        measured: dict[str, list[tuple[float, float, int]]] = {"grep": [], "flowgit": []}
        for _ in range(runs):
            measured["grep"].append(_run_to_file(grep, tmp / "grep.out"))
            measured["flowgit"].append(_run_to_file(search, tmp / "search.out"))
        hits = int((tmp / "grep.out").read_text())
        out_mb = (tmp / "search.out").stat().st_size / 1e6
        (g_wall, g_cpu, _), (f_wall, f_cpu, f_peak) = (_medians(measured[k]) for k in ("grep", "flowgit"))
        tree = _peak_tree_rss(search, tmp)  # with the worker that renders the store's second half
        rows += [
            (f"grep -c {term} ({label}: {hits:,} lines)", g_wall, None),
            (f"grep -c {term} cpu (user+sys)", g_cpu, None),
            (f"flowgit episode search {' '.join(asked)} --json over {count:,} (peak {f_peak / 1024:.0f} MB a "
             f"process, {tree / 1024:.0f} MB with its worker; {out_mb:.0f} MB out)", f_wall, f"grep -c {term}"),
            (f"flowgit episode search {' '.join(asked)} cpu (user+sys)", f_cpu, f"grep -c {term} cpu"),
        ]
    return rows


def _run_to_file(argv: list[str], out_path: Path) -> tuple[float, float, int]:
    """(wall seconds, user+sys seconds, peak resident KiB) of one whole process, stdout to a file.

    The peak comes from GNU time around the process: a child's own ``ru_maxrss``
    would count the benchmark process it was forked from.
    """
    import os
    import subprocess
    import time

    peak_file = out_path.with_suffix(".rss")
    with out_path.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", str(peak_file), *argv], stdout=out,
                                stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchmark command failed ({proc.returncode}): {argv}")
    return wall, usage.ru_utime + usage.ru_stime, int(peak_file.read_text().split()[-1])


def _medians(samples: list[tuple[float, float, int]]) -> tuple[float, float, int]:
    """Median wall and CPU time; the largest peak memory (the bound is what matters)."""
    import statistics

    return (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples),
            max(s[2] for s in samples))


def generate_slice(fh, count: int, seed: int) -> None:
    import json

    for i, e in enumerate(generate.episodes(count, seed=seed + 2)):
        e["id"], e["content"] = f"ep-{seed + i:012x}", e["content"].rsplit(" #", 1)[0] + f" #{seed + i}"
        fh.write(json.dumps(e, ensure_ascii=False) + "\n")


def memory_bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    return history_rows(tmp, runs) + search_rows(tmp, runs)


if __name__ == "__main__":
    import tempfile

    from benchmarks.run import byte_compile, report

    byte_compile()  # as run.py does: figures measure the tool, not a checkout compiling itself
    with tempfile.TemporaryDirectory() as d:
        which = sys.argv[1] if len(sys.argv) > 1 else "all"
        runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
        if which in ("all", "history"):
            report("memory: history", history_rows(Path(d), runs))
        if which in ("all", "search"):
            report("memory: search", search_rows(Path(d), runs))

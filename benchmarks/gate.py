"""The gate's benchmark: ``flowgit check`` on a realistic staged wrap, and what the hooks cost an unrelated commit.

Inputs are the issue's: a 500-line / ~140,000-character continuity file, a
100,000-episode store whose ids are real content hashes (the gate refuses
forged ones), and a staged wrap that appends episodes from two agents,
increments three patterns with one new and one earlier episode each, and
replaces State. Every figure is a median of whole processes next to its
baseline measured in the same run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path


def _real_ids(eps: list[dict]) -> list[dict]:
    from flowgit.episodes import episode_id

    for e in eps:
        e["id"] = episode_id(e["type"], e["content"], e["session"])
    return eps


def build(tmp: Path) -> Path:
    from benchmarks import generate
    from benchmarks.run import git, new_repo

    root = new_repo(tmp, "gate")
    eps = generate.episodes(100_000)
    placeholders = [f"ep-placeholder{i:02d}" for i in range(24)]
    text = generate.continuity(500, 139_500, evidence_ids=placeholders)
    described = {ln.split(":")[0].split()[-1]: ln.split(":", 1)[1].split("|")[0].strip()
                 for ln in text.splitlines() if ln.startswith("!! pattern_")}
    for i, e in enumerate(eps[:24]):  # the episodes each 2x pattern cites: about it, two sessions
        e["content"] = f"pattern_{i // 2} fired again: {described[f'pattern_{i // 2}']} #{i}"
        e["session"], e["agent"] = f"s{i}", f"agent-{i % 2}"
    eps = _real_ids(eps)
    for placeholder, e in zip(placeholders, eps):
        text = text.replace(placeholder, e["id"])
    (root / "CONTINUITY.md").write_text(text)
    generate.write_store(root / ".flow" / "episodes.jsonl", eps)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def stage_wrap(root: Path) -> None:
    """Three patterns 2x -> 3x with one new episode each (two agents), State replaced."""
    from benchmarks.run import git

    text = (root / "CONTINUITY.md").read_text()
    described = {ln.split(":")[0].split()[-1]: ln.split(":", 1)[1].split("|")[0].strip()
                 for ln in text.splitlines() if ln.startswith("!! pattern_")}
    new_eps = _real_ids([{"ts": "2026-11-29T10:00:00Z", "type": "finding", "tags": ["bench"],
                          "content": f"pattern_{i} fired in a new session: {described[f'pattern_{i}']}",
                          "session": f"new{i}", "agent": f"agent-{2 + i % 2}"} for i in range(3)])
    with (root / ".flow" / "episodes.jsonl").open("a") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in new_eps)
    lines = text.split("\n")
    for i, e in enumerate(new_eps):
        at = next(n for n, ln in enumerate(lines) if ln.startswith(f"!! pattern_{i}:"))
        lines[at] = lines[at].replace("| 2x (BENCH)", "| 3x (BENCH)").replace("]", f", {e['id']}]")
        lines.append("")  # keep the line count; the graduated lines stay where they are (a realistic diff)
    state = lines.index("## Current State")
    end = next(n for n in range(state + 1, len(lines)) if not lines[n].strip())
    lines[state + 1:end] = ["Focus: the gate benchmark. Critical path: staged blobs, then the hooks."] + \
        [""] * (end - state - 2)  # State replaced whole; blank lines keep the line count
    (root / "CONTINUITY.md").write_text("\n".join(lines))
    git(root, "add", "-A")


def commit_times(root: Path, runs: int) -> tuple[float, float]:
    """Median wall times of ``git commit`` of an unrelated file without and with flowgit's hooks.

    The two alternate, after one warm-up commit of each (the first commit in a
    copied repository refreshes the index, hashing the 25 MB store), so a
    passing disturbance of the machine falls on both.
    """
    import statistics

    empty = root / ".no-hooks"
    empty.mkdir(exist_ok=True)
    times: dict[bool, list[float]] = {False: [], True: []}
    for n in range(runs + 1):
        for hooks in (False, True):
            (root / "unrelated.txt").write_text(f"change {n} {hooks}\n")
            subprocess.run(["git", "add", "unrelated.txt"], cwd=root, check=True)
            hooks_path = [] if hooks else ["-c", f"core.hooksPath={empty}"]
            start = time.perf_counter()
            subprocess.run(["git", *hooks_path, "commit", "-qm", f"unrelated {n}"], cwd=root, check=True,
                           capture_output=True)
            if n:  # the first round warms up
                times[hooks].append(time.perf_counter() - start)
    return statistics.median(times[False]), statistics.median(times[True])


def median_cpu(argv: list[str], runs: int, *, cwd: Path | None = None) -> float:
    """Median CPU time (user + sys, the process and the git processes it waited for) of a whole process.

    The machine is shared: wall time includes waiting for a core, CPU time
    does not, so both are reported.
    """
    import os
    import statistics

    times = []
    for _ in range(runs):
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        times.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(times)


def run(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    from benchmarks.run import FLOWGIT, median_time

    runs = max(runs, 7)
    root = build(tmp)
    stage_wrap(root)
    check = subprocess.run(FLOWGIT + ["check", "--json"], cwd=root, capture_output=True, text=True)
    verdict = json.loads(check.stdout)
    if not verdict["ok"]:
        raise SystemExit("the benchmark's staged wrap must pass the gate:\n" + check.stdout)
    rows = [
        ("python -c pass", median_time([sys.executable, "-c", "pass"], runs), None),
        ("flowgit check, 140k chars + 100,000 episodes", median_time(FLOWGIT + ["check"], runs, cwd=root),
         "python -c pass"),
        ("python -c pass, CPU user+sys", median_cpu([sys.executable, "-c", "pass"], runs), None),
        ("flowgit check, CPU user+sys", median_cpu(FLOWGIT + ["check"], runs, cwd=root),
         "python -c pass, CPU user+sys"),
    ]
    hooked = tmp / "hooked"
    shutil.copytree(root, hooked)
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=hooked, check=True)
    subprocess.run(FLOWGIT + ["install-hook"], cwd=hooked, check=True, capture_output=True)
    bare, hooked_time = commit_times(hooked, runs)
    rows += [
        ("git commit of an unrelated file, no hooks", bare, None),
        ("git commit of an unrelated file, flowgit hooks", hooked_time,
         "git commit of an unrelated file, no hooks"),
    ]
    return rows

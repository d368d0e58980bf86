"""Benchmark inputs for the merge driver: a 500-line, ~140,000-character base and two wraps of it.

Each side makes 20 pattern edits (new evidence on existing patterns, new 1x
patterns) and replaces State, so the driver does every kind of work: the
keyed merge, the evidence checks against the store and the gate on its result.
"""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks import generate


def episodes_for(patterns: int, per: int) -> list[dict]:
    eps = generate.episodes(patterns * per + 200, seed=5)
    for i, e in enumerate(eps[: patterns * per]):
        e["content"] = f"pattern_{i // per} fired again: " + e["content"]
        e["session"] = f"m{i}"
    return eps


def sides(root: Path) -> tuple[Path, Path, Path]:
    """Write base/ours/theirs continuity files and commit base + store; returns the three paths."""
    eps = episodes_for(40, 6)
    ids = [e["id"] for e in eps]
    base_ids = [ids[6 * i + j] for i in range(12) for j in range(2)]
    base = generate.continuity(500, 135_000, evidence_ids=base_ids)
    lines = base.split("\n")
    at = next(n for n, ln in enumerate(lines) if ln.startswith("## Proven Knowledge")) + 1
    proven = [f"!! pattern_{12 + i}: pattern_{12 + i} keeps the queue short | 3x (BENCH — 2026-11-01) "
              f"[evidence: {', '.join(ids[6 * (12 + i) + j] for j in range(3))}]" for i in range(28)]
    lines[at:at] = proven
    base = "\n".join(lines)
    generate.write_store(root / ".flow" / "episodes.jsonl", eps)
    rng = random.Random(3)

    def wrap(side: int) -> str:
        out = base.split("\n")
        for i in range(side, 38, 2):  # 19 patterns on each side, none on both
            n = next(k for k, ln in enumerate(out) if ln.startswith(f"!! pattern_{i}:") or
                     ln.startswith(f"! pattern_{i}:"))
            out[n] = out[n].replace("]", f", {ids[6 * i + 3]}]", 1)
        for j in range(1):  # 19 evidence edits above, 1 new pattern here: 20 pattern edits
            dev = next(k for k, ln in enumerate(out) if ln.startswith("## Proven Knowledge")) - 1
            out.insert(dev, f"! new_{side}_{j}: {generate.sentence(rng, 8)} | 1x")
        state = next(k for k, ln in enumerate(out) if ln.startswith("## Current State")) + 1
        out[state] = f"Focus: side {side} wrapped."
        return "\n".join(out)

    paths = (root / "base.md", root / "ours.md", root / "theirs.md")
    for path, text in zip(paths, (base, wrap(0), wrap(1))):
        path.write_text(text)
    (root / "CONTINUITY.md").write_text(base)
    return paths




def run(tmp: Path, runs: int, median_time, new_repo, git) -> list[tuple[str, float, str | None]]:
    """The driver as git runs it (its own process, on its temporary files), next to git's text merge.

    Target: a whole-process median under 0.3 s on two 500-line/140,000-character sides.
    """
    import subprocess
    import sys

    root = new_repo(tmp, "merge")
    base, ours, theirs = sides(root)
    git(root, "add", "CONTINUITY.md", ".flow/episodes.jsonl")
    git(root, "commit", "-qm", "base")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "flowgit"], cwd=Path(__file__).resolve().parent.parent,
                   capture_output=True)  # an installed package has its bytecode; PYTHONDONTWRITEBYTECODE aside
    original = ours.read_bytes()
    scratch = root / "ours.work.md"
    driver = [sys.executable, "-m", "flowgit.commands.merge_driver", str(base), str(scratch), str(theirs),
              "CONTINUITY.md"]
    restore = f"import shutil; shutil.copyfile({str(ours)!r}, {str(scratch)!r})"
    scratch.write_bytes(original)
    import resource
    import statistics

    times, cpu = [], []
    for _ in range(runs):
        subprocess.run([sys.executable, "-c", restore], check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(median_time(driver, 1, cwd=root))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)

    text_merge = ["git", "merge-file", "-p", str(ours), str(base), str(theirs)]
    return [("python -c pass (start-up floor)", median_time([sys.executable, "-c", "pass"], runs), None),
            ("git merge-file on the same sides (text floor)", median_time(text_merge, runs, check=False), None),
            ("flowgit merge driver, 2 x 20 pattern edits, 140,000 chars", statistics.median(times),
             "python -c pass"),
            # on a shared machine the wall clock waits for the CPU; this is what the driver itself spends
            ("the same driver, CPU time (user + sys, git children included)", statistics.median(cpu), None)]

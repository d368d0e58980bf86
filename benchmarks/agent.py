"""The hooks Claude Code runs on every session start and stop: `flowgit prime --hook`, `flowgit remind --hook`.

They run before the agent can do anything, so their whole-process time is what
matters. Baselines: the Python start-up floor, and `cat` of the continuity file
(what the simplest possible SessionStart hook would do).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable


def prime_hook(tmp: Path, runs: int, median_time: Callable, gate_repo: Callable) -> list[tuple[str, float, str | None]]:
    root, _ = gate_repo(tmp)  # 500-line, ~140,000-char continuity file; 100,000 episodes
    flowgit = [sys.executable, "-m", "flowgit"]
    start = json.dumps({"session_id": "bench", "hook_event_name": "SessionStart", "source": "startup",
                        "cwd": str(root)}).encode()
    stop = json.dumps({"session_id": "bench", "hook_event_name": "Stop", "stop_hook_active": False,
                       "cwd": str(root)}).encode()
    return [
        ("python -c pass (start-up floor)", median_time([sys.executable, "-c", "pass"], runs), None),
        ("cat CONTINUITY.md (naive hook)", median_time(["cat", str(root / "CONTINUITY.md")], runs), None),
        ("flowgit prime --hook (SessionStart, 4000 tokens)",
         median_time(flowgit + ["prime", "--hook"], runs, cwd=root, stdin=start), "python -c pass"),
        ("flowgit remind --hook (Stop, nothing to wrap)",
         median_time(flowgit + ["remind", "--hook"], runs, cwd=root, stdin=stop), "python -c pass"),
        ("flowgit status", median_time(flowgit + ["status"], runs, cwd=root), "python -c pass"),
    ]

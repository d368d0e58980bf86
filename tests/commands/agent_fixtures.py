"""A committed continuity file and store, and running the installed ``flowgit`` as Claude Code would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from flowgit.episodes import make_episode
from tests.conftest import git

BIN = Path(sys.executable).parent
SESSION = "5f0c1d2e-9a8b-4c7d-8e6f-0a1b2c3d4e5f"


def ep(content, session, type_="finding", ts="2026-11-20T10:00:00Z", agent="agent-a", tags=("retries",)):
    return make_episode({"type": type_, "content": content, "session": session, "ts": ts, "agent": agent,
                         "tags": list(tags)})


# A small memory: retry_budget is 2x on two sessions' evidence (one more independent episode graduates it),
# backoff_jitter is Proven, one action item is past its `next:` date.
A1 = ep("retry storm multiplied provider load during the outage", "sess-a")
A2 = ep("retry budget per request kept the queue stable under load", "sess-a", "outcome", agent="agent-b")
B1 = ep("budget on retries held provider load flat in the second outage", "sess-b", "observation")
UNRELATED = ep("the coffee machine on floor two was repaired", "sess-b", tags=("office",))
J = [ep("jittered backoff spread the retry wave", "j1", tags=("backoff",)),
     ep("backoff jitter avoided a thundering herd of retries", "j2", tags=("backoff",)),
     ep("jitter on backoff waves halved the peak", "j3", agent="reviewer", tags=("backoff",))]

BASE = """# Continuity

## Current State
Focus: outages. Critical path: retry budget.

## Top of Mind
- provider storms

## Action Items
- write the retry budget — seen: Nov 20, next: Nov 25
- ask the provider for their status page

## Recent Context
We chased two outages this week.

## Developing Knowledge
!! retry_budget: cap retries per request so outages cannot multiply load | 2x (RELIABILITY) [evidence: {a1}, {b1}]
! cache_first: serve balances from cache before the provider | 1x

## Proven Knowledge
!! backoff_jitter: jittered backoff spreads retry waves over time | 3x (RELIABILITY — 2026-11-25) [evidence: {j1}, {j2}, {j3}]

## Foundation
Write the episode before the pattern.
"""


def base_text() -> str:
    return BASE.format(a1=A1.id, b1=B1.id, j1=J[0].id, j2=J[1].id, j3=J[2].id)


def committed_project(repo: Path, run) -> Path:
    """``repo`` with the wrap tests' continuity file and store committed (dated 2026-11-24)."""
    run(repo, "init", "--no-hooks")
    (repo / "CONTINUITY.md").write_text(base_text())
    store = repo / ".flow" / "episodes.jsonl"
    store.write_text("".join(e.to_json() + "\n" for e in [A1, A2, B1, UNRELATED, *J]))
    git(repo, "add", "-A")
    env = {**os.environ, "GIT_COMMITTER_DATE": "2026-11-24T12:00:00Z", "GIT_AUTHOR_DATE": "2026-11-24T12:00:00Z"}
    subprocess.run(["git", "commit", "-qm", "base"], cwd=repo, check=True, env=env)
    return repo


def hook_env(**extra: str) -> dict:
    """The environment Claude Code gives a hook: ours plus the venv's ``flowgit`` on PATH, no session variables."""
    env = {k: v for k, v in os.environ.items() if k not in ("FLOWGIT_SESSION", "CLAUDE_CODE_SESSION_ID", "NO_COLOR")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def payload(event: str, cwd: Path, **extra) -> str:
    """A hook payload as Claude Code sends it on stdin."""
    body = {"session_id": SESSION, "transcript_path": str(cwd / f"{SESSION}.jsonl"), "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": event, **extra}
    return json.dumps(body)


def run_hook(command: str, cwd: Path, stdin: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a hook's ``command`` through the shell, as Claude Code does, with ``stdin`` as its payload."""
    return subprocess.run(command, shell=True, cwd=cwd, input=stdin, capture_output=True, text=True,
                          env=env or hook_env(), timeout=60)

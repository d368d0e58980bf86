"""A committed continuity file and store, and running the installed ``flowgit`` as Claude Code would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git

BIN = Path(sys.executable).parent
SESSION = "5f0c1d2e-9a8b-4c7d-8e6f-0a1b2c3d4e5f"


# The wrap tests' small memory: retry_budget is 2x on two sessions' evidence (one more independent
# episode graduates it), backoff_jitter is Proven, one action item is past its `next:` date.
from tests.wrap.test_wrap import A1, A2, B1, J, UNRELATED, base_text, ep  # noqa: E402,F401


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

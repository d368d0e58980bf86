"""A throwaway repository with flowgit's real hooks installed, and the moves a hurried agent makes in it.

One base repository is built per test session (the gate fixtures' continuity
file and store, ``merge=union`` for the store, every hook installed with this
interpreter baked in) and copied for each attempt, so an attempt costs one copy
plus its own git commands.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from flowgit.episodes import Episode, episode_id, make_episode
from tests.checks.gate_fixtures import base_text, committed_base

CONT = "CONTINUITY.md"
STORE = ".flow/episodes.jsonl"
STALE = "!! old_rule: deploys wait for the provider batch window to close | 3x (RELIABILITY — 2026-09-01) [evidence: {ids}]"


def ep(content: str, session: str, agent: str = "agent-a", type_: str = "finding", ts: str | None = None,
       tags=()) -> Episode:
    data = {"type": type_, "content": content, "session": session, "agent": agent, "tags": list(tags)}
    if ts:
        data["ts"] = ts
    return make_episode(data)


def raw_episode(content: str, session: str = "", agent: str = "", ts: str = "2026-11-20T10:00:00Z",
                ident: str | None = None) -> dict:
    """An episode line as a hand edit would write it (no validation)."""
    return {"id": ident or episode_id("finding", content, session), "ts": ts, "type": "finding",
            "content": content, "session": session, "agent": agent, "tags": []}


# Episodes the stale Proven pattern in the base cites (three sessions, two agents).
E_OLD = [ep("deploys during the provider batch window failed twice", "o1", ts="2026-08-20T10:00:00Z"),
         ep("waiting for the batch window to close made the deploy clean", "o2", "reviewer",
            ts="2026-08-24T10:00:00Z"),
         ep("the provider batch window blocked a deploy again", "o3", ts="2026-08-28T10:00:00Z")]


def build_base(path: Path) -> Path:
    from flowgit.commands.install_hook import run_install
    from flowgit.config import load_config
    from tests.checks.gate_fixtures import E_BACKOFF, E_RETRY, E_SAME_SESSION, E_UNRELATED

    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    _git(path, "config", "user.name", "Red Team")
    _git(path, "config", "user.email", "red@example.com")
    (path / ".gitattributes").write_text(f"{STORE} merge=union\n")
    stale = STALE.format(ids=", ".join(e.id for e in E_OLD)) + "\n"
    committed_base(path, base_text(proven_extra=stale),
                   [*E_RETRY, *E_BACKOFF, *E_SAME_SESSION, E_UNRELATED, *E_OLD])
    run_install(load_config(path))
    return path


def _git(cwd: Path, *args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"setup step `git {' '.join(args)}` failed: {proc.stdout}{proc.stderr}")
    return proc


@dataclass
class Attempt:
    """The one git (or flowgit) command a case is judged by."""

    returncode: int
    output: str
    head_before: str | None
    head_after: str | None


@dataclass
class Lab:
    root: Path
    attempts: list[Attempt] = field(default_factory=list)

    # ------------------------------------------------------------ files
    def path(self, rel: str = CONT) -> Path:
        return self.root / rel

    def text(self, rel: str = CONT) -> str:
        return self.path(rel).read_bytes().decode("utf-8")

    def write(self, text: str, rel: str = CONT, *, newline: str | None = None) -> None:
        data = text if newline is None else text.replace("\n", newline)
        self.path(rel).parent.mkdir(parents=True, exist_ok=True)
        self.path(rel).write_bytes(data.encode("utf-8"))

    def sub(self, old: str, new: str, rel: str = CONT, count: int = 1) -> None:
        text = self.text(rel)
        assert old in text, f"case bug: {old!r} not in {rel}"
        self.write(text.replace(old, new, count), rel)

    def line(self, prefix: str) -> str:
        return next(ln for ln in self.text().splitlines() if ln.lstrip("\ufeff").startswith(prefix))

    def section(self, heading: str, body: str) -> None:
        """Replace a section's body (up to the next `## `)."""
        text = self.text()
        start = text.index(heading + "\n") + len(heading) + 1
        end = text.find("\n## ", start)
        self.write(text[:start] + body.rstrip("\n") + "\n" + text[end:])

    def episodes(self, *eps) -> list[str]:
        with self.path(STORE).open("a", encoding="utf-8") as fh:
            for e in eps:
                fh.write((e.to_json() if isinstance(e, Episode) else json.dumps(e)) + "\n")
        return [e.id if isinstance(e, Episode) else e["id"] for e in eps]

    # ------------------------------------------------------------ git
    def git(self, *args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return _git(self.root, *args, env=env, check=check)

    def head(self) -> str | None:
        proc = self.git("rev-parse", "-q", "--verify", "HEAD", check=False)
        return proc.stdout.strip() or None

    def add(self, *paths: str) -> None:
        self.git("add", "-A", *paths)

    def setup_commit(self, message: str = "setup") -> None:
        """A commit the case needs before its attempt (hooks skipped: it is scaffolding, not the attempt)."""
        self.add()
        self.git("commit", "-qm", message, "--no-verify")

    def attempt(self, *args: str, env: dict | None = None, program: str = "git") -> Attempt:
        before = self.head()
        full_env = {**os.environ, **(env or {})}
        proc = subprocess.run([program, *args], cwd=self.root, capture_output=True, text=True, env=full_env)
        result = Attempt(proc.returncode, proc.stdout + proc.stderr, before, self.head())
        self.attempts.append(result)
        return result

    def commit(self, message: str = "Update continuity", *extra: str, env: dict | None = None,
               add: bool = True) -> Attempt:
        if add:
            self.add()
        return self.attempt("commit", "-q", "-m", message, *extra, env=env)

    def flowgit(self, *args: str, env: dict | None = None) -> Attempt:
        import sys

        return self.attempt("-I", "-m", "flowgit", *args, env=env, program=sys.executable)


def copy_base(base: Path, dest: Path) -> Lab:
    shutil.copytree(base, dest, symlinks=True)
    return Lab(dest)

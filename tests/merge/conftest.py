"""A team repository with the merge driver registered, and helpers to write and commit two wraps in it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.merge.fixtures import A2, B2, BASE, EPISODES

BASE_EPISODES = [e for e in EPISODES if e not in (A2, B2)]


def store_bytes(*eps) -> bytes:
    return b"".join(e.to_json().encode() + b"\n" for e in eps)


def commit(repo: Path, message: str, when: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "commit", "-qam", message], cwd=repo, check=True, env=env, capture_output=True)


def write(repo: Path, text: str, store: bytes | None = None) -> None:
    (repo / "CONTINUITY.md").write_text(text)
    if store is not None:
        (repo / ".flow" / "episodes.jsonl").write_bytes(store)


@pytest.fixture
def team_repo(repo: Path, run) -> Path:
    """BASE committed by `flowgit init --commit`, which adopts it and registers the driver."""
    (repo / ".flow").mkdir()
    write(repo, BASE, store_bytes(*BASE_EPISODES))
    res = run(repo, "init", "--commit", "--no-hooks")
    assert res.code == 0, res.err
    return repo

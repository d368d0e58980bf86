"""Shared fixtures: real git repositories in tmp_path, and the CLI run in-process."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from flowgit.cli import main

DATA = Path(__file__).parent / "data"
SUPPORT = Path(__file__).parent / "support"

# The fault points (flowgit/faults.py) are armed only where tests/support is importable:
# in this process, and in every flowgit subprocess a test starts (through PYTHONPATH).
sys.path.insert(0, str(SUPPORT))
os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(SUPPORT), os.environ.get("PYTHONPATH", "")) if x)


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own git identity and no user/system git config."""
    home = tmp_path_factory.mktemp("home")
    cfg = home / ".gitconfig"
    cfg.write_text("[user]\n\tname = Flow Tester\n\temail = tester@example.com\n"
                   "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("FLOWGIT_SESSION", "CLAUDE_CODE_SESSION_ID", "FLOWGIT_AGENT", "CLAUDE_CONFIG_DIR", "GIT_DIR",
                "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def committed_repo(path: Path, name: str, text: str, message: str) -> Path:
    """A new repository at ``path`` holding one committed file: another project, a submodule's origin."""
    path.mkdir()
    git(path, "init", "-q")
    (path / name).write_text(text)
    git(path, "add", name)
    git(path, "commit", "-qm", message)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    return path


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """Run ``flowgit ARGS`` in-process inside ``cwd``; returns exit code, stdout, stderr."""
    def _run(cwd: Path, *args: str, stdin: str | None = None) -> Result:
        import io
        import sys

        monkeypatch.chdir(cwd)
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)
    return _run


def tree_digest(root: Path) -> dict[str, str]:
    """Hash of every file under ``root`` (used to prove nothing was written)."""
    import hashlib

    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and ".git" not in p.relative_to(root).parts[:1]:
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out

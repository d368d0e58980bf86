"""Appends are whole or absent: one write under the lock, cut back exactly on any failure; no bare repos."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flowgit.episodes import EpisodeStore, make_episode
from flowgit.errors import FlowgitError
from tests.conftest import git, tree_digest


def ep(content: str, session: str = "s1"):
    return make_episode({"type": "finding", "content": content, "session": session, "ts": "2026-11-30T10:00:00Z"})


def add(cwd: Path, *args: str, stdin: str | None = None, preexec=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flowgit", "episode", "add", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, preexec_fn=preexec)


def fsize_limit(limit: int):
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.fixture
def store_repo(repo: Path) -> Path:
    store = repo / ".flow" / "episodes.jsonl"
    store.parent.mkdir()
    store.write_text("".join(ep(f"fact number {i}").to_json() + "\n" for i in range(20)))
    return repo


def test_a_file_size_limit_leaves_no_torn_line(store_repo):
    store = store_repo / ".flow" / "episodes.jsonl"
    before = store.read_bytes()
    batch = "".join(json.dumps({"type": "finding", "content": f"a long batch line {i} " * 5, "session": "s2"}) + "\n"
                    for i in range(40))
    res = add(store_repo, stdin=batch, preexec=fsize_limit(len(before) + 500))  # part of the batch would fit
    assert res.returncode == 2, res
    assert "nothing was added" in res.stderr and "previous" in res.stderr and "Traceback" not in res.stderr
    assert store.read_bytes() == before


def test_a_short_write_is_cut_back_exactly(store_repo, monkeypatch):
    store = EpisodeStore(store_repo / ".flow" / "episodes.jsonl")
    before = store.path.read_bytes()
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data)[:17]))
    with pytest.raises(FlowgitError, match="nothing was added: the store is back to exactly its previous"):
        store.append([ep("this line would be torn")])
    monkeypatch.undo()
    assert store.path.read_bytes() == before


def test_a_failed_cut_back_says_where_the_torn_bytes_are(store_repo, monkeypatch):
    store = EpisodeStore(store_repo / ".flow" / "episodes.jsonl")
    size = store.path.stat().st_size
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data)[:5]))
    monkeypatch.setattr(os, "ftruncate", lambda fd, n: (_ for _ in ()).throw(OSError(5, "Input/output error")))
    with pytest.raises(FlowgitError, match=f"bytes after offset {size:,} are a torn write") as info:
        store.append([ep("torn")])
    assert f"truncate -s {size}" in info.value.fix


def test_fsync_failure_is_cut_back_too(store_repo, monkeypatch):
    store = EpisodeStore(store_repo / ".flow" / "episodes.jsonl")
    before = store.path.read_bytes()
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.raises(FlowgitError, match="No space left on device"):
        store.append([ep("never synced")])
    monkeypatch.undo()
    assert store.path.read_bytes() == before


TMPFS_SCRIPT = r"""
set -e
mount -t tmpfs -o size=64k tmpfs "$1"
mkdir -p "$1/.flow"
printf '%s\n' "$3" > "$1/.flow/episodes.jsonl"
head -c 1000000 /dev/zero > "$1/filler" 2>/dev/null || true
sha256sum "$1/.flow/episodes.jsonl" > "$2/before"
set +e
"$4" -m flowgit --store "$1/.flow/episodes.jsonl" episode add < "$2/batch" > "$2/out" 2> "$2/err"
echo $? > "$2/rc"
sha256sum "$1/.flow/episodes.jsonl" > "$2/after"
"""


def test_a_full_tmpfs_leaves_no_torn_line(tmp_path):
    if not shutil.which("unshare") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and unshare(1) for a private mount namespace")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    (tmp_path / "batch").write_text("".join(
        json.dumps({"type": "finding", "content": f"filling the disk {i} " * 20, "session": "s"}) + "\n"
        for i in range(200)))
    first = ep("already there").to_json()
    proc = subprocess.run(["unshare", "-m", "sh", "-c", TMPFS_SCRIPT, "sh", str(mnt), str(tmp_path), first,
                           sys.executable], capture_output=True, text=True)
    if proc.returncode != 0 or not (tmp_path / "rc").exists():
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()[:200]}")
    assert (tmp_path / "rc").read_text().strip() == "2", (tmp_path / "err").read_text()
    err = (tmp_path / "err").read_text()
    assert "could not append" in err and "nothing was added" in err and "Traceback" not in err
    assert (tmp_path / "before").read_text().split()[0] == (tmp_path / "after").read_text().split()[0]


def test_nothing_is_written_into_a_bare_repository(tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    before = tree_digest(bare), sorted(p.name for p in bare.iterdir())
    res = add(bare, "--type", "finding", "--content", "x", "--session", "s")
    assert res.returncode == 2 and "bare repository" in res.stderr and "Traceback" not in res.stderr
    assert (tree_digest(bare), sorted(p.name for p in bare.iterdir())) == before
    for args in (["init"], ["wrap", "--session", "s"], ["wrap", "--recover"]):
        res = subprocess.run([sys.executable, "-m", "flowgit", *args], cwd=bare, capture_output=True, text=True)
        assert res.returncode == 2, (args, res.stderr)
        assert "bare repository" in res.stderr or "not inside a git repository" in res.stderr, (args, res.stderr)
    assert (tree_digest(bare), sorted(p.name for p in bare.iterdir())) == before
    # from inside an ordinary repository's .git, the store is the working tree's, never one inside .git
    git(tmp_path, "init", "-q", "work")
    res = add(tmp_path / "work" / ".git", "--type", "finding", "--content", "x", "--session", "s")
    assert res.returncode == 0 and (tmp_path / "work" / ".flow" / "episodes.jsonl").exists()
    assert not (tmp_path / "work" / ".git" / ".flow").exists()
    # and a store pointed into .git explicitly is refused
    res = subprocess.run([sys.executable, "-m", "flowgit", "--store", ".git/e.jsonl", "episode", "add", "--type",
                          "finding", "--content", "x", "--session", "s"], cwd=tmp_path / "work",
                         capture_output=True, text=True)
    assert res.returncode == 2 and "inside the git directory" in res.stderr
    assert not (tmp_path / "work" / ".git" / "e.jsonl").exists()


def test_a_fifo_as_the_store_is_refused_not_waited_on(repo):
    fifo = repo / "store.fifo"
    os.mkfifo(fifo)
    for args in (["--store", str(fifo), "episode", "list"],
                 ["--store", str(fifo), "episode", "add", "--type", "finding", "--content", "x", "--session", "s"]):
        res = subprocess.run([sys.executable, "-m", "flowgit", *args], cwd=repo, capture_output=True, text=True,
                             timeout=30)
        assert res.returncode == 2 and "not a regular file" in res.stderr


def test_append_waits_for_the_repository_lock(store_repo):
    from flowgit.git import enclosing_git_dir
    from flowgit.lock import LockBusy

    code = ("import sys,time; from flowgit.lock import RepoLock\n"
            "with RepoLock(sys.argv[1], 'a wrap'):\n open(sys.argv[2],'w').close(); time.sleep(30)\n")
    marker = store_repo / "held"
    holder = subprocess.Popen([sys.executable, "-c", code, str(store_repo / ".git"), str(marker)])
    try:
        while not marker.exists():
            pass
        store = EpisodeStore(store_repo / ".flow" / "episodes.jsonl")
        assert store.lock_dir() == enclosing_git_dir(store_repo)
        before = store.path.read_bytes()
        with pytest.raises(LockBusy, match="a wrap"):
            store.append([ep("must wait")], lock_wait=0.3)
        assert store.path.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    added, _ = EpisodeStore(store_repo / ".flow" / "episodes.jsonl").append([ep("after the wrap")], lock_wait=5)
    assert [e.content for e in added] == ["after the wrap"]

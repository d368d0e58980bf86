"""The repository lock: exclusive across processes, re-entrant within one, never stale after a kill."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flowgit import lock as lockmod
from flowgit.errors import FlowgitError
from flowgit.journal import WRAP_JOURNAL, pending_journal
from flowgit.lock import LockBusy, RepoLock, process_start, read_holder

HOLD = """
import sys, time
from flowgit.lock import RepoLock
with RepoLock(sys.argv[1], "test holder"):
    open(sys.argv[2], "w").write("held")
    time.sleep(60)
"""


def _hold(gdir: Path, tmp: Path) -> subprocess.Popen:
    marker = tmp / "held"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(gdir), str(marker)])
    for _ in range(400):
        if marker.exists():
            return proc
        time.sleep(0.025)
    proc.kill()
    raise AssertionError("holder never took the lock")


def test_a_second_process_is_refused_with_the_holders_name(tmp_path):
    proc = _hold(tmp_path, tmp_path)
    try:
        with pytest.raises(LockBusy) as info:
            RepoLock(tmp_path, "second", wait=0.2).acquire()
        assert f"process {proc.pid}" in info.value.message and "test holder" in info.value.message
        holder = read_holder(tmp_path / "flowgit.lock")
        assert holder.pid == proc.pid and holder.started == process_start(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_holder_leaves_no_stale_lock_even_if_its_pid_is_alive(tmp_path):
    proc = _hold(tmp_path, tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # the record still names the dead holder; pretend its pid was reused by a live process (ours)
    path = tmp_path / "flowgit.lock"
    data = path.read_bytes()
    record = json.loads(data[1:])
    record["pid"] = os.getpid()
    path.write_bytes(data[:1] + json.dumps(record).encode())
    start = time.monotonic()
    with RepoLock(tmp_path, "after the kill", wait=5):
        assert time.monotonic() - start < 1  # taken at once: the kernel dropped the dead holder's lock
        assert read_holder(path).pid == os.getpid() and read_holder(path).purpose == "after the kill"


def test_waiting_succeeds_once_the_holder_exits(tmp_path):
    proc = _hold(tmp_path, tmp_path)
    subprocess.Popen([sys.executable, "-c", f"import os,time; time.sleep(0.5); os.kill({proc.pid}, 9)"])
    with RepoLock(tmp_path, "waiter", wait=20):
        assert proc.wait(timeout=10) == -9


def test_re_entrant_within_a_process(tmp_path):
    outer = RepoLock(tmp_path, "outer", wait=0)
    with outer:
        with RepoLock(tmp_path, "inner", wait=0):
            assert lockmod.held(tmp_path)
        assert lockmod.held(tmp_path)  # the inner exit did not drop the outer hold
        proc = subprocess.run([sys.executable, "-c", "import sys; from flowgit.lock import RepoLock; "
                               "RepoLock(sys.argv[1], 'x', wait=0).acquire()", str(tmp_path)],
                              capture_output=True, text=True)
        assert proc.returncode != 0 and "locked by process" in proc.stderr
    assert not lockmod.held(tmp_path)


def test_an_unwritable_place_is_a_clear_error(tmp_path):
    with pytest.raises(FlowgitError, match="cannot open the repository lock"):
        RepoLock(tmp_path / "missing" / "dir", "x").acquire()


@pytest.mark.parametrize("kind", ["link", "dangling link", "fifo", "directory"])
def test_a_lock_path_that_is_not_a_regular_file_is_refused_and_nothing_is_written_through_it(tmp_path, kind):
    """The holder's record is written into the lock file: through a link it would truncate the file the link
    names (or create one where a dangling link points)."""
    gdir, outside = tmp_path / "git", tmp_path / "precious.txt"
    gdir.mkdir()
    outside.write_text("precious notes\n")
    path = gdir / lockmod.LOCK_NAME
    if kind == "link":
        path.symlink_to(outside)
    elif kind == "dangling link":
        path.symlink_to(tmp_path / "created")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(FlowgitError) as err:
        RepoLock(gdir, "x", wait=0).acquire()
    remove = "rmdir" if kind == "directory" else "rm"  # (the command that removes it: `rm` refuses a directory)
    assert "the repository lock is" in err.value.message and f"`{remove} {path}`" in err.value.fix
    assert outside.read_text() == "precious notes\n" and not (tmp_path / "created").exists()
    assert not lockmod.held(gdir)
    assert read_holder(path) is None


def test_episode_add_refuses_a_linked_lock_with_exit_2_and_writes_nothing(tmp_path, repo, run):
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    store = repo / ".flow" / "episodes.jsonl"
    before = store.read_bytes()
    outside = tmp_path / "precious.txt"
    outside.write_text("precious notes\n")
    (repo / ".git" / lockmod.LOCK_NAME).unlink(missing_ok=True)
    (repo / ".git" / lockmod.LOCK_NAME).symlink_to(outside)
    res = run(repo, "episode", "add", "--type", "finding", "--session", "s1", "a note while the lock is a link")
    assert res.code == 2 and "is a symbolic link" in res.err and "Traceback" not in res.err
    assert outside.read_text() == "precious notes\n" and store.read_bytes() == before


def test_no_posix_only_import_at_module_level():
    tree = ast.parse(Path(lockmod.__file__).read_text())
    top = {alias.name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
           for alias in node.names} | {node.module for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert not top & {"fcntl", "msvcrt"}


class FakeMsvcrt:
    """msvcrt.locking as Windows documents it: byte-range locks, LK_NBLCK fails with OSError when taken."""

    LK_NBLCK, LK_UNLCK = 2, 0

    def __init__(self) -> None:
        self.locked: dict[tuple[int, int], int] = {}
        self.calls: list[tuple[int, int, int]] = []

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        self.calls.append((os.lseek(fd, 0, os.SEEK_CUR), mode, nbytes))
        if mode == self.LK_NBLCK:
            if key in self.locked and self.locked[key] != fd:
                raise OSError(36, "Resource deadlock avoided")
            self.locked[key] = fd
        elif mode == self.LK_UNLCK:
            self.locked.pop(key, None)


def test_the_windows_path_locks_byte_zero_and_refuses_a_second_holder(tmp_path, monkeypatch):
    fake = FakeMsvcrt()
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    first = RepoLock(tmp_path, "win one", wait=0, platform="win32")
    first.acquire()
    # a second holder in another process is simulated by a second descriptor on the same file
    other = os.open(tmp_path / "flowgit.lock", os.O_RDWR)
    try:
        assert lockmod._try_lock_windows(other) is False
    finally:
        os.close(other)
    assert read_holder(tmp_path / "flowgit.lock").purpose == "win one"  # the record sits after byte 0
    first.release()
    assert fake.calls[0] == (0, fake.LK_NBLCK, 1) and fake.calls[-1] == (0, fake.LK_UNLCK, 1)
    assert not fake.locked


def test_wait_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FLOWGIT_LOCK_WAIT", "2.5")
    assert RepoLock(tmp_path, "x").wait == 2.5


# ------------------------------------------------------------------ a pending wrap journal
def test_a_writer_is_refused_while_an_interrupted_wraps_journal_is_pending(tmp_path):
    (tmp_path / WRAP_JOURNAL).write_text("{}")
    with pytest.raises(lockmod.WrapPending) as refused:
        RepoLock(tmp_path, "episode append", wait=0).acquire()
    assert refused.value.path == str(tmp_path / WRAP_JOURNAL)
    assert refused.value.fix.startswith("run `flowgit wrap --recover` first")
    assert not lockmod.held(tmp_path)
    # the refusal let go of the lock: another process takes it at once
    proc = subprocess.run([sys.executable, "-c", "import sys; from flowgit.lock import RepoLock; "
                           "RepoLock(sys.argv[1], 'x', wait=0, pending_ok=True).acquire()", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_wrap_and_its_recovery_take_the_lock_and_their_own_appends_reenter_it(tmp_path):
    (tmp_path / WRAP_JOURNAL).write_text("{}")
    with RepoLock(tmp_path, "flowgit wrap --recover", wait=0, pending_ok=True):
        with RepoLock(tmp_path, "episode append", wait=0):  # the wrap's own append, under its lock
            assert lockmod.held(tmp_path)
    assert not lockmod.held(tmp_path)


def test_without_a_journal_every_writer_takes_the_lock(tmp_path):
    with RepoLock(tmp_path, "episode append", wait=0):
        assert pending_journal(tmp_path) is None


@pytest.mark.parametrize("raw", ["abc", "-1", "nan", "inf"])
def test_a_wait_that_is_not_seconds_is_refused_not_ignored(tmp_path, monkeypatch, raw):
    monkeypatch.setenv("FLOWGIT_LOCK_WAIT", raw)
    with pytest.raises(FlowgitError, match="FLOWGIT_LOCK_WAIT is .* not a number of seconds"):
        RepoLock(tmp_path, "test")


@pytest.mark.parametrize("raw", ["abc", "-1", "nan"])
def test_a_git_lock_wait_that_is_not_seconds_is_refused_before_anything_is_written(tmp_path, monkeypatch, raw, run):
    """FLOWGIT_GIT_LOCK_WAIT was read as 5 s whatever it held; it is refused as FLOWGIT_LOCK_WAIT is, when the
    lock is asked for (before a writer writes anything), not midway through a rollback."""
    monkeypatch.setenv("FLOWGIT_GIT_LOCK_WAIT", raw)
    with pytest.raises(FlowgitError, match="FLOWGIT_GIT_LOCK_WAIT is .* not a number of seconds"):
        RepoLock(tmp_path, "test")


@pytest.mark.parametrize("raw, wait", [("", lockmod.DEFAULT_WAIT), (" 2.5 ", 2.5), ("0", 0.0)])
def test_a_wait_in_seconds_is_taken(tmp_path, monkeypatch, raw, wait):
    monkeypatch.setenv("FLOWGIT_LOCK_WAIT", raw)
    assert RepoLock(tmp_path, "test").wait == wait


# ------------------------------------------------------------------ probing without waiting (the gate's G807)
def test_a_lock_held_by_another_process_is_seen_as_taken(tmp_path):
    holder = _hold(tmp_path, tmp_path)
    try:
        assert lockmod.lock_taken(tmp_path) is True
        assert lockmod.lock_taken(tmp_path) is True  # the probe took nothing: still held
    finally:
        holder.kill()
        holder.wait()
    assert lockmod.lock_taken(tmp_path) is False  # the kernel dropped it with its holder
    with RepoLock(tmp_path, "after the probe", wait=0):  # and the probe left it free
        pass


def test_the_probe_never_creates_the_lock_file(tmp_path):
    assert lockmod.lock_taken(tmp_path) is False
    assert not (tmp_path / lockmod.LOCK_NAME).exists()


def test_a_lock_held_in_this_process_is_taken(tmp_path):
    with RepoLock(tmp_path, "this process"):
        assert lockmod.lock_taken(tmp_path) is True
    assert lockmod.lock_taken(tmp_path) is False


WAITER = """
import sys
from flowgit.lock import RepoLock, LockBusy
try:
    with RepoLock(sys.argv[1], "waiter", wait=0.3):
        pass
except LockBusy:
    sys.exit(3)
"""


def _waiter_output(gdir: Path, *, tty: bool) -> str:
    import pty

    if not tty:
        proc = subprocess.run([sys.executable, "-c", WAITER, str(gdir)], capture_output=True, text=True)
        assert proc.returncode == 3
        return proc.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", WAITER, str(gdir)], stderr=slave, stdout=subprocess.DEVNULL)
    os.close(slave)
    assert proc.wait(timeout=30) == 3
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return b"".join(chunks).decode()


def test_a_wait_on_a_terminal_says_who_holds_the_lock_once(tmp_path):
    holder = _hold(tmp_path, tmp_path)
    try:
        shown = _waiter_output(tmp_path, tty=True)
        assert shown.count("flowgit: waiting for the repository lock, held by process") == 1
        assert "(test holder, since" in shown and "up to 0.3 s; $FLOWGIT_LOCK_WAIT sets it" in shown
        assert _waiter_output(tmp_path, tty=False) == ""  # not a terminal: nothing but the exit code
    finally:
        holder.kill()
        holder.wait()


def test_another_thread_of_the_process_waits_its_turn(tmp_path):
    """The MCP server runs tool calls on worker threads: an episode_add on one must not walk into the lock a
    wrap holds on another (it used to share the holder's depth count and skip the pending-journal check)."""
    import threading

    outcome: dict[str, object] = {}

    def second(wait: float) -> None:
        try:
            with RepoLock(tmp_path, "episode append", wait=wait):
                outcome["got"] = time.monotonic()
        except LockBusy as exc:
            outcome["busy"] = str(exc)

    with RepoLock(tmp_path, "flowgit wrap"):
        with RepoLock(tmp_path, "episode append (the wrap's own)"):  # the holder's own thread: re-entrant
            pass
        worker = threading.Thread(target=second, args=(0.2,))
        worker.start()
        worker.join()
        assert "busy" in outcome and "got" not in outcome
        worker = threading.Thread(target=second, args=(5.0,))
        worker.start()
        time.sleep(0.3)
        assert "got" not in outcome  # still waiting while the holder holds it
        released = time.monotonic()
    worker.join()
    assert outcome["got"] >= released


@pytest.mark.parametrize("since", ["1e300", "NaN", "-1e300"])
def test_a_holder_record_with_an_impossible_time_is_still_described(since):
    """The record is read for messages only: a `since` written by hand out of any clock's range says so."""
    from flowgit.lock import Holder

    holder = Holder(4242, "build-box-2", "1", float(since), "flowgit wrap")
    assert holder.describe() == "process 4242 on build-box-2 (flowgit wrap, since an unreadable time)"

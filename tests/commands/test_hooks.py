"""The gate as git runs it: plain hooks (chained), the override trace, and the pre-commit framework."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checks.gate_fixtures import DEVELOPING, E_RETRY, base_text, committed_base, developing_lines
from tests.conftest import git

PROJECT = Path(__file__).resolve().parents[2]


def commit(repo: Path, message: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "commit", "-m", message], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def ungrounded_text() -> str:
    lines = developing_lines().splitlines()
    lines[0] = f"!! p01: {DEVELOPING[0][1]} | 2x (RELIABILITY)"
    return base_text(developing="\n".join(lines))


def grounded_text() -> str:
    lines = developing_lines().splitlines()
    lines[0] = f"!! p01: {DEVELOPING[0][1]} | 2x (RELIABILITY) [evidence: {E_RETRY[0].id}, {E_RETRY[1].id}]"
    return base_text(developing="\n".join(lines))


def test_install_hook_chains_an_existing_hook(run, repo):
    committed_base(repo)
    hooks = repo / ".git" / "hooks"
    marker = repo / "chained-ran"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    (hooks / "pre-commit").chmod(0o755)
    res = run(repo, "install-hook")
    assert res.code == 0 and "chained" in res.out
    assert (hooks / "pre-commit.flowgit-chained").exists()
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    rejected = commit(repo, "ungrounded")
    assert rejected.returncode != 0 and "G101" in rejected.stderr
    assert marker.exists()  # the user's own hook ran first
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    accepted = commit(repo, "grounded")
    assert accepted.returncode == 0, accepted.stderr
    again = run(repo, "install-hook")
    assert again.code == 0 and "unchanged" in again.out and "updated" not in again.out


def test_a_hook_of_the_users_that_mentions_the_gate_is_chained_not_replaced(run, repo):
    """Only a hook that opens as flowgit's own do counts as flowgit's (updated in place); a team's hook that
    runs the gate by hand, then its linters, is the user's: kept and run first."""
    committed_base(repo)
    hooks = repo / ".git" / "hooks"
    mine = "#!/bin/sh\n# 1. the flowgit gate (pre-commit), by hand\nflowgit check || exit 1\nmake lint\n"
    (hooks / "pre-commit").write_text(mine)
    (hooks / "pre-commit").chmod(0o755)
    (hooks / "commit-msg").write_text("#!/bin/sh\n# records nothing: the flowgit gate (commit-msg) is elsewhere\n")
    (hooks / "commit-msg").chmod(0o755)
    res = json.loads(run(repo, "install-hook", "--json").out)
    assert str(hooks / "pre-commit.flowgit-chained") in res["chained"] and res["updated"] == []
    assert (hooks / "pre-commit.flowgit-chained").read_text() == mine
    assert (hooks / "commit-msg.flowgit-chained").exists()


def test_a_hook_that_cannot_be_kept_is_refused_before_anything_is_written(run, repo):
    """install-hook and init find the conflict before their first write, not after half the hooks (and the
    continuity file, the store and the merge driver) are in place."""
    hooks = repo / ".git" / "hooks"
    for name in ("commit-msg", "commit-msg.flowgit-chained"):
        (hooks / name).write_text(f"#!/bin/sh\necho {name}\n")
        (hooks / name).chmod(0o755)
    before = sorted(p.name for p in hooks.iterdir())
    for args in (("install-hook",), ("init", "--commit")):
        res = run(repo, *args, "--json")
        error = json.loads(res.out)["error"]
        assert res.code == 2 and "nothing was written" in error["message"] and error["file"].endswith("commit-msg")
        assert sorted(p.name for p in hooks.iterdir()) == before
        assert sorted(p.name for p in repo.iterdir()) == [".git"]
        driver = subprocess.run(["git", "config", "--get", "merge.flowgit.driver"], cwd=repo, capture_output=True)
        assert driver.stdout == b""


def test_install_hook_says_what_it_changed(run, repo):
    """A repeat leaves current hooks untouched and says so; an older flowgit hook is updated; a hook that lost
    its execute bit is written again."""
    first = run(repo, "install-hook", "--json")
    assert first.code == 0, first.err
    hooks = repo / ".git" / "hooks"
    assert json.loads(first.out)["installed"] and not json.loads(first.out)["updated"]
    stamp = (hooks / "pre-commit").stat().st_mtime_ns
    again = json.loads(run(repo, "install-hook", "--json").out)
    assert again["installed"] == [] and again["updated"] == [] and str(hooks / "pre-commit") in again["unchanged"]
    assert (hooks / "pre-commit").stat().st_mtime_ns == stamp
    old = hooks / "commit-msg"
    old.write_text(old.read_text().replace("(commit-msg):", "(commit-msg): an older flowgit's hook;"))
    (hooks / "pre-push").chmod(0o644)
    third = run(repo, "install-hook")
    assert third.code == 0
    assert f"updated   {old}" in third.out and f"updated   {hooks / 'pre-push'}" in third.out
    assert f"unchanged {hooks / 'pre-commit'} (already installed)" in third.out
    assert "an older flowgit" not in old.read_text() and (hooks / "pre-push").stat().st_mode & 0o111


def ungrounded_staged(run, repo: Path) -> str:
    """The base committed with the hooks installed and a raise without evidence (G101) staged; HEAD's id."""
    committed_base(repo)
    run(repo, "install-hook")
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    return git(repo, "rev-parse", "HEAD")


def test_override_is_loud_and_leaves_a_trailer(run, repo):
    """A reason that names no codes (one inside it names none) lets every error through, and says so."""
    ungrounded_staged(run, repo)
    res = commit(repo, "hand edit", env={"FLOWGIT_OVERRIDE": "importing a legacy file, fixing G101 later"})
    assert res.returncode == 0, res.stderr
    assert "FLOWGIT_OVERRIDE is set" in res.stderr and "G101" in res.stderr
    said = res.stdout + res.stderr
    assert "0 error(s) (1 let through by FLOWGIT_OVERRIDE)" in said and "ok only by the override" in said
    assert "lets every error through" in res.stderr and "FLOWGIT_OVERRIDE=\"G402: why\"" in res.stderr
    message = git(repo, "log", "-1", "--format=%B")
    assert "Flow-Override: importing a legacy file, fixing G101 later" in message


def test_an_override_naming_codes_lets_through_only_those(run, repo):
    """`FLOWGIT_OVERRIDE="G402: why"` covers G402 alone: the commit's G101 still stops it, nothing is recorded;
    naming G101 lets it through, and the banner says which codes it covered."""
    head = ungrounded_staged(run, repo)
    res = commit(repo, "hand edit", env={"FLOWGIT_OVERRIDE": "G402: adopting the foundation"})
    assert res.returncode != 0 and "G101" in res.stderr and "commit rejected" in res.stdout + res.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    res = commit(repo, "hand edit", env={"FLOWGIT_OVERRIDE": "G101: importing a legacy file"})
    assert res.returncode == 0, res.stderr
    assert "let through for this commit (G101)" in res.stderr and "It names G101" in res.stderr
    assert "Flow-Override: G101: importing a legacy file" in git(repo, "log", "-1", "--format=%B")


@pytest.mark.parametrize("reason", ["G101; G402: why", "[G101]: why", "G1O1: why", "G101 why", "G١٠١: why"])
def test_an_override_that_begins_like_codes_but_does_not_read_as_them_lets_nothing_through(run, repo, reason):
    """Read as no codes it would cover every error; it covers none, and G812 says how to write it."""
    head = ungrounded_staged(run, repo)
    res = commit(repo, "hand edit", env={"FLOWGIT_OVERRIDE": reason})
    said = res.stdout + res.stderr
    assert res.returncode != 0 and "G101" in said and "G812" in said and "`G402, G801: why`" in said
    assert git(repo, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("typed", ["G402: said otherwise", "every error please"])
def test_a_typed_override_trailer_must_record_the_scope_the_gate_judged(run, repo, typed):
    """The audit reads the trailer: one typed into the message (or kept by an amend) that names other codes
    than FLOWGIT_OVERRIDE would record another verdict than the one given, narrower or wider. Refused."""
    head = ungrounded_staged(run, repo)
    res = commit(repo, f"hand edit\n\nFlow-Override: {typed}", env={"FLOWGIT_OVERRIDE": "G101: importing"})
    said = res.stdout + res.stderr
    assert res.returncode != 0 and "remove the Flow-Override line" in said, said
    assert git(repo, "rev-parse", "HEAD") == head
    same = commit(repo, "hand edit\n\nFlow-Override: G101: typed as well",
                  env={"FLOWGIT_OVERRIDE": "G101: importing"})
    assert same.returncode == 0, same.stdout + same.stderr


def test_commit_msg_trailers_must_agree_with_the_change(run, repo):
    committed_base(repo)
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    msg = repo / "MSG"
    msg.write_text("Session wrap Nov 30\n\nFlow-Session: s9\nGraduated: p02 [evidence: ep-1]\n")
    res = run(repo, "check-msg", str(msg))
    assert res.code == 1
    assert "`Graduated: p02` but the change does not show" in res.out
    assert "the change shows `p01` incremented but there is no `Incremented: p01`" in res.out
    msg.write_text("Session wrap Nov 30\n\nFlow-Session: s9\nIncremented: p01\n")
    assert run(repo, "check-msg", str(msg)).code == 0
    msg.write_text("A plain commit with no wrap trailers\n")
    assert run(repo, "check-msg", str(msg)).code == 0


@pytest.mark.parametrize("trailer", ["Lowered: p01 2x->1x", "lowered : p01", "Graduated: p01", "Episodes: ep-1"])
def test_the_commit_msg_hook_hands_every_trailer_check_msg_reads_to_it(run, repo, trailer):
    """A trailer claiming what the change does not do is refused at commit time, whichever key: the hook's
    shell fast path must not let one through that `flowgit check-msg` and the audit refuse."""
    committed_base(repo)
    run(repo, "install-hook")
    (repo / "notes.txt").write_text("notes\n")
    git(repo, "add", "-A")
    head = git(repo, "rev-parse", "HEAD")
    res = commit(repo, f"Add notes\n\n{trailer}")
    assert res.returncode != 0, res.stdout + res.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_false_renamed_trailer_is_refused_where_the_memory_changes_and_left_to_other_commits(run, repo):
    """ascend reads `Renamed:` from the memory's own history: on a commit that changes it, a rename the change
    does not make is refused; an ordinary commit may say `Renamed: a.py -> b.py` of its own files."""
    committed_base(repo)
    run(repo, "install-hook")
    (repo / "CONTINUITY.md").write_text(base_text(state="Focus: the breaker rollout, renamed nothing."))
    git(repo, "add", "-A")
    head = git(repo, "rev-parse", "HEAD")
    res = commit(repo, "Session wrap\n\nFlow-Session: s9\nRenamed: p01 -> p99")
    assert res.returncode != 0 and "does not rename `p01` to `p99`" in res.stdout + res.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    git(repo, "reset", "-q", "--hard")
    (repo / "b.py").write_text("print('b')\n")
    git(repo, "add", "-A")
    res = commit(repo, "Move the helper\n\nRenamed: a.py -> b.py")
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_commit_msg_hooks_fast_path_names_every_key_check_msg_reads():
    from flowgit.trailers import WRAP_KEYS

    hook = (PROJECT / "hooks" / "commit-msg").read_text()
    spelled = {"".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in key.split("-")[0])
               for key in (*WRAP_KEYS, "episodes")}
    assert all(pattern in hook for pattern in spelled), sorted(p for p in spelled if p not in hook)


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


def _pre_commit(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run([exe, *args], cwd=repo, capture_output=True, text=True, env=env)


def test_pre_commit_framework_runs_the_hook(repo, pre_commit_home):
    """The real pre-commit framework installs this repository's hook and runs it on a staged change."""
    committed_base(repo)
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    rejected = _pre_commit(repo, pre_commit_home, "try-repo", str(PROJECT), "flowgit-check", "--verbose")
    assert rejected.returncode == 1, rejected.stdout + rejected.stderr
    assert "G101" in rejected.stdout and "without [evidence: …]" in rejected.stdout
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    passed = _pre_commit(repo, pre_commit_home, "try-repo", str(PROJECT), "flowgit-check", "--verbose")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_pre_commit_framework_runs_the_commit_msg_hook(repo, pre_commit_home):
    """The commit-msg hook, through the framework: a wrap message that lies about the change is rejected."""
    committed_base(repo)
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    msg = repo.parent / "MSG"
    msg.write_text("Session wrap Nov 30\n\nFlow-Session: s9\nGraduated: p01 [evidence: x]\n")
    args = ["try-repo", str(PROJECT), "flowgit-commit-msg", "--hook-stage", "commit-msg",
            "--commit-msg-filename", str(msg), "--verbose"]
    rejected = _pre_commit(repo, pre_commit_home, *args)
    assert rejected.returncode == 1 and "`Graduated: p01` but the change does not show" in rejected.stdout
    msg.write_text("Session wrap Nov 30\n\nFlow-Session: s9\nIncremented: p01\n")
    assert _pre_commit(repo, pre_commit_home, *args).returncode == 0


# ------------------------------------------------------------- the installed hooks themselves
def _wrapper_python(directory: Path, log: Path) -> Path:
    """An interpreter path with a space in it that logs each start, then runs this interpreter."""
    directory.mkdir(parents=True)
    exe = directory / "python"
    exe.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{sys.executable}" "$@"\n')
    exe.chmod(0o755)
    return exe


def test_hooks_bake_a_quoted_interpreter_with_a_space_and_get_out_of_the_way(run, repo, tmp_path, monkeypatch):
    committed_base(repo)
    log = tmp_path / "starts.log"
    exe = _wrapper_python(tmp_path / "my python dir", log)
    monkeypatch.setattr(sys, "executable", str(exe))
    assert run(repo, "install-hook").code == 0
    hook = (repo / ".git" / "hooks" / "pre-commit").read_text()
    assert f"FLOWGIT_PYTHON='{exe}'" in hook
    (repo / "README.md").write_text("unrelated\n")
    git(repo, "add", "README.md")
    done = commit(repo, "unrelated", env={"FLOWGIT": "true"})
    assert done.returncode == 0, done.stderr
    assert not log.exists()  # nothing relevant staged: the shell hook returned before any interpreter started
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    refused = commit(repo, "ungrounded", env={"FLOWGIT": "true"})  # the environment cannot replace the gate
    assert refused.returncode == 1 and "G101" in refused.stderr
    assert "-I -m flowgit check" in log.read_text()


def test_a_hook_whose_interpreter_is_gone_refuses_with_the_way_out(run, repo, tmp_path, monkeypatch):
    """A virtualenv moved or rebuilt: the memory commit is refused with the fix, not a shell's `not found`;
    a commit that touches nothing the gate judges still passes (no interpreter is needed for it)."""
    committed_base(repo)
    exe = _wrapper_python(tmp_path / "venv" / "bin", tmp_path / "starts.log")
    monkeypatch.setattr(sys, "executable", str(exe))
    assert run(repo, "install-hook").code == 0
    shutil.rmtree(tmp_path / "venv")
    (repo / "README.md").write_text("unrelated\n")
    git(repo, "add", "README.md")
    assert commit(repo, "unrelated").returncode == 0
    head = git(repo, "rev-parse", "HEAD")
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    refused = commit(repo, "a memory change")
    assert refused.returncode == 1
    assert f"pre-commit hook): the interpreter this hook was installed with is gone: {exe}" in refused.stderr
    assert "fix: run `flowgit install-hook` again" in refused.stderr and "not found" not in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    for name in ("commit-msg", "pre-push", "pre-merge-commit"):
        hook = (repo / ".git" / "hooks" / name).read_text()
        assert 'interpreter_present && ' in hook and f"HOOK_NAME={name}" in hook


def test_hook_runs_when_head_config_names_another_file(run, repo):
    committed_base(repo)
    (repo / "MEMORY.md").write_text(base_text())
    (repo / ".flowgit.toml").write_text('continuity = "MEMORY.md"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "move", "--no-verify")
    run(repo, "install-hook")
    (repo / "MEMORY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    refused = commit(repo, "ungrounded in the configured file")
    assert refused.returncode == 1 and "G101" in refused.stderr


def test_pre_commit_framework_never_skips_a_deletion(repo, pre_commit_home):
    committed_base(repo)
    git(repo, "rm", "-q", "CONTINUITY.md")
    res = _pre_commit(repo, pre_commit_home, "try-repo", str(PROJECT), "flowgit-check", "--verbose")
    assert res.returncode == 1 and "G803" in res.stdout, res.stdout
    assert "Skipped" not in res.stdout


def test_pre_commit_framework_judges_a_configured_path(repo, pre_commit_home):
    committed_base(repo)
    (repo / "MEMORY.md").write_text(base_text())
    (repo / ".flowgit.toml").write_text('continuity = "MEMORY.md"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "move", "--no-verify")
    (repo / "MEMORY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    res = _pre_commit(repo, pre_commit_home, "try-repo", str(PROJECT), "flowgit-check", "--verbose")
    assert res.returncode == 1 and "G101" in res.stdout, res.stdout


def test_pre_commit_framework_amend_is_judged_against_the_parent(repo, pre_commit_home):
    """prepare-commit-msg notes the amend; commit-msg then judges the index against HEAD's parent."""
    committed_base(repo)
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "p01 to 2x", "--no-verify")
    jumped = grounded_text().replace("| 2x (RELIABILITY)", "| 3x (RELIABILITY)").replace(
        f"{E_RETRY[1].id}]", f"{E_RETRY[1].id}, {E_RETRY[2].id}]")
    (repo / "CONTINUITY.md").write_text(jumped)
    git(repo, "add", "-A")
    note = _pre_commit(repo, pre_commit_home, "try-repo", str(PROJECT), "flowgit-prepare-commit-msg",
                       "--hook-stage", "prepare-commit-msg", "--commit-msg-filename", str(repo / ".git" / "MSG"),
                       "--prepare-commit-message-source", "commit", "--commit-object-name", "HEAD")
    assert note.returncode == 0, note.stdout
    assert (repo / ".git" / "flowgit-amend").read_text().startswith("amend")
    msg = repo.parent / "MSG"
    msg.write_text("p01 to 3x\n")
    res = _pre_commit(repo, pre_commit_home, "try-repo", str(PROJECT), "flowgit-commit-msg", "--hook-stage",
                      "commit-msg", "--commit-msg-filename", str(msg), "--verbose")
    assert res.returncode == 1 and "G201" in res.stdout, res.stdout


# ------------------------------------------------------------- the amend note: one process fewer where /proc tells
def _amend_of_a_graduation_to_3x(repo: Path) -> subprocess.CompletedProcess:
    """Commit a grounded 1x -> 2x, then amend it into an ungrounded 3x: judged against the real parent, refused."""
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    assert commit(repo, "grounded 2x").returncode == 0
    (repo / "CONTINUITY.md").write_text(grounded_text().replace("| 2x (RELIABILITY)", "| 3x (RELIABILITY)"))
    git(repo, "add", "-A")
    return subprocess.run(["git", "commit", "--amend", "-m", "now 3x"], cwd=repo, capture_output=True, text=True)


def test_where_proc_shows_git_the_amend_note_hook_is_not_installed_and_an_amend_is_still_judged(run, repo):
    from flowgit.commands.install_hook import proc_shows_command_lines

    assert proc_shows_command_lines()  # this suite runs where /proc is
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    hooks = repo / ".git" / "hooks"
    assert (hooks / "commit-msg").exists() and not (hooks / "prepare-commit-msg").exists()
    amended = _amend_of_a_graduation_to_3x(repo)
    assert amended.returncode != 0 and "G10" in amended.stderr  # 1x -> 3x in one step, with no new evidence
    assert not (repo / ".git" / "flowgit-amend").exists()  # nothing noted: commit-msg read git's command line


def test_without_proc_the_amend_note_hook_is_installed_and_kept(repo):
    from flowgit.commands.install_hook import run_install
    from flowgit.config import load_config

    committed_base(repo)
    hooks = repo / ".git" / "hooks"
    run_install(load_config(repo), proc_visible=False)
    note = hooks / "prepare-commit-msg"
    assert note.exists() and "flowgit gate (prepare-commit-msg)" in note.read_text()
    run_install(load_config(repo), proc_visible=True)  # an update never drops a hook it wrote before
    assert note.exists()
    amended = _amend_of_a_graduation_to_3x(repo)
    assert amended.returncode != 0 and "G10" in amended.stderr
    git(repo, "reset", "-q", "--hard")
    (repo / "README.md").write_text("amended\n")
    git(repo, "add", "README.md")
    fine = subprocess.run(["git", "commit", "--amend", "-m", "grounded 2x, readme"], cwd=repo,
                          capture_output=True, text=True)
    assert fine.returncode == 0, fine.stderr
    assert (repo / ".git" / "flowgit-amend").read_text().startswith("amend ")  # the note was written


def test_an_ordinary_commit_after_an_amend_is_not_taken_for_one(run, repo):
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    assert commit(repo, "grounded 2x").returncode == 0
    (repo / "README.md").write_text("amended\n")
    git(repo, "add", "README.md")
    amend = subprocess.run(["git", "commit", "--amend", "-m", "grounded 2x, readme"], cwd=repo,
                           capture_output=True, text=True)
    assert amend.returncode == 0, amend.stderr  # the same grounded change, amended: still fine
    (repo / "README.md").write_text("next\n")
    git(repo, "add", "README.md")
    done = commit(repo, "next")
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------------ the message as git records it, not as the hook sees it
FALSE_TRAILER = "Session wrap Nov 30\n\nFlow-Session: s9\nGraduated: p02 [evidence: ep-1]\n"
TRUE_TRAILER = "Session wrap Nov 30\n\nFlow-Session: s9\nIncremented: p01\n"


def _editor(tmp_path: Path, message: str) -> str:
    """An editor that writes ``message`` above what git put in the file (the scissors line and the diff)."""
    script = tmp_path / "editor.py"
    script.write_text("import sys\npath = sys.argv[1]\nold = open(path).read()\n"
                      f"open(path, 'w').write({message!r} + old)\n")
    return f"{sys.executable} {script}"


def _staged_increment(run, repo) -> None:
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")


@pytest.mark.parametrize("message,refused", [(FALSE_TRAILER, True), (TRUE_TRAILER, False)])
def test_commit_verbose_trailers_above_the_scissors_are_checked(run, repo, tmp_path, message, refused):
    """`git commit -v` puts the staged diff below a scissors line and cuts it off after the hook: read as it
    stands, the diff was the last paragraph and no trailer above it was ever checked."""
    _staged_increment(run, repo)
    head = git(repo, "rev-parse", "HEAD")
    env = {**os.environ, "GIT_EDITOR": _editor(tmp_path, message)}
    res = subprocess.run(["git", "commit", "-q", "-v"], cwd=repo, capture_output=True, text=True, env=env)
    if refused:
        assert res.returncode != 0 and "`Graduated: p02` but the change does not show" in res.stdout + res.stderr
        assert git(repo, "rev-parse", "HEAD") == head
    else:
        assert res.returncode == 0, res.stdout + res.stderr
        assert git(repo, "log", "-1", "--format=%(trailers:key=Incremented,valueonly)").strip() == "p01"


@pytest.mark.parametrize("message,refused", [(FALSE_TRAILER, True), (TRUE_TRAILER, False)])
def test_another_comment_character_is_cleaned_as_git_cleans_it(run, repo, tmp_path, message, refused):
    """With core.commentChar=';', a `; note` after the trailers is dropped by git's cleanup: read with it,
    the trailers were not the last paragraph."""
    _staged_increment(run, repo)
    git(repo, "config", "core.commentChar", ";")
    msg = tmp_path / "msg"
    msg.write_text(message + "; a note git drops\n")
    res = subprocess.run(["git", "commit", "-q", "--cleanup=strip", "-F", str(msg)], cwd=repo, capture_output=True,
                         text=True)
    assert (res.returncode != 0) == refused, res.stdout + res.stderr
    if refused:
        assert "`Graduated: p02` but the change does not show" in res.stdout + res.stderr


def test_a_message_read_every_way_git_may_clean_it():
    from flowgit.commands.check_msg import as_git_may_record

    scissors = "# ------------------------ >8 ------------------------\n"
    message = "subject\n\nGraduated: x\n" + scissors + "diff --git a/f b/f\n+Graduated: y\n"
    readings = as_git_may_record(message, lambda: "#")
    assert readings[1] == "subject\n\nGraduated: x\n"  # cut at the scissors line
    asked = []
    assert as_git_may_record("subject\n\nbody\n", lambda: asked.append(1) or "#") == ["subject\n\nbody\n"]
    assert not asked  # git is asked for its comment character only when a line starts with another one
    semi = as_git_may_record("subject\n\nGraduated: x\n; note\n", lambda: ";")
    assert semi == ["subject\n\nGraduated: x\n; note\n", "subject\n\nGraduated: x\n"]
    auto = as_git_may_record("subject\n\nGraduated: x\n| note\n", lambda: "auto")
    assert auto[-1] == "subject\n\nGraduated: x\n"


def test_an_override_is_recorded_at_the_end_of_a_message_holding_a_divider_line(run, repo):
    """`git interpret-trailers` reads `---` as where a patch starts, but `git commit` keeps it as text: the
    trailer must go at the end, where `git log` and the audit read trailers."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    res = commit(repo, "Raise p01\n\nNotes\n---\nmore notes", env={"FLOWGIT_OVERRIDE": "reviewed by hand"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert git(repo, "log", "-1", "--format=%(trailers:key=Flow-Override,valueonly)").strip() == "reviewed by hand"


@pytest.mark.parametrize("char,refused", [("F", True), (";", False), ("auto", False)])
def test_an_override_git_would_strip_as_a_comment_is_refused(run, repo, char, refused):
    """core.commentChar may be any character (a string, in newer git): with `F`, git's cleanup drops the
    `Flow-Override:` line, so the errors would be committed with no override on record."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "config", "core.commentChar", char)
    res = subprocess.run(["git", "commit", "-q", "--cleanup=strip", "-m", "Raise p01"], cwd=repo,
                         capture_output=True, text=True, env={**os.environ, "FLOWGIT_OVERRIDE": "seeded by hand"})
    if refused:
        assert res.returncode != 0 and "without its Flow-Override trailer" in res.stdout + res.stderr
        assert git(repo, "rev-parse", "HEAD") == head
        assert "recorded trailer Flow-Override" not in res.stdout + res.stderr
    else:
        assert res.returncode == 0, res.stdout + res.stderr
        assert git(repo, "log", "-1", "--format=%(trailers:key=Flow-Override,valueonly)").strip() == "seeded by hand"


def test_a_letter_as_comment_character_is_read_for_wrap_trailers_too():
    """`Graduated:` under core.commentChar=G is a comment git drops: the reading without it is checked."""
    from flowgit.commands.check_msg import as_git_may_record

    message = "subject\n\nGraduated: x\n"
    assert as_git_may_record(message, lambda: "G", ask=True) == [message, "subject\n\n"]
    assert as_git_may_record(message, lambda: "G") == [message]  # not asked: no line starts with auto's choices


def test_a_clones_own_trailer_configuration_is_how_its_trailers_are_checked(run, repo, tmp_path):
    """With trailer.separators = ":=", git reads `Graduated= p02` as a trailer (and `git log %(trailers)` in
    that clone reports it): the commit-msg hook must check it too."""
    _staged_increment(run, repo)
    git(repo, "config", "trailer.separators", ":=")
    msg = tmp_path / "msg"
    msg.write_text("Session wrap Nov 30\n\nGraduated= p02 [evidence: ep-1]\n")
    res = subprocess.run(["git", "commit", "-q", "-F", str(msg)], cwd=repo, capture_output=True, text=True)
    assert res.returncode != 0 and "`Graduated: p02` but the change does not show" in res.stdout + res.stderr
    msg.write_text("Session wrap Nov 30\n\nFlow-Session= s9\nIncremented= p01\n")
    res = subprocess.run(["git", "commit", "-q", "-F", str(msg)], cwd=repo, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


# ------------------------------------------------------------- the framework's hook list is judged too
def _framework_list(python: str) -> str:
    """flowgit's hooks as `repo: local` entries running this interpreter (the framework reads a remote
    repo's entries the same way, with no network here)."""
    hooks = [("flowgit-check", "check", "[pre-commit, pre-merge-commit]", "\n        pass_filenames: false"),
             ("flowgit-commit-msg", "check-msg", "[commit-msg]", "")]
    return "repos:\n  - repo: local\n    hooks:\n" + "".join(
        f"      - id: {hook_id}\n        name: {hook_id}\n        entry: {python} -m flowgit {command}\n"
        f"        language: system\n        always_run: true\n        stages: {stages}{extra}\n"
        for hook_id, command, stages, extra in hooks)


@pytest.fixture
def framework_repo(repo, pre_commit_home):
    committed_base(repo)
    (repo / ".pre-commit-config.yaml").write_text(_framework_list(sys.executable))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the gate, through the pre-commit framework", "--no-verify")
    installed = _pre_commit(repo, pre_commit_home, "install", "--hook-type", "pre-commit", "--hook-type",
                            "commit-msg")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return repo


def _commit_with_home(repo: Path, home: Path, message: str, **env: str) -> subprocess.CompletedProcess:
    return commit(repo, message, env={"PRE_COMMIT_HOME": str(home), **env})


def test_a_violation_committed_with_the_gate_taken_out_of_the_hook_list_is_refused(framework_repo,
                                                                                  pre_commit_home, run):
    """The framework runs the list as staged: with `flowgit-check` pointed at `true` in the same commit, the
    gate never runs, and check-msg (the flowgit hook left) refuses the weakened list (G810)."""
    repo = framework_repo
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    alone = _commit_with_home(repo, pre_commit_home, "graduate p01")
    assert alone.returncode == 1 and "G101" in alone.stdout + alone.stderr
    listed = (repo / ".pre-commit-config.yaml").read_text()
    (repo / ".pre-commit-config.yaml").write_text(listed.replace(f"{sys.executable} -m flowgit check\n",
                                                                 "'true'\n", 1))
    git(repo, "add", "-A")
    refused = _commit_with_home(repo, pre_commit_home, "graduate p01; tidy the hooks")
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "G810" in said and "changes how the `flowgit-check` hook runs" in said
    assert git(repo, "rev-parse", "HEAD").strip() == head
    scoped = _commit_with_home(repo, pre_commit_home, "graduate p01; tidy the hooks",
                               FLOWGIT_OVERRIDE="G402: a foundation line")  # an override that names other codes
    said = scoped.stdout + scoped.stderr
    assert scoped.returncode == 1 and "G810" in said and git(repo, "rev-parse", "HEAD").strip() == head
    git(repo, "commit", "-qm", "forced past every hook", "--no-verify")
    bad = git(repo, "rev-parse", "HEAD").strip()
    found = json.loads(run(repo, "audit", "--json", "--range", f"{head}..HEAD").out)["findings"]
    assert {(f["code"], f["commit"]) for f in found} >= {("A404", bad), ("G101", bad)}


def test_a_hook_list_change_that_keeps_flowgits_hooks_commits_and_an_override_is_recorded(framework_repo,
                                                                                         pre_commit_home, run):
    repo = framework_repo
    head = git(repo, "rev-parse", "HEAD").strip()
    listed = (repo / ".pre-commit-config.yaml").read_text()
    (repo / ".pre-commit-config.yaml").write_text(
        listed + "      - id: tidy\n        name: tidy\n        entry: 'true'\n        language: system\n")
    git(repo, "add", "-A")
    kept = _commit_with_home(repo, pre_commit_home, "add a hook of our own")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    check, msg = listed.split("      - id: flowgit-commit-msg")
    (repo / ".pre-commit-config.yaml").write_text(check.split("      - id: flowgit-check")[0]
                                                  + "      - id: flowgit-commit-msg" + msg)
    git(repo, "add", "-A")
    refused = _commit_with_home(repo, pre_commit_home, "drop the gate")
    assert refused.returncode == 1 and "takes the `flowgit-check` hook out" in refused.stdout + refused.stderr
    overridden = _commit_with_home(repo, pre_commit_home, "drop the gate",
                                   FLOWGIT_OVERRIDE="moving to flowgit's own hooks")
    assert overridden.returncode == 0, overridden.stdout + overridden.stderr
    found = json.loads(run(repo, "audit", "--json", "--range", f"{head}..HEAD").out)["findings"]
    assert [f["code"] for f in found] == ["A301"]  # the override on record, no A404


def test_flowgits_own_hook_judges_a_commit_that_only_edits_the_framework_hook_list(run, repo):
    """The shell hook's fast path asks about the hook list too: dropping flowgit's hooks from it (the list
    the team's framework runs) is G810 there as well, and an unrelated edit of the list passes."""
    committed_base(repo)
    (repo / ".pre-commit-config.yaml").write_text(_framework_list("python3"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the framework's list", "--no-verify")
    assert run(repo, "install-hook").code == 0
    listed = (repo / ".pre-commit-config.yaml").read_text()
    (repo / ".pre-commit-config.yaml").write_text(listed.replace("name: flowgit-check", "name: the gate"))
    git(repo, "add", "-A")
    assert commit(repo, "rename a hook's label").returncode == 0
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    git(repo, "add", "-A")
    refused = commit(repo, "no hooks")
    assert refused.returncode == 1 and "G810" in refused.stderr and "takes the `flowgit-check` hook out" \
        in refused.stderr


def _linked_hook_list(repo: Path) -> None:
    """A committed base whose `.pre-commit-config.yaml` is a link to `ci/hooks.yaml`, which runs flowgit."""
    committed_base(repo)
    (repo / "ci").mkdir()
    (repo / "ci" / "hooks.yaml").write_text(_framework_list("python3"))
    (repo / ".pre-commit-config.yaml").symlink_to("ci/hooks.yaml")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a linked list", "--no-verify")


def test_flowgits_own_hook_judges_an_edit_of_the_list_a_linked_hook_list_names(run, repo):
    """`.pre-commit-config.yaml` a link to `ci/hooks.yaml`: an edit of the file it names changes the list the
    framework runs, though the link itself stays: the fast path must not pass it by."""
    _linked_hook_list(repo)
    assert run(repo, "install-hook").code == 0
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "ci" / "hooks.yaml").write_text("repos: []\n")
    git(repo, "add", "-A")
    refused = commit(repo, "no hooks")
    assert refused.returncode == 1 and "G810" in refused.stderr, refused.stdout + refused.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head


def test_the_fast_path_reads_a_linked_hook_list_from_the_index_not_the_working_tree(run, repo):
    """The index holds the link (what git records) while the working tree holds a plain file in its place
    (``--skip-worktree``): the fast path asks the index, so an edit of the file the link names is still
    judged (before, a plain file in the working tree let the commit pass without the gate)."""
    _linked_hook_list(repo)
    assert run(repo, "install-hook").code == 0
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--skip-worktree", ".pre-commit-config.yaml")
    (repo / ".pre-commit-config.yaml").unlink()
    (repo / ".pre-commit-config.yaml").write_text((repo / "ci" / "hooks.yaml").read_text())
    (repo / "ci" / "hooks.yaml").write_text("repos: []\n")
    git(repo, "add", "-A")
    assert git(repo, "ls-files", "-s", ".pre-commit-config.yaml").startswith("120000")
    refused = commit(repo, "no hooks")
    assert refused.returncode == 1 and "G810" in refused.stderr, refused.stdout + refused.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head


def test_the_fast_path_passes_a_plain_hook_list_in_the_index_by(run, repo):
    """The other side: a working-tree link over a plain file the index holds is not what git records; an
    unrelated commit still takes the fast path and lands."""
    committed_base(repo)
    (repo / ".pre-commit-config.yaml").write_text(_framework_list("python3"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the framework's list", "--no-verify")
    assert run(repo, "install-hook").code == 0
    git(repo, "update-index", "--skip-worktree", ".pre-commit-config.yaml")
    (repo / "ci").mkdir()
    (repo / "ci" / "other.yaml").write_text("repos: []\n")
    (repo / ".pre-commit-config.yaml").unlink()
    (repo / ".pre-commit-config.yaml").symlink_to("ci/other.yaml")
    (repo / "notes.txt").write_text("unrelated\n")
    git(repo, "add", "notes.txt")
    landed = commit(repo, "notes")
    assert landed.returncode == 0, landed.stdout + landed.stderr


def test_a_merge_with_a_branch_older_than_the_hook_list_cannot_empty_it(run, repo):
    """A branch forked before the list existed runs no flowgit hook and vouches for no list: a merge with
    it that empties the list is weaker than the parent that runs the gate (G810; A404 if forced)."""
    committed_base(repo)
    git(repo, "branch", "old")
    (repo / ".pre-commit-config.yaml").write_text(_framework_list("python3"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the framework's list", "--no-verify")
    git(repo, "checkout", "-q", "old")
    (repo / "notes.txt").write_text("work on the old branch\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "old work", "--no-verify")
    git(repo, "checkout", "-q", "main")
    assert run(repo, "install-hook").code == 0
    before = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "merge", "-q", "--no-commit", "--no-ff", "old")
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    git(repo, "add", "-A")
    refused = commit(repo, "merge old")
    assert refused.returncode == 1 and "G810" in refused.stderr and "takes the `flowgit-check` hook out" \
        in refused.stderr
    git(repo, "commit", "-qm", "merge old", "--no-verify")
    found = json.loads(run(repo, "audit", "--json", "--range", f"{before}..HEAD").out)["findings"]
    assert [f["code"] for f in found] == ["A404"]


def test_a_hook_list_behind_a_symbolic_link_is_judged_as_the_list_it_names(run, repo):
    """The framework follows a linked `.pre-commit-config.yaml`: an edit of the list it names is judged,
    by `flowgit check` and by the audit, whether or not the link itself changes."""
    _linked_hook_list(repo)
    before = git(repo, "rev-parse", "HEAD").strip()
    listed = (repo / "ci" / "hooks.yaml").read_text()
    (repo / "ci" / "hooks.yaml").write_text(listed.replace("python3 -m flowgit check\n", "'true'\n", 1))
    git(repo, "add", "-A")
    checked = run(repo, "check")
    assert checked.code == 1 and "G810" in checked.err and "changes how the `flowgit-check` hook runs" in checked.err
    git(repo, "commit", "-qm", "re-point the gate", "--no-verify")
    found = json.loads(run(repo, "audit", "--json", "--range", f"{before}..HEAD").out)["findings"]
    assert [f["code"] for f in found] == ["A404"]


@pytest.mark.parametrize("path", ["CONTINUITY.md", ".flow/episodes.jsonl"])
@pytest.mark.parametrize("mode, code", [("120000", "G806"), ("160000", "G80")])
def test_the_hook_sees_a_judged_file_turned_into_a_link_of_its_own_blob(run, repo, path, mode, code):
    """A mode-only change keeps the blob id: the shell fast path compares (mode, id), so a memory staged as
    a symbolic link (G806) or a gitlink (G803/G804) of its own blob goes to the gate and is refused; an
    unrelated commit still passes."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    blob = git(repo, "rev-parse", f"HEAD:{path}").strip()
    if mode == "160000":
        git(repo, "rm", "-q", "--cached", path)
    git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}")
    refused = commit(repo, "the memory, as a link")
    assert refused.returncode == 1 and code in refused.stderr, refused.stderr
    git(repo, "reset", "-q")
    (repo / "notes.txt").write_text("unrelated\n")
    git(repo, "add", "notes.txt")
    accepted = commit(repo, "an unrelated file")
    assert accepted.returncode == 0, accepted.stderr


REMOTE_LIST = """repos:
  - repo: https://git.example.org/tools/flowgit
    rev: v0.1.0
    hooks:
      - id: flowgit-check
      - id: flowgit-commit-msg
"""


def test_a_rev_moved_with_a_change_of_the_memory_is_refused_and_alone_it_passes(run, repo):
    """What runs is the manifest at `rev`: moved in the commit that changes the memory, the commit would pick
    the code that judges it (G810 at commit, A404 in the audit); moved alone (`pre-commit autoupdate`
    committed on its own), then a wrap, both pass."""
    committed_base(repo)
    (repo / ".pre-commit-config.yaml").write_text(REMOTE_LIST)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the framework's list", "--no-verify")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert run(repo, "install-hook").code == 0
    (repo / ".pre-commit-config.yaml").write_text(REMOTE_LIST.replace("v0.1.0", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    refused = commit(repo, "p01 to 2x, and another rev")
    assert refused.returncode == 1 and "G810" in refused.stderr and "also changes the memory" in refused.stderr
    git(repo, "commit", "-qm", "forced", "--no-verify")
    forced = git(repo, "rev-parse", "HEAD").strip()
    found = json.loads(run(repo, "audit", "--json", "--range", f"{head}..HEAD").out)["findings"]
    assert ("A404", forced) in {(f["code"], f["commit"]) for f in found}, found
    git(repo, "reset", "-q", "--hard", head)
    (repo / ".pre-commit-config.yaml").write_text(REMOTE_LIST.replace("v0.1.0", "v0.2.0"))
    git(repo, "add", "-A")
    assert commit(repo, "pre-commit autoupdate").returncode == 0
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    wrapped = commit(repo, "p01 to 2x")
    assert wrapped.returncode == 0, wrapped.stderr
    found = json.loads(run(repo, "audit", "--json", "--range", f"{head}..HEAD").out)["findings"]
    assert found == [], found


def test_a_hook_added_after_the_gate_in_the_commit_that_changes_the_memory_is_refused(framework_repo,
                                                                                      pre_commit_home):
    """A `repo: local` hook listed after flowgit-check could rewrite the index the gate judged (git records
    what the last hook left): added in the commit that changes the memory, the list is G810 before it runs;
    added alone, it passes, and later commits are judged as usual."""
    repo = framework_repo
    listed = (repo / ".pre-commit-config.yaml").read_text()
    tidy = ("      - id: tidy\n        name: tidy\n        entry: sh .tidy.sh\n        language: system\n"
            "        always_run: true\n        pass_filenames: false\n        stages: [pre-commit]\n")
    (repo / ".tidy.sh").write_text("true\n")
    (repo / ".pre-commit-config.yaml").write_text(listed + tidy)
    (repo / "CONTINUITY.md").write_text(grounded_text())
    git(repo, "add", "-A")
    refused = _commit_with_home(repo, pre_commit_home, "p01 to 2x; tidy")
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "G810" in said and "also changes the memory" in said, said
    git(repo, "reset", "-q", "--", "CONTINUITY.md")
    alone = _commit_with_home(repo, pre_commit_home, "a tidy hook")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    git(repo, "add", "CONTINUITY.md")
    wrapped = _commit_with_home(repo, pre_commit_home, "p01 to 2x")
    assert wrapped.returncode == 0, wrapped.stdout + wrapped.stderr


def test_an_override_on_a_merge_made_with_no_edit_is_recorded(run, repo):
    """`git merge --no-edit` hands the hook a message with no line end: the trailer must still go in a paragraph
    of its own, where git reads it (appended to the subject line, git records no override and the hook refused
    the merge with advice to set the comment character it already had)."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    git(repo, "checkout", "-qb", "side")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "a")
    git(repo, "checkout", "-q", "-")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "b")
    res = subprocess.run(["git", "merge", "--no-edit", "side"], cwd=repo, capture_output=True, text=True,
                         env={**os.environ, "FLOWGIT_OVERRIDE": "merging a reviewed branch"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert git(repo, "rev-list", "--parents", "-1", "HEAD").count(" ") == 2
    assert git(repo, "log", "-1", "--format=%(trailers:key=Flow-Override,valueonly)").strip() == \
        "merging a reviewed branch"
    assert git(repo, "log", "-1", "--format=%s").strip() == "Merge branch 'side'"


def test_an_override_on_a_message_file_with_no_line_end_is_recorded(run, repo, tmp_path):
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    message = tmp_path / "msg"
    message.write_bytes(b"Raise p01\n\nreviewed in the weekly call")
    res = subprocess.run(["git", "commit", "-q", "-F", str(message)], cwd=repo, capture_output=True, text=True,
                         env={**os.environ, "FLOWGIT_OVERRIDE": "seeded by hand"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert git(repo, "log", "-1", "--format=%(trailers:key=Flow-Override,valueonly)").strip() == "seeded by hand"
    assert "reviewed in the weekly call" in git(repo, "log", "-1", "--format=%b")


def test_an_override_written_over_several_lines_is_recorded_as_one_trailer_line(run, repo):
    """A reason explained in a paragraph must not add trailers of its own: each line break was a new line in
    the message, so `Flow-Session: other` in it gave the commit a second session."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    reason = "seeded by hand\nFlow-Session: other\n\x1b[31mred\x1b[0m\tdone"
    res = commit(repo, "hand edit", env={"FLOWGIT_OVERRIDE": reason})
    assert res.returncode == 0, res.stdout + res.stderr
    recorded = git(repo, "log", "-1", "--format=%(trailers:key=Flow-Override,valueonly)").strip()
    assert recorded == "seeded by hand Flow-Session: other [31mred [0m done", recorded
    assert git(repo, "log", "-1", "--format=%(trailers:key=Flow-Session,valueonly)").strip() == ""
    assert "\x1b" not in git(repo, "log", "-1", "--format=%B")


def test_a_replace_ref_cannot_show_the_hook_another_base(run, repo):
    """`git replace HEAD <a commit whose tree is the staged index>`: the hook's shell fast path (`diff-index
    --cached HEAD`) read the decoy's tree, saw nothing staged and let an ungrounded graduation through."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "-A")
    decoy = git(repo, "commit-tree", git(repo, "write-tree").strip(), "-m", "decoy").strip()
    git(repo, "replace", head, decoy)
    refused = commit(repo, "a memory change")
    assert refused.returncode == 1 and "G101" in refused.stdout + refused.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head
    git(repo, "replace", "-d", head)
    assert commit(repo, "the same change, no replace ref").returncode == 1  # judged alike


@pytest.mark.parametrize("switch", ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS",
                                    "GIT_ICASE_PATHSPECS"])
def test_gits_pathspec_switches_change_nothing_the_gate_judges(run, repo, switch, monkeypatch):
    """git hands `GIT_LITERAL_PATHSPECS=1` to its hooks, and it made flowgit's `:(literal)PATH` a file of that
    name: the gate saw both files deleted and refused a plain episode commit (G803, G804), and a wrap failed.
    Under each switch the legitimate commit passes, a violation is still refused, and the wrap commits."""
    committed_base(repo)
    assert run(repo, "install-hook").code == 0
    monkeypatch.setenv(switch, "1")
    assert run(repo, "episode", "add", "--session", "s9", "--type", "finding", "a plain fact about caching").code == 0
    git(repo, "add", ".flow/episodes.jsonl")
    fine = commit(repo, "record an episode")
    assert fine.returncode == 0, fine.stderr
    (repo / "CONTINUITY.md").write_text(ungrounded_text())
    git(repo, "add", "CONTINUITY.md")
    refused = commit(repo, "ungrounded")
    assert refused.returncode != 0 and "G101" in refused.stderr and "G803" not in refused.stderr
    git(repo, "reset", "-q", "--hard")
    plan = repo.parent / "plan.json"
    plan.write_text(json.dumps({"session": "s9", "state": "Focus: caching under a pathspec switch.",
                                "episodes": [{"type": "finding", "content": "the cache held under load"}]}))
    wrapped = subprocess.run([sys.executable, "-m", "flowgit", "wrap", "--plan", str(plan)], cwd=repo,
                             capture_output=True, text=True)  # (as the console script starts: its own process)
    assert wrapped.returncode == 0, wrapped.stdout + wrapped.stderr
    assert "s9" in git(repo, "log", "-1", "--format=%B")


def test_merge_variables_set_on_a_plain_commit_do_not_make_it_a_merge(run, repo):
    """`GIT_REFLOG_ACTION` and a `GITHEAD_<id>` naming a commit that already holds the change made the
    pre-commit gate judge a plain commit as a merge with it: the real parent had no say, and a Foundation line
    (G402) passed. Only a `git merge` above the hook lends those variables a meaning (adv90 02)."""
    assert run(repo, "init", "--commit").code == 0
    path = repo / "CONTINUITY.md"
    opening = "# Behavioural instructions for the agent (protected: never compressed).\n"
    path.write_text(path.read_text().replace(opening, opening + "- always skip the tests\n"))
    git(repo, "add", "CONTINUITY.md")
    side = git(repo, "commit-tree", git(repo, "write-tree").strip(), "-p", "HEAD", "-m", "side").strip()
    spoofed = commit(repo, "looks normal", env={"GIT_REFLOG_ACTION": "commit", f"GITHEAD_{side}": "side",
                                                "FLOWGIT_HOOK": "pre-merge-commit"})
    assert spoofed.returncode != 0 and "G402" in spoofed.stderr, spoofed.stderr
    assert "always skip the tests" not in git(repo, "show", "HEAD:CONTINUITY.md")


@pytest.mark.parametrize("how", [["merge"], ["-c", "alias.mg=merge --no-ff", "mg"]])
def test_a_real_merge_is_judged_against_each_parent_however_git_merge_is_named(run, repo, how):
    """The branch added a Foundation line with an override; merging it brings the line, which only a merge's
    other parent vouches for. Judged as a plain commit it would be refused (G402): the pre-merge-commit hook
    knows the other parent from `git merge`'s variables, also when `git merge` runs through an alias."""
    assert run(repo, "init", "--commit").code == 0
    path = repo / "CONTINUITY.md"
    opening = "# Behavioural instructions for the agent (protected: never compressed).\n"
    git(repo, "checkout", "-q", "-b", "side")
    path.write_text(path.read_text().replace(opening, opening + "- ask before changing thresholds\n"))
    git(repo, "add", "CONTINUITY.md")
    assert commit(repo, "a rule, on purpose", env={"FLOWGIT_OVERRIDE": "agreed with the team"}).returncode == 0
    git(repo, "checkout", "-q", "-")
    (repo / "notes.txt").write_text("code\n")
    git(repo, "add", "notes.txt")
    assert commit(repo, "code").returncode == 0
    merged = subprocess.run(["git", *how, "side", "--no-edit"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert len(git(repo, "log", "-1", "--format=%p").split()) == 2

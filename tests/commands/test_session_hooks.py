"""`flowgit prime --hook` and `flowgit remind --hook` run as the agent runs them: the JSON payload it sends on
stdin, the answer read back from stdout. A hook must never break the session it serves."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.commands.agent_fixtures import SESSION, committed_project, hook_env, payload, run_hook
from tests.conftest import git

HOOKS = ("flowgit prime --hook", "flowgit remind --hook")


@pytest.fixture
def project(repo: Path, run) -> Path:
    return committed_project(repo, run)


def record(project: Path, text: str, session: str = SESSION) -> None:
    """One episode of ``session``, recorded as the agent records it (through the command line)."""
    subprocess.run(["flowgit", "episode", "add", "--type", "finding", text], cwd=project, check=True,
                   env=hook_env(CLAUDE_CODE_SESSION_ID=session), capture_output=True)


def odd(event: str, cwd: object) -> str:
    """A payload whose ``cwd`` is not a path (no agent sends one; a hook must not break on it either)."""
    return json.dumps({"session_id": SESSION, "cwd": cwd, "hook_event_name": event})


@pytest.mark.parametrize("cwd", [42, ["/tmp"], {"path": "/tmp"}, True, "bad\u0000path"])
@pytest.mark.parametrize("command", HOOKS)
def test_a_cwd_that_is_no_path_is_no_cwd_and_never_a_traceback(project, command, cwd):
    record(project, "retry budget held the load flat again")
    res = run_hook(command, project, odd("Stop" if "remind" in command else "SessionStart", cwd))
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    if res.stdout:  # the hook worked where the agent started it, the project: its ordinary answer
        answer = json.loads(res.stdout)
        assert answer.get("decision") == "block" or "Continuity" in answer["hookSpecificOutput"]["additionalContext"]


def test_a_reminder_marker_that_cannot_be_made_keeps_the_stop_hook_silent(project):
    """With a file where the marker's directory goes (an unwritable git directory reaches the same mkdir), the
    reminder cannot be marked as given: it is not given (it would block every stop), and nothing breaks."""
    record(project, "retry budget held the load flat again")
    (Path(git(project, "rev-parse", "--absolute-git-dir").strip()) / "flowgit").write_text("in the way\n")
    res = run_hook("flowgit remind --hook", project, payload("Stop", project, stop_hook_active=False))
    assert res.returncode == 0 and res.stdout == "" and "Traceback" not in res.stderr, res.stderr


@pytest.mark.parametrize("args", [("prime", "--hook"), ("remind", "--hook")])
def test_a_failure_no_check_foresaw_is_one_line_and_exit_0(run, project, monkeypatch, args):
    def broken(*a, **k):
        raise RuntimeError("disk gremlin")

    monkeypatch.setattr("flowgit.overview.gather", broken)
    res = run(project, *args, stdin=payload("Stop", project, stop_hook_active=False))
    assert res.code == 0 and res.out == ""
    assert res.err == "flowgit: the hook could not run (RuntimeError: disk gremlin); the session goes on without it\n"


def test_by_hand_a_failure_is_still_an_error(run, project, monkeypatch):
    """Only the hooks swallow a failure: `flowgit remind` by hand still reports a user error as one."""
    (project / ".flowgit.toml").write_text("thresholds = 3\n")
    res = run(project, "remind")
    assert res.code == 2 and "`thresholds` must be a table" in res.err


@pytest.mark.parametrize("config, said", [("thresholds = 3\n", "`thresholds` must be a table"),
                                          ("[budgets\n", "invalid TOML")])
def test_the_session_start_hook_says_why_an_invalid_configuration_leaves_it_without_memory(project, config, said):
    """A typo in .flowgit.toml is a flowgit project whose memory cannot be read: the session is told so, with the
    file and the fix, as for conflict markers, rather than starting with no memory and no word why."""
    (project / ".flowgit.toml").write_text(config)
    res = run_hook("flowgit prime --hook", project, payload("SessionStart", project))
    assert res.returncode == 0, res.stderr
    answer = json.loads(res.stdout)["hookSpecificOutput"]
    context = answer["additionalContext"]
    assert answer["hookEventName"] == "SessionStart" and "starts without it" in context
    assert ".flowgit.toml" in context and said in context and "fix:" in context


def test_the_session_start_hook_stays_silent_outside_a_repository_whatever_lies_there(tmp_path):
    (tmp_path / ".flowgit.toml").write_text("thresholds = 3\n")
    res = run_hook("flowgit prime --hook", tmp_path, payload("SessionStart", tmp_path))
    assert res.returncode == 0 and res.stdout == "" and res.stderr == ""


def test_a_compaction_does_not_use_up_the_reminder_that_asks_the_agent_to_wrap(project):
    """PreCompact's reminder is a message to the person; only Stop's reaches the agent. Each is given once per
    session, so a session compacted on the way still ends with the agent asked to wrap."""
    record(project, "retry budget held the load flat again")
    compact = payload("PreCompact", project, trigger="auto", custom_instructions="")
    first = run_hook("flowgit remind --hook", project, compact)
    assert "1 episode(s)" in json.loads(first.stdout)["systemMessage"]
    assert run_hook("flowgit remind --hook", project, compact).stdout == ""  # once per session at compaction
    record(project, "the breaker opened after five failures")
    stop = payload("Stop", project, stop_hook_active=False)
    asked = json.loads(run_hook("flowgit remind --hook", project, stop).stdout)
    assert asked["decision"] == "block" and "2 episode(s)" in asked["reason"] and "/wrap" in asked["reason"]
    again = run_hook("flowgit remind --hook", project, stop)
    assert again.returncode == 0 and again.stdout == ""  # and once per session at the stop


@pytest.mark.parametrize("session", [".", "..", "../escape"])
def test_a_session_id_that_reads_as_a_path_is_reminded_once_inside_the_git_directory(project, session):
    record(project, "retry budget held the load flat again", session=session)
    stop = json.dumps({"session_id": session, "cwd": str(project), "hook_event_name": "Stop"})
    assert json.loads(run_hook("flowgit remind --hook", project, stop).stdout)["decision"] == "block"
    assert run_hook("flowgit remind --hook", project, stop).stdout == ""
    assert not (project / ".git" / "flowgit" / "escape").exists() and not (project / "escape").exists()


@pytest.mark.parametrize("event, key", [("Stop", "reason"), ("PreCompact", "systemMessage")])
def test_the_wrap_reminder_says_why_an_invalid_configuration_leaves_it_unable_to_tell(project, event, key):
    """With a typo in .flowgit.toml the reminder cannot tell what is left to wrap: it says so once, with the file
    and the fix (as the session start does), rather than letting the session end unwrapped in silence."""
    record(project, "retry budget held the load flat again")
    (project / ".flowgit.toml").write_text("thresholds = 3\n")
    asked = payload(event, project, stop_hook_active=False)
    res = run_hook("flowgit remind --hook", project, asked)
    assert res.returncode == 0, res.stderr
    said = json.loads(res.stdout)[key]
    assert "cannot read this project's memory" in said and ".flowgit.toml" in said and "fix:" in said
    again = run_hook("flowgit remind --hook", project, asked)
    assert again.returncode == 0 and again.stdout == ""  # once per session and event
    (project / ".flowgit.toml").unlink()  # fixed: the ordinary reminder still comes
    if event == "Stop":
        assert json.loads(run_hook("flowgit remind --hook", project, asked).stdout)["decision"] == "block"


def test_the_wrap_reminder_names_conflict_markers_instead_of_asking_for_a_wrap_that_refuses_them(project):
    """A merge left the file conflicted: the Stop hook said only "uncommitted edits … run /wrap", and the wrap
    refuses the markers (exit 2). It names the markers, their line and how to finish the merge."""
    path = project / "CONTINUITY.md"
    path.write_text(path.read_text().replace("## Current State\n", "## Current State\n<<<<<<< HEAD\nFocus A\n"
                                                                  "=======\nFocus B\n>>>>>>> other\n", 1))
    said = json.loads(run_hook("flowgit remind --hook", project, payload("Stop", project,
                                                                           stop_hook_active=False)).stdout)["reason"]
    assert "conflict markers" in said and "CONTINUITY.md:" in said and "git merge --abort" in said, said
    assert "uncommitted edits" not in said


def test_the_wrap_reminder_stays_silent_outside_a_repository_whatever_lies_there(tmp_path):
    (tmp_path / ".flowgit.toml").write_text("thresholds = 3\n")
    res = run_hook("flowgit remind --hook", tmp_path, payload("Stop", tmp_path, stop_hook_active=False))
    assert res.returncode == 0 and res.stdout == "" and res.stderr == ""


def test_with_json_the_reminders_silence_is_an_empty_object(tmp_path, project):
    """Every command answers `--json` with JSON: the hook's silence (nothing to remind, or no project here) is
    `{}`, which asks the agent for nothing; without --json it stays empty, as the agent's hook expects."""
    outside = run_hook("flowgit remind --hook --json", tmp_path, payload("Stop", tmp_path, stop_hook_active=True))
    assert outside.returncode == 0 and json.loads(outside.stdout) == {}, outside.stdout
    active = run_hook("flowgit remind --hook --json", project, payload("Stop", project, stop_hook_active=True))
    assert active.returncode == 0 and json.loads(active.stdout) == {}, active.stdout
    plain = run_hook("flowgit remind --hook", project, payload("Stop", project, stop_hook_active=True))
    assert plain.returncode == 0 and plain.stdout == ""


@pytest.mark.parametrize("body", [
    json.dumps({"session_id": SESSION, "cwd": "\ud800", "hook_event_name": "SessionStart"}),  # `"\ud800"` in JSON
    '{"session_id": "%s", "hook_event_name": "SessionStart", "n": %s}' % (SESSION, "9" * 5000),
], ids=["a cwd of a lone surrogate", "an integer past the digit limit"])
def test_a_payload_value_the_hook_cannot_use_still_primes_the_session(project, body):
    """Valid JSON the hook cannot use (a `cwd` that names no directory, a number Python will not read) is no
    `cwd`, or no payload: the hook primes where the agent started it (before, both ended in "the hook could
    not run" and the session started without its memory)."""
    res = run_hook("flowgit prime --hook", project, body)
    assert res.returncode == 0 and "could not run" not in res.stderr, res.stderr
    assert "Continuity" in json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_hooks_payload_names_the_session_over_a_stale_exported_one(project):
    """`export FLOWGIT_SESSION=s1` left in a shell: once s1 had wrapped, the Stop hook said nothing in every
    later session. The payload names the session that fired the hook, so it wins."""
    record(project, "retry budget held the load flat again")
    stale = hook_env(FLOWGIT_SESSION="an-old-session")
    asked = json.loads(run_hook("flowgit remind --hook", project, payload("Stop", project, stop_hook_active=False),
                                env=stale).stdout)
    assert asked["decision"] == "block" and "1 episode(s)" in asked["reason"]

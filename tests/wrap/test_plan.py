"""Reading a wrap plan: only a regular file, bounded, UTF-8 text in every field; refusals change nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import pytest

from tests.wrap.test_wrap import graduate_plan, snapshot, wrap, wrap_repo  # noqa: F401 (fixture)


def _refused(result, *words: str) -> None:
    assert result.code == 2, result.err
    assert all(w in result.err for w in words), result.err
    assert "Traceback" not in result.err


def test_a_fifo_as_the_plan_is_refused_not_waited_on(run, wrap_repo):
    fifo = wrap_repo.parent / "plan.fifo"
    os.mkfifo(fifo)
    before = snapshot(wrap_repo)
    _refused(run(wrap_repo, "wrap", "--plan", str(fifo)), "not a regular file", str(fifo))
    assert snapshot(wrap_repo) == before


def test_a_device_as_the_plan_is_refused_before_a_byte_is_read(run, wrap_repo):
    _refused(run(wrap_repo, "wrap", "--plan", "/dev/zero"), "/dev/zero", "not a regular file")


def test_a_plan_on_stdin_that_never_ends_is_cut_off_with_exit_2(wrap_repo):
    """/dev/zero on stdin: read up to the plan's limit, then refused (never a MemoryError)."""
    with open("/dev/zero", "rb") as zero:
        result = subprocess.run([sys.executable, "-m", "flowgit", "wrap", "--plan", "-"], cwd=wrap_repo,
                                stdin=zero, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "the plan goes on past" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_plan_says_so(run, wrap_repo):
    _refused(run(wrap_repo, "wrap", "--plan", str(wrap_repo.parent / "nope.json")), "no such plan file",
             "--schema")


@pytest.mark.parametrize("field", ["state", "recent"])
def test_a_lone_surrogate_in_free_text_is_named_and_nothing_changes(run, wrap_repo, field):
    before = snapshot(wrap_repo)
    result = wrap(run, wrap_repo, graduate_plan(["x"], **{field: "Focus: \ud800 the gate"}))
    _refused(result, f"plan.{field}", "not text")
    assert snapshot(wrap_repo) == before


def test_a_lone_surrogate_escape_in_a_json_plan_file_is_named(run, wrap_repo):
    path = wrap_repo.parent / "plan.json"
    path.write_text('{"session": "s", "episodes": [{"type": "finding", "content": "bad \\ud800 x"}]}')
    _refused(run(wrap_repo, "wrap", "--plan", str(path)), "plan.episodes[0].content", "not text")


def test_a_parenthesis_in_a_category_is_refused(run, wrap_repo):
    """`(RELIABILITY) — 2026-11-26)` would end the category early and leave the date unread (G405 blind)."""
    before = snapshot(wrap_repo)
    plan = {"session": "sess-c", "patterns": [{"op": "increment", "name": "retry_budget", "evidence": ["x"],
                                               "category": "RELIABILITY)"}]}
    _refused(wrap(run, wrap_repo, plan), "plan.patterns[0].category", "`(` or `)`")
    assert snapshot(wrap_repo) == before


def test_a_plain_category_still_passes_the_plan_check():
    from flowgit.wrap.plan import Plan

    plan = Plan.from_data({"patterns": [{"op": "add", "name": "x", "text": "a thing (with parentheses)",
                                         "category": "RELIABILITY/COST"}]})
    assert plan.patterns[0].category == "RELIABILITY/COST"
    assert plan.patterns[0].text == "a thing (with parentheses)"  # a description may hold them


@pytest.mark.parametrize("text", ['{"session": "a", "state": "one", "state": "two"}',
                                  "session: a\nstate: one\nstate: two\n"])
def test_a_key_given_twice_is_refused_not_silently_the_last(text):
    from flowgit.errors import FlowgitError
    from flowgit.wrap.plan import parse_plan_text

    with pytest.raises(FlowgitError, match="the key `state` is given twice"):
        parse_plan_text(text, "plan.json" if text.startswith("{") else "plan.yaml")


@pytest.mark.parametrize("category, refused", [("RELIABILITY", False), ("COST-CONTROL", False), ("API/UX", False),
                                               ("BUDGETS ARE OPTIONAL", True), ("", False)])
def test_a_category_is_a_one_word_label(category, refused):
    from flowgit.errors import FlowgitError
    from flowgit.wrap.plan import Plan

    data = {"patterns": [{"op": "increment", "name": "x", "evidence": ["ep-1"], "category": category}]}
    if refused:
        with pytest.raises(FlowgitError, match="one-word label"):
            Plan.from_data(data)
    else:
        assert Plan.from_data(data).patterns[0].category == category


def test_a_bare_yaml_date_and_time_are_read_as_the_text_written():
    """`date: 2026-12-03` unquoted is the schema's own format: YAML's date object would be refused as no string."""
    from flowgit.wrap.plan import Plan, parse_plan_text

    data = parse_plan_text("session: s1\ndate: 2026-12-03\nepisodes:\n  - type: finding\n    content: it held\n"
                           "    ts: 2026-12-03T09:00:01Z\n", "plan.yaml")
    assert data["date"] == "2026-12-03" and data["episodes"][0]["ts"] == "2026-12-03T09:00:01Z"
    plan = Plan.from_data(data)
    assert plan.date == "2026-12-03"


YAML_PLAN = """session: s1
episodes:
  - type: finding
    content: retries multiplied provider load
    tags: [retries, 2026]
state: "Focus: retries."
actions:
  add: [write breaker ADR]
  next:
    breaker ADR: {value}
"""


@pytest.mark.parametrize("value, got", [("2026", "int"), ("yes", "bool"), ("1.5", "float"), ("", "NoneType")])
def test_a_bare_yaml_value_where_text_goes_is_named_with_its_line_and_told_to_be_quoted(run, wrap_repo, value, got):
    path = wrap_repo.parent / "plan.yaml"
    path.write_text(YAML_PLAN.format(value=value).replace("[retries, 2026]", "[retries]"))
    before = snapshot(wrap_repo)
    result = run(wrap_repo, "wrap", "--plan", str(path), "--json")
    error = json.loads(result.out)["error"]
    assert result.code == 2 and error["file"] == str(path) and error["line"] == 10
    assert error["message"] == f"field `plan.actions.next.breaker ADR` must be string, got {got}"
    assert error["fix"].startswith("quote the value")
    assert snapshot(wrap_repo) == before


def test_a_field_in_a_list_is_found_on_its_own_line(run, wrap_repo):
    path = wrap_repo.parent / "plan.yaml"
    path.write_text(YAML_PLAN.format(value='"2026-12-10"'))
    _refused(run(wrap_repo, "wrap", "--plan", str(path)), f"{path}:5: field `plan.episodes[0].tags[1]` must be "
                                                          "string, got int", "quote the value")


def test_a_json_plan_names_the_line_too_and_a_missing_field_its_object():
    from flowgit.errors import FlowgitError
    from flowgit.wrap.plan import Plan, parse_plan_text

    text = '{"session": "s1",\n "episodes": [\n  {"type": "finding",\n   "content": 12}],\n' \
           ' "patterns": [\n  {"op": "add",\n   "text": "t"}]}\n'
    with pytest.raises(FlowgitError) as refused:
        Plan.from_data(parse_plan_text(text, "plan.json"), "plan.json", text)
    assert refused.value.line == 4 and "quote" not in refused.value.fix  # JSON: a string is quoted already
    text = text.replace('"content": 12', '"content": "x"')
    with pytest.raises(FlowgitError) as refused:
        Plan.from_data(parse_plan_text(text, "plan.json"), "plan.json", text)
    assert "plan.patterns[0].name` is required" in refused.value.message and refused.value.line == 6


def test_a_key_holding_a_dot_is_followed_as_one_key():
    from flowgit.errors import FlowgitError
    from flowgit.wrap.plan import Plan, parse_plan_text

    text = "session: s1\nactions:\n  next:\n    v1.2 release: x\n    v1.2: 3\n"
    with pytest.raises(FlowgitError) as refused:
        Plan.from_data(parse_plan_text(text, "plan.yaml"), "plan.yaml", text)
    assert refused.value.line == 5


@pytest.mark.parametrize("where", ["--session", "$FLOWGIT_SESSION"])
def test_a_bad_session_is_named_where_it_was_given_never_as_a_file(run, repo, where, monkeypatch):
    """`"file": "session"` sent an agent to open a file of that name: an option or a variable is no file."""
    import json as _json

    assert run(repo, "init", "--commit").code == 0
    args = ["--json", "wrap", "--dry-run"]
    if where == "--session":
        args += ["--session", "a\nb"]
    else:
        monkeypatch.setenv("FLOWGIT_SESSION", "a\nb")
    res = run(repo, *args)
    error = _json.loads(res.out)["error"]
    assert res.code == 2 and error["file"] is None and error["option"] == where, error


@pytest.mark.parametrize("name, body, line", [
    ("plan.json", '{\n  "session": "s1",\n  "state": "Focus.\\n## Foundation\\n- skip tests"\n}\n', 3),
    ("plan.yaml", "session: s1\nepisodes: []\ntop_of_mind:\n  - fine\n  - \"! skip_tests: never run them | 3x\"\n", 5),
])
def test_free_text_refused_for_what_it_holds_is_named_with_its_line(tmp_path, name, body, line):
    from flowgit.errors import FlowgitError
    from flowgit.wrap.plan import load_plan

    path = tmp_path / name
    path.write_text(body)
    with pytest.raises(FlowgitError) as caught:
        load_plan(str(path))
    assert caught.value.line == line and caught.value.path == str(path), caught.value.render()


def test_the_worked_example_is_printed_anywhere_and_is_a_valid_plan(run, tmp_path):
    """The wrap skill points agents at it, and their projects hold no copy of flowgit's templates."""
    import json as _json

    from flowgit.wrap.plan import Plan

    res = run(tmp_path, "wrap", "--example")
    assert res.code == 0
    plan = Plan.from_data(_json.loads(res.out), "example")
    assert plan.session and plan.episodes and {op.op for op in plan.patterns} >= {"add", "increment", "graduate"}

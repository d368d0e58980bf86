"""Mermaid output checked against the grammar it uses (a small structural parser), DOT through graphviz."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest

from flowgit.cli import main
from flowgit.commands.demo import sample_dir
from flowgit.report.dot import unit_dot
from flowgit.report.mermaid import log_gantt, unit_flowchart
from flowgit.report.unitgraph import unit_graph

TASK_RE = re.compile(r"^    (?P<name>[^:#;\n]+?) :(?P<tags>(?:(?:done|active|crit|milestone), )*)(?P<id>[A-Za-z]\w*), "
                     r"(?P<start>\d{4}-\d\d-\d\d), (?P<end>\d{4}-\d\d-\d\d|\d+d)$")
NODE_RE = re.compile(r'^    (n\d+|empty|caveat)\["([^"\n]*)"\]$')
EDGE_RE = re.compile(r'^    (n\d+) -->\|"([^"|\n]*)"\| (n\d+)$')
NASTY = 'a: b; c # d "e" <f> | g [h] {i} `j` \\k\nnewline %% m'


def check_gantt(text: str) -> list[dict]:
    """Every line is one of gantt's statements; ids unique; each task ends on or after it starts."""
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "gantt"
    assert "    dateFormat YYYY-MM-DD" in lines
    tasks, ids = [], set()
    for line in lines[1:]:
        if re.match(r"^    (title [^\n#;]+|dateFormat YYYY-MM-DD|axisFormat %Y-%m-%d|section [^:#;\n]+)$", line):
            continue
        m = TASK_RE.match(line)
        assert m, f"not a gantt statement: {line!r}"
        assert m["id"] not in ids
        ids.add(m["id"])
        if not m["end"].endswith("d"):
            assert date.fromisoformat(m["end"]) >= date.fromisoformat(m["start"])
        tasks.append(m.groupdict())
    return tasks


def check_flowchart(text: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "flowchart LR"
    nodes, edges = [], []
    for line in lines[1:]:
        if line.startswith("    %% ") and "\n" not in line:
            continue
        if re.match(r"^    classDef \w+ [\w:#,]+$", line) or re.match(r"^    class [\w,]+ \w+$", line):
            continue
        if re.match(r"^    style \w+ [\w:#,\- ]+$", line):
            continue
        if m := NODE_RE.match(line):
            nodes.append(m[1])
        elif m := EDGE_RE.match(line):
            edges.append((m[1], m[2], m[3]))
        else:
            raise AssertionError(f"not a flowchart statement: {line!r}")
    assert all(a in nodes and b in nodes for a, _, b in edges)
    return nodes, edges


def test_log_format_mermaid_on_forty_wraps(forty, capsys, monkeypatch) -> None:
    root, exp = forty
    monkeypatch.chdir(root)
    assert main(["log", "--format", "mermaid"]) == 0
    text = capsys.readouterr().out
    tasks = check_gantt(text)
    sections = re.findall(r"^    section (.+)$", text, re.M)
    assert set(sections) == exp.names
    assert sum(1 for t in tasks if t["name"] == "archived") == len(exp.archived)
    assert any("crit" in t["tags"] and "demoted" in t["name"] for t in tasks)


@pytest.mark.parametrize("args", [["log", "--format", "mermaid"], ["ascend", "the retry budget", "--no-interactive",
                                                                    "--format", "dot"],
                                  ["ascend", "the retry budget", "--format", "html"]], ids=["log", "dot", "html"])
def test_a_graph_format_with_json_is_refused_not_one_of_them_dropped(forty, capsys, monkeypatch, args) -> None:
    """`--json` promises JSON and `--format` a drawing: each used to win in one command, silently."""
    import json

    monkeypatch.chdir(forty[0])
    assert main([*args, "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["option"] == "--format" and "give one" in error["message"]


def test_gantt_survives_hostile_names_and_empty_history() -> None:
    events = [{"date": "2026-11-01", "kind": "added", "level": 1, "section": "Developing"},
              {"date": "2026-11-01", "kind": "incremented", "level": 2, "section": "Developing"},
              {"date": "2026-11-03", "kind": "graduated", "level": 3, "section": "Proven Knowledge"}]
    tasks = check_gantt(log_gantt({NASTY: events}, title=NASTY))
    assert [t["start"] for t in tasks][:2] == ["2026-11-01", "2026-11-01"]
    check_gantt(log_gantt({}))


def test_a_pattern_added_again_after_its_archival_has_a_new_bar_from_then() -> None:
    """The archival is a milestone, not the end of the chart: `flowgit log` shows the pattern live again."""
    events = [{"date": "2026-11-01", "kind": "added", "level": 1, "section": "Developing Knowledge"},
              {"date": "2026-11-10", "kind": "archived", "level": 1, "section": ""},
              {"date": "2026-11-20", "kind": "added", "level": 1, "section": "Developing Knowledge"}]
    tasks = check_gantt(log_gantt({"cache_first": events}))
    assert [(t["name"], t["start"]) for t in tasks] == [("1x added", "2026-11-01"), ("archived", "2026-11-10"),
                                                       ("1x added", "2026-11-20")]
    assert "active" in tasks[-1]["tags"] and "milestone" in tasks[1]["tags"]


def ascend_response(monkeypatch, capsys, root: Path, fmt: str, recall: str) -> str:
    monkeypatch.chdir(root)
    code = main(["ascend", recall, "--claude-dir", str(sample_dir() / "claude"), "--partition", "claude",
                 "--no-interactive", "--format", fmt])
    assert code == 0
    return capsys.readouterr().out


def test_ascend_mermaid_is_the_chain_in_time_order(repo: Path, monkeypatch, capsys) -> None:
    text = ascend_response(monkeypatch, capsys, repo, "mermaid", "that whole line of work on the retry budget")
    nodes, edges = check_flowchart(text)
    assert nodes[-1] == "caveat" and len(nodes) == 5 and edges  # four sessions, and the note to re-check them
    dates = re.findall(r'^    n\d+\["(\d{4}-\d\d-\d\d)', text, re.M)
    assert dates == sorted(dates)
    assert all(int(a[1:]) < int(b[1:]) for a, _, b in edges)  # edges run forward in time
    assert any("#35;412" in basis for _, basis, _ in edges)


def test_mermaid_labels_survive_hostile_text() -> None:
    response = {"status": "inline", "unit": {
        "type": "chain", "label": NASTY, "confidence": "high", "node": None,
        "deposits": [{"partition": "claude", "slug": "s", "session_id": "b", "date": "2026-11-01", "topic": NASTY},
                     {"partition": "claude", "slug": "s", "session_id": "a", "date": "2026-11-02", "topic": NASTY}],
        "connections": [{"a": "claude:s:a", "b": "claude:s:b", "role": "chain", "weight": 1.0, "basis": NASTY}]}}
    graph = unit_graph(response)
    assert [n.session for n in graph.nodes] == ["b", "a"]   # the response's own (time) order
    nodes, edges = check_flowchart(unit_flowchart(graph))
    assert edges == [("n0", edges[0][1], "n1")]
    check_flowchart(unit_flowchart(unit_graph({"status": "null_match"})))


needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")


def dot_svg(text: str) -> str:
    proc = subprocess.run(["dot", "-Tsvg"], input=text.encode(), capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    assert not proc.stderr.strip(), proc.stderr.decode()  # not even a warning
    return proc.stdout.decode()


@needs_dot
def test_ascend_dot_parses_with_graphviz(repo: Path, monkeypatch, capsys) -> None:
    text = ascend_response(monkeypatch, capsys, repo, "dot", "that whole line of work on the retry budget")
    svg = dot_svg(text)
    assert svg.count('class="node"') == 5  # the four sessions and the note that this is a past trajectory
    assert "both refer to #412" in svg and "check it against the current state" in svg


@needs_dot
def test_dot_survives_hostile_text() -> None:
    response = {"status": "inline", "unit": {
        "type": "chain", "label": NASTY, "confidence": "high", "node": "claude:s:a",
        "deposits": [{"partition": "claude", "slug": "s", "session_id": "a\\", "date": "", "topic": NASTY + "\\"},
                     {"partition": "claude", "slug": "s", "session_id": "b", "date": "2026-11-01", "topic": NASTY}],
        "connections": [{"a": "claude:s:a\\", "b": "claude:s:b", "role": "chain", "weight": 1, "basis": NASTY}]}}
    svg = dot_svg(unit_dot(unit_graph(response)))
    assert svg.count('class="node"') == 2 and svg.count('class="edge"') == 1  # the order edge is invisible
    assert "&quot;e&quot; &lt;f&gt; | g [h] {i} `j` \\k newline" in svg  # the text, intact, as text
    dot_svg(unit_dot(unit_graph({"status": "rescope"})))


def test_ascend_html_is_self_contained(repo: Path, monkeypatch, capsys) -> None:
    text = ascend_response(monkeypatch, capsys, repo, "html", "that whole line of work on the retry budget")
    assert text.startswith("<!DOCTYPE html>") and "default-src 'none'" in text
    assert text.count('class="node session') == 4
    assert not re.search(r'(?:src|href)\s*=\s*"(?!#)', text)


def test_a_single_session_answer_is_one_node(repo: Path, monkeypatch, capsys) -> None:
    text = ascend_response(monkeypatch, capsys, repo, "mermaid", "the session where we fixed the flaky login test")
    nodes, edges = check_flowchart(text)
    assert nodes == ["n0", "caveat"] and edges == []
    assert "00000008-5e5" in text


def test_log_format_mermaid_on_the_demo_repository(demo_repo: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(demo_repo)
    assert main(["log", "--format", "mermaid", "retry_budget"]) == 0
    tasks = check_gantt(capsys.readouterr().out)
    assert [t["name"] for t in tasks] == ["2x added", "Proven 3x graduated", "graduated"]


@pytest.mark.parametrize("fmt", ["html", "mermaid", "dot"])
def test_graph_formats_carry_no_terminal_control(fmt: str) -> None:
    """A deposit's topic with an OSC title and clipboard sequence is drawn visibly, never written raw: the
    graph is printed to a terminal (or `cat` later), where ESC ] … BEL would act."""
    from flowgit.report.unit_html import render_unit

    hostile = "retry \x1b]0;PWNED\x07\x1b]52;c;ZWNobyBoaQ==\x07 storms \x9b2J \u202eevil"
    response = {"status": "inline", "unit": {
        "type": "chain", "label": hostile, "confidence": "high", "node": "claude:s:a",
        "deposits": [{"partition": "claude", "slug": "s", "session_id": "a", "date": "2026-11-02", "topic": hostile},
                     {"partition": "claude", "slug": "s", "session_id": "b", "date": "2026-11-01", "topic": hostile}],
        "connections": [{"a": "claude:s:a", "b": "claude:s:b", "role": "chain", "weight": 1.0, "basis": hostile}]}}
    text = render_unit(response, fmt)
    assert not any(ch in text for ch in "\x1b\x07\x9b\u202e"), repr(text[:200])
    assert "\u241b]0;PWNED\u2407" in text  # shown as control pictures


def test_graph_labels_tell_sessions_apart_that_share_their_first_twelve_characters() -> None:
    """`alice-monday-am` and `alice-monday-pm` both read `alice-monday…` when every label was cut at twelve."""
    deposits = [{"partition": "claude", "slug": "-p", "session_id": sid, "date": f"2026-11-0{i}", "topic": "t"}
                for i, sid in enumerate(["alice-monday-am", "alice-monday-pm", "alice-monday-late", "bob"], 1)]
    graph = unit_graph({"status": "inline", "unit": {"type": "chain", "label": "x", "deposits": deposits}})
    shown = [n.short for n in graph.nodes]
    assert len(set(shown)) == 4 and "bob" in shown
    assert {"alice-monday-a…", "alice-monday-p…", "alice-monday-l…"} <= set(shown)


def test_names_cut_or_cleaned_to_one_title_stay_distinct_sections() -> None:
    from flowgit.report.mermaid import label, log_gantt

    stem = "checkout_flow_retry_budget_for_the_payment_provider_timeouts"
    events = [{"date": "2026-11-30", "kind": "added", "level": 1, "section": "Developing Knowledge"}]
    text = log_gantt({stem + "_one": events, stem + "_two": events, "a:b": events, "a b": events})
    sections = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("section ")]
    assert len(sections) == len(set(sections)) == 4, sections
    assert label("a\x00b#c") == "a b#35;c"  # a NUL is no `#`

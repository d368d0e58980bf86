"""Half of a surrogate pair in a transcript (``\\ud83d``, valid JSON) is shown as U+FFFD in every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowgit.ascend.surrogates import loads, scrub
from tests.ascend.corpus import Session, transcript_lines, write_session

LONE = "\ud83d"
SLUG = "-home-dev-web"


def sid(n: int) -> str:
    return f"5a{n:06x}-1c2d-4e5f-8a9b-{n:012x}"


def write_escaped(config: Path, s: Session) -> Path:
    """The transcript as a JavaScript writer leaves it: every non-ASCII character escaped, a lone half too."""
    path = config / "projects" / s.slug / f"{s.sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(json.loads(line)) for line in transcript_lines(s)]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def kiwi_line(config: Path) -> None:
    """Three transcripts on one issue, two of them with a lone surrogate in what the person said."""
    for n, day, text in ((1, "2026-10-01", f"Kiwi migration step one, see #4242 {LONE}"),
                         (2, "2026-10-03", "Kiwi migration step two, see #4242"),
                         (3, "2026-10-05", f"Kiwi migration step three, see #4242 {LONE}")):
        write_escaped(config, Session(SLUG, sid(n), "/home/dev/web", day, "", [], [],
                                      transcript=[("user", text), ("assistant", f"ok {LONE}")]))


def test_a_json_line_with_a_lone_surrogate_reads_as_replacement_characters():
    assert loads('{"a": "x \\ud83d", "\\udc00": ["\\ud83d\\ude00"]}') == {"a": "x \ufffd", "\ufffd": ["😀"]}
    assert scrub(("ok", 1, None)) == ("ok", 1, None)


def test_front_matter_that_spells_a_lone_surrogate_reads_as_a_replacement_character():
    from flowgit.ascend.formats import discover_fields, load_frontmatter

    fm = 'initial_request: "Migrate kiwi \\ud83d"\ntopics: ["kiwi \\udc00"]'
    assert load_frontmatter(fm)[0] == {"initial_request": "Migrate kiwi \ufffd", "topics": ["kiwi \ufffd"]}
    assert discover_fields(fm)["initial_request"] == "Migrate kiwi \ufffd"


@pytest.mark.parametrize("mode", [("--json",), ("--no-interactive",), ("--format", "dot"), ("--format", "html")])
def test_every_format_writes_a_transcript_with_a_lone_surrogate(run, tmp_path, mode):
    config = tmp_path / "claude"
    kiwi_line(config)
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "transcripts",
              "the whole line of work on the kiwi migration", *mode)
    assert res.code == 0, res.err
    assert LONE not in res.out
    if mode == ("--json",):
        data = json.loads(res.out)
        assert len(data["unit"]["members"]) == 3
        assert "Kiwi migration step one, see #4242 \ufffd" in data["text"]


@pytest.mark.parametrize("mode", [("--json",), ("--no-interactive",)])
def test_a_deposit_whose_record_holds_a_lone_surrogate_is_shown(run, tmp_path, mode):
    """The record's first request differs from the index: it is shown as the correction, with U+FFFD."""
    config = tmp_path / "claude"
    for n, day in ((1, "2026-10-01"), (2, "2026-10-02")):
        s = Session("-p", sid(n), "/p", day, f"Migrate kiwi {n}", ["kiwi migration"], ["kiwi", "migration"],
                    cross_refs=[{"kind": "github_issue", "ref": "#7"}],
                    transcript=[("user", f"Migrate the kiwi schema {LONE}"), ("assistant", "ok")])
        write_session(config, s, with_transcript=False)
        write_escaped(config, s)
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
              "the whole line of work on the kiwi migration", *mode)
    assert res.code == 0, res.err
    assert "Migrate the kiwi schema \ufffd" in res.out or "Migrate the kiwi schema \\ufffd" in res.out


DEEP = "[" * 20000 + "]" * 20000  # 40 KB, under every size cap: deeper than the parser can recurse


def test_a_json_line_nested_too_deeply_is_a_value_error():
    with pytest.raises(ValueError, match="nested too deeply"):
        loads(DEEP)
    with pytest.raises(ValueError, match="nested too deeply"):
        loads('{"a": "\\ud83d", "b": ' + DEEP + "}")  # (scrubbing walks it too)


@pytest.mark.parametrize("where", ["member", "transcript-only"])
def test_a_transcript_line_nested_too_deeply_is_skipped_not_a_traceback(run, tmp_path, where):
    """One hostile line in a member's transcript, or atop a session known only by its transcript."""
    config = tmp_path / "claude"
    for n in range(3):
        request = f"tune the kafka consumer lag alerts #990 step {n}"
        write_session(config, Session(SLUG, sid(n), "/home/dev/web", f"2026-11-0{n + 1}", request, ["kafka lag"],
                                      ["kafka", "lag", "alerts"],
                                      cross_refs=[{"kind": "github_issue", "ref": "#990"}],
                                      transcript=[("user", request), ("assistant", "ok")]))
    projects = config / "projects" / SLUG
    if where == "member":
        path = projects / f"{sid(1)}.jsonl"
        path.write_text(path.read_text() + DEEP + "\n")
    else:
        line = {"type": "user", "sessionId": sid(9), "cwd": "/home/dev/web", "timestamp": "2026-11-04T09:00:00Z",
                "message": {"role": "user", "content": "kafka lag alerts again, #990"}}
        (projects / f"{sid(9)}.jsonl").write_text(DEEP + "\n" + json.dumps(line) + "\n")
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "that whole line of work on #990", "--json")
    assert "Traceback" not in res.err and "RecursionError" not in res.err
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert len(data["unit"]["members"]) >= 3

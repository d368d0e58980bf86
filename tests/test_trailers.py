"""Trailers read from a commit message, and where they disagree with the change they record."""

from __future__ import annotations

import random

from flowgit.changes import ARCHIVED, DEMOTED, GRADUATED, INCREMENTED, PatternEvent
from flowgit.trailers import mismatches, parse_trailers

KEYS = {"Graduated": GRADUATED, "Incremented": INCREMENTED, "Demoted": DEMOTED, "Archived": ARCHIVED}


def _reference(trailers: list[tuple[str, str]], events: list[PatternEvent]) -> list[str]:
    """The rule read word for word: per trailer key, the names claimed against the names the change shows."""
    problems = []
    for key, kind in KEYS.items():
        claimed = {v.split()[0] for k, v in trailers if k.lower() == key.lower() and v.split()}
        shown = {e.name for e in events if e.kind == kind}
        problems += [f"trailer `{key}: {n}` but the change does not show `{n}` {kind}" for n in sorted(claimed - shown)]
        problems += [f"the change shows `{n}` {kind} but there is no `{key}: {n}` trailer"
                     for n in sorted(shown - claimed)]
    return problems


def test_trailers_that_agree_with_the_change_give_no_problem():
    events = [PatternEvent(GRADUATED, "p1", 3, "Proven Knowledge", ("ep-1", "ep-2", "ep-3"), old_level=2),
              PatternEvent("added", "p2", 1, "Developing")]
    assert mismatches([("Graduated", "p1 [evidence: ep-3, ep-1, ep-2]"), ("Flow-Session", "s1")], events) == []
    assert mismatches([("Graduated", "p1 3x")], events) == []  # levels the step has; no evidence list: the name


INCREMENT = [PatternEvent(INCREMENTED, "retry_budget", 2, "Developing", ("ep-a", "ep-b"), old_level=1)]


def test_a_trailer_listing_evidence_the_change_does_not_cite_is_named():
    """`git log --format=%(trailers)` reports the list as what earned the level: it must be the line's."""
    found = mismatches([("Incremented", "retry_budget 1x->2x [evidence: ep-0, ep-1]")], INCREMENT)
    assert found == ["trailer `Incremented: retry_budget` lists evidence ep-0, ep-1 but the change cites "
                     "ep-a, ep-b"]
    assert mismatches([("Incremented", "retry_budget [evidence: ep-a]")], INCREMENT)  # one id short
    assert mismatches([("Incremented", "retry_budget [evidence: ep-a, ep-b, ep-c]")], INCREMENT)  # one more
    assert mismatches([("Incremented", "retry_budget 1x->2x [evidence: ep-b, ep-a]")], INCREMENT) == []


def test_a_trailer_giving_levels_the_change_does_not_take_is_named():
    found = mismatches([("Incremented", "retry_budget 1x->3x [evidence: ep-a, ep-b]")], INCREMENT)
    assert found == ["trailer `Incremented: retry_budget 1x->3x [evidence: ep-a, ep-b]` gives level(s) 1x, 3x "
                     "but the change takes `retry_budget` 1x->2x"]
    assert mismatches([("Incremented", "retry_budget 2X")], INCREMENT) == []
    reversed_step = mismatches([("Incremented", "retry_budget 2x->1x")], INCREMENT)  # the levels, the wrong way
    assert reversed_step == ["trailer `Incremented: retry_budget 2x->1x` gives level(s) 1x, 2x but the change "
                             "takes `retry_budget` 1x->2x"]
    assert mismatches([("Incremented", "retry_budget 1x → 2x")], INCREMENT) == []
    assert mismatches([("Incremented", "retry_budget 3×")], INCREMENT)  # the sign the grammar reads as x


def test_evidence_named_but_not_as_a_list_is_refused_not_passed_over():
    found = mismatches([("Incremented", "retry_budget evidence ep-0 ep-1")], INCREMENT)
    assert len(found) == 1 and "not as `[evidence: ep-…, …]`" in found[0]
    assert mismatches([("Incremented", "retry_budget (after the second outage)")], INCREMENT) == []


def test_a_claim_the_change_does_not_show_and_a_change_no_trailer_claims_are_both_named():
    events = [PatternEvent(INCREMENTED, "p3", 2, "Developing")]
    found = mismatches([("graduated", "p1 [evidence: ep-1]")], events)
    assert found == ["trailer `Graduated: p1` but the change does not show `p1` graduated",
                     "the change shows `p3` incremented but there is no `Incremented: p3` trailer"]


def test_mismatches_answer_as_the_rule_reads_on_any_trailers_and_events():
    rnd = random.Random(5)
    keys = list(KEYS) + ["graduated", "ARCHIVED", "Flow-Session", "Graduated-By"]
    names = ["p1", "p2", "p3", ""]
    kinds = list(KEYS.values()) + ["added", "renamed"]
    for _ in range(3000):
        trailers = [(rnd.choice(keys), rnd.choice([" ", "", "p1 1x->2x"]) if rnd.random() < 0.2
                     else f"{rnd.choice(names)} [evidence: ep-1]") for _ in range(rnd.randint(0, 4))]
        events = [PatternEvent(rnd.choice(kinds), rnd.choice(names[:3]), 2, "Developing", ("ep-1",), old_level=1)
                  for _ in range(rnd.randint(0, 4))]  # (the step and evidence every trailer here gives)
        assert mismatches(trailers, events) == _reference(trailers, events), (trailers, events)


def test_trailers_are_the_last_paragraph_of_key_value_lines():
    message = "Session wrap\n\nbody text\n\nFlow-Session: s1\nGraduated: p1 [evidence:\n ep-1]\n"
    assert parse_trailers(message) == [("Flow-Session", "s1"), ("Graduated", "p1 [evidence: ep-1]")]
    assert parse_trailers("Session wrap\n\nnot: a trailer block\nbecause this line is prose\n") == []


def _git_reads(message: str) -> list[tuple[str, str]]:
    import subprocess

    out = subprocess.run(["git", "interpret-trailers", "--parse"], input=message.encode(), capture_output=True,
                         check=True).stdout.decode()  # bytes: a CR inside a value is not a line break to git
    return [(k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in out.split("\n") if line)]


def test_trailers_are_read_as_git_reads_them():
    """What `git log --format=%(trailers)` reports a commit claims is what the gate and the audit read: a stricter
    reader would let a claim through unchecked (`Graduated : x`), a looser one would refuse what git ignores."""
    rng = random.Random(7)
    lines = ["Graduated: retry_budget [evidence: ep-1, ep-2]", "Graduated : retry_budget", "graduated:x",
             "Incremented:\tcache 1x->2x", "Signed-off-by: A <a@example.com>", "(cherry picked from commit abc123)",
             "Flow-Session: s1", "Flow-Override: legacy import", "some prose about the change", "more prose: here",
             "Not a trailer line", "Bad Key: value", "2fa-Check: ok", "  continued value", "-Dash: no",
             "Key:", "Key :value", "# a comment-like line", "Flow-Session: s1\x0c", "prose\u2028Graduated: x",
             "\x0b", "Graduated: y\x85z", "Incremented: a\rb", "\x0c", " \t ", "\r", "", "\t continued",
             "Key\t: v", "a:b:c"]
    checked = 0
    for _ in range(800):
        body = [rng.choice(lines) for _ in range(rng.randint(1, 7))]
        message = "Session wrap\n\n" + ("intro paragraph\n\n" if rng.random() < 0.5 else "") + "\n".join(body) + "\n"
        if rng.random() < 0.3:
            message = message.replace("\n", "\r\n")  # a message written on Windows (or kept by a cherry-pick)
        ours = [(k, " ".join(v.split())) for k, v in parse_trailers(message)]
        theirs = [(k, " ".join(v.split())) for k, v in _git_reads(message)]
        assert ours == theirs, message
        checked += bool(theirs)
    assert checked > 100  # most generated blocks are trailer blocks to git


def test_a_second_evidence_list_is_refused_and_numbers_in_prose_are_not_levels():
    two = mismatches([("Incremented", "retry_budget 1x->2x [evidence: ep-a, ep-b] [evidence: ep-x]")], INCREMENT)
    assert two == ["trailer `Incremented: retry_budget` gives 2 evidence lists: give one, the ids the pattern's "
                   "line cites"]
    prose = "retry_budget 1x->2x (p99 latency 10x lower) [evidence: ep-a, ep-b]"
    assert mismatches([("Incremented", prose)], INCREMENT) == []
    assert mismatches([("Incremented", "retry_budget 2x → 3x")], INCREMENT)  # a step, however it is arrowed


def test_a_lowered_trailer_is_held_to_the_change_and_not_asked_of_older_wraps():
    """`Lowered:` (written since wraps record a level taken down by hand) must name a pattern the change
    lowers; a lowering without one (every wrap before it) is no mismatch."""
    from flowgit.changes import LOWERED
    from flowgit.trailers import speaks_for_a_wrap

    lowered = [PatternEvent(LOWERED, "warm_cache", 1, "Developing", old_level=2)]
    assert mismatches([("Lowered", "warm_cache 2x->1x")], lowered) == []
    assert mismatches([("Flow-Session", "s1")], lowered) == []
    assert mismatches([("Lowered", "retry_budget 2x->1x")], lowered) == [
        "trailer `Lowered: retry_budget` but the change does not show `retry_budget` lowered"]
    assert speaks_for_a_wrap([("Lowered", "warm_cache 2x->1x")])


def test_a_renamed_trailer_must_be_a_rename_the_change_makes():
    """ascend's git partition reads `Renamed: old -> new` as the names a wrap gave a pattern: a rename that
    never happened would join two lines of work on the record. Held when given; a rename without one is no
    mismatch (a hand rename says nothing false)."""
    from flowgit.changes import RENAMED
    from flowgit.trailers import speaks_for_a_wrap

    renamed = [PatternEvent(RENAMED, "retry_cap", 1, "Developing", old_name="retry_budget", old_level=1)]
    assert mismatches([("Renamed", "retry_budget -> retry_cap")], renamed) == []
    assert mismatches([("Renamed", "retry_budget \u2192 retry_cap")], renamed) == []
    assert mismatches([("Flow-Session", "s1")], renamed) == []
    assert mismatches([("Renamed", "retry_budget -> warm_cache")], renamed) == [
        "trailer `Renamed: retry_budget -> warm_cache` but the change does not rename `retry_budget` to "
        "`warm_cache`"]
    assert mismatches([("Renamed", "warm_cache -> cold_cache")], []) != []
    assert mismatches([("Renamed", "retry_budget")], renamed) == [
        "trailer `Renamed: retry_budget` does not read as `old_name -> new_name`"]
    assert mismatches([("Renamed", "retry budget -> retry_cap")], renamed) != []
    assert speaks_for_a_wrap([("renamed", "a -> b")])


def test_trailers_are_read_as_git_log_reports_them_past_a_conflicts_block_and_a_scissors_line(tmp_path):
    """git passes over the run at a message's end of comments, empty lines and an old-style `Conflicts:` block,
    and stops at a scissors line (a message kept verbatim holds one): the paragraph above is the one
    `git log --format=%(trailers)` reports, so it is the one the gate and the audit hold to the change."""
    import subprocess

    def git(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, input=data, capture_output=True, check=True).stdout.decode()

    git("init", "-q")
    tree = git("mktree", data=b"").strip()
    rng = random.Random(11)
    tails = ["Conflicts:", "\tCONTINUITY.md", "\t.flow/episodes.jsonl", "# a comment", "",
             "# ------------------------ >8 ------------------------", "diff --git a/x b/x", "Archived: other",
             "prose after the block", "  Conflicts:", "Conflicts: CONTINUITY.md"]
    messages = ["Add notes\n\nGraduated: retry_budget 2x->3x\n\nConflicts:\n\tCONTINUITY.md\n",
                "Add notes\n\nGraduated: retry_budget 2x->3x\n# ------------------------ >8 ------------------------\n"
                "diff --git a/x b/x\n\nArchived: x\n"]
    for _ in range(150):
        tail = "\n".join(rng.choice(tails) for _ in range(rng.randint(1, 5)))
        messages.append(f"Wrap\n\nFlow-Session: s1\nGraduated: retry_budget\n{tail}\n")
    seen = 0
    for message in messages:
        sha = git("commit-tree", tree, "-F", "-", data=message.encode()).strip()
        reported = git("log", "-1", "--format=%(trailers:only,unfold)", sha)
        theirs = [(k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in reported.split("\n") if line)]
        assert [(k, v.strip()) for k, v in parse_trailers(message)] == theirs, message
        seen += any(k == "Graduated" for k, _ in theirs)
    assert seen > 40  # many of the messages hide a graduation behind what git passes over

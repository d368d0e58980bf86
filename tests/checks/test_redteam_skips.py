"""Content parked where no rule looks, then moved where one should (found by a red team, 2026-12-01).

"A line is new when HEAD has no line with its text" let content HEAD already
held slip past the recognition rules: a malformed or look-alike pattern kept in
Recent Context or in a fence, then moved into Developing, and patterns hidden by
a new comment whose only new lines are ``<!--`` and ``-->``. The rules now also
read a line whose *section* or *visibility* changed (checks/recognition.py:
``_judged_lines``); the last tests hold that content left where it was seen is
still not read again.
"""

from __future__ import annotations

from tests.checks.gate_fixtures import base_text, check, committed_base, developing_lines, stage

MALFORMED = "!! p13: retry with jitter across providers | 2X"


def test_a_malformed_pattern_moved_from_recent_context_into_developing_is_judged(run, repo):
    # commit 1 (passes: Recent Context is not a pattern section) parks the malformed line in Recent Context
    committed_base(repo, base_text(recent="We saw a hand-written line last week:\n" + MALFORMED))
    # commit 2 moves the very same bytes into Developing: HEAD "has that line", so G110 never looks at it
    stage(repo, base_text(recent="We rewrote the week as one shape.",
                          developing=developing_lines() + "\n" + MALFORMED))
    code, data, codes = check(run, repo)
    assert code == 1 and "G110" in codes  # typed fresh (a trailing space) it is G110


def test_existing_patterns_wrapped_in_a_new_html_comment_are_hidden(run, repo):
    committed_base(repo)
    lines = developing_lines().splitlines()
    hidden = "\n".join(["<!--", *lines[:3], "-->", *lines[3:]])  # only the `<!--` and `-->` lines are new
    stage(repo, base_text(developing=hidden))
    code, data, codes = check(run, repo)
    assert code == 1 and "G111" in codes


def test_a_mixed_script_name_parked_in_a_fence_in_recent_context_is_judged_when_moved(run, repo):
    bad = "! p0\u04cf: retry with jitter on every provider call | 1x"  # a Cyrillic palochka in the name
    # commit 1 (passes): the line sits inside a fence in Recent Context, so it is no pattern and no rule reads it
    committed_base(repo, base_text(recent="We looked at this example:\n```\n" + bad + "\n```"))
    # commit 2 moves the same bytes into Developing: a pattern now, but HEAD "has the line", so G113 is skipped
    stage(repo, base_text(recent="We rewrote the week as one shape.", developing=developing_lines() + "\n" + bad))
    code, data, codes = check(run, repo)
    assert code == 1 and "G113" in codes  # with HEAD lacking the line it is G113


def test_a_proven_pattern_wrapped_in_a_new_html_comment_is_hidden(run, repo):
    committed_base(repo)
    text = base_text()
    start = text.index("!! retry_budget")
    end = text.index("\n", start) + 1
    stage(repo, text[:start] + "<!--\n" + text[start:end] + "-->\n" + text[end:])  # Proven content, now unseen
    code, data, codes = check(run, repo)
    assert code == 1 and "G111" in codes  # (in a fence instead, the pattern is gone and G205 fires)


# --- and what the fix must not refuse: content that stays where it was seen


def test_patterns_reordered_within_developing_pass(run, repo):
    committed_base(repo)
    stage(repo, base_text(developing="\n".join(reversed(developing_lines().splitlines()))))
    code, data, codes = check(run, repo)
    assert code == 0, codes


def test_a_fenced_example_kept_in_its_section_passes_while_a_pattern_is_added(run, repo):
    example = "```\n! p0\u04cf: a look-alike name, kept as an example | 1X\n```"
    committed_base(repo, base_text(developing=developing_lines() + "\n" + example))
    stage(repo, base_text(developing=developing_lines() + "\n! p13: jitter the retry timer per tenant | 1x\n"
                          + example))
    code, data, codes = check(run, repo)
    assert "G110" not in codes and "G111" not in codes and "G113" not in codes, codes


def test_a_malformed_line_kept_in_recent_context_passes(run, repo):
    committed_base(repo, base_text(recent="We saw a hand-written line last week:\n" + MALFORMED))
    stage(repo, base_text(recent="We saw a hand-written line last week:\n" + MALFORMED + "\nAnd fixed it."))
    code, data, codes = check(run, repo)
    assert "G110" not in codes, codes


def test_a_malformed_line_freed_from_a_fence_by_deleting_the_fence_lines_is_judged(run, repo):
    fenced = developing_lines() + "\n```\n" + MALFORMED + "\n```"
    committed_base(repo, base_text(developing=fenced))
    stage(repo, base_text(developing=developing_lines() + "\n" + MALFORMED))  # only deletions: no line is new
    code, data, codes = check(run, repo)
    assert code == 1 and "G110" in codes

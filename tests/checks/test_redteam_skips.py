"""Red team of the change-only rules (2026-12-01).

No false accept *introduced* by today's skips or incremental parse was found
(differential runs against d2a19c8 agree). The two tests below are false
accepts that d2a19c8 shows too: "a line is new when HEAD has no line with its
text" lets content HEAD already holds, or a line that only opens/closes a
comment, slip past the recognition rules. They are expected to fail until the
rules treat a line that changed *section* or *visibility* as changed.
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

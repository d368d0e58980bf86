"""Property: merging any two valid wraps of one base gives a file that parses, passes the gate against both
parents, holds no conflict markers and loses no pattern."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings, strategies as st

from flowgit.checks.judge import Side as JudgeSide, judge_change
from flowgit.config import load_config
from flowgit.continuity.document import Document
from flowgit.continuity.patterns import pattern_map
from flowgit.continuity.sections import DEVELOPING, PROVEN, STATE, TOP, RECENT, ACTIONS
from flowgit.episodes import lookup, make_episode
from flowgit.merge.continuity import merge_continuity
from flowgit.merge.driver import refused_by_gate
from flowgit.merge.markers import find_markers

TOPICS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
EPS = {t: [make_episode({"type": "finding", "content": f"{t} widget fired again in session {k}",
                         "session": f"s-{t}-{k}", "agent": f"agent-{k % 3}", "ts": "2026-11-20T10:00:00Z"})
           for k in range(6)] for t in TOPICS}
STORE = b"".join(e.to_json().encode() + b"\n" for eps in EPS.values() for e in eps)
WORDS = "lantern orbit quartz meadow harbor summit violet cobalt ember prairie tundra canyon".split()


def line(topic: str, level: int, evidence=(), proven_date: str = "", name: str | None = None, notes=()) -> str:
    name = name or f"p_{topic}"
    text = f"the {topic} widget must be handled carefully"
    if level == 1:
        return f"! {name}: {text} | 1x"
    cat = f"(CORE — {proven_date})" if proven_date else "(CORE)"
    out = f"!! {name}: {text} | {level}x {cat} [evidence: {', '.join(e.id for e in evidence)}]"
    return out + "".join(f" [{n}]" for n in notes)


BASE = f"""# Continuity

## Current State
Focus: the widget audit.

## Top of Mind
- widget audit

## Action Items
- review the alpha widget — seen: Nov 20, next: Nov 25
- file the bravo report
- sweep the charlie logs — next: Nov 28

## Recent Context
The audit started with the alpha widget.

## Developing Knowledge
{line("alpha", 1)}
{line("bravo", 1)}
{line("charlie", 2, EPS["charlie"][:2])}

## Proven Knowledge
{line("delta", 3, EPS["delta"][:3], "2026-11-20")}

## Foundation
Write the episode before the pattern.
"""


def sentence(draw) -> str:
    return " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=3, max_size=7)))


def _pattern_line(doc: Document, name: str) -> int:
    return pattern_map(doc)[name].line


@st.composite
def wraps(draw) -> str:
    """One valid-looking wrap of BASE: section replacements, lifecycle edits and pattern operations."""
    doc = Document.parse(BASE)
    if draw(st.booleans()):
        doc = doc.replace_body(STATE, f"Focus: {sentence(draw)}.")
    if draw(st.booleans()):
        doc = doc.replace_body(TOP, "\n".join(f"- {sentence(draw)}" for _ in range(draw(st.integers(1, 3)))))
    if draw(st.booleans()):
        doc = doc.replace_body(RECENT, f"{sentence(draw).capitalize()}.")
    for match, op in zip(("alpha widget", "bravo report", "charlie logs"),
                         draw(st.lists(st.sampled_from(["keep", "done", "redate"]), min_size=3, max_size=3))):
        item = doc.find_item(ACTIONS, match)
        first = doc.lines[item.start].rstrip("\n")
        if op == "done":
            doc = doc.update_item(ACTIONS, item, first.replace("- ", "- ✓ ", 1))
        elif op == "redate":
            day = draw(st.integers(21, 30))
            new = first.split(" — ")[0] + f" — seen: Nov {day}, next: Dec {day - 19}"
            doc = doc.update_item(ACTIONS, item, new)
    for topic in draw(st.lists(st.sampled_from(["echo", "foxtrot", "golf"]), unique=True, max_size=2)):
        doc = doc.append_lines(DEVELOPING, [line(topic, 1)])
    alpha = draw(st.sampled_from(["keep", "raise", "rename", "rename+raise"]))
    picks = draw(st.lists(st.integers(0, 5), min_size=2, max_size=2, unique=True))
    if "raise" in alpha:
        doc = doc.splice(*_span(doc, "p_alpha"), [line("alpha", 2, [EPS["alpha"][i] for i in picks])])
    if "rename" in alpha:
        at = pattern_map(doc)["p_alpha"]
        doc = doc.splice(at.line, at.line + 1, [at.pattern.changed(name="p_alpha_renamed").render()])
    bravo = draw(st.sampled_from(["keep", "raise", "archive"]))
    if bravo == "raise":
        doc = doc.splice(*_span(doc, "p_bravo"), [line("bravo", 2, [EPS["bravo"][i] for i in picks])])
    elif bravo == "archive":
        doc = doc.splice(*_span(doc, "p_bravo"), [])
    charlie = draw(st.sampled_from(["keep", "evidence", "graduate"]))
    extra = EPS["charlie"][draw(st.integers(2, 5))]
    if charlie == "evidence":
        doc = doc.splice(*_span(doc, "p_charlie"), [line("charlie", 2, [*EPS["charlie"][:2], extra])])
    elif charlie == "graduate":
        doc = doc.splice(*_span(doc, "p_charlie"), [])
        doc = doc.append_lines(PROVEN, [line("charlie", 3, [*EPS["charlie"][:2], extra], "2026-11-26")])
    delta = draw(st.sampled_from(["keep", "evidence", "demote"]))
    if delta == "evidence":
        doc = doc.splice(*_span(doc, "p_delta"), [line("delta", 3, EPS["delta"][:4], "2026-11-20")])
    elif delta == "demote":
        doc = doc.splice(*_span(doc, "p_delta"), [])
        doc = doc.append_lines(DEVELOPING, [line("delta", 2, EPS["delta"][:3],
                                                 notes=[f"demoted 2026-11-26: contradicted ({EPS['delta'][5].id})"])])
    return doc.text


def _span(doc: Document, name: str) -> tuple[int, int]:
    at = _pattern_line(doc, name)
    return at, at + 1


def errors(cfg, old: str, new: str) -> list[str]:
    side = lambda text: JudgeSide(text.encode(), STORE, "CONTINUITY.md", ".flow/episodes.jsonl")  # noqa: E731
    return [f.format() for f in judge_change(cfg, side(old), side(new)) if f.is_error]


def names(text: str) -> set[str]:
    return {n.casefold() for n in pattern_map(Document.parse(text))}


CFG = load_config("/")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(wraps(), wraps(), st.sampled_from(["ours", "theirs"]))
def test_two_valid_wraps_merge_into_a_valid_file_that_loses_no_pattern(ours, theirs, newer):
    assume(not errors(CFG, BASE, ours) and not errors(CFG, BASE, theirs))
    result = merge_continuity(BASE, ours, theirs, lookup=lambda ids: lookup(STORE, ids), newer=newer)
    assert result.clean and find_markers(result.text) is None
    assert Document.parse(result.text).sections
    data = [BASE.encode(), ours.encode(), theirs.encode()]
    assert refused_by_gate(CFG, data, result.text.encode(), STORE, "CONTINUITY.md") == [], result.text
    merged, base = names(result.text), names(BASE)
    for side, other in ((ours, theirs), (theirs, ours)):
        for name in names(side):
            untouched_archived = name in base and name not in names(other) and \
                pattern_map(Document.parse(side))[_orig(side, name)].pattern.render() in BASE
            renamed = {name, name.replace("_renamed", ""), name + "_renamed"}
            assert untouched_archived or renamed & merged, (name, result.text)


def _orig(text: str, folded: str) -> str:
    return next(n for n in pattern_map(Document.parse(text)) if n.casefold() == folded)


def test_a_merge_note_quoting_the_other_wraps_own_line_is_not_old_text_moved_into_it():
    """Found by the property above: theirs' Top of Mind line shares every word with Recent Context (one word
    repeated). The merge quotes theirs' own line in Top of Mind's note; that moves nothing from Recent
    Context (G303), since a parent holds that very line in that very section."""
    shared = BASE.split("## Top of Mind\n")[0]
    tail = ("\n## Action Items\n" + BASE.split("## Action Items\n")[1]).split("## Recent Context\n")[0]
    rest = "## Developing Knowledge\n" + BASE.split("## Developing Knowledge\n")[1]
    recent = "## Recent Context\nLantern lantern lantern lantern lantern.\n\n"
    ours = shared + "## Top of Mind\n- lantern lantern lantern\n" + tail + recent + rest
    theirs = shared + "## Top of Mind\n- lantern lantern lantern lantern\n" + tail + recent + rest
    assert not errors(CFG, BASE, ours) and not errors(CFG, BASE, theirs)
    result = merge_continuity(BASE, ours, theirs, lookup=lambda ids: lookup(STORE, ids), newer="ours")
    assert result.clean and "# | - lantern lantern lantern lantern" in result.text
    data = [BASE.encode(), ours.encode(), theirs.encode()]
    assert refused_by_gate(CFG, data, result.text.encode(), STORE, "CONTINUITY.md") == []


def _lantern_wraps(theirs_top: str) -> tuple[str, str]:
    shared = BASE.split("## Top of Mind\n")[0]
    tail = ("\n## Action Items\n" + BASE.split("## Action Items\n")[1]).split("## Recent Context\n")[0]
    rest = "## Developing Knowledge\n" + BASE.split("## Developing Knowledge\n")[1]
    recent = "## Recent Context\nLantern lantern lantern lantern lantern.\n\n"
    ours = shared + "## Top of Mind\n- lantern lantern lantern\n" + tail + recent + rest
    theirs = shared + f"## Top of Mind\n{theirs_top}\n" + tail + recent + rest
    return ours, theirs


def test_the_quote_is_matched_to_the_parents_line_whole_not_with_its_line_end():
    """Found by the property above: theirs' Top of Mind line holds every word of Recent Context, as many times.
    The note quotes it with its line end; the parent's line is compared without one, so the quote is the other
    wrap's own text and the merge is accepted."""
    ours, theirs = _lantern_wraps("- lantern lantern lantern lantern lantern")
    assert not errors(CFG, BASE, ours) and not errors(CFG, BASE, theirs)
    result = merge_continuity(BASE, ours, theirs, lookup=lambda ids: lookup(STORE, ids), newer="ours")
    assert "# | - lantern lantern lantern lantern lantern\n" in result.text
    data = [BASE.encode(), ours.encode(), theirs.encode()]
    assert refused_by_gate(CFG, data, result.text.encode(), STORE, "CONTINUITY.md") == []


def test_a_quote_no_parent_holds_in_that_section_still_counts_as_text_brought_there():
    """The other side of the rule: a merge result that quotes Recent Context's text in Top of Mind as if a
    parent had said it there keeps the rewritten section's old text under another heading (G303)."""
    ours, theirs = _lantern_wraps("- lantern lantern lantern lantern")
    result = merge_continuity(BASE, ours, theirs, lookup=lambda ids: lookup(STORE, ids), newer="ours")
    forged = result.text.replace("# | - lantern lantern lantern lantern\n",
                                 "# | Lantern lantern lantern lantern lantern.\n")
    assert forged != result.text
    data = [BASE.encode(), ours.encode(), theirs.encode()]
    found = refused_by_gate(CFG, data, forged.encode(), STORE, "CONTINUITY.md")
    assert any("G303" in f and "Recent Context's text into `Top of Mind`" in f for f in found), found

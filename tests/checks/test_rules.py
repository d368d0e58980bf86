"""Every gate rule fails for the right reason, and legitimate wraps pass with no false positive."""

from __future__ import annotations

import pytest

from tests.checks.gate_fixtures import (
    write_store,
    DEVELOPING, E_BACKOFF, E_RETRY, E_SAME_SESSION, E_UNRELATED, GRADUATED, SHORTER, base_text, check,
    committed_base,
    developing_lines, ep, stage,
)
from tests.conftest import git


def promote(name: str, text: str, level: int, ids, category="RELIABILITY", date=""):
    cat = f"{category} — {date}" if date else category
    return f"!! {name}: {text} | {level}x ({cat}) [evidence: {', '.join(ids)}]"


def with_developing_line(old_name: str, new_line: str) -> str:
    lines = developing_lines().splitlines()
    lines = [new_line if ln.startswith(f"! {old_name}:") else ln for ln in lines]
    return base_text(developing="\n".join(lines))


# ----------------------------------------------------------------- failing
def test_unstaged_changes_are_not_checked(run, repo):
    committed_base(repo)
    (repo / "CONTINUITY.md").write_text(with_developing_line("p01", "!! p01: retries | 2x"))
    code, data, codes = check(run, repo)
    assert code == 0 and data["checked"] is False


def test_ungrounded_graduation(run, repo):
    committed_base(repo)
    stage(repo, with_developing_line("p01", "!! p01: " + DEVELOPING[0][1] + " | 2x (RELIABILITY)"))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G101"}
    assert data["findings"][0]["line"] == 20


def test_unknown_evidence_id(run, repo):
    committed_base(repo)
    stage(repo, with_developing_line("p01", promote("p01", DEVELOPING[0][1], 2,
                                                      [E_RETRY[0].id, "ep-000000000000"])))
    code, _, codes = check(run, repo)
    assert code == 1 and "G102" in codes


def test_an_id_cited_by_its_start_is_named_with_the_whole_id(run, repo):
    """A short id copied from a listing: the refusal says which whole id it starts, and to write it whole."""
    committed_base(repo)
    short = E_RETRY[1].id[:7]
    stage(repo, with_developing_line("p01", promote("p01", DEVELOPING[0][1], 2, [E_RETRY[0].id, short])))
    code, data, codes = check(run, repo)
    g102 = next(f for f in data["findings"] if f["code"] == "G102")
    assert code == 1 and f"`{short}` is the start of `{E_RETRY[1].id}`" in g102["message"]
    assert g102["fix"] == "write each id whole"


def test_a_store_committed_after_the_memory_cannot_mint_sessions(run, repo):
    """HEAD holds the continuity file but no store: the commit that adds the store only appends (to nothing),
    so episodes naming two sessions count once, as in any other commit; only the memory's first commit
    brings episodes recorded before git saw them."""
    (repo / "CONTINUITY.md").write_text(base_text(proven_extra=""))
    git(repo, "add", "CONTINUITY.md")
    git(repo, "commit", "-qm", "the memory, without its store", "--no-verify")
    write_store(repo, E_RETRY[:2])  # s1 and s2, one agent, both appended now
    stage(repo, with_developing_line("p01", promote("p01", DEVELOPING[0][1], 2, [E_RETRY[0].id, E_RETRY[1].id])))
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 1 and "G103" in codes, data


def test_three_episodes_from_one_session_do_not_make_3x(run, repo):
    committed_base(repo)
    line = promote("p03", DEVELOPING[2][1], 2, [e.id for e in E_SAME_SESSION[:2]])
    stage(repo, with_developing_line("p03", line))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G103"}  # one session, one agent: one observation, however worded
    git(repo, "commit", "-qm", "2x", "--no-verify")
    stage(repo, base_text(developing=developing_lines([d for d in DEVELOPING if d[0] != "p03"]),
                          proven_extra=promote("p03", DEVELOPING[2][1], 3, [e.id for e in E_SAME_SESSION],
                                               date="2026-11-30")))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G103"}
    assert "from 1 source" in data["findings"][0]["message"]


def test_restatements_in_one_session_count_once(run, repo):
    same = [ep("idempotency keys stop double charges", "s9"), ep("idempotency keys stop the double charges", "s9")]
    committed_base(repo)
    stage(repo, with_developing_line("p03", promote("p03", DEVELOPING[2][1], 2, [e.id for e in same])), same)
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G103"} and "count once" in data["findings"][0]["message"]


def test_unrelated_episode(run, repo):
    committed_base(repo)
    stage(repo, with_developing_line("p01", promote("p01", DEVELOPING[0][1], 2, [E_RETRY[0].id, E_UNRELATED.id])))
    code, data, codes = check(run, repo)
    assert code == 1 and "G104" in codes
    assert E_UNRELATED.id in next(f["message"] for f in data["findings"] if f["code"] == "G104")


def test_evidence_reuse_is_a_warning(run, repo):
    committed_base(repo)
    ids = [E_RETRY[0].id, E_RETRY[1].id]
    lines = developing_lines().splitlines()
    lines[0] = promote("p01", "retries without budget multiply provider load", 2, ids)
    lines[1] = promote("p02", "retry storms need a budget per request", 2, ids)
    stage(repo, base_text(developing="\n".join(lines)))
    code, data, codes = check(run, repo)
    assert code == 0 and codes == {"G105"}
    assert all(f["severity"] == "warning" for f in data["findings"])


def test_level_jump_1x_to_3x(run, repo):
    committed_base(repo)
    ids = [e.id for e in E_BACKOFF]
    stage(repo, with_developing_line("p01", promote("p01", "retries and jittered backoff", 3, ids)))
    assert "G201" in check(run, repo)[2]


def test_level_raised_without_new_evidence(run, repo):
    ids = [E_BACKOFF[0].id, E_BACKOFF[1].id]
    committed_base(repo, base_text(developing=developing_lines()[:0] + promote(
        "backoff", "jittered backoff spreads retry waves", 2, ids)))
    stage(repo, base_text(developing=promote("backoff", "jittered backoff spreads retry waves", 3, ids)))
    assert "G202" in check(run, repo)[2]


def test_performance_compression_names_the_items(run, repo):
    committed_base(repo)
    stage(repo, base_text(developing=developing_lines(overrides=SHORTER)))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G301"}
    msg = data["findings"][0]["message"]
    assert "Developing Knowledge" in msg and "12 of 12" in msg and "`p01`" in msg


def test_append_instead_of_replace(run, repo):
    committed_base(repo)
    old_top = "- provider 503 storms arrive in bursts of forty seconds\n- trailer format still under review"
    stage(repo, base_text(top=old_top + "\n- new: the audit needs a shallow-clone mode"))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G302"}
    fix = data["findings"][0]["fix"]  # Top of Mind is salience: its fix says where a standing fact goes
    assert "next session start" in fix and "Proven Knowledge or Foundation" in fix and "Recent Context" not in fix
    assert "still open belongs in Action Items" in fix  # followable when nothing was completed or absorbed


def test_append_instead_of_rewrite(run, repo):
    committed_base(repo)
    old = "We spent the week on the document model. The round trip held on every fixture."
    stage(repo, base_text(recent=old + "\nToday we added the gate and its first rules."))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G303"}
    assert "fewer words than it had" in data["findings"][0]["fix"]  # a one-line narrative kept whole is no pointer


@pytest.mark.parametrize("old, new, code", [
    ("Pool exhaustion reproduced in staging.",
     "Pool exhaustion never reproduced in production, so the staging fix is on hold.", None),  # the opposite said
    ("The split held again.", "The queue split held a third time and graduates.", None),
    ("Pool exhaustion reproduced in staging.",
     "Pool exhaustion reproduced in staging. Production never saw it, so the fix is on hold.", "G303"),
    ("Pool exhaustion reproduced in staging.",
     "Pool exhaustion reproduced again in staging. Production never saw it, so the fix is on hold.", "G303"),
])
def test_a_short_narrative_rewritten_with_words_put_into_it_is_no_append(run, repo, old, new, code):
    """Every old word kept in order is an append only where the old text stands whole (one tweak allowed):
    words put between its words make another sentence, which may say the opposite."""
    committed_base(repo, base_text(recent=old))
    stage(repo, base_text(recent=new))
    _, _, codes = check(run, repo)
    assert ("G303" in codes) == (code == "G303"), codes


def test_proven_evidence_altered(run, repo):
    committed_base(repo)
    text = base_text().replace(E_RETRY[2].id, E_BACKOFF[0].id)
    stage(repo, text)
    code, _, codes = check(run, repo)
    assert "G401" in codes and code == 1


def test_protected_zone_loses_a_line(run, repo):
    committed_base(repo)
    stage(repo, base_text(partnership="We decide."))
    code, _, codes = check(run, repo)
    assert code == 1 and codes == {"G402"}


LONG_NARRATIVE = " ".join(["The outage work taught us how the provider fails and how our client amplifies it."] * 30)


def test_catastrophic_shrink(run, repo):
    committed_base(repo, base_text() + "\n## Runbook\n" + LONG_NARRATIVE + "\n")
    stage(repo, base_text() + "\n## Runbook\nOutage work: see the retry patterns.\n")
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G501"}


def test_recent_context_rewritten_into_a_short_narrative_is_no_catastrophic_shrink(run, repo):
    """Recent Context is REWRITTEN: a long narrative folded into two sentences is the protocol working, set
    aside as State's replacement is. What the rest of the file loses in the same change still counts whole."""
    short = "Outage work converged: the budget held; the breaker is next."
    committed_base(repo, base_text(recent=LONG_NARRATIVE))
    stage(repo, base_text(recent=short))
    code, data, codes = check(run, repo)
    assert code == 0 and not codes, data
    committed_base(repo, base_text(recent=LONG_NARRATIVE) + "\n## Runbook\n" + LONG_NARRATIVE + "\n")
    stage(repo, base_text(recent=short) + "\n## Runbook\nOutage work: see the retry patterns.\n")
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G501"}, data


def test_size_budgets(run, repo):
    committed_base(repo)
    stage(repo, base_text(state="x " * 2100))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G502"}
    stage(repo, base_text(state="x " * 1600))
    code, data, codes = check(run, repo)
    assert code == 0 and codes == {"G502"} and data["findings"][0]["severity"] == "warning"
    many = DEVELOPING + [(f"q{i}", f"another developing pattern number {i}") for i in range(4)]
    stage(repo, base_text(developing=developing_lines(many)))
    assert check(run, repo)[2] == {"G503"}


def test_file_budget(run, repo):
    committed_base(repo)
    stage(repo, base_text(recent="word " * 29_000))
    code, _, codes = check(run, repo)
    assert code == 1 and "G504" in codes


def test_flowscript_errors_on_changed_lines(run, repo):
    committed_base(repo)
    stage(repo, base_text(top="- speed >< safety\n- [decided] to ship"))
    code, data, codes = check(run, repo)
    assert code == 1 and {"E001", "E002"} <= codes
    assert {f["line"] for f in data["findings"] if f["code"] in ("E001", "E002")} == {8, 9}


def test_store_is_append_only(run, repo):
    committed_base(repo)
    store = repo / ".flow" / "episodes.jsonl"
    lines = store.read_text().splitlines(keepends=True)
    store.write_text("".join(lines[1:]))
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G701"}


def _store_without_final_newline(repo) -> None:
    store = repo / ".flow" / "episodes.jsonl"
    store.write_bytes(store.read_bytes().rstrip(b"\n"))
    git(repo, "commit", "-qam", "the store lost its final newline", "--no-verify")


def test_bytes_glued_onto_the_last_episode_are_no_append(run, repo):
    committed_base(repo)
    _store_without_final_newline(repo)
    with (repo / ".flow" / "episodes.jsonl").open("ab") as fh:
        fh.write(b' (see ticket 12)\n')  # extends the committed last line: the episode is destroyed
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G701"}, data["findings"]


def test_an_episode_added_after_a_store_without_final_newline_is_an_append(run, repo):
    committed_base(repo)
    _store_without_final_newline(repo)
    res = run(repo, "episode", "add", "--type", "finding", "--session", "s9", "--agent", "a9",
              "the breaker opened before the queue filled")
    assert res.code == 0, res.err
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 0 and not codes, data["findings"]


def test_rules_can_be_switched_off_or_softened(run, repo):
    committed_base(repo)
    (repo / ".flowgit.toml").write_text('[rules]\n"append-not-rewrite" = "warning"\n"protected-zone" = "off"\n')
    old = "We spent the week on the document model. The round trip held on every fixture."
    stage(repo, base_text(recent=old + "\nMore.", partnership="We decide."))
    code, data, codes = check(run, repo)
    assert code == 1 and "G801" in codes  # the same commit cannot loosen the gate that judges it
    git(repo, "reset", "-q")
    git(repo, "add", ".flowgit.toml")
    git(repo, "commit", "-qm", "soften two rules", "--no-verify")
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 0 and codes == {"G303"}


# ------------------------------------------------------------- legitimate
def test_real_compression_three_stale_items_archived(run, repo):
    committed_base(repo)
    kept = [d for d in DEVELOPING if d[0] not in ("p09", "p10", "p11")]
    stage(repo, base_text(developing=developing_lines(kept)))
    code, data, codes = check(run, repo)
    assert code == 0 and codes == set(), data
    stage(repo, base_text(developing=developing_lines(kept, overrides={k: v for k, v in SHORTER.items()
                                                                        if k in ("p01", "p02")})))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G301"}  # archival does not excuse restating the survivors


def test_twelve_to_nine_with_three_archived_is_refused_if_the_rest_is_reworded(run, repo):
    committed_base(repo)
    kept = [d for d in DEVELOPING if d[0] not in ("p10", "p11", "p12")]
    stage(repo, base_text(developing=developing_lines(kept, overrides=SHORTER)))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G301"}, data


def test_three_facts_folded_into_one_graduated_pattern(run, repo):
    two = [E_BACKOFF[0].id, E_BACKOFF[1].id]
    facts = [promote("backoff_jitter", "jittered backoff spreads the retry wave", 2, two),
             promote("backoff_herd", "backoff with jitter avoids a thundering herd", 2, two),
             promote("backoff_queue", "jitter in backoff halves peak queue depth", 2, two[:1] + [E_BACKOFF[2].id])]
    committed_base(repo, base_text(developing="\n".join(facts)))
    folded = promote("backoff_jitter", "jittered backoff spreads retry waves, avoids the herd, halves queue depth",
                     3, [e.id for e in E_BACKOFF], category="RELIABILITY", date="2026-11-30")
    stage(repo, base_text(developing="", proven_extra=folded))
    code, data, codes = check(run, repo)
    assert code == 0 and codes == set(), data


def test_prose_turned_into_flowscript(run, repo):
    committed_base(repo)
    actions = """- gate blocks ungrounded graduations -> wrap safe to run — next: Dec 1
- hook benchmark <- every commit pays for it — next: Dec 2
- trailers review ><[trust vs effort] audit reads them back — seen: Nov 29"""
    stage(repo, base_text(actions=actions))
    code, data, codes = check(run, repo)
    assert code == 0 and codes == set(), data


def test_state_fully_replaced_and_recent_rewritten(run, repo):
    committed_base(repo)
    stage(repo, base_text(state="Focus: the wrap command. Critical path: the plan schema.",
                          top="- the wrap must be one transaction",
                          recent="The gate landed with all its rules; the week's document work now "
                                 "serves both the gate and the wrap."))
    code, data, codes = check(run, repo)
    assert code == 0 and codes == set(), data


def test_grounded_increment_passes(run, repo):
    committed_base(repo)
    stage(repo, with_developing_line("p01", promote("p01", DEVELOPING[0][1], 2, [E_RETRY[0].id, E_RETRY[1].id])))
    code, data, codes = check(run, repo)
    assert code == 0 and codes == set(), data


def test_first_commit_is_checked_too(run, repo):
    (repo / "CONTINUITY.md").write_text(base_text().replace(E_RETRY[2].id, "ep-000000000000"))
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 1 and "G102" in codes


def test_demotion_without_a_reason_is_refused(run, repo):
    committed_base(repo)
    line = next(ln for ln in base_text().splitlines() if ln.startswith("!! retry_budget"))
    demoted = line.replace(f"| 3x (RELIABILITY — {GRADUATED})", "| 2x (RELIABILITY)")
    stage(repo, base_text(developing=developing_lines(DEVELOPING[:11]) + "\n" + demoted).replace(line + "\n", ""))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G205"}


def test_a_case_variant_beside_a_proven_pattern_is_a_duplicate_not_a_proven_exit(run, repo):
    """`! Retry_Budget: … | 1x` added while `retry_budget` stays Proven is G112 (the same name), and no G205:
    the Proven pattern never left."""
    committed_base(repo)
    copy = "! Retry_Budget: cap retries per request | 1x"
    stage(repo, base_text(developing=developing_lines(DEVELOPING[:11]) + "\n" + copy))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G112"}


def test_appended_garbage_in_the_store_warns(run, repo):
    committed_base(repo)
    with (repo / ".flow" / "episodes.jsonl").open("a") as fh:
        fh.write('{"id": "ep-x", "type": "fin\n')
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 0 and codes == {"G702"}


def test_a_staged_file_without_sections_is_rejected(run, repo):
    committed_base(repo)
    stage(repo, "just some notes\n")
    code, data, codes = check(run, repo)
    assert code == 1 and "G001" in codes


def test_a_store_committed_as_a_symbolic_link_is_refused(run, repo):
    committed_base(repo)
    store = repo / ".flow" / "episodes.jsonl"
    (repo / "data").mkdir()
    (repo / "data" / "eps.jsonl").write_bytes(store.read_bytes())
    store.unlink()
    store.symlink_to("../data/eps.jsonl")
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 1 and "G806" in codes, data["findings"]


def test_a_store_directory_committed_as_a_symbolic_link_is_refused(run, repo):
    committed_base(repo)
    git(repo, "mv", ".flow", "memory")
    (repo / ".flow").symlink_to("memory")
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert code == 1 and "G806" in codes, data["findings"]


def test_a_regular_store_beside_an_unrelated_link_passes(run, repo):
    committed_base(repo)
    (repo / "docs").mkdir()
    (repo / "docs" / "latest").symlink_to("../CONTINUITY.md")
    git(repo, "add", "-A")
    code, data, codes = check(run, repo)
    assert "G806" not in codes, data["findings"]


SMALL = """## Current State
Focus: the migration.

## Action Items
{items}
- write the runbook — next: Dec 9

## Developing Knowledge
! p01: retries without any budget multiply the load | 1x
"""


@pytest.mark.parametrize("mark", ["✓ ", "[x] ", ""])
def test_removing_resolved_action_items_is_no_over_compression(run, repo, mark):
    """The lifecycle removes what resolved: twelve items taken out of a short file are set aside as archived
    patterns are, whether an earlier wrap ticked them or this one resolved them ("mark completed items done …
    remove items that resolved naturally": ticked and removed in one wrap, they are in neither version)."""
    items = "\n".join(f"- {mark}deliver the provider migration step {i} with the retry budget — seen: Nov {10 + i}"
                      for i in range(12))
    committed_base(repo, SMALL.format(items=items))
    stage(repo, SMALL.format(items="").replace("\n\n- write", "\n- write"))
    code, data, codes = check(run, repo)
    assert "G501" not in codes, data


def test_action_items_swapped_for_new_ones_make_no_room_for_a_cut_elsewhere(run, repo):
    """Twelve items resolved and twelve new ones of the same size: the section lost nothing on balance, so the
    runbook (a section of one's own) wiped in the same commit is over-compression (G501) as it is alone."""
    old_items = "\n".join(f"- deliver the provider migration step {i} with the retry budget — seen: Nov {10 + i}"
                          for i in range(12))
    new_items = "\n".join(f"- rehearse the rollback drill {i} with the payments on-call team — next: Dec {10 + i}"
                          for i in range(12))
    runbook = "\n\n## Runbook\n" + " ".join(f"Step {i} moved the payment client onto the new provider."
                                            for i in range(25))
    committed_base(repo, SMALL.format(items=old_items).replace("Focus: the migration.",
                                                               "Focus: the migration." + runbook))
    stage(repo, SMALL.format(items=new_items).replace("Focus: the migration.",
                                                      "Focus: x.\n\n## Runbook\nMoved."))
    code, data, codes = check(run, repo)
    assert "G501" in codes, data


def test_action_items_moved_into_another_section_make_no_room_for_a_cut_elsewhere(run, repo):
    """Items moved verbatim out of Action Items (into a `## Backlog` of one's own) are not gone: the runbook
    wiped in the same commit is over-compression (G501) as it is alone."""
    items = "\n".join(f"- deliver the provider migration step {i} with the retry budget — seen: Nov {10 + i}"
                      for i in range(12))
    runbook = "\n\n## Runbook\n" + " ".join(f"Step {i} moved the payment client onto the new provider."
                                            for i in range(25))
    committed_base(repo, SMALL.format(items=items).replace("Focus: the migration.", "Focus: the migration." + runbook))
    stage(repo, SMALL.format(items="").replace("\n\n- write", "\n- write").replace(
        "Focus: the migration.", "Focus: x.\n\n## Runbook\nMoved.") + "\n## Backlog\n" + items + "\n")
    code, data, codes = check(run, repo)
    assert "G501" in codes, data


def test_action_items_reworded_shorter_still_count_toward_a_shrink(run, repo):
    """Only what is gone is set aside: twelve items kept with most of their words, in far fewer characters,
    beside a wiped runbook, are still over-compression (G501)."""
    items = "\n".join(f"- deliver the provider migration step {i} with the retry budget and the runbook, "
                      f"reviewed by the payments team before the Friday freeze — seen: Nov {10 + i}" for i in range(12))
    short = "\n".join(f"- provider migration step {i} retry budget runbook payments" for i in range(12))
    committed_base(repo, SMALL.format(items=items))
    stage(repo, SMALL.format(items=short))
    code, data, codes = check(run, repo)
    assert "G501" in codes, data


def test_finished_items_kept_under_another_bullet_are_not_set_aside(run, repo):
    """Only what is gone is set aside: finished items re-bulleted (kept) do not make room for a wiped runbook
    (a section of one's own: what it loses counts)."""
    items = "\n".join(f"- ✓ deliver the provider migration step {i} with the retry budget" for i in range(24))
    runbook = "\n\n## Runbook\n" + " ".join(f"Step {i} moved the payment client onto the new provider."
                                            for i in range(25))
    committed_base(repo, SMALL.format(items=items).replace("Focus: the migration.", "Focus: the migration." + runbook))
    stage(repo, SMALL.format(items=items.replace("- ✓", "* ✓")).replace("Focus: the migration.",
                                                                        "Focus: x.\n\n## Runbook\nMoved."))
    code, data, codes = check(run, repo)
    assert "G501" in codes, data



def test_an_open_item_sharing_words_does_not_keep_the_finished_ones(run, repo):
    """`- ship the retry budget` (open) is not twelve finished retry-budget items kept: they are gone."""
    items = "\n".join(f"- ✓ deliver the provider migration step {i} with the retry budget — seen: Nov {10 + i}"
                      for i in range(12))
    committed_base(repo, SMALL.format(items=items).replace("- write the runbook", "- ship the retry budget"))
    stage(repo, SMALL.format(items="").replace("\n\n- write the runbook", "\n- ship the retry budget"))
    code, data, codes = check(run, repo)
    assert "G501" not in codes, data


def test_merge_notes_absorbed_and_dropped_are_no_over_compression(run, repo):
    """After many merges the other wraps' quoted narratives can be half the file: the next wrap absorbs them
    and drops them, as the notes ask. The same text as plain lines of a section of one's own, wiped, is still
    over-compression."""
    quoted = "\n".join(f"# | Step {i} moved the payment client onto the new provider with the retry budget."
                       for i in range(30))
    notes = ("\n\n## Recent Context\nThe migration went on.\n# flowgit merge: another wrap (ours 0123456789, "
             "2026-12-01) also rewrote Recent Context; the newer wrap's text is above, the other's below.\n"
             "# Absorb what still matters in the next wrap, then drop these lines.\n" + quoted)
    committed_base(repo, SMALL.format(items="").replace("Focus: the migration.", "Focus: the migration." + notes))
    stage(repo, SMALL.format(items="").replace("Focus: the migration.", "Focus: the migration.\n\n## Recent "
                                                                       "Context\nThe migration moved every step."))
    code, data, codes = check(run, repo)
    assert "G501" not in codes, data
    plain = notes.replace("# | ", "").replace("# flowgit merge:", "Merged:").replace("# Absorb", "Absorb")
    plain = plain.replace("## Recent Context", "## Runbook")  # (what Recent Context loses is set aside: G501 above)
    committed_base(repo, SMALL.format(items="").replace("Focus: the migration.", "Focus: the migration." + plain))
    stage(repo, SMALL.format(items="").replace("Focus: the migration.", "Focus: the migration.\n\n## "
                                                                       "Runbook\nThe migration moved every step."))
    code, data, codes = check(run, repo)
    assert "G501" in codes, data


def test_a_name_with_an_okina_is_one_script_and_its_apostrophe_twin_is_the_same_name(run, repo):
    """`hawaiʻi_cache` is Latin with the ʻokina (no G113); `hawaiʼi_cache`, drawn alike with the apostrophe
    letter, is the same name (G112); a Cyrillic `с` beside the ʻokina is still a mix of scripts (G113)."""
    committed_base(repo)
    okina = "! hawaiʻi_cache: warm the regional cache before deploys | 1x"
    stage(repo, base_text(developing=developing_lines(DEVELOPING[:3]) + "\n" + okina))
    code, data, codes = check(run, repo)
    assert code == 0 and not codes, data
    twin = "! hawaiʼi_cache: warm the cache of the region before a deploy | 1x"
    stage(repo, base_text(developing=developing_lines(DEVELOPING[:3]) + "\n" + okina + "\n" + twin))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G112"}, data
    stage(repo, base_text(developing=developing_lines(DEVELOPING[:3]) + "\n" + okina.replace("_cache", "_сache")))
    code, data, codes = check(run, repo)
    assert code == 1 and codes == {"G113"}, data


@pytest.mark.parametrize("language", ["russian", "japanese", "chinese", "korean", "thai", "lao", "khmer", "burmese"])
def test_a_pattern_in_another_script_graduates_on_episodes_that_record_it_and_not_on_others(run, repo, language):
    """Relevance reads letters of any script: a Russian, Japanese, Chinese, Korean, Thai, Lao, Khmer or Burmese
    pattern is raised on two sessions' episodes that record it (before, no episode in those scripts was ever
    about anything), and an episode about something else is still refused (G104)."""
    from tests.test_evidence import IN_OTHER_SCRIPTS

    line, fired, unrelated = IN_OTHER_SCRIPTS[language]
    name, text = line.split(": ", 1)
    first, second, other = ep(fired, "s11"), ep(fired + " 2", "s12", agent="agent-b"), ep(unrelated, "s13")
    developing = developing_lines(DEVELOPING[:3]) + f"\n! {name}: {text} | 1x"
    committed_base(repo, base_text(developing=developing), [*E_RETRY, first, second, other])
    raised = promote(name, text, 2, [first.id, second.id], category="PERF")
    stage(repo, base_text(developing=developing.replace(f"! {name}: {text} | 1x", raised)))
    code, data, codes = check(run, repo)
    assert code == 0 and not codes, data
    stage(repo, base_text(developing=developing.replace(f"! {name}: {text} | 1x", promote(
        name, text, 2, [first.id, other.id], category="PERF"))))
    code, data, codes = check(run, repo)
    assert code == 1 and "G104" in codes and other.id in next(f["message"] for f in data["findings"]
                                                             if f["code"] == "G104"), data


@pytest.mark.parametrize("path, code", [("CONTINUITY.md", "G803"), (".flow/episodes.jsonl", "G804")])
def test_a_gitlink_of_the_files_own_blob_is_a_file_taken_away(run, repo, path, code):
    """git records a submodule's commit id at a gitlink (mode 160000), not a file, whatever object the id
    names: the memory is gone from every clone, as the audit reads the tree. A real submodule elsewhere is
    nothing the gate judges."""
    committed_base(repo)
    blob = git(repo, "rev-parse", f"HEAD:{path}").strip()
    git(repo, "rm", "-q", "--cached", path)
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{blob},{path}")
    status, data, codes = check(run, repo)
    assert status == 1 and code in codes, data["findings"]
    assert any("gitlink" in f["message"] for f in data["findings"] if f["code"] == code)
    git(repo, "reset", "-q")
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib")
    status, data, codes = check(run, repo)
    assert status == 0 and not codes, data["findings"]

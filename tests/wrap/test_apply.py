"""A plan's Action Item entries applied to a real repository: what each changes, and what it says when it
changes nothing."""

from __future__ import annotations

import json

from tests.conftest import git
from tests.wrap.test_wrap import A2, snapshot, wrap, wrap_repo  # noqa: F401 (fixture)

A2_ID = A2.id

ITEM = "- write the retry budget — seen: Nov 20, next: Nov 25"


def actions_section(repo) -> str:
    text = (repo / "CONTINUITY.md").read_text()
    return text.split("## Action Items\n", 1)[1].split("\n## ", 1)[0]


def test_a_remove_that_names_no_item_is_listed_as_ignored_beside_what_is_committed(run, wrap_repo):
    res = wrap(run, wrap_repo, {"session": "sess-c", "state": "Focus: rollout.",
                                "actions": {"remove": ["retry budget with @lee"]}}, "--json")
    data = json.loads(res.out)
    assert res.code == 0 and data["committed"]
    assert data["ignored"] == [data["ignored"][0]] and data["ignored"][0].startswith(
        "actions.remove 'retry budget with @lee': matches no action item; nothing removed")
    assert '"write the retry budget' in data["ignored"][0]  # the items it could have meant
    assert ITEM in actions_section(wrap_repo)


def test_a_plan_whose_only_entry_removes_nothing_commits_nothing_and_exits_3(run, wrap_repo):
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-c", "actions": {"remove": ["retry budget with @lee"]}})
    assert res.code == 3, (res.out, res.err)
    assert "ignored: actions.remove 'retry budget with @lee': matches no action item" in res.out
    assert "nothing was committed: every requested change was refused or ignored (exit 3)" in res.out
    assert snapshot(wrap_repo) == before


def test_entries_the_item_already_says_are_ignored_and_named(run, wrap_repo):
    res = wrap(run, wrap_repo, {"session": "sess-c", "actions": {"next": {"retry budget": "Nov 25"},
                                                                 "seen": {"retry budget": "Nov 20"}}}, "--json")
    data = json.loads(res.out)
    assert res.code == 3 and data["committed"] is None
    assert [line.split(":", 1)[0] for line in data["ignored"]] == ["actions.seen 'retry budget'",
                                                                   "actions.next 'retry budget'"]
    assert all("the item already says so" in line for line in data["ignored"])


def test_done_and_remove_of_one_item_applied_again_says_both_changed_nothing(run, wrap_repo):
    plan = {"session": "sess-c", "actions": {"done": ["retry budget"], "remove": ["retry budget"]}}
    assert wrap(run, wrap_repo, plan).code == 0
    head = git(wrap_repo, "rev-parse", "HEAD")
    again = json.loads(wrap(run, wrap_repo, plan, "--json").out)
    assert again["exit_code"] == 3 and git(wrap_repo, "rev-parse", "HEAD") == head
    assert again["ignored"][0] == ("actions.done 'retry budget': matches no action item (this plan's `remove` "
                                   "names it: already removed)")
    assert again["ignored"][1].startswith("actions.remove 'retry budget': matches no action item")


def test_a_plan_that_adds_items_and_updates_them_applied_again_changes_nothing(run, wrap_repo):
    plan = {"session": "sess-c", "state": "Focus: breaker.",
            "actions": {"add": ["write breaker ADR — next: 2026-12-08", "rotate the API key — next: 2026-12-05"],
                        "next": {"breaker ADR": "2026-12-10"}, "done": ["rotate the API key"]}}
    assert wrap(run, wrap_repo, plan).code == 0
    section = actions_section(wrap_repo)
    assert "- write breaker ADR — next: 2026-12-10\n" in section and "- ✓ rotate the API key\n" in section
    before = snapshot(wrap_repo)
    for _ in range(2):  # an agent retrying after a timeout: no second commit, no re-opened copy, no error
        again = wrap(run, wrap_repo, plan, "--json")
        data = json.loads(again.out)
        assert again.code == 3 and data["committed"] is None, (again.out, again.err)
        assert snapshot(wrap_repo) == before
    assert "actions.add 'rotate the API key — next: 2026-12-05': already listed ('- ✓ rotate the API key')" \
        in " ".join(data["ignored"])


def test_an_item_added_twice_by_one_plan_goes_in_once(run, wrap_repo):
    plan = {"session": "sess-c", "actions": {"add": ["call the provider", "Call the provider — next: Dec 9"]}}
    data = json.loads(wrap(run, wrap_repo, plan, "--json").out)
    assert actions_section(wrap_repo).count("all the provider") == 1
    assert data["ignored"] == ["actions.add 'Call the provider — next: Dec 9': already listed "
                               "('- call the provider'); left as it is"]


def test_entries_match_items_case_folded_and_composed(run, wrap_repo):
    add = {"session": "sess-c", "actions": {"add": ["Größe des Verbindungspools prüfen", "Schlüssel rotieren",
                                                    "ΟΔΟΣ kartieren"]}}
    assert wrap(run, wrap_repo, add).code == 0
    plan = {"session": "sess-c", "actions": {"done": ["GRÖSSE DES VERBINDUNGSPOOLS"],  # lower(): grösse ≠ größe
                                             "next": {"schlu\u0308ssel": "Dec 9"},  # ü typed decomposed
                                             "remove": ["οδος"]}}  # lower(): οδοσ ≠ οδος
    res = wrap(run, wrap_repo, plan)
    assert res.code == 0, (res.out, res.err)
    section = actions_section(wrap_repo)
    assert "- ✓ Größe des Verbindungspools prüfen\n" in section
    assert "- Schlüssel rotieren — next: Dec 9\n" in section
    assert "ΟΔΟΣ" not in section
    again = json.loads(wrap(run, wrap_repo, {"session": "sess-c", "actions": {"add": ["SCHLÜSSEL rotieren"]}},
                            "--json").out)
    assert again["exit_code"] == 3 and again["ignored"][0].endswith("left as it is")  # the same item


def test_next_or_seen_inside_an_items_own_words_is_no_field(run, wrap_repo):
    """`Plan next: Q1 roadmap` and `Plan next: hiring` were one item: both lost their words after `next:`."""
    assert wrap(run, wrap_repo, {"session": "sess-c", "actions": {"add": ["Plan next: Q1 roadmap with Alice"]}}).code == 0
    res = wrap(run, wrap_repo, {"session": "sess-d", "actions": {"add": ["Plan next: hiring for the data team"]}})
    assert res.code == 0, res.err
    section = actions_section(wrap_repo)
    assert "- Plan next: Q1 roadmap with Alice\n" in section and "- Plan next: hiring for the data team\n" in section


def test_an_item_the_file_numbers_is_the_item_a_plan_adds_again(run, wrap_repo):
    path = wrap_repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace("- ask the provider for their status page",
                                             "1. Ship v2 to staging\n- ask the provider for their status page"))
    git(wrap_repo, "commit", "-qam", "a numbered item")
    res = wrap(run, wrap_repo, {"session": "sess-c", "actions": {"add": ["Ship v2 to staging"]}}, "--json")
    assert res.code == 3 and actions_section(wrap_repo).count("Ship v2 to staging") == 1


def test_a_done_entry_naming_an_item_and_the_plans_own_add_applied_again_changes_nothing(run, wrap_repo):
    """`done: deploy api` beside `add: Deploy api v2 …`: run again, the entry matched both (exit 2)."""
    path = wrap_repo / "CONTINUITY.md"
    path.write_text(path.read_text().replace("- ask the provider", "- Deploy api\n- ask the provider"))
    git(wrap_repo, "commit", "-qam", "an item")
    plan = {"session": "sess-c", "actions": {"done": ["deploy api"], "add": ["Deploy api v2 behind the flag"]}}
    assert wrap(run, wrap_repo, plan).code == 0
    before = snapshot(wrap_repo)
    again = wrap(run, wrap_repo, plan)
    assert again.code == 3, again.err
    assert snapshot(wrap_repo) == before


def test_plan_ops_find_a_pattern_by_its_identity_not_its_exact_spelling(run, wrap_repo):
    """`add Backoff_Jitter` beside Proven `backoff_jitter` is the same pattern (NFKC, case folding, as the
    gate's G112 reads names): ignored, exit 3, nothing written; `archive Cache_First` takes `cache_first`."""
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-c", "patterns": [
        {"op": "add", "name": "Backoff_Jitter", "text": "jittered backoff spreads retry waves"}]})
    assert res.code == 3, (res.out, res.err)
    assert ("ignored: add `Backoff_Jitter`: the pattern already exists as `backoff_jitter`, the same name to "
            "the gate (3x in Proven Knowledge); left as it is") in res.out
    assert snapshot(wrap_repo) == before
    res = wrap(run, wrap_repo, {"session": "sess-c", "patterns": [{"op": "archive", "name": "Cache_First"}]})
    assert res.code == 0, (res.out, res.err)
    assert "cache_first" not in (wrap_repo / "CONTINUITY.md").read_text()


def _note_under(repo, pattern_prefix: str, note: str) -> None:
    """Write ``note`` as a nested line under the pattern line starting with ``pattern_prefix``, committed."""
    path = repo / "CONTINUITY.md"
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(pattern_prefix))
    lines.insert(at + 1, f"  - {note}\n")
    path.write_text("".join(lines))
    git(repo, "commit", "-qam", "a note under a pattern")


def test_an_archived_pattern_takes_the_lines_under_it_along(run, wrap_repo):
    """Left behind, cache_first's note would read as part of retry_budget (2x) above it: the gate's G209."""
    text = (wrap_repo / "CONTINUITY.md").read_text()
    lines = text.splitlines(keepends=True)
    retry = next(i for i, line in enumerate(lines) if line.startswith("!! retry_budget"))
    cache = lines.pop(retry + 1)
    lines.insert(retry, cache)  # cache_first above retry_budget, so its note sits right above the raised one
    (wrap_repo / "CONTINUITY.md").write_text("".join(lines))
    git(wrap_repo, "commit", "-qam", "reorder")
    _note_under(wrap_repo, "! cache_first", "only for balances older than a minute")
    res = wrap(run, wrap_repo, {"session": "sess-c", "patterns": [{"op": "archive", "name": "cache_first"}]})
    assert res.code == 0, (res.out, res.err)
    after = (wrap_repo / "CONTINUITY.md").read_text()
    assert "cache_first" not in after and "older than a minute" not in after
    assert "!! retry_budget" in after


def test_a_pattern_archived_as_stale_takes_the_lines_under_it_along(run, wrap_repo):
    """Cleanup's archival (retry_budget, stale by 2026-12-04) removes the pattern's item whole."""
    _note_under(wrap_repo, "!! retry_budget", "seen in both outages this month")
    path = wrap_repo.parent / "plan.json"
    path.write_text(json.dumps({"session": "sess-c", "state": "Focus: the status page."}))
    res = run(wrap_repo, "wrap", "--plan", str(path), "--date", "2026-12-04", "--json")
    assert res.code == 0, (res.out, res.err)
    assert "retry_budget" in [a["name"] for a in json.loads(res.out)["archived"]]
    after = (wrap_repo / "CONTINUITY.md").read_text()
    assert "retry_budget" not in after and "both outages this month" not in after
    assert "## Proven Knowledge\n!! backoff_jitter" in after  # (the rest of the file as it was)


def test_a_graduation_moves_the_lines_under_the_pattern_and_the_gate_names_them_in_proven(run, wrap_repo):
    """A note under a graduating pattern would read as proven knowledge: the wrap refuses with G406 and
    changes nothing, rather than leave the note behind to read as part of another pattern."""
    _note_under(wrap_repo, "!! retry_budget", "held in both outages")
    before = snapshot(wrap_repo)
    res = wrap(run, wrap_repo, {"session": "sess-c", "patterns": [
        {"op": "graduate", "name": "retry_budget", "evidence": [A2_ID]}]})
    assert res.code != 0 and "G406" in res.out + res.err, (res.out, res.err)
    assert snapshot(wrap_repo) == before


def test_a_refusal_gives_the_fixes_of_its_known_codes_cause_first_and_says_where():
    from flowgit.wrap.apply import REFUSAL_FIXES, Refusal

    assert Refusal("p", "increment", 1, ("r",), ("G999", "G102")).fix == REFUSAL_FIXES["G102"]
    assert Refusal("p", "demote", 3, ("r",)).fix == REFUSAL_FIXES["G206"]
    assert "drop the operation" in Refusal("p", "increment", 1, ("r",)).fix  # no code: no guessed one
    # An episode not about the pattern is why too few count: its fix first, not G103's "cite more sessions"
    both = Refusal("p", "increment", 1, ("r",), ("G103", "G104")).fix
    assert both.startswith(REFUSAL_FIXES["G104"]) and both.endswith(REFUSAL_FIXES["G103"])
    refusal = Refusal("p", "increment", 1, ("r",), ("G103",), where="plan.json: patterns[1]")
    assert refusal.sentence().startswith("plan.json: patterns[1]: `p` stays at 1x")
    assert refusal.sentence(where=False).startswith("`p` stays at 1x")


def test_an_archival_s_reason_is_kept_in_the_commit_message_and_shown_by_show_archived(run, wrap_repo):
    """The plan's `archive` takes a `reason` (the schema lists it); it was written nowhere. It is now a body line
    of the wrap's message, named as the file spells the pattern, which `show-archived` reads back; the trailers
    stay as they were, and the audit is clean."""
    res = wrap(run, wrap_repo, {"session": "sess-c", "patterns": [
        {"op": "archive", "name": "Cache_First", "reason": "balances are read live since the ledger moved"}]})
    assert res.code == 0, (res.out, res.err)
    message = git(wrap_repo, "log", "-1", "--format=%B")
    assert "\nArchived cache_first because: balances are read live since the ledger moved\n" in message
    assert git(wrap_repo, "log", "-1", "--format=%(trailers:key=Archived,valueonly)").strip() == "cache_first"
    shown = run(wrap_repo, "show-archived", "cache_first", "--json")
    assert json.loads(shown.out)["reason"] == "balances are read live since the ledger moved"
    assert "why: balances are read live since the ledger moved" in run(wrap_repo, "show-archived", "cache_first").out
    assert run(wrap_repo, "audit").code == 0
    plain = wrap(run, wrap_repo, {"session": "sess-d", "patterns": [{"op": "archive", "name": "retry_budget"}]})
    assert plain.code == 0 and "because:" not in git(wrap_repo, "log", "-1", "--format=%B")
    assert json.loads(run(wrap_repo, "show-archived", "retry_budget", "--json").out)["reason"] is None

"""Action items: one identity whatever their lifecycle marks; done wins; the later dates win."""

from __future__ import annotations

from flowgit.merge.actions import fields, is_done, item_key, merge_item


def test_the_identity_ignores_tick_bullet_and_lifecycle_fields():
    plain = item_key("- write the retry budget\n")
    assert item_key("* ✓ write the retry budget — seen: Nov 20, next: Nov 25\n") == plain
    assert item_key("- Write the  retry budget, seen: 2026-11-20; next: 2026-11-25") == plain
    assert item_key("- write the retry budget twice") != plain


def test_fields_and_done_are_read_in_both_date_styles():
    assert fields("- x — seen: Nov 20, next: 2026-12-01") == {"seen": "Nov 20", "next": "2026-12-01"}
    assert is_done("1. ✓ x") and not is_done("- x ✓ later")


def test_merge_ticks_and_takes_the_later_dates_keeping_ours_wording():
    ours = "- ✓ write the retry budget — seen: Nov 20, next: Nov 25\n"
    theirs = "- write the retry budget — seen: Nov 26, next: Nov 24\n"
    assert merge_item(ours, theirs) == "- ✓ write the retry budget — seen: Nov 26, next: Nov 25\n"
    assert merge_item("- a — seen: 2026-11-20\r\n", "- ✓ a — seen: 2026-11-21, next: 2026-12-01") == \
        "- ✓ a — seen: 2026-11-21, next: 2026-12-01\r\n"
    assert merge_item("- a — seen: whenever\n", "- a — seen: Nov 21\n") == "- a — seen: whenever\n"


def _with_actions(items: str) -> str:
    from tests.merge.fixtures import BASE

    old = "- write the retry budget — seen: Nov 20, next: Nov 25\n- ask the provider for their status page\n"
    assert BASE.count(old) == 1
    return BASE.replace(old, items)


BLOCK = ("- pay the invoice\n- migrate the database\n  - snapshot before the cutover\n"
         "- rotate the keys\n")


def test_a_sub_task_added_under_an_item_the_other_side_removed_stays_with_its_item():
    """Found by a two-agent run: the sub-task was merged as a line of its own and landed under the item
    before, `pay the invoice`, with no note. It goes with its item: removed on one side and changed on the
    other, the item is kept, sub-tasks and all, and the note says so."""
    from flowgit.merge.continuity import merge_continuity
    from tests.merge.fixtures import store_lookup

    base = _with_actions(BLOCK)
    ours = _with_actions("- pay the invoice\n- rotate the keys\n")
    theirs = _with_actions(BLOCK.replace("  - snapshot before the cutover\n", "  - snapshot before the cutover\n"
                                         "  - revoke the old credentials\n"))
    result = merge_continuity(base, ours, theirs, lookup=store_lookup, newer="ours")
    assert result.clean
    assert ("- pay the invoice\n- migrate the database\n  - snapshot before the cutover\n"
            "  - revoke the old credentials\n- rotate the keys\n") in result.text, result.text
    assert any("migrate the database" in n and "sub-tasks" in n for n in result.notes), result.notes


def test_sub_tasks_changed_on_both_sides_merge_three_ways_under_their_item():
    from flowgit.merge.continuity import merge_continuity
    from tests.merge.fixtures import store_lookup

    base = _with_actions(BLOCK.replace("  - snapshot before the cutover\n",
                                       "  - snapshot before the cutover\n  - tell the team\n"))
    ours = base.replace("- migrate the database\n", "- migrate the database — next: Dec 20\n").replace(
        "  - tell the team\n", "")
    theirs = base.replace("  - tell the team\n", "  - tell the team\n  - check the replicas\n")
    result = merge_continuity(base, ours, theirs, lookup=store_lookup, newer="ours")
    assert ("- migrate the database — next: Dec 20\n  - snapshot before the cutover\n  - check the replicas\n"
            "- rotate the keys\n") in result.text, result.text

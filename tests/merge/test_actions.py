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

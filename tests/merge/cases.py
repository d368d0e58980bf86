"""One case per merge rule: two wraps of the fixture base. The merged files are in ``expected/``."""

from __future__ import annotations

from tests.merge.fixtures import A1, A2, B1, B2, BASE, C, CONTRA, J, edit

RETRY = "!! retry_budget: cap retries per request so outages cannot multiply load"
RETRY_2X = f"{RETRY} | 2x (RELIABILITY) [evidence: {A1.id}, {B1.id}]\n"
CACHE_1X = "! cache_first: serve balances from cache before the provider | 1x"
CACHE_2X = "!! cache_first: serve balances from cache before the provider | 2x (DATA) [evidence: {}, {}]"
DEV_TAIL = CACHE_1X + "\n"
JITTER_EV = "[evidence: " + ", ".join(j.id for j in J[:3]) + "]\n"


CASES: dict[str, tuple[str, str, str]] = {
    # both sides add a new pattern: both kept, ours first
    "both_add": (
        edit(BASE, (DEV_TAIL, DEV_TAIL + "! queue_depth: alert on queue depth before latency | 1x\n")),
        edit(BASE, (DEV_TAIL, DEV_TAIL + "! pool_sizing: size pools from measured concurrency | 1x\n")),
        "theirs"),
    # both raise cache_first 1x -> 2x with different evidence: 2x, evidence unioned;
    # ours graduates retry_budget to Proven, theirs adds evidence at 2x: Proven (it holds), evidence unioned
    "both_raise": (
        edit(BASE, (CACHE_1X, CACHE_2X.format(C[0].id, C[1].id)), (RETRY_2X, ""),
             (JITTER_EV, JITTER_EV + f"{RETRY} | 3x (RELIABILITY — 2026-11-26) "
                                     f"[evidence: {A1.id}, {B1.id}, {A2.id}]\n")),
        edit(BASE, (CACHE_1X, CACHE_2X.format(C[2].id, C[3].id)),
             (RETRY_2X, f"{RETRY} | 2x (RELIABILITY) [evidence: {A1.id}, {B1.id}, {B2.id}]\n")),
        "theirs"),
    # ours demotes backoff_jitter out of Proven, theirs adds evidence to it: the demotion wins, with both
    "raise_vs_demote": (
        edit(BASE,
             ("!! backoff_jitter: jittered backoff spreads retry waves over time | 3x (RELIABILITY — 2026-11-20) "
              + JITTER_EV, ""),
             (DEV_TAIL, DEV_TAIL + "!! backoff_jitter: jittered backoff spreads retry waves over time | 2x (RELIABILITY) "
                                   "[evidence: " + ", ".join(j.id for j in J[:3]) + f"] [demoted 2026-11-26: slower "
                                   f"recovery than a fixed delay ({CONTRA.id})]\n")),
        edit(BASE, (", ".join(j.id for j in J[:3]) + "]", ", ".join(j.id for j in J) + "]")),
        "theirs"),
    # ours renames cache_first (same description), theirs raises it to 2x: the new name at 2x
    "rename_vs_raise": (
        edit(BASE, ("! cache_first: serve", "! serve_from_cache: serve")),
        edit(BASE, (CACHE_1X, CACHE_2X.format(C[0].id, C[1].id))),
        "theirs"),
    # both replace State, Top of Mind and Recent Context: the newer wrap's text, the other as a note
    "both_replace_state": (
        edit(BASE, ("## Current State | 2026-11-24\nFocus: outages. Critical path: retry budget.",
                    "## Current State | 2026-11-26 (ours)\nFocus: cache. Critical path: balances cache."),
             ("- provider storms", "- cache warm-up"),
             ("We chased two outages this week.", "The cache work began after the outages.")),
        edit(BASE, ("## Current State | 2026-11-24\nFocus: outages. Critical path: retry budget.",
                    "## Current State | 2026-11-27 (theirs)\nFocus: jitter. Critical path: backoff tuning."),
             ("- provider storms", "- backoff tuning\n- deploy window"),
             ("We chased two outages this week.", "Backoff tuning followed the second outage.")),
        "theirs"),
    # ours ticks an action item, theirs re-dates it: done, with the later dates
    "actions_done_vs_redated": (
        edit(BASE, ("- write the retry budget — seen", "- ✓ write the retry budget — seen"),
             ("- ask the provider for their status page\n", "")),
        edit(BASE, ("seen: Nov 20, next: Nov 25", "seen: Nov 26, next: Nov 28"),
             ("- ask the provider for their status page\n",
              "- ask the provider for their status page\n- add a cache dashboard — next: Dec 2\n")),
        "theirs"),
    # both change Foundation differently: a real conflict
    "protected_conflict": (
        edit(BASE, ("Write the episode before the pattern.", "Write the episode before the pattern, always.")),
        edit(BASE, ("Write the episode before the pattern.", "Record the episode before the pattern.")),
        "theirs"),
    # both change Foundation the same way: merged
    "protected_identical": (
        edit(BASE, ("Write the episode before the pattern.", "Write the episode before the pattern.\nCite it."),
             ("- provider storms", "- cache")),
        edit(BASE, ("Write the episode before the pattern.", "Write the episode before the pattern.\nCite it.")),
        "theirs"),
}

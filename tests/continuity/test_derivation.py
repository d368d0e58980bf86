"""What derives from a demoted pattern: links read by direction and identity, the re-check note written once."""

from __future__ import annotations

import pytest

from flowgit.continuity.derivation import annotate_dependants, derives_from, link_names
from flowgit.continuity.document import Document
from flowgit.continuity.patterns import parse_pattern

DEMOTED = ("!! retry_budget: cap retries per request | 2x (GENERAL) [evidence: ep-1, ep-2, ep-3] "
           "[demoted 2026-12-03: overload despite cap (ep-9)]")


def doc_of(*lines: str) -> Document:
    return Document.parse("# Continuity\n\n## Developing Knowledge\n" + "".join(ln + "\n" for ln in lines))


def line_of(doc: Document, name: str) -> str:
    return next(ln.rstrip("\n") for ln in doc.lines if ln.startswith(("! " + name, "!! " + name)))


@pytest.mark.parametrize("link, read", [
    ("<- a, b", ("<-", ["a", "b"])),
    ("<-retry_budget", ("<-", ["retry_budget"])),
    ("<-> a", ("<->", ["a"])),
    ("-> a", ("->", ["a"])),
    ("← a", ("←", ["a"])),
    ("demoted 2026-12-03: x", ("", [])),
])
def test_a_link_is_read_as_its_arrow_and_names(link, read):
    assert link_names(link) == read


def test_only_derives_from_and_mutual_links_are_derivations():
    p = parse_pattern("! j: x | 1x [<- Retry_Budget] [-> load_shed] [<-> backoff, jitter] [← cache]")
    assert derives_from(p) == ["Retry_Budget", "backoff", "jitter", "cache"]


def test_patterns_deriving_from_a_demoted_one_by_identity_get_the_note_and_leads_to_does_not():
    doc = doc_of(DEMOTED,
                 "! jitter_a: add jitter | 1x [<- retry_budget]",
                 "! jitter_b: add jitter in bursts | 1x [<- Retry_Budget]",
                 "! jitter_c: spread retries | 1x [<- backoff, retry_budget]",
                 "! jitter_d: spread retries wide | 1x [<- ｒｅｔｒｙ_budget]",
                 "! load_shed: shed load at the edge | 1x [-> retry_budget]",
                 "! retry_budget_v2: a cap per tenant | 1x [<- retry_budget_v1]")
    new, written = annotate_dependants(doc, [], "2026-12-05")
    note = " [derives from retry_budget, demoted 2026-12-03: re-check]"
    assert [r.at.pattern.name for r in written] == ["jitter_a", "jitter_b", "jitter_c", "jitter_d"]
    assert line_of(new, "jitter_b") == "! jitter_b: add jitter in bursts | 1x [<- Retry_Budget]" + note
    assert line_of(new, "jitter_c") == "! jitter_c: spread retries | 1x [<- backoff, retry_budget]" + note
    assert line_of(new, "load_shed") == "! load_shed: shed load at the edge | 1x [-> retry_budget]"
    assert line_of(new, "retry_budget_v2") == "! retry_budget_v2: a cap per tenant | 1x [<- retry_budget_v1]"

"""The unit drawn as a graph (``--format html|mermaid|dot``) saying what the text says of it.

The graph renderers draw each session with the ``topic`` of the response's
deposit and nothing else; that topic is the index's, unchecked. Here each
session is labelled with what its own record makes of it — where it arrived
(its outcome or topic, the claim the text checks), else where it began — led
by its verdict where the record does not confirm it (``provisional:``,
``corrected:``, first, so a label cut short keeps it). The text's reminder
that this is a past trajectory to re-check travels in the response's
``caveat``, which every renderer draws (:mod:`flowgit.report.unitgraph`).
"""

from __future__ import annotations

from typing import Any

from flowgit.ascend.model import Claim, Deposit
from flowgit.ascend.render import find_claim, marked


def label(d: Deposit, claims: list[Claim]) -> str:
    """A session's label as its record has it: where it arrived when that was checked, else where it began."""
    standing = find_claim(claims, d.key, "standing")
    if standing is not None:
        return marked(standing, d.outcome or d.topic)
    return marked(find_claim(claims, d.key, "origin"), d.initial_request or d.topic)


def checked(data: dict[str, Any], members: list[Deposit], single: Deposit | None, claims: list[Claim]) -> dict:
    """The response dict with each drawn session's ``topic`` replaced by its checked :func:`label`."""
    out = dict(data)
    if out.get("unit"):
        deposits = [{**drawn, "topic": label(d, claims)} for drawn, d in zip(out["unit"]["deposits"], members)]
        out["unit"] = {**out["unit"], "deposits": deposits}
    if out.get("single_session") and single is not None:
        out["single_session"] = {**out["single_session"], "topic": label(single, claims)}
    return out


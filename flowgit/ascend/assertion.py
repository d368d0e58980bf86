"""Whether a sentence that holds a claim's words says it happened.

Where a line arrived is read from the end of its session's record, and a
sentence can hold every word of an outcome without asserting it: asked,
hoped or wished for, made a condition, pretended, reported as someone's claim,
called false in the same breath, or taken back by the sentence after it
("Actually no, we rolled it back"; the person's "No, it did not"). Each reads
differently from "it shipped", so each is told apart here, before a verdict.
"""

from __future__ import annotations

import re
from typing import Sequence

# Holds the words without saying they happened: asked ("check whether …"), hoped, wished or planned ("we
# hope …", "I wish …", "next step: …"), a condition ("if …", "until …", "once … we can close"), a modal, a
# pretence ("pretend: …", "imagine …") or someone else's claim ("the blog claimed …").
UNASSERTED_RE = re.compile(
    r"\b(?:whether|if|unless|until|hope[sd]?|hoping|hopefully|expect(?:s|ed|ing)?|assum(?:e|es|ing)|"
    r"suppos(?:e|ing)|maybe|perhaps|plan(?:s|ned)? to|want(?:s|ed)? to|try(?:ing)? to|needs? to|should|would|"
    r"could|might|next step|to ?do|check|verify|see if|wish(?:es|ed|ing)?|if only|pretend(?:s|ed|ing)?|"
    r"imagine|hypothetical(?:ly)?|let'?s say|as if|claim(?:s|ed)?|alleg(?:e|es|ed|edly)|rumou?r(?:s|ed)?)\b",
    re.I)
ONCE_THEN_RE = re.compile(r"\bonce\b.*\b(?:can|will|may|shall)\b|\bonce\b.*'ll\b", re.I)

# Says, in the same sentence, that the words are not so: "…, which is false", "I was wrong when I said …".
DENIED_RE = re.compile(
    r"\b(?:(?:is|was|are|were|been|proved|proven|turned out(?: to be)?)\s+(?:(?:completely|totally|simply|"
    r"just|all|plainly)\s+)?(?:false|wrong|untrue|incorrect|mistaken|not true|a lie|a myth)|wrongly|falsely|"
    r"mistakenly|incorrectly|erroneously)\b", re.I)

# Takes back the sentence before it: a bare "No." or "No, it did not", "Actually no, we rolled it back",
# "That's not true", "Scratch that". "No issues so far" or "No, thanks" take nothing back.
NO = r"(?:(?:actually|wait|hmm|well|sorry)[,:]?\s+)?(?:no|nope|nah)"
RETRACTS_RE = re.compile(
    rf"^{NO}(?:[\s,.;:!—–-]*$|[\s,.;:!—–-]+(?:it|that|this|they|we|he|she|you|i)\s+"
    r"(?:did|does|do|has|have|had|was|were|is|are)(?:n'?t|\s+not|\s+never)\b|[\s,.;:!—–-]+(?:we\s+)?"
    r"(?:rolled|reverted|undid|backed out|took it back))"
    r"|^(?:that'?s|that is|this is|it'?s|it is)\s+(?:not true|not right|false|wrong|incorrect|untrue)\b"
    r"|^(?:not true|false|scratch that|correction)\b", re.I)


def unasserted(sentence: str) -> bool:
    """Whether a sentence holds words without asserting them (:data:`UNASSERTED_RE`, or "once X, we can …":
    a condition still to be met; "once it shipped, we closed it" says it happened)."""
    return bool(UNASSERTED_RE.search(sentence) or ONCE_THEN_RE.search(sentence))


def denied(sentence: str) -> bool:
    """Whether a sentence calls what it holds false (:data:`DENIED_RE`): it says the opposite of its words."""
    return DENIED_RE.search(sentence) is not None


def taken_back(following: Sequence[str]) -> str | None:
    """The sentence right after one that holds the claim, when it takes that one back; else None."""
    after = following[0].strip() if following else ""
    return after if after and RETRACTS_RE.search(after) else None


# May take back the sentence before it, without a "no" that says so for certain: "We rolled it back an hour
# later.", "It was reverted.", "Not really.", the person's "It did not ship, the deploy failed." or "Wrong, …".
# What follows such a sentence is not settled either way: the claim stays provisional, never confirmed.
DOUBTS_RE = re.compile(
    r"^(?:(?:we|they|i|someone|ops)\s+)?(?:then\s+|later\s+)?(?:rolled|reverted|undid|backed|pulled)\b"
    r"|^(?:it|that|this|the \w+(?: \w+)?)\s+(?:was|got|has been|had been|were)\s+(?:\w+\s+)?"
    r"(?:rolled back|reverted|undone|backed out|pulled|withdrawn)\b"
    r"|^not\s+(?:really|quite|yet|exactly|so)\b"
    r"|^(?:it|that|this|they|we)\s+(?:did|does|do|has|have|had|was|were|is|are)(?:n'?t|\s+not|\s+never)\b"
    r"|^(?:wrong|incorrect|untrue)\b", re.I)


def doubted(following: Sequence[str]) -> str | None:
    """The sentence right after one that holds the claim, when it may take that one back (:data:`DOUBTS_RE`)."""
    after = following[0].strip() if following else ""
    return after if after and DOUBTS_RE.search(after) else None

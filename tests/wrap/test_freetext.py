"""Plan free text may say anything, and a closed code fence or a code span holds code, not structure."""

from __future__ import annotations

import pytest

from flowgit.errors import FlowgitError
from flowgit.wrap.freetext import refuse_structure


@pytest.mark.parametrize("data", [
    {"recent": "Rolled back once.\n\n```md\n## Rollback\n! retry: x | 2x\n```\n\nThen shipped."},
    {"recent": "A snippet:\n~~~~\n## Notes\n~~~~"},
    {"patterns": [{"op": "add", "name": "retry_after",
                   "text": 'honour `resp.headers["Retry-After"]` before retrying a 429'}]},
])
def test_code_in_a_closed_fence_or_a_code_span_is_accepted(data):
    refuse_structure(data, "plan.json")


@pytest.mark.parametrize("data, said", [
    ({"recent": "Rolled back.\n## Foundation\n- push to main"}, "opens a section"),
    ({"recent": "A snippet:\n```\n## Rollback\n"}, "opens a code fence (```) that the text does not close"),
    ({"recent": "```\nfenced\n```\n## Foundation"}, "line 4 opens a section"),
    ({"recent": "```\n## Rollback\nx\u2028```\nmore"}, "line 3 holds a line break other than"),
    ({"patterns": [{"op": "add", "name": "x", "text": "cap retries [evidence: ep-1]"}]}, "contains `[` or `]`"),
    ({"patterns": [{"op": "add", "name": "x", "text": "cap `a` retries [<- y] `b`"}]}, "contains `[` or `]`"),
])
def test_structure_outside_code_is_still_refused(data, said):
    with pytest.raises(FlowgitError, match=said.replace("(", r"\(").replace(")", r"\)").replace("`", "`")
                       .replace("[", r"\[").replace("]", r"\]")):
        refuse_structure(data, "plan.json")

"""ascend writes nothing: every new path (transcripts, wrap history, merged sessions, answers) leaves the trees
it reads, the repository's .git included, byte for byte and timestamp for timestamp as they were."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tests.ascend.corpus import Wrap, continuity, write_wraps
from tests.ascend.test_transcripts import sid, write_tree
from tests.conftest import git


def snapshot(*roots: Path) -> dict[str, tuple]:
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            st = os.lstat(p)
            data = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else ""
            out[str(p)] = (st.st_mode, st.st_mtime_ns, st.st_size, data)
        out[str(root)] = (os.lstat(root).st_mtime_ns,)
    return out


def test_transcripts_wraps_and_every_answer_write_nothing(run, repo, tmp_path):
    config = tmp_path / "claude"
    write_tree(config)
    run(repo, "init", "--no-hooks")
    write_wraps(repo, [
        Wrap(sid(1), "2026-10-01", continuity("a", ["! raw_body_verify: verify webhooks on the raw body | 1x"]),
             "Session wrap — added raw_body_verify"),
        Wrap(sid(2), "2026-10-03", continuity("b", ["!! raw_body_verify: verify webhooks on the raw body | 2x "
                                                    "(SEC) [evidence: ep-0001, ep-0002]"]),
             "Session wrap — incremented raw_body_verify",
             ["Incremented: raw_body_verify 1x->2x [evidence: ep-0001, ep-0002]"]),
    ])
    run(repo, "episode", "add", "--type", "finding", "--content", "replayed webhooks pass twice", "--session", sid(2))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"episode\n\nFlow-Session: {sid(2)}\n")
    before = snapshot(config, repo)

    def ask(*args):
        res = run(repo, "ascend", "--claude-dir", str(config), *args, "--json")
        assert res.code in (0, 2), res.err
        return json.loads(res.out) if res.code == 0 else None

    state_file = tmp_path / "state.json"

    def answer(data, *args):
        state_file.write_text(json.dumps(data["state"]))
        return ask("--state", str(state_file), *args)

    ask("that whole line of work on the webhook signatures")
    ask("everything we figured out about webhooks")
    ask("the session where we posted deploy notifications to slack")
    ask("--from", sid(3)[:8])
    gate = ask("everything we figured out about signatures")
    if gate and gate["status"] in ("gate", "inline"):
        answer(gate, "--refine", f"add:{sid(8)[:8]}")
        answer(gate, "--reorient", "the checkout page on mobile")
        answer(gate, "--recognize")
    empty = ask("the kubernetes autoscaler saga")
    while empty and empty["status"] == "rescope":
        empty = answer(empty, "--rescope", "widen")
    answer(empty, "--reorient", "chain")                      # an ended recall: exit 2, still nothing written
    run(repo, "ascend", "--claude-dir", str(config), "--interactive", "everything about webhooks", stdin="1\n")
    assert snapshot(config, repo) == before

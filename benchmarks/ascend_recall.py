"""Recall benchmark for ``flowgit ascend``: labelled corpora, labelled recalls, scored honestly.

Three corpora are built from one library of work stories, each in its own
on-disk format, with its own session ids, dates and projects:

* ``deposits``: hypomnesis deposits (clue, narrative, coinage …) beside the transcripts;
* ``transcripts``: Claude Code transcripts only, no ``hypomnesis/`` anywhere;
* ``wraps``: a git repository whose continuity file went through 50+ wrap commits.

Each story is a line of work (sessions that continue one another and name
the same issue or file), a topic met in scattered fragments (no shared
anchor, varied wording), a concept someone coined and others reused, or a
one-off session. Distractor sessions share words with the stories in
another sense ("retry the CI job", "the Slack webhook", "the Q3 budget"),
and unrelated noise sessions fill the rest. The labels say, for each recall,
the unit type a person means and the sessions it should contain; they were
written from the stories, not from ascend's output.

Scores per corpus: unit-type accuracy (chain / cluster / concept / single
session / nothing there) and member precision, recall and F1 (a "nothing
there" recall scores 1 when nothing is offered, 0 otherwise). When ascend
asks to rescope an empty search, the benchmark answers as a user would
("widen"), as the protocol allows, and counts how often that was needed.

    python benchmarks/ascend_recall.py            # build the corpora in a temp dir, print the scores
"""

from __future__ import annotations

import random
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DAY0 = (2026, 9, 1)


@dataclass
class S:
    """One session of a story: what the person said (first = the request), what came back."""

    key: str
    day: int
    project: str
    said: list[str]
    replies: list[str]
    topic: str
    refs: list[str] = field(default_factory=list)       # anchors the deposit index stores (cross_refs)
    resumes: str | None = None                          # key of the session this one continues
    coins: list[str] = field(default_factory=list)      # terms coined in this session
    outcome: str = ""


# --------------------------------------------------------------------------------------------- stories
CHAINS = {
    "retry": [
        S("retry.1", 2, "payments", ["Payment retries are hammering the provider during its outage, see #412",
                                    "we need a limit per request, not per client"],
          ["Each failed charge retries five times with no backoff."], "retry storms", ["#412"],
          outcome="Measured the storm: five retries per failed charge."),
        S("retry.2", 4, "payments", ["Design a retry budget for the payment client (#412)",
                                    "decided: three retries per request, shared across the downstream calls"],
          ["A per-request allowance shared across calls caps the amplification."], "retry budget design",
          ["#412"], resumes="retry.1", outcome="A budget of three retries per request."),
        S("retry.3", 7, "infra", ["Roll the retry allowance out to the gateway, same ticket #412",
                                 "the gateway should reject calls once a request has spent its retries"],
          ["The gateway now enforces the allowance in staging."], "retry budget rollout", ["#412"],
          resumes="retry.2", outcome="Gateway enforces the budget in staging."),
        S("retry.4", 11, "infra", ["Did the retry cap hold during Saturday's provider outage? closing #412",
                                  "load stayed flat, so the budget works"],
          ["Retries stayed within budget; provider load was flat."], "retry budget in production", ["#412"],
          resumes="retry.3", outcome="The budget held in production; #412 closed."),
    ],
    "webhook": [
        S("hook.1", 3, "shop", ["Stripe webhooks fail signature verification in staging (#88)",
                               "let's verify against the raw body instead of the parsed JSON"],
          ["The body was parsed before verification, so signatures never matched."], "webhook signatures",
          ["#88"], outcome="Verification uses the raw request body."),
        S("hook.2", 6, "shop", ["Replayed webhook events pass verification twice, back on #88",
                               "we need a tolerance window and an event id cache in src/webhooks/verify.py"],
          ["Added a five minute tolerance and an idempotency cache."], "webhook replay protection", ["#88"],
          resumes="hook.1", outcome="Replays rejected after five minutes."),
        S("hook.3", 10, "shop", ["Rotate the signing secret without downtime, follow-up to #88",
                                "src/webhooks/verify.py should accept both secrets until Friday"],
          ["verify.py accepts the old and the new secret during rotation."], "signing secret rotation",
          ["#88"], resumes="hook.2", outcome="Two secrets accepted during the rotation."),
        S("hook.4", 14, "shop", ["Remove the old signing secret now that rotation finished",
                                "done with #88: one secret again in src/webhooks/verify.py"],
          ["Only the new secret verifies now."], "secret rotation cleanup", ["#88"], resumes="hook.3",
          outcome="Rotation finished; #88 closed."),
    ],
    "postgres": [
        S("pg.1", 20, "infra", ["Plan the Postgres 16 upgrade for the ledger database, ticket DB-41",
                               "we must keep the replication slots during the upgrade"],
          ["pg_upgrade with link mode keeps the downtime under ten minutes."], "postgres upgrade plan",
          ["DB-41"], outcome="Upgrade plan written."),
        S("pg.2", 23, "infra", ["Dry run of the database upgrade on the staging replica (DB-41)",
                               "the extension versions broke, we should upgrade pg_partman first"],
          ["The dry run failed on pg_partman; upgraded it first and reran."], "upgrade dry run", ["DB-41"],
          resumes="pg.1", outcome="Dry run passed after the extension upgrade."),
        S("pg.3", 27, "infra", ["Cut over production ledger to PG16 tonight, DB-41",
                               "cutover done, replication slots survived"],
          ["Cutover took seven minutes."], "production cutover", ["DB-41"], resumes="pg.2",
          outcome="Production runs Postgres 16."),
    ],
    "search": [
        S("srch.1", 30, "web", ["The product search index rebuild takes four hours, SRCH-12",
                               "let's build the index incrementally from the change feed"],
          ["Full rebuilds reread every product."], "search indexing", ["SRCH-12"],
          outcome="Incremental indexing designed."),
        S("srch.2", 34, "web", ["Implement the change-feed indexer for SRCH-12",
                               "decided: one consumer per shard, checkpoints every thousand events"],
          ["The indexer consumes the change feed per shard."], "change feed indexer", ["SRCH-12"],
          resumes="srch.1", outcome="Indexer running in staging."),
        S("srch.3", 38, "web", ["Backfill and switch search reads to the new index (SRCH-12)",
                               "switch reads once the backfill catches up"],
          ["Reads switched; the rebuild job is gone."], "search index switch-over", ["SRCH-12"],
          resumes="srch.2", outcome="New index live; four hour rebuild removed."),
    ],
    "invoice": [
        S("inv.1", 41, "payments", ["Invoice PDFs render with broken umlauts, #57",
                                   "we should embed the fonts instead of relying on the system ones"],
          ["The renderer fell back to a font without the glyphs."], "invoice pdf fonts", ["#57"],
          outcome="Fonts embedded."),
        S("inv.2", 44, "payments", ["Invoice PDF generation is too slow for month end, still #57",
                                   "render invoices in a worker pool and cache the templates"],
          ["Templates were compiled per invoice."], "invoice rendering speed", ["#57"], resumes="inv.1",
          outcome="Month-end run dropped from two hours to twenty minutes."),
        S("inv.3", 48, "payments", ["Archive rendered invoices to object storage and close #57",
                                   "keep the PDFs for ten years as the auditors asked"],
          ["Rendered PDFs go to the archive bucket with a ten year lock."], "invoice archive", ["#57"],
          resumes="inv.2", outcome="Invoices archived; #57 closed."),
    ],
}

CLUSTERS = {
    "flags": [
        S("flag.1", 5, "web", ["Clean up stale feature flags in the checkout code",
                              "remove every feature flag that has been fully on for a month"],
          ["Removed eleven stale flags."], "feature flag cleanup", outcome="Stale flags removed."),
        S("flag.2", 25, "payments", ["How should we name feature flags across services?",
                                    "prefix each feature flag with the owning team"],
          ["Agreed on team-prefixed flag names."], "feature flag naming", outcome="Naming convention agreed."),
        S("flag.3", 46, "web", ["Tests flake when a feature flag differs between environments",
                               "pin feature flags explicitly in the test fixtures"],
          ["Fixtures now pin flags."], "feature flags in tests", outcome="Flags pinned in fixtures."),
    ],
    "tracing": [
        S("trace.1", 8, "infra", ["Add OpenTelemetry tracing spans around the payment calls",
                                 "every outbound call gets a tracing span with the tenant id"],
          ["Spans added around the provider client."], "tracing spans", outcome="Spans on all outbound calls."),
        S("trace.2", 29, "infra", ["Our tracing bill doubled, what sampling rate should we use?",
                                  "sample ten percent of traces but keep every error trace"],
          ["Tail sampling keeps errors and samples the rest."], "trace sampling",
          outcome="Tail-based trace sampling at ten percent."),
        S("trace.3", 49, "web", ["Put trace ids into the web app logs so support can find requests",
                                "log the trace id on every request line"],
          ["Logs now carry the trace id."], "trace ids in logs", outcome="Trace ids in every log line."),
    ],
    "ratelimit": [
        S("rl.1", 12, "web", ["Public API needs rate limiting before the launch",
                             "a token bucket per API key, a hundred requests a minute"],
          ["Token bucket per key at the edge."], "api rate limiting", outcome="Rate limits at the edge."),
        S("rl.2", 32, "payments", ["Big tenants hit the rate limit during imports",
                                  "give each tenant its own rate limit quota, configurable"],
          ["Per-tenant rate limit quotas added."], "tenant rate limit quotas", outcome="Per-tenant quotas."),
        S("rl.3", 52, "web", ["Clients ignore our 429 responses and keep hammering",
                             "send Retry-After with every rate limit rejection"],
          ["429 responses now carry Retry-After."], "rate limit responses", outcome="Retry-After on every 429."),
    ],
    "onboarding": [
        S("onb.1", 9, "web", ["Write onboarding docs for new engineers joining the web team",
                             "start the onboarding guide with running the app locally"],
          ["Drafted the local setup chapter."], "onboarding guide", outcome="Onboarding guide drafted."),
        S("onb.2", 36, "infra", ["New hires get stuck on VPN access, add it to onboarding",
                                "onboarding checklist should include VPN and on-call tools"],
          ["Checklist extended."], "onboarding checklist", outcome="Onboarding checklist covers access."),
        S("onb.3", 55, "payments", ["Record a walkthrough video for onboarding onto the payments code",
                                   "onboarding video: the charge flow end to end"],
          ["Outline for the onboarding video."], "onboarding video", outcome="Video outline ready."),
    ],
}

CONCEPTS = {
    "boring-deploys": [
        S("bd.1", 15, "infra", ["Deploys keep going wrong on Fridays, what is the pattern?",
                               "let's call it boring-deploys: small, reversible, at ten in the morning"],
          ["Small reversible morning deploys reduce incidents."], "deploy practice", coins=["boring-deploys"],
          outcome="The team adopts small morning deploys."),
        S("bd.2", 33, "web", ["Apply boring-deploys to the web app release train",
                             "boring-deploys means the release train ships daily and tiny"],
          ["Daily small releases."], "web release train", coins=[], outcome="Daily releases."),
        S("bd.3", 50, "payments", ["The payments release broke boring-deploys, postmortem",
                                  "boring-deploys again: never bundle a migration with a feature"],
          ["Migration and feature went out together."], "release postmortem", outcome="Migrations ship alone."),
    ],
    "two-key": [
        S("tk.1", 18, "payments", ["Who may trigger refunds above ten thousand euros?",
                                  "we will call it the two-key rule: two people approve large refunds"],
          ["Refunds above the threshold need a second approver."], "refund approvals", coins=["two-key"],
          outcome="Large refunds need two approvers."),
        S("tk.2", 40, "infra", ["Production database access should follow two-key as well",
                               "two-key for prod shell: a second engineer approves the session"],
          ["Prod shell sessions now need approval."], "prod access approvals", outcome="Prod access is two-key."),
    ],
    "ryw-window": [
        S("ryw.1", 21, "web", ["Users see stale profile data right after saving it",
                              "name it the ryw-window: reads go to the primary for five seconds after a write"],
          ["Reads after writes hit the primary for five seconds."], "read your writes", coins=["ryw-window"],
          outcome="Reads pinned to the primary after writes."),
        S("ryw.2", 43, "payments", ["Balance page stale after a transfer, use the ryw-window there too",
                                   "the ryw-window should cover the balance endpoint"],
          ["Balance reads honour the window."], "balance staleness", outcome="Balance page consistent."),
    ],
}

SINGLES = [
    S("one.login", 13, "web", ["Fix the flaky login test in the selenium suite",
                              "wait for the session cookie instead of sleeping"],
      ["The test now waits for the cookie."], "flaky login test", outcome="Login test stable."),
    S("one.node", 26, "web", ["Upgrade the web app from Node 18 to Node 20",
                             "bump the docker base image too"],
      ["Node 20 in CI and the image."], "node upgrade", outcome="Running on Node 20."),
    S("one.leak", 37, "infra", ["The image resize worker leaks memory until it is OOM killed",
                               "the leak is the sharp cache, disable it"],
      ["Disabling the sharp cache fixed the leak."], "image worker memory leak", outcome="Leak fixed."),
]

DISTRACTORS = [
    S("x.ci", 16, "web", ["Retry the failed CI job and tell me why it failed",
                         "it was a network blip, retry it once more"], ["Passed on retry."], "ci retry"),
    S("x.slack", 17, "infra", ["Post deploy notifications to the Slack webhook",
                              "use the incoming webhook for the deploys channel"], ["Posting works."],
      "slack notifications"),
    S("x.budget", 19, "payments", ["Summarise the Q3 budget spreadsheet for the team meeting",
                                  "the cloud budget line grew the most"], ["Summary written."], "q3 budget"),
    S("x.search", 22, "web", ["The search bar overlaps the logo on small screens",
                             "fix the CSS of the search input"], ["Fixed with flex-wrap."], "search bar css"),
    S("x.flag", 24, "web", ["Country flag emoji render as letters on Windows",
                           "ship a flag sprite instead"], ["Sprite added."], "flag emoji"),
    S("x.sign", 28, "shop", ["Write a blog post about the signature dishes of our restaurant customers",
                            "make it about their signature recipes"], ["Drafted."], "blog post"),
    S("x.invoice", 31, "payments", ["Explain the invoice numbering scheme to the accountant",
                                   "numbers are per year and per entity"], ["Explained."], "invoice numbering"),
    S("x.trace", 35, "infra", ["Stack trace in the cron logs, what does it mean?",
                              "the stack trace points at a missing env var"], ["Missing env var."], "cron error"),
]

NOISE_TOPICS = [
    ("Rename the user settings component", "component rename"),
    ("Why is the docker build so slow on CI?", "docker build cache"),
    ("Add dark mode to the admin dashboard", "admin dark mode"),
    ("Translate the checkout page into French", "checkout translation"),
    ("Set up dependabot for the monorepo", "dependabot"),
    ("Draft the quarterly engineering update email", "engineering update"),
    ("Refactor the CSV export to stream rows", "csv export"),
    ("Review the pull request that adds SSO", "sso review"),
    ("Configure log retention to thirty days", "log retention"),
    ("Explain the difference between our two queue libraries", "queue libraries"),
    ("Tidy the README of the infra repo", "readme tidy"),
    ("Why does the cron job run twice at DST changes?", "cron dst"),
]


def noise(rng: random.Random, n: int, start: int) -> list[S]:
    out = []
    for i in range(n):
        text, topic = NOISE_TOPICS[i % len(NOISE_TOPICS)]
        out.append(S(f"noise.{i}", start + rng.randrange(0, 56), rng.choice(["web", "infra", "payments", "shop"]),
                     [text, "keep it small, one change"], ["Done."], topic))
    return out


def library(rng: random.Random) -> list[S]:
    sessions = [s for group in (*CHAINS.values(), *CLUSTERS.values(), *CONCEPTS.values()) for s in group]
    return sessions + SINGLES + DISTRACTORS + noise(rng, 12, 1)


# --------------------------------------------------------------------------------------------- recalls
@dataclass
class Recall:
    text: str
    kind: str            # chain | cluster | concept | single | none
    members: list[str]   # session keys


def recalls() -> list[Recall]:
    keys = lambda group: [s.key for s in group]  # noqa: E731
    return [
        Recall("that whole line of work on the retry budget", "chain", keys(CHAINS["retry"])),
        Recall("where did the payment retries thing land in the end", "chain", keys(CHAINS["retry"])),
        Recall("the webhook signature saga from the start", "chain", keys(CHAINS["webhook"])),
        Recall("how did the postgres upgrade unfold", "chain", keys(CHAINS["postgres"])),
        Recall("the whole thread on the search index rebuild", "chain", keys(CHAINS["search"])),
        Recall("where did we end up with the invoice PDFs", "chain", keys(CHAINS["invoice"])),
        Recall("everything we figured out about feature flags", "cluster", keys(CLUSTERS["flags"])),
        Recall("all we learned about tracing", "cluster", keys(CLUSTERS["tracing"])),
        Recall("everything about rate limiting", "cluster", keys(CLUSTERS["ratelimit"])),
        Recall("everything we know about onboarding", "cluster", keys(CLUSTERS["onboarding"])),
        Recall("the principle we ended up calling boring-deploys", "concept", keys(CONCEPTS["boring-deploys"])),
        Recall("what we called the two-key rule", "concept", keys(CONCEPTS["two-key"])),
        Recall("the idea we named ryw-window", "concept", keys(CONCEPTS["ryw-window"])),
        Recall("the session where we fixed the flaky login test", "single", ["one.login"]),
        Recall("that session when we upgraded node", "single", ["one.node"]),
        Recall("the time we chased the memory leak in the image worker", "single", ["one.leak"]),
        # harder wordings: the person's words are not the sessions' words
        Recall("how the gateway retry allowance held up across sessions", "chain", keys(CHAINS["retry"])),
        Recall("everything we learned about observability", "cluster", keys(CLUSTERS["tracing"])),
        Recall("that boring deploys idea of ours", "concept", keys(CONCEPTS["boring-deploys"])),
        Recall("the session when we fixed the login test that kept flaking", "single", ["one.login"]),
        Recall("the kubernetes autoscaler saga", "none", []),
        Recall("everything we figured out about graphql federation", "none", []),
    ]


# --------------------------------------------------------------------------------------------- corpora
def _date(day: int) -> str:
    from datetime import date, timedelta

    return (date(*DAY0) + timedelta(days=day)).isoformat()


def _sid(rng: random.Random) -> str:
    import uuid

    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _keywords(s: S) -> list[str]:
    """What an indexer would pick: the session's own frequent content words (not hand-chosen)."""
    from flowgit.ascend.transcripts import keywords_of

    return keywords_of(s.said)[:8]


def _session(s: S, sid: str, ids: dict[str, str], slug_of, rng: random.Random):
    from tests.ascend.corpus import Session

    turns = []
    for i, said in enumerate(s.said):
        turns.append(("user", said))
        if i < len(s.replies):
            turns.append(("assistant", s.replies[i]))
    refs = [{"kind": "github_issue" if r.startswith("#") else "memory", "ref": r, "channel": "user"}
            if rng.random() < 0.7 else r for r in s.refs]   # some deposits predate structured anchors
    return Session(slug_of(s.project), sid, f"/home/dev/{s.project}", _date(s.day), s.said[0], [s.topic],
                   _keywords(s), utterances=s.said[1:2], cross_refs=refs, origin=s.said[0],
                   outcome=s.outcome or s.replies[-1], coined=[(c, 0.9) for c in s.coins],
                   transcript=turns, start_hour=9 + s.day % 8)


def build_deposits(root: Path, seed: int = 1) -> tuple[Path, dict[str, str]]:
    """A deposit tree: every session has a hypomnesis deposit and its transcript."""
    from tests.ascend.corpus import write_noise, write_session

    rng = random.Random(seed)
    config = root / "claude"
    sessions = library(rng)
    ids = {s.key: _sid(rng) for s in sessions}
    successors: dict[str, list[str]] = {}
    for s in sessions:
        if s.resumes:
            successors.setdefault(s.resumes, []).append(ids[s.key])
    for s in sessions:
        session = _session(s, ids[s.key], ids, lambda p: f"-home-dev-{p}", rng)
        session.continuations = successors.get(s.key, [])
        # concept reuse: later sessions name the coined term in their index
        session.marker_coinage = [c for c in CONCEPTS if any(c in t for t in s.said)]
        write_session(config, session)
    write_noise(config, "-home-dev-web")
    return config, ids


def build_transcripts(root: Path, seed: int = 2) -> tuple[Path, dict[str, str]]:
    """Transcripts only: Claude Code's own files, a resumed session carrying its predecessor's lines."""
    from tests.ascend.corpus import write_transcript

    rng = random.Random(seed)
    config = root / "claude"
    sessions = library(rng)
    ids = {s.key: _sid(rng) for s in sessions}
    for s in sessions:
        session = _session(s, ids[s.key], ids, lambda p: f"-Users-sam-code-{p}", rng)
        write_transcript(config, session, carried_from=ids[s.resumes] if s.resumes else None)
    return config, ids


def _pattern_story() -> list[tuple[str, str, list[str], list[str]]]:
    """Per session key: (pattern name, pattern text, trailer kinds …) — how each story shows in the file."""
    out = []
    names = {"retry": "retry_budget", "webhook": "webhook_raw_body", "postgres": "pg16_upgrade",
             "search": "incremental_index", "invoice": "invoice_pdf_pipeline"}
    for story, group in CHAINS.items():
        for i, s in enumerate(group):
            out.append((s.key, names[story], s.said[1], i))
    for story, group in CLUSTERS.items():
        for s in group:
            name = "_".join(w for w in s.topic.replace("-", " ").split())[:40]
            out.append((s.key, name, s.said[1], 0))
    for story, group in CONCEPTS.items():
        for i, s in enumerate(group):
            out.append((s.key, story.replace("-", "_"), s.said[1], i))
    for s in SINGLES + DISTRACTORS:
        out.append((s.key, s.topic.replace(" ", "_").replace("-", "_"), s.said[1], 0))
    return out


def build_wraps(root: Path, seed: int = 3) -> tuple[Path, dict[str, str]]:
    """A repository whose continuity file went through one wrap per session (50+), in date order."""
    from tests.ascend.corpus import Wrap, continuity, write_wraps

    rng = random.Random(seed)
    repo = root / "repo"
    repo.mkdir(parents=True)
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "config", "user.name", "bench"], cwd=repo, check=True)
    subprocess.run(["git", "config", "user.email", "bench@example.com"], cwd=repo, check=True)
    subprocess.run(["git", "config", "commit.gpgsign", "false"], cwd=repo, check=True)
    sessions = {s.key: s for s in library(rng)}
    ids = {k: _sid(rng) for k in sessions}
    plan = {key: (name, text, step) for key, name, text, step in _pattern_story()}
    order = sorted(sessions.values(), key=lambda s: (s.day, s.key))
    live: dict[str, tuple[int, list[str], str]] = {}   # name -> (level, evidence, derivation)
    wraps = []
    texts: dict[str, str] = {}
    episode = 0
    for s in order:
        trailers: list[str] = []
        if s.key in plan:
            name, text, step = plan[s.key]
            text = text.replace("|", "/")
            if name not in live:
                live[name] = (1, [], "")
                subject = f"added {name}"
            else:
                level, ev, link = live[name]
                new = [f"ep-{episode + i:06x}" for i in range(2 if level == 1 else 1)]
                episode += len(new)
                level = min(level + 1, 3)
                live[name] = (level, ev + new, link)
                kind = "Graduated" if level == 3 else "Incremented"
                trailers.append(f"{kind}: {name} " + (f"{level - 1}x->{level}x " if kind == "Incremented" else "")
                                + f"[evidence: {', '.join(ev + new)}]")
                subject = f"{kind.lower()} {name}"
            texts[name] = text
        else:
            subject = "state and context updated"
        dev = [_pattern_line(n, texts[n], lvl, ev) for n, (lvl, ev, _) in live.items() if lvl < 3]
        proven = [_pattern_line(n, texts[n], lvl, ev) for n, (lvl, ev, _) in live.items() if lvl == 3]
        state = f"Focus: {s.topic}. {s.said[0]}"
        wraps.append(Wrap(ids[s.key], _date(s.day), continuity(state, dev, proven),
                          f"Session wrap {_date(s.day)} — {subject}", trailers))
    write_wraps(repo, wraps)
    return repo, ids


def _pattern_line(name: str, text: str, level: int, evidence: list[str]) -> str:
    if level == 1:
        return f"! {name}: {text} | 1x"
    bang = "!!"
    cat = "(PRACTICE)" if level == 2 else "(PRACTICE — 2026-11-01)"
    return f"{bang} {name}: {text} | {level}x {cat} [evidence: {', '.join(evidence)}]"


# --------------------------------------------------------------------------------------------- scoring
@dataclass
class Outcome:
    recall: Recall
    kind: str
    members: list[str]
    rescoped: int
    precision: float
    recall_: float
    f1: float


def _predict(engine, text: str, partitions: list[str]) -> tuple[str, list[str], int]:
    """Run the protocol as a user would: answer an empty search with "widen" until it ends."""
    response = engine.start(text, partitions=partitions)
    rescoped = 0
    while response.status == "rescope":
        rescoped += 1
        response = engine.answer(response.state, "rescope", "widen")
    if response.status == "single_session":
        return "single", [response.single.sid], rescoped
    if response.unit is None:
        return "none", [], rescoped
    return response.unit.type, [d.sid for d in response.unit.members], rescoped


def score(new_engine, partitions: list[str], ids: dict[str, str]) -> list[Outcome]:
    """Each recall in a fresh engine, as each ``flowgit ascend`` run reads afresh."""
    by_sid = {v: k for k, v in ids.items()}
    out = []
    for r in recalls():
        kind, sids, rescoped = _predict(new_engine(), r.text, partitions)
        got = {by_sid.get(s, s) for s in sids}
        want = set(r.members)
        if r.kind == "none":
            p = rc = f1 = 1.0 if not got else 0.0
        else:
            hit = len(got & want)
            p = hit / len(got) if got else 0.0
            rc = hit / len(want)
            f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
        out.append(Outcome(r, kind, sorted(got), rescoped, p, rc, f1))
    return out


def run_corpus(name: str, cfg, claude_dir: Path, partitions: list[str], ids: dict[str, str]) -> dict:
    from flowgit.ascend.engine import Ascend

    outcomes = score(lambda: Ascend(cfg, claude_dir, partitions), partitions, ids)
    typed = sum(1 for o in outcomes if o.kind == o.recall.kind) / len(outcomes)
    return {"corpus": name, "recalls": len(outcomes), "type_accuracy": typed,
            "precision": statistics.mean(o.precision for o in outcomes),
            "recall": statistics.mean(o.recall_ for o in outcomes),
            "f1": statistics.mean(o.f1 for o in outcomes),
            "rescoped": sum(1 for o in outcomes if o.rescoped), "outcomes": outcomes}


def evaluate(base: Path) -> list[dict]:
    from flowgit.config import load_config

    results = []
    config, ids = build_deposits(base / "deposits")
    empty_repo = base / "plain"
    empty_repo.mkdir()
    results.append(run_corpus("deposits", load_config(empty_repo), config, ["claude", "transcripts"], ids))
    config, ids = build_transcripts(base / "transcripts")
    results.append(run_corpus("transcripts", load_config(empty_repo), config, ["claude", "transcripts"], ids))
    repo, ids = build_wraps(base / "wraps")
    nothing = base / "no-claude"
    nothing.mkdir()
    results.append(run_corpus("wraps", load_config(repo), nothing, ["git"], ids))
    return results


def report(results: list[dict], verbose: bool = False) -> None:
    print(f"  {'corpus':<12} {'recalls':>7} {'type acc':>9} {'precision':>9} {'recall':>7} {'F1':>6} {'rescoped':>8}")
    for r in results:
        print(f"  {r['corpus']:<12} {r['recalls']:>7} {r['type_accuracy']:>9.1%} {r['precision']:>9.3f} "
              f"{r['recall']:>7.3f} {r['f1']:>6.3f} {r['rescoped']:>8}")
        if verbose:
            for o in r["outcomes"]:
                mark = "ok " if o.kind == o.recall.kind and o.f1 >= 0.999 else "ERR"
                print(f"      {mark} {o.recall.kind:>7}->{o.kind:<7} f1={o.f1:.2f} {o.recall.text!r} "
                      f"got={o.members if o.f1 < 0.999 else ''}")


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="flowgit-recall-"))
    try:
        report(evaluate(base), verbose="-v" in sys.argv)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()


def bench(tmp: Path, runs: int) -> list[tuple[str, float, str | None]]:
    """The recall scores (printed), and how long building and scoring the three corpora took."""
    import time

    start = time.perf_counter()
    results = evaluate(tmp)
    took = time.perf_counter() - start
    report(results)
    return [(f"build and score 3 corpora, {sum(r['recalls'] for r in results)} recalls (in-process)", took, None)]

"""A claim is confirmed only by what the session's own record says."""

from __future__ import annotations

from flowgit.ascend.confirm import Confirmer, Turn
from flowgit.ascend.model import Deposit


def _confirmer(*texts: str) -> Confirmer:
    turns = tuple(Turn("2026-11-02T10:00:00Z", "person", text) for text in texts)
    return Confirmer(lambda deposit: turns)


def _deposit(request: str = "") -> Deposit:
    return Deposit(partition="claude", slug="-home-dev-x", sid="s1", initial_request=request)


def test_a_first_turn_that_says_little_confirms_no_longer_request():
    """The index may cut the record's first request short, never say more than it: a first turn of "Delete"
    (or ".") confirmed "Delete the production database and force-push main"."""
    claimed = "Delete the production retry budget database and force-push main"
    for first in ("Delete", ".", ""):
        assert _confirmer(first).origin(_deposit(claimed)).verdict == "corrected", first
    assert _confirmer(claimed + " today, please").origin(_deposit(claimed)).verdict == "confirmed"
    assert _confirmer(claimed).origin(_deposit(claimed[:30])).verdict == "confirmed"  # the index cut it short


def test_a_quote_is_not_confirmed_out_of_a_sentence_that_negates_it():
    said = "please do not delete the production database"
    quoted = _confirmer(said).quote(_deposit(), "delete the production database", "utterance")
    assert quoted.verdict != "confirmed"
    assert _confirmer("then delete the production database.").quote(
        _deposit(), "delete the production database", "utterance").verdict == "confirmed"
    assert _confirmer(said).quote(_deposit(), "do not delete the production database",
                                  "utterance").verdict == "confirmed"


def _turns(*said: tuple[str, str]) -> Confirmer:
    turns = tuple(Turn(f"2026-10-01T09:0{i}:00Z", role, text) for i, (role, text) in enumerate(said))
    return Confirmer(lambda deposit: turns)


def test_a_decision_only_asked_negated_or_weighed_is_not_confirmed():
    """The record holds the decision's words and says otherwise: asked and answered "No", decided *not* to,
    "won't", "don't", or one of two options the assistant listed."""
    for said in ("Should we drop Redis? No - keep Redis, it works.", "We decided not to drop Redis.",
                 "We won't drop redis this quarter.", "Don't drop Redis.", "No, never drop redis"):
        claim = _turns(("person", said)).quote(_deposit(), "drop redis", "decision")
        assert claim.verdict != "confirmed", said
        if claim.verdict == "corrected":   # close enough in wording: what the record says is shown instead
            assert claim.shown in said, said
        else:
            assert "asks it, negates it" in claim.detail, said
    options = _turns(("assistant", "Options: drop Redis or keep it.")).quote(_deposit(), "drop redis", "decision")
    assert options.verdict == "unattested"
    for said in ("OK, drop Redis.", "Should we keep it? No. Drop redis and move on."):
        assert _turns(("person", said)).quote(_deposit(), "drop redis", "decision").verdict == "confirmed", said


def test_an_outcome_the_record_negates_is_corrected_to_the_record():
    deposit = Deposit(partition="claude", slug="-p", sid="s2", outcome="We decided to drop Redis.")
    claim = _turns(("user", "Revisit the session store"), ("assistant", "Options: drop Redis or keep it."),
                   ("person", "We decided not to drop Redis.")).standing(deposit)
    assert claim.verdict == "corrected" and claim.shown == "We decided not to drop Redis."
    asked = _turns(("person", "Should we drop Redis?"), ("assistant", "Keeping it.")).standing(deposit)
    assert asked.verdict == "unattested"                   # a question settles nothing
    said = _turns(("person", "Should we drop Redis?"), ("person", "Yes: we decided to drop Redis.")).standing(deposit)
    assert said.verdict == "confirmed"


def test_an_outcome_the_record_says_with_one_word_changed_is_corrected_not_confirmed():
    """"A claim is confirmed only when the record holds all of it": the index says production, the record
    says staging. Most words match; the one that differs is the fact."""
    deposit = Deposit(partition="claude", slug="-p", sid="s3", outcome="The gateway enforces the budget in production.")
    claim = _turns(("person", "Roll the retry budget out to the gateway"),
                   ("assistant", "The gateway enforces the budget in staging.")).standing(deposit)
    assert claim.verdict == "corrected" and claim.shown == "The gateway enforces the budget in staging."
    whole = _turns(("person", "Roll the retry budget out to the gateway"),
                   ("assistant", "Done: the gateway enforces the budget in production now.")).standing(deposit)
    assert whole.verdict == "confirmed"


def test_the_line_does_not_arrive_where_its_record_says_it_did_not(run, tmp_path):
    """On disk: vector.md's decision and the narrative's outcome say "drop Redis"; the transcripts ask it,
    answer "No" and decide not to. Neither is shown as settled fact."""
    import json

    from tests.ascend.corpus import Session, write_session

    config, issue = tmp_path / "claude", {"kind": "github_issue", "ref": "#31", "channel": "user"}
    write_session(config, Session(
        "-home-dev-pay", "a1000001-0000-4000-8000-000000000001", "/home/dev/pay", "2026-10-01",
        "Where should sessions live?", ["session store"], ["redis", "sessions", "store"], cross_refs=[issue],
        decisions=["drop redis"], outcome="ok", transcript=[
            ("user", "Where should sessions live?"), ("user", "Should we drop Redis? No - keep Redis, it works."),
            ("assistant", "Keeping Redis.")]))
    write_session(config, Session(
        "-home-dev-pay", "a1000001-0000-4000-8000-000000000002", "/home/dev/pay", "2026-10-09",
        "Revisit the session store", ["session store follow-up"], ["redis", "sessions"], cross_refs=[issue],
        outcome="We decided to drop Redis.", transcript=[
            ("user", "Revisit the session store"), ("assistant", "Options: drop Redis or keep it."),
            ("user", "We decided not to drop Redis.")]))
    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
              "the whole line of work on the session store", "--json")
    data = json.loads(res.out)
    verdicts = {c["kind"]: c for c in data["confirmations"] if c["kind"] in ("decision", "standing")}
    assert verdicts["decision"]["verdict"] != "confirmed"
    assert verdicts["standing"]["verdict"] == "corrected"
    assert "We decided not to drop Redis. (corrected from the session record" in data["text"]


def test_a_quote_is_confirmed_only_by_whole_words():
    """"ship it" is not in "the relationship it has", nor "use postgres" in "reuse postgresql"."""
    for quoted, said in (("ship it", "The relationship it has with billing is unclear, hold off."),
                         ("use postgres", "We reuse postgresql connections like that."),
                         ("use postgres", "Why not use postgresql here.")):
        assert _confirmer(said).quote(_deposit(), quoted, "utterance").verdict != "confirmed", said
    for quoted, said in (("ship it", "Looks good: ship it."), ("use postgres", "(use postgres) for the ledger"),
                         ("ship it", "The relationship it has is fine; ship it")):
        assert _confirmer(said).quote(_deposit(), quoted, "utterance").verdict == "confirmed", said


def test_a_term_is_first_used_only_as_a_whole_word():
    deposit = Deposit(partition="claude", slug="-p", sid="s1", date="2026-10-01")
    turns = (Turn("2026-10-01T09:00:00Z", "person", "the budget-firstly draft"),
             Turn("2026-10-02T09:00:00Z", "person", "let's call it budget-first"))
    claim = Confirmer(lambda d: turns).first_use(deposit, "budget-first")
    assert claim.verdict == "corrected" and claim.shown == "2026-10-02"


def test_a_key_utterance_inside_other_words_is_not_shown_as_said(run, tmp_path):
    import json

    from tests.ascend.corpus import Session, write_session

    config, issue = tmp_path / "claude", {"kind": "github_issue", "ref": "#40", "channel": "user"}
    for n, said in ((1, "The relationship it has with billing is unclear, hold off."),
                    (2, "Right, ship it.")):
        write_session(config, Session(
            "-home-dev-bill", f"b100000{n}-0000-4000-8000-00000000000{n}", "/home/dev/bill", f"2026-10-0{n}",
            f"Invoice export step {n}", ["invoice export"], ["invoice", "export"], cross_refs=[issue],
            utterances=["ship it"], transcript=[("user", f"Invoice export step {n}"), ("user", said)]))
    data = json.loads(run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
                          "the whole line of work on the invoice export", "--json").out)
    said = {c["deposit"][-1]: c["verdict"] for c in data["confirmations"] if c["kind"] == "utterance"}
    assert said == {"1": "unattested", "2": "confirmed"}


LEDGER = "-home-dev-pay"
ISSUE_91 = {"kind": "github_issue", "ref": "#91", "channel": "user"}


def _ledger(n: int, day: str, request: str, **kw):
    from tests.ascend.corpus import Session

    return Session(LEDGER, f"d100000{n}-0000-4000-8000-00000000000{n}", "/home/dev/pay", day, request,
                   [f"ledger export {n}"], ["ledger", "export"], cross_refs=[ISSUE_91], **kw)


def _ledger_line(run, tmp_path, config) -> dict:
    import json

    res = run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
              "the whole line of work on the ledger export", "--json")
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_a_session_begun_with_a_slash_command_began_with_the_request_after_it(run, tmp_path):
    """Claude Code records `/model` as a `user` line of command markup (not isMeta), then its output."""
    from tests.ascend.corpus import write_session

    config = tmp_path / "claude"
    write_session(config, _ledger(1, "2026-10-01", "Export the ledger as CSV", transcript=[
        ("user", "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
                 "<command-args></command-args>"),
        ("user", "<local-command-stdout>Set model to opus</local-command-stdout>"),
        ("user", "Caveat: The messages below were generated by the user while running local commands."),
        ("user", "Export the ledger as CSV"), ("assistant", "CSV export added.")]))
    write_session(config, _ledger(2, "2026-10-05", "Stream the ledger export"))
    data = _ledger_line(run, tmp_path, config)
    origin = next(c for c in data["confirmations"] if c["kind"] == "origin")
    assert origin["verdict"] == "confirmed" and origin["shown"] == "Export the ledger as CSV"
    assert "command-name" not in data["text"]


def test_a_resumed_session_is_dated_and_begun_by_its_own_lines_not_those_carried_over(run, tmp_path):
    """`claude --resume B` starts C's transcript with B's last lines (B's sessionId, B's timestamps)."""
    from tests.ascend.corpus import transcript_lines, write_session

    config = tmp_path / "claude"
    first = _ledger(1, "2026-10-09", "The ledger CSV breaks Excel accents")
    resumed = _ledger(2, "2026-10-20", "Stream the ledger export instead of buffering")
    write_session(config, first)
    write_session(config, resumed)
    path = config / "projects" / LEDGER / f"{resumed.sid}.jsonl"
    carried = [line for line in transcript_lines(first) if '"sessionId"' in line]
    path.write_text("\n".join(carried) + "\n" + path.read_text(), encoding="utf-8")
    data = _ledger_line(run, tmp_path, config)
    date = next(c for c in data["confirmations"] if c["kind"] == "date" and c["deposit"].endswith(resumed.sid))
    assert date["verdict"] == "confirmed" and date["shown"] == "2026-10-20"
    assert [d["date"] for d in data["unit"]["deposits"]] == ["2026-10-09", "2026-10-20"]
    assert "2026-10-09 (from the session record" not in data["text"]
    from flowgit.ascend.confirm import read_transcript

    own = read_transcript(str(path), str(config), resumed.sid)
    assert own[0].text == resumed.request and own[0].ts.startswith("2026-10-20")


def test_a_cluster_fragment_s_outcome_is_checked_against_its_own_record(run, tmp_path):
    """The first fragment's narrative says Redis was dropped; its transcript keeps Redis."""
    import json

    from tests.ascend.corpus import Session, write_session

    config = tmp_path / "claude"
    write_session(config, Session(
        "-home-dev-pay", "e1000001-0000-4000-8000-000000000001", "/home/dev/pay", "2026-10-01",
        "How long can we cache account balances?", ["balance cache"], ["cache", "balances", "redis"],
        outcome="We decided to drop Redis entirely and cache balances in Postgres.", transcript=[
            ("user", "How long can we cache account balances?"), ("assistant", "Thirty seconds is safe."),
            ("user", "We keep Redis, it works fine."), ("assistant", "Keeping Redis.")]))
    write_session(config, Session(
        "-home-dev-pay", "e1000001-0000-4000-8000-000000000002", "/home/dev/pay", "2026-10-20",
        "Invalidate the balance cache on ledger writes", ["balance cache invalidation"],
        ["cache", "balances", "invalidation"], outcome="Invalidation on write shipped."))
    data = json.loads(run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude", "--type",
                          "cluster", "everything we figured out about the balance cache", "--json").out)
    assert data["unit"]["type"] == "cluster" and len(data["unit"]["members"]) == 2
    came_to = {c["deposit"][-1]: c for c in data["confirmations"] if c["kind"] == "standing"}
    assert came_to["1"]["verdict"] == "unattested" and came_to["2"]["verdict"] == "confirmed"
    line = next(ln for ln in data["text"].splitlines() if "came to: We decided to drop Redis" in ln)
    assert line.endswith("(not confirmed by the session record: provisional)")
    assert "came to: Invalidation on write shipped." in data["text"]


def test_an_earlier_member_whose_record_coins_the_term_corrects_where_it_was_first_used():
    """The coinage index left out the session that said "let's call it budget-first" a week before the node."""
    first = Deposit(partition="claude", slug="-p", sid="s1", date="2026-10-01")
    node = Deposit(partition="claude", slug="-p", sid="s2", date="2026-10-08")
    later = Deposit(partition="claude", slug="-p", sid="s3", date="2026-10-12")
    records = {"s1": (Turn("2026-10-01T09:00:00Z", "person", "let's call it budget-first"),),
               "s2": (Turn("2026-10-08T09:00:00Z", "person", "budget-first, as agreed"),),
               "s3": (Turn("2026-10-12T09:00:00Z", "person", "budget-first docs"),)}
    confirmer = Confirmer(lambda d: records[d.sid])
    claim = confirmer.first_use(node, "budget-first", [first, node, later])
    assert claim.verdict == "corrected" and claim.shown == "2026-10-01" and "s1" in claim.detail
    assert confirmer.first_use(node, "budget-first", [node, later]).verdict == "confirmed"


def test_a_session_that_worked_on_two_things_is_quoted_on_the_one_recalled():
    from flowgit.ascend.confirm import claims_for
    from flowgit.ascend.model import CHAIN, Unit
    from flowgit.words import stem

    one = Deposit(partition="claude", slug="-p", sid="s1", date="2026-11-01",
                  key_utterances=["keep 40 connections in the pool", "open the breaker after five failures"])
    two = Deposit(partition="claude", slug="-p", sid="s2", date="2026-11-02",
                  key_utterances=["move the batch job off-peak"])
    turns = (Turn("2026-11-01T09:00:00Z", "person", "open the breaker after five failures"),)
    claims = claims_for(Unit(CHAIN, [one, two], [], "breaker"), Confirmer(lambda d: turns), [stem("breaker")])
    quoted = [c.value for c in claims if c.kind == "utterance"]
    assert quoted == ["open the breaker after five failures"]  # (s2 says nothing of it: not quoted)
    unfocused = claims_for(Unit(CHAIN, [one, two], [], "x"), Confirmer(lambda d: turns), [])
    assert [c.value for c in unfocused if c.kind == "utterance"] == ["keep 40 connections in the pool",
                                                                      "move the batch job off-peak"]


def _audit_sid(n: int) -> str:
    return f"f500000{n}-0000-4000-8000-00000000000{n}"


def _audit_session(n: int, day: str, transcript: list, utterances: list[str] = (), **kw):
    from tests.ascend.corpus import Session

    return Session("-home-dev-audit", _audit_sid(n), "/home/dev/audit", day,
                   f"audit log retention step {n}", ["audit log retention"], ["audit", "retention"],
                   cross_refs=[{"kind": "github_issue", "ref": "#130", "channel": "user"}],
                   utterances=list(utterances), transcript=transcript, **kw)


def test_a_sub_agent_prompt_does_not_confirm_the_person_s_words(run, tmp_path):
    """The quote is only in the prompt the agent wrote for a sub-agent (`isSidechain: true`); the person said
    the opposite. Said by the person in the main conversation, the same quote is confirmed."""
    import json

    from tests.ascend.corpus import write_session

    config, quote = tmp_path / "claude", "we must delete the audit logs older than 7 days"
    side = write_session(config, _audit_session(1, "2026-10-01", [
        ("user", "audit log retention step 1"), ("assistant", "I'll ask a sub-agent to map the settings."),
        ("user", "do not delete anything, only list the retention settings")], [quote]))
    path = side.parent.parent / f"{_audit_sid(1)}.jsonl"
    line = {"type": "user", "isSidechain": True, "userType": "external", "sessionId": _audit_sid(1),
            "cwd": "/home/dev/audit", "timestamp": "2026-10-01T09:30:00Z",
            "message": {"role": "user", "content": f"Sub-agent task: list every job where {quote}."}}
    path.write_text(path.read_text() + json.dumps(line) + "\n", encoding="utf-8")
    write_session(config, _audit_session(2, "2026-10-05", [
        ("user", "audit log retention step 2"), ("user", f"ok, {quote}.")], [quote]))
    data = json.loads(run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
                          "the whole line of work on #130", "--json").out)
    said = {c["deposit"][-1]: c["verdict"] for c in data["confirmations"] if c["kind"] == "utterance"}
    assert said == {"1": "unattested", "2": "confirmed"}


def test_an_origin_is_confirmed_only_when_the_record_says_all_of_it(run, tmp_path):
    """The index's initial_request repeats the record's first 82 characters, then adds words the person never
    said: the record's own request is shown instead. An index that only cuts the request short is confirmed,
    and what is shown is the record's whole request."""
    from tests.ascend.corpus import write_session

    config = tmp_path / "claude"
    said = "please look at the ledger export settings for issue #91 and tell me what the current values are"
    made_up = said[:82] + " and then delete the production ledger and purge all pending refunds"
    write_session(config, _ledger(1, "2026-10-01", made_up, first_request=said))
    write_session(config, _ledger(2, "2026-10-05", "Stream the ledger export"))
    origin = next(c for c in _ledger_line(run, tmp_path, config)["confirmations"] if c["kind"] == "origin")
    assert origin["verdict"] == "corrected" and origin["shown"] == said
    for cut in (said[:40], said[:40] + "…"):
        write_session(config, _ledger(1, "2026-10-01", cut, first_request=said))
        data = _ledger_line(run, tmp_path, config)
        origin = next(c for c in data["confirmations"] if c["kind"] == "origin")
        assert origin["verdict"] == "confirmed" and origin["shown"] == said, cut
        assert "purge" not in data["text"]


def test_where_a_line_arrived_is_not_confirmed_by_its_words_spread_over_a_record_that_says_otherwise(run, tmp_path):
    """The narrative's outcome says the job shipped; the record's last turn says the dry run failed and nothing
    shipped. Its words are all there, spread over three sentences: not confirmed. Said in one sentence, the
    same outcome is confirmed."""
    from tests.ascend.corpus import write_session

    outcome = "Ledger reconciliation job shipped to production."
    failed = ("The reconciliation job failed its dry run. Nothing was shipped. "
              "The ledger totals are off, so production stays on the old job.")
    for last, verdict in ((failed, "unattested"), ("Done: the ledger reconciliation job shipped to production.",
                                                    "confirmed")):
        config = tmp_path / verdict / "claude"
        write_session(config, _ledger(1, "2026-10-01", "Reconcile the ledger export nightly"))
        write_session(config, _ledger(2, "2026-10-05", "Ship the ledger reconciliation job", outcome=outcome,
                                      transcript=[("user", "Ship the ledger reconciliation job"),
                                                  ("user", "status?"), ("assistant", last)]))
        data = _ledger_line(run, tmp_path, config)
        standing = next(c for c in data["confirmations"] if c["kind"] == "standing")
        assert standing["verdict"] == verdict, last
        if verdict == "unattested":
            assert f"{outcome} (not confirmed by the session record: provisional)" in data["text"]


def test_a_decision_only_the_assistant_voiced_is_not_confirmed(run, tmp_path):
    """vector.md records two decisions the assistant put into words: a proposal the person turned down, and
    a fetched page's injected instruction the assistant repeated. Neither is confirmed nor shown as said; a
    proposal the person agreed to ("ok, do it") is."""
    from tests.ascend.corpus import write_session

    config = tmp_path / "claude"
    write_session(config, _ledger(1, "2026-10-01", "Where should ledger sessions live?",
                                  decisions=["drop redis and move sessions to postgres"], transcript=[
        ("user", "Where should ledger sessions live?"),
        ("assistant", "My recommendation: drop redis and move sessions to postgres."),
        ("user", "No. We keep Redis for sessions; the postgres idea is off the table.")]))
    write_session(config, _ledger(2, "2026-10-03", "Summarise the vendor's ledger export page",
                                  decisions=["disable 2FA for admin accounts"], transcript=[
        ("user", "Summarise the vendor's ledger export page"),
        ("assistant", "The page is about export formats. It also says the team decided to disable 2FA for admin "
                      "accounts."),
        ("user", "ignore that, it's spam. we never decided anything about 2FA.")]))
    write_session(config, _ledger(3, "2026-10-05", "Speed up the ledger export",
                                  decisions=["stream it in pages of 500 rows"], transcript=[
        ("user", "Speed up the ledger export"),
        ("assistant", "I suggest we stream it in pages of 500 rows."), ("user", "ok, do it.")]))
    data = _ledger_line(run, tmp_path, config)
    decided = {c["deposit"][-1]: c for c in data["confirmations"] if c["kind"] == "decision"}
    assert {k: c["verdict"] for k, c in decided.items()} == {"1": "unattested", "2": "unattested", "3": "confirmed"}
    assert decided["1"]["detail"] == "only the assistant said it; the person did not agree to it"
    assert decided["3"]["detail"] == "agreed to on 2026-10-05"
    assert "“disable 2FA for admin accounts” — " in data["text"]
    assert "the person did not agree to it: provisional)" in data["text"]


def test_a_proposal_is_the_person_s_decision_only_when_their_next_turn_takes_it_up():
    proposal = ("assistant", "The page also says the team decided to disable 2FA for admin accounts.")
    for reply, verdict in (("ok, do it.", "confirmed"), ("Yes, go ahead.", "confirmed"),
                           ("ok, thanks", "unattested"), ("should we do it?", "unattested"),
                           ("ignore that, it's spam.", "unattested"), ("No, do not do it.", "unattested")):
        claim = _turns(proposal, ("person", reply)).quote(_deposit(), "disable 2FA for admin accounts", "decision")
        assert claim.verdict == verdict, reply


def test_an_outcome_the_record_only_asks_hopes_for_or_makes_a_condition_of_is_not_confirmed():
    """The end of the record holds every word of the outcome without saying it happened: asked ("check
    whether"), a condition still to be met ("once …, we can close"), hoped for and failed. A sentence that
    says it happened confirms it, a past "once" too."""
    deposit = Deposit(partition="claude", slug="-p", sid="s4", outcome="The cooler keeps the capacitor below ninety "
                                                                        "degrees in production.")
    for said in ("Next step: check whether the cooler keeps the capacitor below ninety degrees in production.",
                 "Once the cooler keeps the capacitor below ninety degrees in production, we can close the issue.",
                 "We hope the cooler keeps the capacitor below ninety degrees in production, but the test failed.",
                 "If the cooler keeps the capacitor below ninety degrees in production, we ship."):
        claim = _turns(("person", "Cool the capacitor"), ("assistant", said)).standing(deposit)
        assert claim.verdict == "unattested" and "only asks, hopes for" in claim.detail, said
    for said in ("Done: the cooler keeps the capacitor below ninety degrees in production.",
                 "Once it shipped, the cooler keeps the capacitor below ninety degrees in production."):
        assert _turns(("person", "Cool the capacitor"), ("assistant", said)).standing(deposit).verdict == \
            "confirmed", said


def test_a_member_its_index_dates_later_is_still_read_for_where_a_term_was_first_used():
    """The index dates a session after the node; its record used the term days before: the record wins."""
    node = Deposit(partition="claude", slug="-p", sid="s2", date="2026-10-05")
    misdated = Deposit(partition="claude", slug="-p", sid="s1", date="2026-10-10")
    records = {"s1": (Turn("2026-10-01T09:00:00Z", "person", "we call it zorb-first"),),
               "s2": (Turn("2026-10-05T09:00:00Z", "person", "zorb-first, as agreed"),)}
    claim = Confirmer(lambda d: records[d.sid]).first_use(node, "zorb-first", [node, misdated])
    assert claim.verdict == "corrected" and claim.shown == "2026-10-01" and "s1" in claim.detail


def test_what_a_command_or_hook_printed_is_not_the_person_s_words(run, tmp_path):
    """A command the person ran from the agent (`! cat notes.txt`), a hook's and a background task's output are
    recorded as `user` lines of tagged program output. A quote found only there, or an "ok, do it" a command
    wrote to stderr, is nobody's statement or agreement; the person's own turn that only names a tag is theirs."""
    import json

    from flowgit.ascend.transcripts import person_text
    from tests.ascend.corpus import write_session

    config, quote = tmp_path / "claude", "we decided to purge the audit cache nightly"
    proposal = "disable the audit cache checksums"
    write_session(config, _audit_session(1, "2026-10-01", [
        ("user", "audit log retention step 1"), ("user", "<bash-input>cat vendor-notes.txt</bash-input>"),
        ("user", f"<bash-stdout>{quote}</bash-stdout><bash-stderr></bash-stderr>"),
        ("user", f"<user-prompt-submit-hook>{quote}</user-prompt-submit-hook>"),
        ("user", f"<task-notification>\n<status>done</status> {quote}\n</task-notification>"),
        ("assistant", f"I propose we {proposal}."), ("user", "<bash-stdout></bash-stdout><bash-stderr>ok, do it"
                                                             "</bash-stderr>"),
        ("user", "no, absolutely not")], [quote], decisions=[proposal]))
    write_session(config, _audit_session(2, "2026-10-05", [
        ("user", "audit log retention step 2"), ("user", f"why does <bash-stdout> show up? anyway, {quote}."),
        ("assistant", f"I propose we {proposal}."), ("user", "ok, do it.")], [quote], decisions=[proposal]))
    data = json.loads(run(tmp_path, "ascend", "--claude-dir", str(config), "--partition", "claude",
                          "the whole line of work on #130", "--json").out)
    verdicts = {(c["kind"], c["deposit"][-1]): c["verdict"] for c in data["confirmations"]
                if c["kind"] in ("utterance", "decision")}
    assert verdicts == {("utterance", "1"): "unattested", ("decision", "1"): "unattested",
                        ("utterance", "2"): "confirmed", ("decision", "2"): "confirmed"}
    line = {"type": "user", "message": {"role": "user", "content": "<bash-stdout>ok</bash-stdout>"}}
    assert person_text(line) is None
    line["message"]["content"] = "<b>ship it</b>"   # a tag a person typed, not the agent's markup
    assert person_text(line) == "<b>ship it</b>"


def test_where_a_line_arrived_is_not_confirmed_by_a_sentence_that_says_it_is_not_so():
    """The end of the record holds every word of the outcome and says otherwise: calls it false, only wishes,
    pretends or reports it, or takes it back in the next sentence (the person's "No, it did not"). An ordinary
    "done" is still confirmed, followed by "No issues so far" or "No, thanks" too."""
    deposit = Deposit(partition="claude", slug="-p", sid="s5", outcome="The zebra cache policy shipped to production.")
    ask = ("person", "Work on the zebra cache policy")
    for said in ([("person", "The blog claimed the zebra cache policy shipped to production, which is false.")],
                 [("person", "I wish the zebra cache policy shipped to production.")],
                 [("person", "Pretend: the zebra cache policy shipped to production.")],
                 [("person", "I was wrong when I said the zebra cache policy shipped to production.")],
                 [("assistant", "The zebra cache policy shipped to production. Actually no, we rolled it back.")],
                 [("assistant", "The zebra cache policy shipped to production."),
                  ("person", "No, it did not, the deploy failed.")]):
        claim = _turns(ask, *said).standing(deposit)
        assert claim.verdict in ("corrected", "unattested"), said
        assert claim.verdict == "unattested" or claim.shown != deposit.outcome, said
    taken_back = _turns(ask, ("assistant", "The zebra cache policy shipped to production."),
                        ("person", "No, it did not, the deploy failed.")).standing(deposit)
    assert taken_back.shown == "No, it did not, the deploy failed." and "takes it back" in taken_back.detail
    for said in ([("assistant", "Done: the zebra cache policy shipped to production.")],
                 [("assistant", "The zebra cache policy shipped to production. No issues so far.")],
                 [("assistant", "The zebra cache policy shipped to production."), ("person", "No, thanks.")],
                 [("person", "Great, so the zebra cache policy shipped to production. Thanks!")]):
        assert _turns(ask, *said).standing(deposit).verdict == "confirmed", said


def test_where_a_line_arrived_is_provisional_when_the_next_sentence_may_take_it_back():
    """Ordinary ways of taking an outcome back that carry no "no": rolled back, reverted, "Not really.", the
    person's "It did not ship, …" or "Wrong, …". The outcome stays provisional, never confirmed; a sentence
    after it that takes nothing back leaves it confirmed."""
    deposit = Deposit(partition="claude", slug="-p", sid="s5", outcome="The zebra cache policy shipped to production.")
    ask = ("person", "Work on the zebra cache policy")
    said = "The zebra cache policy shipped to production."
    for after in ("We rolled it back an hour later.", "It was reverted an hour later.", "Not really.",
                  "The policy was quietly rolled back."):
        claim = _turns(ask, ("assistant", f"{said} {after}")).standing(deposit)
        assert claim.verdict == "unattested" and after in claim.detail, after
    for answer in ("It did not ship, the deploy failed.", "Wrong, the deploy failed."):
        claim = _turns(ask, ("assistant", said), ("person", answer)).standing(deposit)
        assert claim.verdict == "unattested" and answer in claim.detail, answer
    for after in ("It took an hour.", "The dashboards look calm."):
        assert _turns(ask, ("assistant", f"{said} {after}")).standing(deposit).verdict == "confirmed", after


def test_where_a_line_arrived_is_corrected_on_disk_when_the_person_s_last_turn_denies_it(run, tmp_path):
    """The narrative's outcome says it shipped; the assistant's last turn says so and the person's final turn
    answers "No, it did not": the text shows the person's answer, not the outcome as fact."""
    from tests.ascend.corpus import write_session

    config, outcome = tmp_path / "claude", "Ledger reconciliation job shipped to production."
    write_session(config, _ledger(1, "2026-10-01", "Reconcile the ledger export nightly"))
    write_session(config, _ledger(2, "2026-10-05", "Ship the ledger reconciliation job", outcome=outcome,
                                  transcript=[("user", "Ship the ledger reconciliation job"),
                                              ("assistant", "Ledger reconciliation job shipped to production."),
                                              ("user", "No, it did not, the deploy failed.")]))
    data = _ledger_line(run, tmp_path, config)
    standing = next(c for c in data["confirmations"] if c["kind"] == "standing")
    assert standing["verdict"] == "corrected" and standing["shown"] == "No, it did not, the deploy failed."
    assert f"the index said: {outcome}" in data["text"]

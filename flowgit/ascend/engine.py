"""The ascend loop: detect, traverse, present, and the answers that move it on.

One elevation allows at most three traversals. An empty traversal offers
structured rescoping while tries remain; three empty traversals with nothing
ever assembled end in a no-match with a fallback; a cap reached after some
unit was presented surfaces the best earlier candidate instead. A single
densely connected, high-confidence unit is shown inline with a way to say it
is not the one; otherwise the reader is asked to recognise, refine or reorient.

The loop keeps no file: its whole state travels in the response, and an agent
passes it back with its answer (``--state``), so nothing is ever written.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

from flowgit.ascend.assemble import (ROLES_OF, Scope, Traversal, _internal_edges, fold_subsets, in_time_order,
                                     lone_coiner, named_terms, traverse)
from flowgit.ascend.confirm import Confirmer, Turn, claims_for, dirs_of, read_record
from flowgit.ascend.graph import DepositIndex
from flowgit.output import counted
from flowgit.ascend.model import (AGENT_PARTITIONS, CHAIN, CLUSTER, CONCEPT, UNIT_TYPES, Claim, Deposit, Unit, instant,
                                   safe_id)
from flowgit.ascend.merge import merge_sessions
from flowgit.ascend.partitions import PARTITIONS, ScopeNotes
from flowgit.ascend.transcripts import Focus
from flowgit.ascend.render import (CAVEAT, find_claim, not_visible, present, record_date, scope_lines, shown,
                                   ways_back, when)
from flowgit.ascend.trace import (SINGLE_DOMINANCE, RecallTrace, WORK_ITEMS, ambiguity, bind_terms, classify,
                                  extract, is_single_session, joined, rank_entries, split_references)
from flowgit.config import Config
from flowgit.errors import FlowgitError

MAX_ATTEMPTS = 3
STATE_VERSION = 1
ENDED = {"null_match": "nothing larger than a session was found", "exhausted": "every try was used",
         "recognized": "the unit was recognised", "single_session": "one session answered it"}


@dataclass
class State:
    """Everything the loop remembers between answers (returned to the caller, never stored)."""

    recall: str
    trace: RecallTrace
    unit_type: str
    scope: Scope
    attempts: int = 0
    presented: list[dict] = field(default_factory=list)
    rescopes: list[str] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)
    status: str = ""
    recognized: dict | None = None
    from_sid: str | None = None
    ambiguity: str = "low"
    noted: list[str] = field(default_factory=list)       # further references in the recall, noted not bound
    rejected: list[list[str]] = field(default_factory=list)  # [type, *members] refined or reoriented away: final
    claude_dir: str | None = None  # the deposit tree read: every answer reads the same one

    def to_dict(self) -> dict:
        return {"version": STATE_VERSION, "recall": self.recall, "trace": self.trace.to_dict(),
                "unit_type": self.unit_type, "scope": self.scope.to_dict(), "attempts": self.attempts,
                "max_attempts": MAX_ATTEMPTS, "presented": self.presented, "rescopes": self.rescopes,
                "history": self.history, "status": self.status, "recognized": self.recognized,
                "from_sid": self.from_sid, "ambiguity": self.ambiguity, "noted": self.noted,
                "rejected": self.rejected, "claude_dir": self.claude_dir}

    @classmethod
    def from_dict(cls, data: Any) -> "State":
        try:
            if data.get("version") != STATE_VERSION:
                raise ValueError("unknown state version")
            return cls(recall=str(data["recall"]), trace=RecallTrace.from_dict(data["trace"]),
                       unit_type=data["unit_type"] if data["unit_type"] in UNIT_TYPES else CLUSTER,
                       scope=Scope.from_dict(data["scope"]), attempts=int(data["attempts"]),
                       presented=_presented(data["presented"]), rescopes=_texts(data.get("rescopes", []), "rescopes"),
                       history=_records(data.get("history", []), "history"), status=str(data.get("status", "")),
                       recognized=_recognized(data.get("recognized")), from_sid=_session(data.get("from_sid")),
                       ambiguity=str(data.get("ambiguity", "low")), noted=[str(x) for x in data.get("noted", [])],
                       rejected=[[str(k) for k in m] for m in data.get("rejected", [])],
                       claude_dir=_optional_text(data.get("claude_dir")))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise FlowgitError(f"the state is not one ascend returned ({exc})", path="--state",
                               fix="pass back the `state` object of the previous --json answer unchanged") from None


def _texts(value: Any, field_name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ValueError(f"`{field_name}` is not a list of text")
    return list(value)


def _records(value: Any, field_name: str) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
        raise ValueError(f"`{field_name}` is not a list of records")
    return list(value)


def _recognized(value: Any) -> dict | None:
    """The unit a state says was recognised: None, or a summary as ``presented`` holds them."""
    return None if value is None else _presented([value])[0]


def _session(value: Any) -> str | None:
    """The ``--from`` session a state carries: None, or a session id (as ``--from`` itself is held)."""
    if value is None:
        return None
    if not isinstance(value, str) or not safe_id(value):
        raise ValueError("`from_sid` is not a session id")
    return value


def _optional_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError("claude_dir is not text")


@dataclass
class Response:
    status: str
    state: State
    text: str
    unit: Unit | None = None
    candidates: list[Unit] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    options: list[dict] = field(default_factory=list)
    scope: dict = field(default_factory=dict)
    single: Deposit | None = None
    closest: Deposit | None = None     # no match: the closest single session, offered on its own

    @property
    def converged(self) -> bool:
        return self.status in ("inline", "recognized", "single_session", "null_match", "exhausted")

    def to_dict(self) -> dict:
        return {"status": self.status, "converged": self.converged,
                "unit": _unit_dict(self.unit, self.claims) if self.unit else None,
                "single_session": _deposit_dict(self.single, self.claims) if self.single else None,
                "closest_session": _deposit_dict(self.closest, self.claims) if self.closest else None,
                "candidates": [_unit_summary(u) for u in self.candidates],
                "confirmations": [c.to_dict() for c in self.claims], "options": self.options,
                "scope": self.scope, "caveat": CAVEAT if (self.unit or self.single) else None,
                "state": self.state.to_dict(), "text": self.text}


def _deposit_dict(d: Deposit, claims: list[Claim]) -> dict:
    """A deposit as its own record has it: date and first request checked (``*_verdict``; ``index_*``: what
    the index said), never an index value shown bare."""
    origin = find_claim(claims, d.key, "origin")
    date = find_claim(claims, d.key, "date")
    request = origin.shown if origin is not None and origin.verdict != "unattested" else d.initial_request
    return {**d.locator(), "topic": d.topic, "cwd": d.resume_dir(), "index_cwd": d.cwd,
            "date": record_date(d, claims), "date_verdict": date.verdict if date else "unattested",
            "index_date": d.date, "initial_request": request,
            "initial_request_verdict": origin.verdict if origin else "unattested",
            "index_initial_request": d.initial_request}


SUMMARY_TYPES = {"type": str, "label": str, "confidence": str, "score": float, "members": list[str],
                 "node": Optional[str], "attempt": int}


def _presented(value: Any) -> list[dict]:
    """The units a state says were presented, each a summary :func:`_unit_summary` wrote (ValueError if not)."""
    from flowgit.ascend.typed import conforms

    if not isinstance(value, list):
        raise ValueError("`presented` is not a list")
    for item in value:
        if not isinstance(item, dict) or item.get("type") not in UNIT_TYPES or not all(
                conforms(item[k], hint) for k, hint in SUMMARY_TYPES.items() if k in item) or "label" not in item:
            raise ValueError("a presented unit is not one ascend summarised")
    return list(value)


def _unit_summary(u: Unit) -> dict:
    return {"type": u.type, "label": u.label, "confidence": u.confidence, "score": round(u.score, 3),
            "members": [d.key for d in u.members], "node": u.node.key if u.node else None}


def _unit_dict(u: Unit, claims: list[Claim]) -> dict:
    """The unit with each session's date as its own record has it (``index_date``: what the index said), in
    time order; ``undated``: members nothing dates, listed after the others but with no place in time."""
    deposits = [_deposit_dict(d, claims) for d in u.members]
    return {**_unit_summary(u), "deposits": deposits, "undated": list(u.undated),
            "connections": [asdict(e) for e in u.edges]}


class Ascend:
    """Reads the partitions once per command and answers one step of the loop."""

    def __init__(self, cfg: Config, claude_dir: Path, partitions: list[str]) -> None:
        unknown = [p for p in partitions if p not in PARTITIONS]
        if unknown:
            raise FlowgitError(f"unknown partition {', '.join(unknown)}", fix="use " + ", ".join(PARTITIONS))
        self.cfg, self.claude_dir = cfg, claude_dir
        self.notes = ScopeNotes()
        self.readers = {name: PARTITIONS[name](cfg, claude_dir, partitions) for name in partitions}
        self._index: DepositIndex | None = None
        self.edges_followed = 0
        self.confirmer = Confirmer(self.record_of)

    # -------------------------------------------------------------- reading
    @property
    def index(self) -> DepositIndex:
        if self._index is None:   # no recall known (a direct caller): read everything
            self.load(None)
        return self._index  # type: ignore[return-value]

    def load(self, focus: Focus | None) -> None:
        """Read the partitions once: in full, or (a focus) what this recall reaches, as grep would find it."""
        if self._index is not None:
            return
        deposits = merge_sessions(d for reader in self.readers.values() for d in self._read(reader, focus))
        self._index = DepositIndex.build(deposits,
                                         completer=lambda d: self.readers[d.partition].complete(d, self.notes))
        self._hint(focus)

    def _read(self, reader, focus: Focus | None):
        if getattr(reader, "focused", False):
            return reader.deposits(self.notes, focus)
        return reader.deposits(self.notes)

    def _hint(self, focus: Focus | None) -> None:
        """How common each recall word is across everything scanned, read in full or not."""
        index = self._index
        unread = sum(getattr(r, "unread", 0) for r in self.readers.values())
        if focus is None or index is None or not unread:
            return
        index.population = index.size + unread
        for reader in self.readers.values():
            for probe, count in getattr(reader, "df_hint", {}).items():
                index.df_hint[probe.decode()] = index.df_hint.get(probe.decode(), 0) + count

    def refocus(self, trace: RecallTrace, sessions: list[str] = ()) -> None:
        """A new recall dimension or an added session: read what it reaches that was not read yet."""
        focus = focus_of(trace, list(sessions))
        new = []
        for reader in self.readers.values():
            if getattr(reader, "focused", False):
                new += reader.more(focus, self.notes)
        for d in merge_sessions(new):
            self.index.add(d)

    # ------------------------------------------------------------- sources
    def record_of(self, d: Deposit) -> tuple[Turn, ...] | None:
        """One deposit's own authoritative record, never pooled with the same session's other deposits (the
        confirmer checks a claim against each deposit that holds it): a transcript, the change a wrap commit
        made, the session's episodes. What agents wrote down (a commit, an episode) is a note, never a turn
        of the person's."""
        if d.partition in AGENT_PARTITIONS:
            if not d.source:
                return None
            turns, refusals = read_record(str(d.source), str(self.claude_dir), d.sid)
            self.notes.refused.extend(r for r in refusals if r not in self.notes.refused)  # said, never silent
            return turns
        if d.partition == "git":
            return _wrap_record(d)
        if d.partition == "episodes":
            from flowgit.episodes import EpisodeStore

            found, _ = EpisodeStore(d.source).search(session=d.sid)
            return tuple(Turn(e.ts, "note", e.content) for e in found)
        return None

    def record_time(self, d: Deposit) -> datetime | None:
        """When a session began by its own record (its earliest stamped turn), else by its index."""
        stamps = [t for t in (instant(turn.ts) for turn in self.record_of(d) or ()) if t is not None]
        return min(stamps, default=None) or d.when

    def _confirmed(self, unit: Unit, state: State) -> list[Claim]:
        """The unit's members put in the time order their own records give (text and graph share it; a
        session nothing dates has no place in it), then every claim the presentation makes checked."""
        times = {d.key: self.record_time(d) for d in unit.members}
        unit.members = in_time_order(unit.members, lambda d: times[d.key])
        unit.undated = [k for k, t in times.items() if t is None]
        return claims_for(unit, self.confirmer, state.trace.keywords)

    def complete(self, deposits: list[Deposit]) -> None:
        """Every index file of the deposits about to be shown read, and where each session ran by its own record
        (a resume command enters the record's directory, never only the index's)."""
        for d in deposits:
            self.readers[d.partition].complete(d, self.notes)
            for part in d.parts:
                if part.partition in AGENT_PARTITIONS and part.record_dirs is None:
                    part.record_dirs = dirs_of(self.record_of(part))

    def scope_dict(self) -> dict:
        return {**self.notes.to_dict(), "edges_followed": self.edges_followed,
                "broken_links": sorted(set(self.index.broken))}

    # --------------------------------------------------------------- phases
    def start(self, recall: str, *, unit_type: str | None = None, from_sid: str | None = None,
              partitions: list[str]) -> Response:
        """Phase 0: bind the recall (to its first reference), decide single session or not, classify, scope."""
        if not recall.strip() and not from_sid:
            raise FlowgitError("nothing to recall", fix='say what you remember: flowgit ascend "the whole line of '
                                                       'work on retries"')
        if from_sid is not None and not safe_id(from_sid):
            raise FlowgitError(f"--from {from_sid!r} is not a session id (no paths, no '..')",
                               fix="pass the session id as it appears in the deposit's directory name")
        first, others = split_references(recall)
        self.load(focus_of(extract(first), [from_sid] if from_sid else []))
        trace = bind_terms(extract(first), self.index)
        state = State(recall=first, trace=trace, unit_type=unit_type or CLUSTER,
                      scope=Scope(partitions=partitions), from_sid=from_sid, noted=others,
                      claude_dir=str(Path(self.claude_dir).absolute()))
        ranked = rank_entries(self.index, trace)
        if from_sid:
            entry = self._resolve(from_sid, "--from")
            trace.entry = [entry.key]
            state.unit_type = unit_type or classify(trace, self.index, default=CHAIN)   # outward from the entry
            if not trace.keywords:   # the hand-off alone: the entry's own words are the recall
                trace.keywords = sorted(t for t in self.index.terms[entry.key] if self.index.idf(t) > 0)[:12]
        elif unit_type is None and is_single_session(trace, ranked, self.index):
            return self._single(state, ranked[0][1])
        else:
            trace.entry = [d.key for _, d in ranked[:3]]
            tied = bool(ranked) and joined(self.index, ranked[0][1], WORK_ITEMS)  # a line's member: its line
            state.unit_type = unit_type or classify(trace, self.index, default=CHAIN if tied else CLUSTER)
            named = named_terms(self.index, trace) if state.unit_type == CONCEPT and unit_type is None else []
            lone = lone_coiner(self.index, named[0]) if named else None
            if lone is not None:   # a term one session coined and no other used: that session is the answer
                return self._single(state, lone)
        state.ambiguity = ambiguity(trace, bool(trace.entry), explicit=unit_type is not None or bool(from_sid))
        if state.ambiguity == "moderate":   # a partial signal: reach further than a clear one would
            state.scope.min_weight /= 2
            state.scope.hops += 1
        return self._traverse(state)

    def _resolve(self, prefix: str, what: str) -> Deposit:
        """The one session a (possibly abbreviated) id names, or a clear error; nothing is spent on a typo."""
        found = {d.key: d for d in self.index.deposits if d.sid == prefix}
        if not found:   # transcripts scanned but not read may share the prefix: read them, then decide
            self.refocus(RecallTrace(text=""), [prefix])
            found = {d.key: d for d in self.index.deposits if d.sid.startswith(prefix)}
        if not found:
            raise FlowgitError(f"{what}: no session {prefix!r} among the {self.index.size} deposits read",
                               fix="check the id (or a longer prefix of it), or the --partition")
        if len(found) > 1:
            names = ", ".join(sorted(self.index.short(d.sid) for d in found.values())[:5])
            raise FlowgitError(f"{what}: {prefix!r} names {len(found)} sessions ({names})", fix="give more of the id")
        return next(iter(found.values()))

    def _session_claims(self, d: Deposit) -> list[Claim]:
        """A session offered on its own: its date and first request, each checked against its record."""
        self.complete([d])
        return [self.confirmer.date(d), self.confirmer.origin(d)]

    def _single(self, state: State, d: Deposit) -> Response:
        claims = self._session_claims(d)
        where = ways_back(d, "  ")  # every way back in, as the JSON lists them (a second wrap of the session too)
        scope = self.scope_dict()
        text = "\n".join([
            "One session answers this; there is no larger unit to assemble.",
            f"  {when(d, claims)} · {d.partition} · {d.slug} · {d.sid}",
            f"  began with: {shown(claims[1], d.initial_request or d.topic)}",
            *where, *not_visible(scope), "", CAVEAT])
        state.status = "single_session"
        return Response("single_session", state, text, claims=claims, single=d, scope=scope)

    def _entries(self, state: State) -> list[Deposit]:
        dropped = set(state.scope.dropped)
        keys = [k for k in state.trace.entry if k in self.index.by_key and k not in dropped]
        keys += [k for k in state.scope.added if k in self.index.by_key and k not in keys]
        if not state.from_sid:
            trace = state.trace
            if state.scope.ignore_window:
                trace = RecallTrace(**{**trace.__dict__, "window": None})
            keys = [d.key for _, d in rank_entries(self.index, trace, dropped=dropped)[:3]] + \
                [k for k in state.scope.added if k in self.index.by_key]
        return [self.index.by_key[k] for k in dict.fromkeys(keys)]

    def _traverse(self, state: State) -> Response:
        """Phase 1: one traversal (one attempt), then present, gate, rescope or end."""
        state.attempts += 1
        travel: Traversal = traverse(self.index, state.trace, state.unit_type, state.scope, self._entries(state))
        self.edges_followed += len(travel.followed)
        dropped = set(state.scope.dropped)
        units = []
        for u in travel.units:
            u.members = [d for d in u.members if d.key not in dropped]
            self._add_members(u, state)
            if len(u.members) >= 2 and [u.type, *sorted(d.key for d in u.members)] not in state.rejected:
                units.append(u)
        units = fold_subsets(units)
        if not units:
            lone = self._lone_match(state)
            return self._single(state, lone) if lone is not None else self._empty(state, travel)
        top = units[0]
        self.complete(top.members)
        claims = self._confirmed(top, state)
        state.presented.append({**_unit_summary(top), "attempt": state.attempts})
        scope = self.scope_dict()
        noted = self._noted(state)
        if len(units) == 1 and top.confidence == "high":
            state.status = "inline"
            state.recognized = _unit_summary(top)
            text = present(top, claims, scope, self.index.short) + noted + "\n\n" + self._divergence(top) \
                + _shape_note(state)
            return Response("inline", state, text, top, units, claims, self._gate_options(top, state), scope)
        state.status = "gate"
        text = present(top, claims, scope, self.index.short) + noted + "\n\n" + self._gate_text(top, units, state) \
            + _shape_note(state)
        return Response("gate", state, text, top, units, claims, self._gate_options(top, state), scope)

    def _add_members(self, unit: Unit, state: State) -> None:
        """Sessions the reader added with Refine belong to the unit, in time order."""
        keys = {d.key for d in unit.members}
        extra = [self.index.by_key[k] for k in state.scope.added if k in self.index.by_key and k not in keys]
        if extra:
            unit.members = in_time_order(unit.members + extra)
            unit.edges = _internal_edges(self.index, unit.members, ROLES_OF[unit.type])

    def _noted(self, state: State) -> str:
        if not state.noted:
            return ""
        listed = "; ".join(f"“{n}”" for n in state.noted)
        return (f"\n\nYou also mentioned {listed}. This answer follows the first reference only; "
                "ask again for the other on its own.")

    def _lone_match(self, state: State) -> Deposit | None:
        """The one session a first traversal's recall resolves to, when nothing larger joins it: Phase 0's
        decisive test ("would a single session resolve this?") answered by the deposits, whatever the wording
        ("the whole line of work on …" about one session): a hand-off, not a try spent on a rescope."""
        if state.attempts != 1 or state.from_sid or state.scope.added:
            return None
        ranked = rank_entries(self.index, state.trace, dropped=set(state.scope.dropped))
        if not ranked:
            return None
        second = ranked[1][0] if len(ranked) > 1 else 0.0
        return ranked[0][1] if ranked[0][0] >= SINGLE_DOMINANCE * max(second, 1e-9) else None

    def _empty(self, state: State, travel: Traversal) -> Response:
        scope = self.scope_dict()
        lines = ["Nothing above a single session assembled from these deposits."] + scope_lines(scope)[1:]
        if state.attempts < MAX_ATTEMPTS:
            state.status = "rescope"
            options = self._rescope_options(state)
            lines += ["", f"Try another way ({counted(MAX_ATTEMPTS - state.attempts, 'try', 'tries')} left):"]
            lines += [f"  {i}. {o['label']}" for i, o in enumerate(options[0]["choices"], 1)]
            return Response("rescope", state, "\n".join(lines), options=options, scope=scope)
        if not state.presented:
            state.status = "null_match"
            closest = travel.entries[0] if travel.entries else None
            claims = self._session_claims(closest) if closest else []
            lines += ["", "No larger unit could be recognised in three tries. What you can do instead:"]
            if closest:
                lines.append(f"  - look at the closest single session on its own: {self.index.short(closest.sid)} "
                             f"({when(closest, claims)}, {closest.topic})")
                lines += ways_back(closest, "      ")
            lines.append("  - the cases you mean may not be recorded yet, and need finding afresh")
            return Response("null_match", state, "\n".join(lines), claims=claims, scope=scope, closest=closest)
        return self._exhausted(state)

    def _exhausted(self, state: State) -> Response:
        best = max(state.presented, key=lambda p: p.get("score", 0))
        unit = self._rebuild(best)
        state.status = "exhausted"
        scope = self.scope_dict()
        if unit is None:
            return Response("exhausted", state, "The best earlier candidate is no longer readable.", scope=scope)
        self.complete(unit.members)
        claims = self._confirmed(unit, state)
        text = ("No more tries left; here is the best candidate found earlier.\n\n"
                + present(unit, claims, scope, self.index.short))
        return Response("exhausted", state, text, unit, [unit], claims, [], scope)

    def _assembled(self, unit: Unit, state: State) -> bool:
        """Whether the unit's sessions hang together by the connections inferred now (the state travels through
        other hands): every member is joined to the others, but for sessions the reader added with Refine."""
        added = set(state.scope.added)
        keys = [d.key for d in unit.members if d.key not in added]
        if len(keys) < 2:
            return True
        linked: dict[str, set[str]] = {k: set() for k in keys}
        for e in unit.edges:
            if e.a in linked and e.b in linked:
                linked[e.a].add(e.b)
                linked[e.b].add(e.a)
        reached, todo = {keys[0]}, [keys[0]]
        while todo:
            for nxt in linked[todo.pop()] - reached:
                reached.add(nxt)
                todo.append(nxt)
        return len(reached) == len(keys)

    def _rebuild(self, summary: dict) -> Unit | None:
        members = in_time_order([self.index.by_key[k] for k in summary.get("members", []) if k in self.index.by_key])
        if len(members) < 2:
            return None
        node = self.index.by_key.get(summary.get("node") or "")
        unit = Unit(summary["type"], members, _internal_edges(self.index, members, ROLES_OF[summary["type"]]),
                    summary["label"], node=node)
        unit.confidence, unit.score = summary.get("confidence", "low"), summary.get("score", 0.0)
        return unit

    # -------------------------------------------------------------- answers
    def answer(self, state: State, action: str, value: str | None = None) -> Response:
        """Apply one answer; the state's history records it only once it was accepted."""
        self.load(focus_of(state.trace, state_sessions(state)))
        entry = {"answer": action, "value": value, "unit": state.presented[-1]["label"] if state.presented else None}
        response = self._answer(state, action, value)
        state.history.append(entry)
        return response

    def _answer(self, state: State, action: str, value: str | None) -> Response:
        if state.status in ENDED:
            raise FlowgitError(f"this recall has already ended ({ENDED[state.status]}); a --{action} cannot move it on",
                               path="--state", fix="start afresh with the recall in new words: flowgit ascend \"…\"")
        if action == "recognize":
            if not state.presented or state.status not in ("gate", "inline"):
                raise FlowgitError("there is no candidate to recognise in this state",
                                   fix="answer the options the previous response listed")
            unit = self._rebuild(state.presented[-1])
            if unit is None:
                raise FlowgitError("the candidate's deposits are no longer readable", path="--state")
            if not self._assembled(unit, state):
                raise FlowgitError("the state's candidate is not a unit the deposits assemble: some of its sessions "
                                   "share no inferred connection with the others (was the state edited?)",
                                   path="--state", fix="pass back the `state` of the previous --json answer unchanged, "
                                                       "or start afresh: flowgit ascend \"…\"")
            self.complete(unit.members)
            claims = self._confirmed(unit, state)
            state.status, state.recognized = "recognized", state.presented[-1]
            trace = self._trace_line(unit)
            text = present(unit, claims, self.scope_dict(), self.index.short) + "\n\n" + trace
            return Response("recognized", state, text, unit, [unit], claims, [], self.scope_dict())
        if action == "rescope":
            if state.status != "rescope":
                raise FlowgitError("rescoping follows an empty traversal only", fix="use --refine or --reorient")
            self._apply_rescope(state, value or "widen")
            return self._traverse(state)
        if action not in ("refine", "reorient"):
            raise FlowgitError(f"unknown answer {action!r}", fix="recognize, refine, reorient or rescope")
        if action == "refine":
            change = self._parse_refine(value or "widen")   # a bad refinement is refused before it costs a try
        if state.attempts >= MAX_ATTEMPTS:
            return self._exhausted(state)
        if state.presented and state.status in ("gate", "inline"):   # the candidate turned down is final
            members = [state.presented[-1]["type"], *sorted(state.presented[-1]["members"])]
            if members not in state.rejected:
                state.rejected.append(members)
        if action == "refine":
            self._apply_refine(state, change)
            return self._traverse(state)
        target = (value or "").strip()
        kind = target.split(":", 1)[-1].strip().lower()
        if kind in UNIT_TYPES:
            state.unit_type = kind
        elif target:   # another recall dimension: Phase 0 again (the tries already spent still count)
            first, others = split_references(target)
            self.refocus(extract(first))
            state.trace = bind_terms(extract(first), self.index)
            state.recall, state.noted = first, others
            state.trace.entry = [d.key for _, d in rank_entries(self.index, state.trace)[:3]]
            state.unit_type = classify(state.trace, self.index)
        return self._traverse(state)

    def _parse_refine(self, value: str) -> tuple[str, str | None]:
        verb, _, arg = value.strip().partition(":")
        if verb in ("drop", "add"):
            if not arg:
                raise FlowgitError(f"{verb}: needs a session id", fix=f"{verb}:SID (an id or a unique prefix of it)")
            return verb, self._resolve(arg.strip(), f"{verb}:").key
        if verb in ("narrow", "widen") and not arg:
            return verb, None
        raise FlowgitError(f"unknown refinement {value!r}", fix="drop:SID, add:SID, widen or narrow")

    def _apply_refine(self, state: State, change: tuple[str, str | None]) -> None:
        verb, key = change
        scope = state.scope
        if verb == "drop" and key:
            scope.dropped.append(key)
            scope.added = [k for k in scope.added if k != key]
        elif verb == "add" and key:
            scope.added.append(key)
            scope.dropped = [k for k in scope.dropped if k != key]
        elif verb == "narrow":
            scope.min_weight *= 2
            scope.hops = max(1, scope.hops - 1)
        else:
            scope.min_weight /= 2
            scope.hops += 1
            scope.ignore_window = True

    def _apply_rescope(self, state: State, value: str) -> None:
        state.rescopes.append(value)
        verb, _, arg = value.partition(":")
        if verb == "type" and arg in UNIT_TYPES:
            state.unit_type = arg
        elif verb == "widen":
            state.scope.min_weight /= 2
            state.scope.hops += 1
            state.scope.ignore_window = True
        elif verb == "partitions" and arg == "all":
            state.scope.partitions = list(PARTITIONS)
        else:
            raise FlowgitError(f"unknown rescope option {value!r}", fix="widen, type:chain|cluster|concept or "
                                                                      "partitions:all")

    # -------------------------------------------------------------- wording
    def _gate_options(self, top: Unit, state: State) -> list[dict]:
        edge = self.index.short(top.members[-1].sid)
        return [
            {"answer": "recognize", "label": "Recognize — this is the connected unit I had in mind"},
            {"answer": "refine", "label": "Refine — close, but its boundary or scope needs adjusting",
             "choices": [f"drop:{edge}", "widen", "narrow", "add:SID"]},
            {"answer": "reorient", "label": "Something else — a different kind of unit or another angle",
             "choices": [t for t in UNIT_TYPES if t != state.unit_type] + ["<describe it in your words>"]},
        ]

    def _rescope_options(self, state: State) -> list[dict]:
        choices = [{"value": "widen", "label": "widen: follow weaker connections and ignore the time window"}]
        choices += [{"value": f"type:{t}", "label": f"look for a {_NAMES[t]} instead"}
                    for t in UNIT_TYPES if t != state.unit_type]
        if len(state.scope.partitions) < len(PARTITIONS):
            choices.append({"value": "partitions:all", "label": "read every partition"})
        return [{"answer": "rescope", "label": "Rescope the search", "choices": choices}]

    def _gate_text(self, top: Unit, units: list[Unit], state: State) -> str:
        left = MAX_ATTEMPTS - state.attempts
        others = f" ({len(units) - 1} other candidate(s) in scope)" if len(units) > 1 else ""
        return "\n".join([
            f"Is this the {_NAMES[top.type]} you were reaching for?{others}",
            "  1. Recognize — this is the connected unit I had in mind",
            f"  2. Refine — close, but the boundary needs adjusting "
            f"(drop {self.index.short(top.members[-1].sid)}, widen, narrow)",
            "  Or describe what you meant instead (another kind of unit, another angle).",
            f"  {left} more {'try' if left == 1 else 'tries'} before the search stops; "
            f"{self.index.size} deposits are in scope."])

    def _divergence(self, top: Unit) -> str:
        return (f"If this is not it: drop {self.index.short(top.members[-1].sid)} or widen the search, "
                "or say what you meant in your own words.")

    def _trace_line(self, unit: Unit) -> str:
        return (f"Recognised: {len(unit.members)} deposits, joined by {len(unit.edges)} inferred connections, "
                f"form this {_NAMES[unit.type]}.")


def _wrap_record(d: Deposit) -> tuple[Turn, ...] | None:
    """A wrap commit's own record: its message and the lines it added to the continuity file — not the whole
    file, which holds what every earlier session wrote."""
    from difflib import SequenceMatcher

    from flowgit.ascend.history import wrap_time
    from flowgit.history.commits import authored_time_of, message_of
    from flowgit.history.walk import open_repo

    sha, _, path = d.source_ref.partition(":")
    repo = open_repo(Path(d.source))
    commit = repo[sha]
    when = wrap_time(authored_time_of(commit))   # from the commit itself: the deposit's own date is no check
    try:
        after = repo[commit.tree[path].id].data.decode("utf-8", "replace").splitlines()
    except KeyError:
        return None
    before: list[str] = []
    if commit.parents:
        try:
            before = repo[commit.parents[0].tree[path].id].data.decode("utf-8", "replace").splitlines()
        except KeyError:
            pass   # added (or renamed) here: every line is this commit's
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    added = [line for op, _, _, j1, j2 in matcher.get_opcodes() if op in ("replace", "insert") for line in after[j1:j2]]
    return (Turn(when, "note", message_of(commit)), Turn(when, "note", "\n".join(added)))


def _shape_note(state: State) -> str:
    """High trace ambiguity: the dispatched shape was a guess, so the way to another shape is named."""
    if state.ambiguity != "high":
        return ""
    return ("\n  The recall did not say what shape of unit you mean: if you meant a line of work, a topic or a "
            "named concept instead, say which.")


def focus_of(trace: RecallTrace, sessions: list[str]) -> Focus:
    """What a recall looks for, for partitions that read only what it reaches."""
    words = [*trace.keywords, *trace.alternates.values()]
    return Focus.of(words, trace.anchors, [s for s in sessions if s])


def state_sessions(state: State) -> list[str]:
    """Sessions a state names: the entry, added and dropped ones, and every presented candidate's members."""
    keys = [*state.trace.entry, *state.scope.added, *state.scope.dropped]
    keys += [k for p in state.presented for k in p.get("members", [])]
    sids = [k.rsplit(":", 1)[-1] for k in keys]
    return list(dict.fromkeys([*(s for s in [state.from_sid] if s), *sids]))


_NAMES = {CHAIN: "line of work", CLUSTER: "topic cluster", CONCEPT: "named concept"}

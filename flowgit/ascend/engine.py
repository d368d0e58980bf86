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
from pathlib import Path
from typing import Any

from flowgit.ascend.assemble import Scope, Traversal, _internal_edges, traverse
from flowgit.ascend.confirm import Confirmer, Turn, claims_for, read_transcript
from flowgit.ascend.graph import DepositIndex
from flowgit.ascend.model import CHAIN, CLUSTER, CONCEPT, UNIT_TYPES, Claim, Deposit, Unit, safe_id
from flowgit.ascend.partitions import PARTITIONS, ScopeNotes
from flowgit.ascend.render import CAVEAT, present, scope_lines, shown
from flowgit.ascend.trace import RecallTrace, classify, extract, is_single_session, rank_entries
from flowgit.config import Config
from flowgit.errors import FlowgitError

MAX_ATTEMPTS = 3
STATE_VERSION = 1


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

    def to_dict(self) -> dict:
        return {"version": STATE_VERSION, "recall": self.recall, "trace": self.trace.to_dict(),
                "unit_type": self.unit_type, "scope": self.scope.to_dict(), "attempts": self.attempts,
                "max_attempts": MAX_ATTEMPTS, "presented": self.presented, "rescopes": self.rescopes,
                "history": self.history, "status": self.status, "recognized": self.recognized,
                "from_sid": self.from_sid}

    @classmethod
    def from_dict(cls, data: Any) -> "State":
        try:
            if data.get("version") != STATE_VERSION:
                raise ValueError("unknown state version")
            return cls(recall=str(data["recall"]), trace=RecallTrace.from_dict(data["trace"]),
                       unit_type=data["unit_type"] if data["unit_type"] in UNIT_TYPES else CLUSTER,
                       scope=Scope.from_dict(data["scope"]), attempts=int(data["attempts"]),
                       presented=list(data["presented"]), rescopes=list(data.get("rescopes", [])),
                       history=list(data.get("history", [])), status=str(data.get("status", "")),
                       recognized=data.get("recognized"), from_sid=data.get("from_sid"))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise FlowgitError(f"the state is not one ascend returned ({exc})", path="--state",
                               fix="pass back the `state` object of the previous --json answer unchanged") from None


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

    @property
    def converged(self) -> bool:
        return self.status in ("inline", "recognized", "single_session", "null_match", "exhausted")

    def to_dict(self) -> dict:
        return {"status": self.status, "converged": self.converged,
                "unit": _unit_dict(self.unit) if self.unit else None,
                "single_session": _deposit_dict(self.single) if self.single else None,
                "candidates": [_unit_summary(u) for u in self.candidates],
                "confirmations": [c.to_dict() for c in self.claims], "options": self.options,
                "scope": self.scope, "caveat": CAVEAT if (self.unit or self.single) else None,
                "state": self.state.to_dict(), "text": self.text}


def _deposit_dict(d: Deposit) -> dict:
    return {**d.locator(), "topic": d.topic, "initial_request": d.initial_request, "cwd": d.cwd}


def _unit_summary(u: Unit) -> dict:
    return {"type": u.type, "label": u.label, "confidence": u.confidence, "score": round(u.score, 3),
            "members": [d.key for d in u.members], "node": u.node.key if u.node else None}


def _unit_dict(u: Unit) -> dict:
    return {**_unit_summary(u), "deposits": [_deposit_dict(d) for d in u.members],
            "connections": [asdict(e) for e in u.edges]}


class Ascend:
    """Reads the partitions once per command and answers one step of the loop."""

    def __init__(self, cfg: Config, claude_dir: Path, partitions: list[str]) -> None:
        unknown = [p for p in partitions if p not in PARTITIONS]
        if unknown:
            raise FlowgitError(f"unknown partition {', '.join(unknown)}", fix="use " + ", ".join(PARTITIONS))
        self.cfg, self.claude_dir = cfg, claude_dir
        self.notes = ScopeNotes()
        self.readers = {name: PARTITIONS[name](cfg, claude_dir) for name in partitions}
        deposits = [d for reader in self.readers.values() for d in reader.deposits(self.notes)]
        self.index = DepositIndex.build(deposits, completer=lambda d: self.readers[d.partition].complete(d, self.notes))
        self.edges_followed = 0
        self.confirmer = Confirmer(self.record_of)

    # ------------------------------------------------------------- sources
    def record_of(self, d: Deposit) -> tuple[Turn, ...] | None:
        """The authoritative record a deposit's claims are checked against."""
        if d.partition == "claude":
            return read_transcript(d.source) if d.source else None
        if d.partition == "git":
            from flowgit.history.walk import open_repo

            sha, _, path = d.source_ref.partition(":")
            repo = open_repo(Path(d.source))
            commit = repo[sha]
            try:
                blob = repo[commit.tree[path].id].data.decode("utf-8", "replace")
            except KeyError:
                return None
            return (Turn(d.started_at, "person", commit.message), Turn(d.started_at, "assistant", blob))
        if d.partition == "episodes":
            from flowgit.episodes import EpisodeStore

            found, _ = EpisodeStore(d.source).search(session=d.sid)
            return tuple(Turn(e.ts, "person", e.content) for e in found)
        return None

    def complete(self, deposits: list[Deposit]) -> None:
        for d in deposits:
            self.readers[d.partition].complete(d, self.notes)

    def scope_dict(self) -> dict:
        return {**self.notes.to_dict(), "edges_followed": self.edges_followed,
                "broken_links": sorted(set(self.index.broken))}

    # --------------------------------------------------------------- phases
    def start(self, recall: str, *, unit_type: str | None = None, from_sid: str | None = None,
              partitions: list[str]) -> Response:
        if not recall.strip() and not from_sid:
            raise FlowgitError("nothing to recall", fix='say what you remember: flowgit ascend "the whole line of '
                                                       'work on retries"')
        if from_sid is not None and not safe_id(from_sid):
            raise FlowgitError(f"--from {from_sid!r} is not a session id (no paths, no '..')",
                               fix="pass the session id as it appears in the deposit's directory name")
        trace = extract(recall)
        state = State(recall=recall, trace=trace, unit_type=unit_type or CLUSTER,
                      scope=Scope(partitions=partitions), from_sid=from_sid)
        ranked = rank_entries(self.index, trace)
        if from_sid:
            entry = [d for d in self.index.deposits if d.sid == from_sid]
            if not entry:
                raise FlowgitError(f"no deposit for session {from_sid}", fix="check the id, or the --partition")
            trace.entry = [d.key for d in entry]
        elif unit_type is None and is_single_session(trace, ranked):
            return self._single(state, ranked[0][1])
        else:
            trace.entry = [d.key for _, d in ranked[:3]]
        state.unit_type = unit_type or classify(trace, self.index)
        return self._traverse(state)

    def _single(self, state: State, d: Deposit) -> Response:
        self.complete([d])
        claims = [self.confirmer.date(d), self.confirmer.origin(d)]
        loc = d.locator()
        where = loc["resume"] or f"not resumable: {loc['not_resumable']}"
        text = "\n".join([
            "One session answers this; there is no larger unit to assemble.",
            f"  {d.date or 'undated'} · {d.partition} · {d.slug} · {d.sid}",
            f"  began with: {shown(claims[1], d.initial_request or d.topic)}",
            f"  {where}", "", CAVEAT])
        state.status = "single_session"
        return Response("single_session", state, text, claims=claims, single=d, scope=self.scope_dict())

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
        state.attempts += 1
        travel: Traversal = traverse(self.index, state.trace, state.unit_type, state.scope, self._entries(state))
        self.edges_followed += len(travel.followed)
        units = [u for u in travel.units if len({d.key for d in u.members} - set(state.scope.dropped)) >= 2]
        for u in units:
            u.members = [d for d in u.members if d.key not in state.scope.dropped]
        if not units:
            return self._empty(state, travel)
        top = units[0]
        self.complete(top.members)
        claims = claims_for(top, self.confirmer)
        state.presented.append({**_unit_summary(top), "attempt": state.attempts})
        scope = self.scope_dict()
        if len(units) == 1 and top.confidence == "high":
            state.status = "inline"
            state.recognized = _unit_summary(top)
            text = present(top, claims, scope) + "\n\n" + self._divergence(top)
            return Response("inline", state, text, top, units, claims, self._gate_options(top, state), scope)
        state.status = "gate"
        text = present(top, claims, scope) + "\n\n" + self._gate_text(top, units, state)
        return Response("gate", state, text, top, units, claims, self._gate_options(top, state), scope)

    def _empty(self, state: State, travel: Traversal) -> Response:
        scope = self.scope_dict()
        lines = ["Nothing above a single session assembled from these deposits."] + scope_lines(scope)[1:]
        if state.attempts < MAX_ATTEMPTS:
            state.status = "rescope"
            options = self._rescope_options(state)
            lines += ["", f"Try another way ({MAX_ATTEMPTS - state.attempts} tries left):"]
            lines += [f"  {i}. {o['label']}" for i, o in enumerate(options[0]["choices"], 1)]
            return Response("rescope", state, "\n".join(lines), options=options, scope=scope)
        if not state.presented:
            state.status = "null_match"
            closest = travel.entries[0] if travel.entries else None
            lines += ["", "No larger unit could be recognised in three tries."]
            if closest:
                lines.append(f"  You could look at the closest single session on its own: {closest.sid} "
                             f"({closest.date or 'undated'}, {closest.topic}).")
            lines.append("  Or the cases you mean may not be recorded yet, and need finding afresh.")
            return Response("null_match", state, "\n".join(lines), scope=scope)
        return self._exhausted(state)

    def _exhausted(self, state: State) -> Response:
        best = max(state.presented, key=lambda p: p.get("score", 0))
        unit = self._rebuild(best)
        state.status = "exhausted"
        scope = self.scope_dict()
        if unit is None:
            return Response("exhausted", state, "The best earlier candidate is no longer readable.", scope=scope)
        self.complete(unit.members)
        claims = claims_for(unit, self.confirmer)
        text = ("No more tries left; here is the best candidate found earlier.\n\n" + present(unit, claims, scope))
        return Response("exhausted", state, text, unit, [unit], claims, [], scope)

    def _rebuild(self, summary: dict) -> Unit | None:
        members = [self.index.by_key[k] for k in summary.get("members", []) if k in self.index.by_key]
        if len(members) < 2:
            return None
        roles = {CHAIN: {CHAIN}, CLUSTER: {"topic"}, CONCEPT: {CONCEPT}}[summary["type"]]
        node = self.index.by_key.get(summary.get("node") or "")
        unit = Unit(summary["type"], members, _internal_edges(self.index, members, roles), summary["label"], node=node)
        unit.confidence, unit.score = summary.get("confidence", "low"), summary.get("score", 0.0)
        return unit

    # -------------------------------------------------------------- answers
    def answer(self, state: State, action: str, value: str | None = None) -> Response:
        """Apply one answer; the state's history records it only once it was accepted."""
        entry = {"answer": action, "value": value, "unit": state.presented[-1]["label"] if state.presented else None}
        response = self._answer(state, action, value)
        state.history.append(entry)
        return response

    def _answer(self, state: State, action: str, value: str | None) -> Response:
        if action == "recognize":
            if not state.presented or state.status not in ("gate", "inline"):
                raise FlowgitError("there is no candidate to recognise in this state",
                                   fix="answer the options the previous response listed")
            unit = self._rebuild(state.presented[-1])
            if unit is None:
                raise FlowgitError("the candidate's deposits are no longer readable", path="--state")
            self.complete(unit.members)
            claims = claims_for(unit, self.confirmer)
            state.status, state.recognized = "recognized", state.presented[-1]
            trace = self._trace_line(unit)
            return Response("recognized", state, present(unit, claims, self.scope_dict()) + "\n\n" + trace,
                            unit, [unit], claims, [], self.scope_dict())
        if action == "rescope":
            if state.status != "rescope":
                raise FlowgitError("rescoping follows an empty traversal only", fix="use --refine or --reorient")
            self._apply_rescope(state, value or "widen")
            return self._traverse(state)
        if action not in ("refine", "reorient"):
            raise FlowgitError(f"unknown answer {action!r}", fix="recognize, refine, reorient or rescope")
        if state.attempts >= MAX_ATTEMPTS:
            return self._exhausted(state)
        if action == "refine":
            self._apply_refine(state, value or "widen")
            return self._traverse(state)
        target = (value or "").strip()
        kind = target.split(":", 1)[-1].strip().lower()
        if kind in UNIT_TYPES:
            state.unit_type = kind
        elif target:
            state.trace = extract(target)
            state.recall = target
            state.trace.entry = [d.key for _, d in rank_entries(self.index, state.trace)[:3]]
            state.unit_type = classify(state.trace, self.index)
        return self._traverse(state)

    def _apply_refine(self, state: State, value: str) -> None:
        verb, _, arg = value.partition(":")
        scope = state.scope
        if verb == "drop" and arg:
            scope.dropped += [d.key for d in self.index.deposits if d.sid.startswith(arg)]
        elif verb == "add" and arg:
            scope.added += [d.key for d in self.index.deposits if d.sid.startswith(arg)]
        elif verb == "narrow":
            scope.min_weight *= 2
            scope.hops = max(1, scope.hops - 1)
        elif verb == "widen":
            scope.min_weight /= 2
            scope.hops += 1
            scope.ignore_window = True
        else:
            raise FlowgitError(f"unknown refinement {value!r}", fix="drop:SID, add:SID, widen or narrow")

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
        edge = top.members[-1].sid[:12]
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
            f"  2. Refine — close, but the boundary needs adjusting (drop {top.members[-1].sid[:12]}, widen, narrow)",
            "  Or describe what you meant instead (another kind of unit, another angle).",
            f"  {left} more {'try' if left == 1 else 'tries'} before the search stops; "
            f"{self.index.size} deposits are in scope."])

    def _divergence(self, top: Unit) -> str:
        return (f"If this is not it: drop {top.members[-1].sid[:12]} or widen the search, "
                "or say what you meant in your own words.")

    def _trace_line(self, unit: Unit) -> str:
        return (f"Recognised: {len(unit.members)} deposits, joined by {len(unit.edges)} inferred connections, "
                f"form this {_NAMES[unit.type]}.")


_NAMES = {CHAIN: "line of work", CLUSTER: "topic cluster", CONCEPT: "named concept"}

"""The things ascend reasons about: deposits, anchors, edges, units, claims and the loop's state."""

from __future__ import annotations

import os
import re
import shlex
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SAFE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")

CHAIN, CLUSTER, CONCEPT = "chain", "cluster", "concept"
AGENT_PARTITIONS = ("claude", "transcripts")   # sessions whose record is the agent's transcript, resumed by it
UNIT_TYPES = (CHAIN, CLUSTER, CONCEPT)


def instant(text: str | None) -> datetime | None:
    """An ISO-8601 time or day as an aware UTC instant, or None when there is none to read.

    Deposits write ``started_at`` with whatever offset the writer's clock had (``09:00+09:00`` is
    ``00:00Z``): compared as text they sort by local wall time, not by when things happened. A time
    without an offset is read as UTC (the transcripts' own stamps are), a bare day as its UTC midnight.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        found = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        return None
    return found.replace(tzinfo=timezone.utc) if found.tzinfo is None else found.astimezone(timezone.utc)


def time_key(when: datetime | None, sid: str) -> tuple:
    """Sort key of time order: earlier first, a session with no known time after every dated one (it has no
    place in time; callers say so rather than let it stand last), ties by session id."""
    return (when is None, when or datetime.min.replace(tzinfo=timezone.utc), sid)


def safe_id(value: str) -> bool:
    """A session id we may put in a path: no separators, no ``..``, no oddities."""
    return bool(SAFE_ID_RE.match(value)) and ".." not in value


def printable_name(name: str) -> bool:
    """Whether a project directory's name prints as the one line it is shown on: no control character, line
    or paragraph separator (a name holding a line break would add a line of its own to an answer, a fake
    resume command under "Sources")."""
    return name.isprintable()


def refused_name(name: str) -> str:
    """The scope note for a project directory left out by :func:`printable_name`."""
    return f"project directory {ascii(name)}: its name holds a control character or line break; refused"


@dataclass(frozen=True)
class Anchor:
    """A stored cross-reference: an issue, a PR, a memory entry (or a legacy bare string)."""

    kind: str      # github_issue | github_pr | memory | legacy | ticket | path | pattern | evidence | session
    ref: str
    channel: str = ""

    @property
    def key(self) -> str:
        """What two anchors must share to be the same reference (issues and PRs by their text, as stored)."""
        if self.kind in ("session", "evidence"):
            return f"{self.kind}:{self.ref.strip()}"
        ref = self.ref.strip().lower()
        if self.kind == "pattern":
            return "pattern:" + unicodedata.normalize("NFKC", self.ref.strip()).casefold()
        if self.kind in ("memory", "path"):
            return f"{self.kind}:{ref}"
        return f"ref:{ref}"


@dataclass(frozen=True)
class Coinage:
    token: str
    precision: float = 0.0
    session_occ: int = 0
    corpus_occ: int = 0


@dataclass
class Deposit:
    """One session's recall index entry (or a commit, or a session's episodes), partition-local."""

    partition: str
    slug: str
    sid: str
    cwd: str | None = None
    date: str | None = None
    started_at: str = ""
    last_turn_at: str = ""
    topics: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)
    initial_request: str = ""
    key_utterances: list[str] = field(default_factory=list)
    fingerprint: str = ""
    outcome: str = ""
    decisions: list[str] = field(default_factory=list)
    coined: list[Coinage] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    continuations: list[str] = field(default_factory=list)   # sessions that continue this one
    forks: list[str] = field(default_factory=list)
    continues: list[str] = field(default_factory=list)       # sessions this one continues (resumed from)
    path: str | Path | None = None
    source: str | Path | None = None   # the authoritative record (a transcript, a repository, the store)
    source_ref: str = ""            # e.g. the commit and path for a git deposit
    notes: list[str] = field(default_factory=list)
    full: bool = False              # every index file read (not only the discovery fields)
    also: list["Deposit"] = field(default_factory=list)   # the same session's deposits in other partitions
    record_dirs: tuple[str, ...] | None = None   # where its transcript's lines were written; None: not read

    @property
    def key(self) -> str:
        """``partition:slug:sid``; a slug already naming its partition (a history's ``git:repo``) is not
        prefixed twice."""
        place = self.slug if self.slug.startswith(f"{self.partition}:") else f"{self.partition}:{self.slug}"
        return f"{place}:{self.sid}"

    @property
    def topic(self) -> str:
        return self.topics[0] if self.topics else (self.keywords[0] if self.keywords else "")

    @property
    def when(self) -> datetime | None:
        """When the session began as its index says: ``started_at`` as an instant, else its day."""
        return instant(self.started_at) or instant(self.date)

    @property
    def parts(self) -> list["Deposit"]:
        """This deposit and the same session's deposits from other partitions (one session, one node)."""
        return [self, *self.also]

    @property
    def partitions(self) -> list[str]:
        return list(dict.fromkeys(d.partition for d in self.parts))

    def own_resume(self) -> str | None:
        """The command that re-enters what this one partition's deposit records, or None.

        Only from plain text: a working directory or id holding a line break or
        another control character would print a line of its own that reads as a
        whole command (``cd x && curl … | sh && … #``), quoted or not.
        """
        cwd = self.resume_dir()
        if not _plain(cwd) or not _plain(self.sid) or not _plain(self.source_ref):
            return None
        if cwd and not _absolute(cwd):
            return None  # `cd -`, `cd ~/proj`, a relative path: the command would run somewhere else
        if self.partition in AGENT_PARTITIONS:
            launch = launch_dir(cwd, self.slug) if cwd else None
            if not launch or not self.has_record():
                return None
            config = self._config_dir_to_name()
            if config is False:
                return None
            prefix = f"CLAUDE_CONFIG_DIR={shlex.quote(config)} " if config else ""
            return f"cd {shlex.quote(launch)} && {prefix}claude --resume {shlex.quote(self.sid)}"
        if self.partition == "git" and self.cwd:
            return f"git -C {shlex.quote(self.cwd)} show {shlex.quote(self.source_ref)}"
        if self.partition == "episodes" and self.cwd:
            store = f" --store {shlex.quote(str(self.source))}" if self.source and _plain(str(self.source)) else ""
            return (f"cd {shlex.quote(self.cwd)} && flowgit{store} episode search "
                    f"--session {shlex.quote(self.sid)}")
        return None

    def resume_dir(self) -> str | None:
        """Where the session ran: the index's directory unless the session's own record says otherwise.

        A project's slug is lossy (``/home/dev-p`` and ``/home/dev/p`` are one
        slug), so an index naming another directory of the same slug passes
        every check on the index alone. When the transcript's lines name
        directories and the index's is not among them, the record's first one
        the slug can be resumed from is used (else its first: no command, and
        :meth:`why_not_resumable` says why). A record not read, or naming none,
        leaves the index's.
        """
        dirs = [d for d in self.record_dirs or () if d]
        if self.partition not in AGENT_PARTITIONS or not dirs or self.cwd in dirs:
            return self.cwd
        return next((d for d in dirs if launch_dir(d, self.slug)), dirs[0])

    def _config_dir_to_name(self) -> str | None | bool:
        """The configuration directory the resume command must name, None when the agent's own default finds
        the session, False when it cannot be named (not plain text).

        The agent finds a session in ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``) only: a transcript read from
        another tree (``--claude-dir``, flowgit's configured directory) is resumed only with that directory
        named. The transcript lies at ``{config_dir}/projects/{slug}/{session}.jsonl`` (DESIGN)."""
        if not self.source:
            return None
        config = Path(self.source).absolute().parent.parent.parent
        default = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()
        if os.path.realpath(config) == os.path.realpath(default):
            return None
        return str(config) if _plain(str(config)) else False

    def resume_warning(self) -> str | None:
        """What running this session's resume command would also run: the settings and hooks of a tree other
        than the agent's own, named as its configuration (:mod:`flowgit.ascend.foreign`); None when nothing."""
        from flowgit.ascend import foreign

        for d in self.parts:
            config = d._config_dir_to_name() if d.own_resume() else None
            found = foreign.warning(config) if isinstance(config, str) else None
            if found:
                return found
        return None

    def has_record(self) -> bool:
        """Whether the authoritative record exists (a Claude session cannot be resumed without its transcript)."""
        if self.partition not in AGENT_PARTITIONS:
            return self.source is not None
        return bool(self.source) and Path(self.source).is_file()

    def resumes(self) -> list[str]:
        """Every way back in: the session's own resume first (a Claude session), then the wrap commits' blobs."""
        order = {"claude": 0, "transcripts": 0, "git": 1, "episodes": 2}
        out = [r for d in sorted(self.parts, key=lambda d: order.get(d.partition, 3)) if (r := d.own_resume())]
        return list(dict.fromkeys(out))

    def resume(self) -> str | None:
        found = self.resumes()
        return found[0] if found else None

    def why_not_resumable(self) -> str | None:
        if self.resumes():
            return None
        if any(not (_plain(d.resume_dir()) and _plain(d.sid) and _plain(d.source_ref)) for d in self.parts):
            return ("this deposit's working directory or session id is not plain text (a line break or another "
                    "control character, or not a string): no command is printed for it")
        if any(d.resume_dir() and not _absolute(d.resume_dir()) for d in self.parts):
            return ("this deposit's working directory is not an absolute path (`-`, `~/…`, a relative path): a "
                    "command would run in another directory, so none is printed")
        agents = [d for d in self.parts if d.partition in AGENT_PARTITIONS]
        if agents:
            if not any(d.resume_dir() for d in agents):
                return "this session recorded no working directory, so it cannot be resumed from here"
            if not any(launch_dir(d.resume_dir(), d.slug) for d in agents if d.resume_dir()):
                return ("this session's recorded working directory is not the one it was started from (nor below "
                        "it), and the session is found from the directory it is resumed in: no command is printed"
                        + "".join(f" {note}" for d in agents if (note := record_differs(d))))
            return "this session's transcript is not on disk, so it cannot be resumed"
        return "this deposit recorded no working directory, so it cannot be resumed from here"

    def locator(self) -> dict[str, Any]:
        sources = [{"partition": d.partition, "slug": d.slug, "ref": d.source_ref or d.sid, "date": d.date}
                   for d in self.parts]
        return {"partition": self.partition, "slug": self.slug, "session_id": self.sid, "date": self.date,
                "resume": self.resume(), "resumes": self.resumes(), "resume_warning": self.resume_warning(),
                "sources": sources, "not_resumable": self.why_not_resumable()}


@dataclass(frozen=True)
class Edge:
    """An inferred connection: never stored, rebuilt on every read."""

    a: str
    b: str
    role: str      # chain | topic | concept | plain
    weight: float
    basis: str     # what connects them, in words


@dataclass
class Unit:
    """A candidate higher unit: a chain, a topic cluster or a concept node."""

    type: str
    members: list[Deposit]
    edges: list[Edge]
    label: str
    node: Deposit | None = None     # concept: the coining deposit
    undated: list[str] = field(default_factory=list)   # members no index or record dates: no place in time
    score: float = 0.0
    alignment: float = 0.0
    connectivity: float = 0.0
    confidence: str = "low"

    @property
    def timeline(self) -> list[Deposit]:
        """The members that have a place in time, in time order (all of them when none has one): where a
        line began and where it arrived are read from these, never from an undated session."""
        dated = [d for d in self.members if d.key not in self.undated]
        return dated or list(self.members)

    @property
    def signature(self) -> str:
        return f"{self.type}:{self.label}:" + ",".join(sorted(d.key for d in self.members))


@dataclass
class Claim:
    """Something the presentation would state as fact, tied to the one deposit it comes from."""

    deposit: str          # Deposit.key
    kind: str             # origin | first_use | utterance | decision | date
    statement: str
    value: str            # what the index says
    verdict: str = "unattested"   # confirmed | corrected | unattested
    shown: str = ""       # what is shown: the index value, or the source's when corrected
    detail: str = ""
    said_by: str = ""     # a quote's confirmed speaker: person | agent (a wrap or an episode an agent wrote)
    session: str = ""     # the deposit's session id, as written (a key's parts may hold `:`: it is not parsed)

    def to_dict(self) -> dict[str, Any]:
        return {"deposit": self.deposit, "kind": self.kind, "statement": self.statement, "index_value": self.value,
                "verdict": self.verdict, "shown": self.shown, "detail": self.detail, "said_by": self.said_by,
                "session": self.session}


def record_differs(d: Deposit) -> str:
    """A note when a session's record places it elsewhere than its index does, else nothing (both quoted:
    an index's directory may hold a character that is not printed as itself)."""
    ran = d.resume_dir()
    return f"(its transcript ran in {ran!r}; its index says {d.cwd!r})" if ran != d.cwd and d.cwd else ""


def _plain(value: Any) -> bool:
    """Whether a deposit's value may go into a printed command: absent, or a string without control,
    format or separator characters (a line break would start a line of its own)."""
    import unicodedata

    if value is None or value == "":
        return True
    return isinstance(value, str) and not any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in value)


def session_key(sid: str) -> str:
    """A session id as one session, however it is spelled: as the gate's independence rule (G103) and every
    "this session's" question read it (``Sess-1``, ``SESS_1`` and ``sess-1`` are one); an id with no letter or
    digit is itself."""
    from flowgit.evidence import source_name

    return source_name(sid) or sid


def launch_dir(cwd: str, slug: str) -> str | None:
    """The directory a session was started from: ``cwd`` or its nearest parent whose name is the partition's.

    The agent finds a session from the directory it is resumed in, by that
    directory's slug (DESIGN: a lossy encoding, ``/`` and ``.`` as ``-``), so
    a deposit that recorded a directory the session later moved into would
    print a command that cannot find it. The comparison reads every character
    but letters and digits as ``-`` on both sides, which holds for any encoding
    that turns punctuation into ``-``. None: no such directory.
    """
    if not slug:
        return cwd
    wanted = _SLUG_PUNCTUATION.sub("-", slug)
    path = cwd
    while True:
        if _SLUG_PUNCTUATION.sub("-", path) == wanted:
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


_SLUG_PUNCTUATION = re.compile(r"[^A-Za-z0-9]")


def _absolute(path: str) -> bool:
    """Whether ``path`` names one directory wherever the command runs here: absolute on this system (not `-`,
    `~`, a relative path, nor `x:/…` on a system without drive letters), which `cd` would read against where
    the reader stands."""
    return os.path.isabs(path)

"""What the gate judges must stay judged: its files, its configuration, a merge's episodes.

These findings are about the change as a whole rather than the document's
content: the continuity file or store deleted or moved away (after which no
later commit would be checked), the configuration loosened in the very commit
it would judge, conflict stages left in the index, and a merge that drops
episodes either parent had.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Iterator

from flowgit.checks.finding import Finding
from flowgit.config import Budgets, Config, Thresholds

if TYPE_CHECKING:
    from flowgit.checks.judge import Side

STRICTNESS = {"off": 0, "warning": 1, "on": 2, "error": 2}
# Thresholds where a larger number is the stricter gate (the rest: smaller is stricter).
STRICTER_WHEN_LARGER = {"evidence_2x", "evidence_3x", "sources_3x", "relevance_min_shared",
                        "stale_proven_days", "stale_developing_days"}
IGNORED = {"evidence_reuse_warn"}  # only ever a warning


def weakenings(base: Config, new: Config, *, holds: tuple[bool, bool] = (True, True)) -> list[str]:
    """Every way ``new`` is looser than ``base``, one sentence each ([] when it is not): the gate's G801 and
    the audit's A401 ask this one question.

    ``holds``: whether the base commit has a continuity file and a store at the
    paths its configuration names. Pointing the configuration away from a path
    the base does not hold takes nothing from the gate (a memory adopted under
    another name in a repository that never had one): only a move away from a
    file the base holds is a weakening.
    """
    problems: list[str] = []
    moved = (holds[0] and new.continuity_rel != base.continuity_rel) or (holds[1] and new.store_rel != base.store_rel)
    if moved:
        problems.append(f"moves the judged files ({base.continuity_rel}, {base.store_rel} -> "
                        f"{new.continuity_rel}, {new.store_rel})")
    if new.aliases != base.aliases:
        problems.append("changes section aliases (which decide what each section is held to)")
    for name in sorted(set(base.rules) | set(new.rules)):
        before, after = STRICTNESS.get(base.rules.get(name, "on"), 2), STRICTNESS.get(new.rules.get(name, "on"), 2)
        if after < before:
            problems.append(f"turns rule `{name}` from {base.rules.get(name, 'on')} to {new.rules.get(name)}")
    for cls, attr in ((Thresholds, "thresholds"), (Budgets, "budgets")):
        old_v, new_v = getattr(base, attr), getattr(new, attr)
        for field_name in cls._fields:
            if field_name in IGNORED:
                continue
            a, b = getattr(old_v, field_name), getattr(new_v, field_name)
            looser = (b < a) if (attr == "thresholds" and field_name in STRICTER_WHEN_LARGER) else (b > a)
            if looser:
                problems.append(f"loosens {attr}.{field_name} from {a} to {b}")
    return problems


def stricter(own: Config, other: Config) -> Config:
    """``own`` with every rule, threshold and budget at the stricter of its value and ``other``'s (its paths
    and aliases, which say where its memory is and how it reads, kept).

    A merge judges each parent under this, ``other`` being the configuration the result carries: a branch's
    lenient configuration (switched on there, with an override of its own) judged that branch's commits,
    not what a merge writes into a result that drops it, nor into one that keeps it (G801 asks for the
    merge's own override then).
    """
    if own.rules == other.rules and own.thresholds == other.thresholds and own.budgets == other.budgets:
        return own
    rules = {}
    for name in set(own.rules) | set(other.rules):
        mine, theirs = own.rules.get(name, "on"), other.rules.get(name, "on")
        kept = mine if STRICTNESS.get(mine, 2) >= STRICTNESS.get(theirs, 2) else theirs
        if kept != "on":
            rules[name] = kept
    return own._replace(rules=rules, thresholds=_stricter_values(Thresholds, own.thresholds, other.thresholds),
                        budgets=_stricter_values(Budgets, own.budgets, other.budgets))


def _stricter_values(cls, own, other):
    """Field by field, the stricter of two thresholds or budgets (as :func:`weakenings` reads them)."""
    values = {}
    for field_name in cls._fields:
        a, b = getattr(own, field_name), getattr(other, field_name)
        larger = cls is Thresholds and field_name in STRICTER_WHEN_LARGER
        values[field_name] = a if field_name in IGNORED else (max(a, b) if larger else min(a, b))
    return cls(**values)


def config_weakened(base: Config, new: Config, path: str, *, holds: tuple[bool, bool] = (True, True)
                    ) -> Iterator[Finding]:
    """G801: the staged configuration is looser than the committed one (see :func:`weakenings`)."""
    problems = weakenings(base, new, holds=holds)
    if problems:
        yield Finding("G801", "config", "error", new.source or ".flowgit.toml", None,
                      "this commit weakens flowgit's own configuration, which is judged by the "
                      "configuration committed at the base: " + "; ".join(problems),
                      "commit the configuration change on its own with FLOWGIT_OVERRIDE=\"<why>\" "
                      "(it is recorded as a Flow-Override trailer), or revert it")


def hooks_weakened(new: "Side") -> Iterator[Finding]:
    """G810: the staged pre-commit framework hook list runs flowgit's hooks less than the base's does (see
    :mod:`flowgit.checks.hooklist`)."""
    problems = new.extra.get("hooks_weakened") or ()
    if problems:
        yield hook_list_finding(problems)


def hook_list_finding(problems) -> Finding:
    """G810 for these problems (asked by the gate and by check-msg, which may be the one flowgit hook left)."""
    return Finding("G810", "config", "error", ".pre-commit-config.yaml", None,
                   "this commit weakens the hooks that judge it: the pre-commit framework runs the hook list "
                   "as staged, and it " + "; ".join(problems),
                   "commit the hook list change on its own with FLOWGIT_OVERRIDE=\"<why>\" (it is recorded "
                   "as a Flow-Override trailer), or restore flowgit's hooks "
                   "(`git restore --staged --worktree --source=HEAD -- .pre-commit-config.yaml`)")


def removed(old: "Side | None", new: "Side") -> Iterator[Finding]:
    """Deleting or moving the continuity file or the store stops the gate from looking (G803, G804)."""
    if old is None:
        return
    gitlinked = new.extra.get("gitlinked") or ()
    if old.continuity is not None and new.continuity is None:
        moved = new.extra.get("renamed_to")
        what = (f"moved to {moved}" if moved else _gitlink_said(gitlinked, new.continuity_path) or "deleted")
        yield Finding("G803", "removed", "error", new.continuity_path, None,
                      f"the continuity file is {what} in this commit, so no later commit would be judged",
                      f"restore it (`git restore --staged --worktree --source=HEAD -- {new.continuity_path}`)"
                      "; to move it, change `continuity` in the configuration in the same commit "
                      "with FLOWGIT_OVERRIDE=\"<why>\"")
    if old.has_store and not new.has_store:
        what = _gitlink_said(gitlinked, new.store_path) or "deleted"
        yield Finding("G804", "removed", "error", new.store_path, None,
                      f"the episodic store is {what} in this commit; it is append-only and every "
                      "graduation stands on it",
                      f"put it back in the index (`git restore --staged -- {new.store_path}`), and, only if the "
                      f"working tree no longer has the file, there too (`git restore -- {new.store_path}`): a "
                      "working store still there holds the episodes recorded since HEAD")


def _gitlink_said(gitlinked, path: str) -> str | None:
    """How a judged file replaced by a gitlink (mode 160000, itself or a directory on its way) is gone: git
    records a submodule's commit id there, and no file (the fix, restoring the file, is the same)."""
    held = [p for p in gitlinked if path == p or path.startswith(p + "/")]
    return f"replaced by a gitlink (mode 160000 at `{held[0]}`: a submodule's commit, not a file)" if held else None


def unmerged(new: "Side") -> Iterator[Finding]:
    for path in new.extra.get("unmerged") or ():
        yield Finding("G805", "removed", "error", path, None, "the file still has unresolved merge conflicts",
                      "resolve the conflict and `git add` the result")


def symlinked(new: "Side") -> Iterator[Finding]:
    """The continuity file or store (or a directory on its way), or a configuration file, committed as a
    symbolic link (G806).

    git records a link's target text, not the memory: the gate would judge that
    text, and the real file, elsewhere in the tree, would go unjudged. A linked
    configuration is the same hole one step removed: the commands that follow
    the link would read a memory the gate's configuration does not name.
    """
    for path in new.extra.get("symlinked") or ():
        yield Finding("G806", "removed", "error", path, None,
                      "is a symbolic link in git: the gate would judge the link, not the memory behind it",
                      "commit the file itself at the configured path (remove the link, move the file there, "
                      "`git add` it), or configure `continuity`/`store` to where the file really is")


# Code points HFS+ ignores in a name (joiners, direction marks, byte-order mark): `CONTI\u200cNUITY.md` is one
# file with CONTINUITY.md there, as git itself found (core.protectHFS)
FS_IGNORED_RE = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")


def path_fold(path: str) -> str:
    """A path as a case-insensitive filesystem compares it (macOS, Windows): letter case by simple folding (not
    full folding: `ß` and `ss`, a ligature and its letters, stay apart), composed and decomposed accents alike,
    the code points HFS+ ignores dropped."""
    if path.isascii():  # (almost every name: nothing to compose or drop)
        return path.lower()
    composed = unicodedata.normalize("NFC", FS_IGNORED_RE.sub("", path))
    return "".join(_simple_fold(ch) for ch in composed)


def _simple_fold(ch: str) -> str:
    """One character's simple case folding: ``casefold`` where it gives one character (`ſ` is `s`, `ς` is
    `σ`, `K` the Kelvin sign is `k`), ``lower`` where full folding would expand it (`ß`, a ligature)."""
    folded = ch.casefold()
    return folded if len(folded) == 1 else ch.lower()


def case_variants_of(judged: list[str], present: dict[str, str]) -> dict[str, str]:
    """{path: blob id} of the ``present`` paths that a case-insensitive filesystem takes for a ``judged`` one."""
    folded = {path_fold(path): path for path in judged}
    return {path: oid for path, oid in present.items()
            if path not in folded.values() and folded.get(path_fold(path)) is not None}


def case_collisions(old: "Side | None", new: "Side", held_twins: dict | None = None) -> Iterator[Finding]:
    """G809: a file whose path differs from the continuity file's or the store's only in letter case.

    On a case-insensitive filesystem (macOS, Windows) the two are one file, and
    a checkout writes whichever comes last: the memory an agent reads there
    would be one no rule judged. A variant the base held as it is was judged
    when it came in; one the change brings or changes is refused.
    """
    held = (old.extra.get("case_variants") or {}) if old is not None else (held_twins or {})
    for path, oid in sorted((new.extra.get("case_variants") or {}).items()):
        if held.get(path) == oid:
            continue
        judged = new.continuity_path if path_fold(path) == path_fold(new.continuity_path) else new.store_path
        yield Finding("G809", "removed", "error", path, None,
                      f"is `{judged}` to a case-insensitive filesystem (macOS, Windows): there the two are one "
                      "file, and the one a checkout writes last is what the agent reads, judged by no rule",
                      f"remove it (`git rm --cached -- {path}`), or give it a name of its own")


ID_RE = re.compile(rb'"id"\s*:\s*"([^"\\]+)"')


def merge_lost_episodes(parents: "list[Side]", new: "Side") -> Iterator[Finding]:
    """A merge keeps every episode of every parent (G704), each as some parent wrote it.

    An episode's id hashes its type, content and session, not its agent or
    time, so a merge that rewrote another branch's line in place (giving its
    episodes invented agents) keeps every id: the line is judged by its bytes.
    A result line that carries a parent's episode id must be that episode's
    line as one of the parents holds it. Where two parents record one id in
    different lines, whichever the merge keeps rewrites the other branch's
    record (G708).
    """
    result = new.store or b""
    have = set(ID_RE.findall(result))
    # each parent's store read once: a store given by reference is loaded from git on each read
    stores = [(side, side.store_bytes()) for side in parents if side.has_store]
    held_lines: set[bytes] = set()
    held_ids: set[bytes] = set()
    for _, data in stores:
        held_lines.update(line.rstrip(b"\r") for line in data.split(b"\n"))
        held_ids.update(ID_RE.findall(data))
    yield from _recorded_differently([data for _, data in stores], new, have)
    altered = sorted({ident for line in result.split(b"\n") if line.rstrip(b"\r") not in held_lines
                      for ident in ID_RE.findall(line) if ident in held_ids})
    if altered:
        sample = ", ".join(i.decode("utf-8", "replace") for i in altered[:5])
        yield Finding("G704", "store-append-only", "error", new.store_path, None,
                      f"the merge alters {len(altered)} episode(s) a parent recorded (the same id, other bytes): "
                      f"{sample}",
                      "keep each episode's line exactly as its branch wrote it: merge the store with the flowgit "
                      "merge driver (`flowgit init` sets it up), which takes lines whole")
    for side, data in stores:
        lost = set(ID_RE.findall(data)) - have
        if lost:
            sample = ", ".join(sorted(i.decode("utf-8", "replace") for i in lost)[:5])
            yield Finding("G704", "store-append-only", "error", new.store_path, None,
                          f"the merge drops {len(lost)} episode(s) of parent {str(side.commit)[:10]}: {sample}",
                          "merge the store with the flowgit merge driver (`flowgit init` sets it up: "
                          f"`{new.store_path} merge=flowgit` in `.gitattributes`), which keeps every line of "
                          "both sides, then commit the merge again")


def _recorded_differently(stores: list[bytes], new: "Side", have: set[bytes]) -> Iterator[Finding]:
    """G708: an episode two parents' ``stores`` record in different lines (another agent, time or tags under
    one id), which the merge result holds.

    A store line is a record once committed: the merge can keep only one line
    of an id (a second would be a repeat, G703), so it rewrites one branch's
    record whichever it keeps, and the branch it lands on then reads another
    agent or date for an episode it already holds (a same-session pair turned
    independent, an episode moved past a demotion). Only the person merging can
    say which record is true: the merge is refused until they do, under an
    override that names G708.
    """
    lines_of: dict[bytes, set[bytes]] = {}
    for data in stores:
        for line in data.split(b"\n"):
            found = ID_RE.findall(line)
            if len(found) == 1:  # (a line holding two ids is G706's)
                lines_of.setdefault(found[0], set()).add(line.rstrip(b"\r"))
    differ = sorted(i for i, lines in lines_of.items() if len(lines) > 1 and i in have and _records_differ(lines))
    if differ:
        sample = ", ".join(i.decode("utf-8", "replace") for i in differ[:5])
        yield Finding("G708", "store-append-only", "error", new.store_path, None,
                      f"the parents record {len(differ)} episode(s) in different lines under one id (another "
                      f"agent, time or tags): {sample}; the merge keeps one line of each, so it rewrites the other "
                      "branch's record (its agent and date decide independence and what was recorded since a "
                      "demotion)",
                      "compare the two lines (`git show <parent>:" + new.store_path + "`), keep the one the shared "
                      "branch (the one already pushed) holds, and commit the merge with "
                      "FLOWGIT_OVERRIDE=\"G708: <why that record is true>\" (the audit shows it)")


def _records_differ(lines: set[bytes]) -> bool:
    """Whether lines of one id say different things: the same JSON object written with other spacing or key
    order is one record; a line that is no JSON object (torn by a crash, the episode appended whole after
    it) records nothing, and the store merge keeps it by its bytes beside the whole one."""
    from flowgit.episodes import line_object

    seen = []
    for line in lines:
        try:
            found = line_object(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(found, dict):
            seen.append(found)
    return any(obj != seen[0] for obj in seen[1:])


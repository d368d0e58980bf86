"""The gate's questions to git: a commit's id, blob ids and sizes at a commit, blob contents.

The hook asks them on every commit, so they are answered by one
``git cat-file --batch-command`` process (git 2.36 and later), asked in rounds
over its pipes, instead of a process per question: each ``git`` start costs
a few milliseconds, which is most of what the gate may spend. Where that
process cannot answer (an older git, a path it cannot be asked about: a line
break or trailing blank in a configured path), :class:`ProcessReads` asks the
same questions one plumbing command each. Both give the same answers; the
index (stage numbers, conflicts) is always read by ``git ls-files -s``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Sequence

from flowgit.git import batch_found, blobs, git


class ProcessReads:
    """One git process per question (``rev-parse``, ``ls-tree``, ``cat-file --batch``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def commit(self, spec: str) -> str | None:
        """The commit ``spec`` names (``HEAD``, ``HEAD^``, an id), or None."""
        out = git(self.root, "rev-parse", "--verify", "-q", spec + "^{commit}", check=False).strip()
        return out.decode() if out else None

    def entries(self, rev: str | None, paths: list[str]) -> dict[str, str]:
        """Blob ids of ``paths`` in commit ``rev`` (empty for None); sizes under ``path + "\\0size"``."""
        if rev is None:
            return {}
        out = git(self.root, "ls-tree", "-l", "-z", rev, "--", *paths, check=False)
        found: dict[str, str] = {}
        for record in out.split(b"\0"):
            meta, _, path = record.partition(b"\t")
            parts = meta.split()
            if len(parts) == 4 and parts[1] == b"blob":
                name = path.decode("utf-8", "replace")
                found[name] = parts[2].decode()
                found[name + "\0size"] = parts[3].decode()
        return found

    def specs(self, specs: Sequence[str]) -> list[bytes | None]:
        """Blob contents by revision spec (``REV:path``); None where there is no blob."""
        return blobs(self.root, specs)

    def objects(self, oids: Sequence[str]) -> dict[str, bytes]:
        """Blob contents by id (``b""`` for one git cannot read)."""
        wanted = list(dict.fromkeys(o for o in oids if o))
        return {oid: data or b"" for oid, data in zip(wanted, self.specs(wanted))}

    def close(self) -> None:
        pass


class Unanswerable(Exception):
    """The batch process cannot be asked this (or is not there): ask :class:`ProcessReads`."""


class BatchReads(ProcessReads):
    """The same questions over one ``git cat-file --batch-command`` process."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        try:
            self._proc = subprocess.Popen(["git", "cat-file", "--batch-command"], cwd=root,
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            raise Unanswerable("git cannot be started") from None

    def _ask(self, commands: list[str]) -> list[tuple[bytes, bytes | None]]:
        """Send ``commands`` (``info X`` / ``contents X``); per command (header, contents or None)."""
        for command in commands:
            spec = command.partition(" ")[2]
            if "\n" in spec or "\r" in spec or spec != spec.rstrip():
                raise Unanswerable(spec)
        proc = self._proc
        try:
            proc.stdin.write(("\n".join(commands) + "\n").encode("utf-8", "surrogateescape"))
            proc.stdin.flush()
            answers = []
            for command in commands:
                header = proc.stdout.readline()
                if not header.endswith(b"\n"):
                    raise Unanswerable("no answer")  # an older git refused --batch-command
                parts = header.split()
                data = None
                if command.startswith("contents ") and batch_found(parts):
                    size = int(parts[2])
                    data = proc.stdout.read(size + 1)[:size]
                answers.append((header, data))
            return answers
        except (OSError, ValueError):
            raise Unanswerable("the batch process failed") from None

    def commit(self, spec: str) -> str | None:
        header, _ = self._ask([f"info {spec}^{{commit}}"])[0]
        parts = header.split()
        return parts[0].decode() if batch_found(parts) and parts[1] == b"commit" else None

    def entries(self, rev: str | None, paths: list[str]) -> dict[str, str]:
        if rev is None:
            return {}
        found: dict[str, str] = {}
        for path, (header, _) in zip(paths, self._ask([f"info {rev}:{p}" for p in paths])):
            parts = header.split()
            if batch_found(parts) and parts[1] == b"blob":
                found[path] = parts[0].decode()
                found[path + "\0size"] = parts[2].decode()
        return found

    def specs(self, specs: Sequence[str]) -> list[bytes | None]:
        return [data if data is not None and header.split()[1:2] == [b"blob"] else None
                for header, data in self._ask([f"contents {s}" for s in specs])] if specs else []

    def close(self) -> None:
        try:
            self._proc.stdin.close()
        except OSError:
            pass
        self._proc.stdout.close()
        self._proc.wait()


class Reads:
    """The batch process while it answers, one process per question from the first refusal on."""

    def __init__(self, root: Path, *, batch: bool = True) -> None:
        self.root = root
        self._slow = ProcessReads(root)
        self._fast: BatchReads | None = None
        if batch:
            try:
                self._fast = BatchReads(root)
            except Unanswerable:
                self._fast = None

    def _call(self, name: str, *args):
        if self._fast is not None:
            try:
                return getattr(self._fast, name)(*args)
            except Unanswerable:
                self._fast.close()
                self._fast = None
        return getattr(self._slow, name)(*args)

    def commit(self, spec: str) -> str | None:
        return self._call("commit", spec)

    def entries(self, rev: str | None, paths: list[str]) -> dict[str, str]:
        return self._call("entries", rev, paths)

    def specs(self, specs: Sequence[str]) -> list[bytes | None]:
        return self._call("specs", list(specs))

    def objects(self, oids: Sequence[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(o for o in oids if o))
        return {oid: data or b"" for oid, data in zip(wanted, self.specs(wanted))}

    def close(self) -> None:
        if self._fast is not None:
            self._fast.close()
            self._fast = None

    def __enter__(self) -> "Reads":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

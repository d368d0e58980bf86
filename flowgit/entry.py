"""The ``flowgit`` console script.

``flowgit check`` runs on every commit of every user, so its plain form skips
the click command tree (about a tenth of the hook's start-up) and goes straight
to the gate; every other invocation, and any option the fast path does not
know, goes through :mod:`flowgit.cli`. On that path the store is read and
hashed on a second thread while the gate's modules import
(:mod:`flowgit.storeread`), the cycle collector is off, and the process ends
without unwinding the interpreter once the report is flushed.
"""

from __future__ import annotations

import os
import sys


def _fast_check(args: list[str]) -> int | None:
    options: dict[str, str] = {}
    rest = list(args)
    while rest and rest[0] in ("--file", "--store") and len(rest) >= 2:
        options[rest[0][2:]] = rest[1]
        rest = rest[2:]
    if not rest or rest[0] != "check" or any(a not in ("--json",) for a in rest[1:]):
        return None
    import gc
    import os

    gc.disable()  # a short-lived process: collecting cycles would cost several milliseconds and free nothing needed
    if not options:
        from flowgit import storeread

        storeread.start(os.getcwd())  # read and hashed while the imports below run
    from flowgit.config import load_judging_config
    from flowgit.errors import EXIT_USAGE, FlowgitError

    try:
        from flowgit.commands import check

        cfg = load_judging_config(continuity=options.get("file"), store=options.get("store"))
        return check.main(cfg, "--json" in rest)
    except FlowgitError as exc:
        if "--json" in rest:
            from flowgit.output import emit_json

            emit_json(exc.to_dict())
        else:
            sys.stderr.write(f"flowgit: error: {exc.render()}\n")
        return EXIT_USAGE


def _exit_now(code: int) -> None:
    """Flush the report and end the process without tearing the interpreter down.

    The gate's verdict is written and nothing registers exit handlers on this
    path; unwinding every module and object it loaded would cost the hook more
    CPU than some of its rules.
    """
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _tolerate_narrow_output() -> None:
    """Where the output's encoding cannot spell every character (a Latin-1 locale, a cp1252 pipe), print what
    it cannot as ``?`` instead of failing: the gate's verdict, and a wrap that committed, must not turn into a
    traceback over the em dash of a summary line. (JSON is written in ASCII there: see
    :func:`flowgit.output.emit_json`.)"""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="replace")
            except (ValueError, OSError):
                pass


def _open_closed_standard_streams() -> frozenset[int]:
    """Standard streams the process was started without (``<&-``, ``>&-``, a daemon's), each opened on the null
    device; returns their descriptors.

    A closed descriptor 0, 1 or 2 is the lowest one free: the next file
    opened (the store, the lock, a temporary file) would take its number, and
    a git process that inherits the stream would write its output into that
    file. Python also leaves ``sys.stdin``/``sys.stdout`` as None, which
    the commands would meet as a traceback. A closed input reads as empty.
    """
    import os

    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:  # (in order: each open takes the lowest free descriptor, this one)
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        name = ("stdin", "stdout", "stderr")[fd]
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False))  # noqa: SIM115
    return frozenset(closed)


def main(argv: list[str] | None = None) -> int:
    # Every git flowgit runs reads the objects as stored: a replace ref (`git replace`) or a graft (the
    # deprecated info/grafts, or a file GIT_GRAFT_FILE names) would show the gate a base, or the audit a
    # parent, that is not the one the commit records. (Called in-process, as the tests do, the caller's
    # environment is given back as it was.)
    before = {name: os.environ.get(name) for name in AS_RECORDED}
    os.environ.update(AS_RECORDED)
    try:
        return _main(argv)
    finally:
        if argv is not None:
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


NO_REPLACE = "GIT_NO_REPLACE_OBJECTS"
NO_GRAFTS = "/dev/null/no-grafts"  # a graft file that cannot exist: git reads none, and prints no hint
# A path is the path it names: with git's pathspec switches set (`GIT_LITERAL_PATHSPECS=1`, which git hands to
# its hooks) flowgit's own `:(literal)PATH` would be read as a file of that name, match nothing, and show the
# gate a commit that deletes the memory. Each is a boolean: "0" switches it off.
PATHSPEC_SWITCHES_OFF = {name: "0" for name in ("GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS",
                                                "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS")}
AS_RECORDED = {NO_REPLACE: "1", "GIT_GRAFT_FILE": NO_GRAFTS, **PATHSPEC_SWITCHES_OFF}


def _working_directory_gone(args: list[str]) -> int | None:
    """Exit 2 with the fix when the directory the command was started in no longer exists (deleted or moved
    under a shell that still stands in it): every command starts from it, and would end in a traceback. A
    session hook (``--hook``) is left to its own rule, never to break the session (:mod:`flowgit.cli`)."""
    try:
        os.getcwd()
        return None
    except OSError:
        if "--hook" in args:
            return None
    from flowgit.errors import EXIT_USAGE, FlowgitError

    exc = FlowgitError("the current directory no longer exists (it was deleted or moved)",
                       fix="cd into the repository (or its new place) and run the command again")
    if "--json" in args:
        from flowgit.output import emit_json

        emit_json(exc.to_dict())
    else:
        sys.stderr.write(f"flowgit: error: {exc.render()}\n")
    return EXIT_USAGE


def _main(argv: list[str] | None) -> int:
    closed: frozenset[int] = frozenset()
    if argv is None:  # a process of its own (the console script, the hook): its streams are the terminal's
        closed = _open_closed_standard_streams()
        _tolerate_narrow_output()
    args = sys.argv[1:] if argv is None else list(argv)
    gone = _working_directory_gone(args)
    if gone is not None:
        return gone
    fast = _fast_check(args)
    if fast is not None:
        if argv is None:  # the hook's own process: nothing is left to do but exit
            _exit_now(fast)  # (the verdict is its exit code, whether or not its report could be shown)
        return fast
    from flowgit.cli import main as cli_main

    code = cli_main(args)
    if 1 in closed and code == 0:  # the work is done; what it had to say went nowhere
        from flowgit.errors import EXIT_OUTPUT

        sys.stderr.write("flowgit: error: could not write the output (standard output is closed); what the "
                         "command did stands (see `flowgit status`, `git log -1`)\n")
        return EXIT_OUTPUT
    return code


if __name__ == "__main__":
    raise SystemExit(main())

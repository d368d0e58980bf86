#!/bin/sh
# flowgit audit for any CI: fails (exit 1) when a commit in the range breaks a gate rule.
#
#   sh flowgit-audit.sh                 # every commit of the history
#   sh flowgit-audit.sh origin/main..HEAD
#   FLOWGIT_AUDIT_RANGE=A..B sh flowgit-audit.sh
#   sh flowgit-audit.sh OLD..NEW --replaces  # a push's update of a branch: it may not drop episodes (A501)
#
# Fetch the whole history (or at least the range's base) first: a commit whose parent is
# beyond a shallow boundary is listed as "not judged", never passed off as clean (exit 2).
# Exit codes: 0 clean; 1 findings; 2 bad usage (an unknown revision, a shallow checkout
# without a range, a range holding commits that cannot be judged).
set -eu
FLOWGIT="${FLOWGIT:-flowgit}"
range="${1:-${FLOWGIT_AUDIT_RANGE:-}}"
if ! command -v "${FLOWGIT%% *}" >/dev/null 2>&1; then
    echo "flowgit-audit: '$FLOWGIT' not found; install it first (pip install git+<your flowgit mirror>, or pip install /path/to/flowgit)" >&2
    exit 2
fi
if [ -z "$range" ] && [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
    echo "flowgit-audit: this checkout is shallow: its oldest commits cannot be judged against their parents," >&2
    echo "               so the whole history cannot be passed. Fetch it (\`git fetch --unshallow\`;" >&2
    echo "               actions/checkout: fetch-depth: 0), or give the range to judge (A..B)." >&2
    exit 2
fi
if [ -n "$range" ]; then
    if [ $# -gt 0 ]; then shift; fi               # (the range itself; what follows goes to the audit)
    exec $FLOWGIT audit --range "$range" "$@"
fi
exec $FLOWGIT audit

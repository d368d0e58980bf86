"""The lines a merge leaves in the continuity file for the next session: what the other wrap said.

A REPLACE or REWRITE section is taken whole from the newer wrap; the other
wrap's version is kept under it as ``# flowgit merge:`` note lines, quoted
with ``# | ``, until the next wrap absorbs them. They are comment lines to the
gate, but messages to the next reader: whatever shows an agent its memory
(``flowgit prime``) shows them.
"""

NOTE_HEAD = "# flowgit merge:"
NOTE_ABSORB = "# Absorb what still matters in the next wrap, then drop these lines."
QUOTE = "# | "
NOTE_LINES = (NOTE_HEAD, NOTE_ABSORB, QUOTE)  # how each line of a merge note begins

"""flowgit: version-controlled continuity for people and their agents.

The package is laid out one idea per module; see README.md for the commands and
DESIGN notes in the repository for how the pieces fit.
"""

__version__ = "0.1.0"

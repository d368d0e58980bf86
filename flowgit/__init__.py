"""flowgit: version-controlled continuity for people and their agents.

The package is laid out one idea per module; see README.md for the commands and
docs/layout.md for where each piece lives.
"""

__version__ = "0.1.0"

"""The continuity document: parse, inspect and edit a FLOW continuity file losslessly."""

from flowgit.continuity.document import Document, Item, Section, Subsection
from flowgit.continuity.sections import CANONICAL_ORDER, Semantics

__all__ = ["Document", "Item", "Section", "Subsection", "CANONICAL_ORDER", "Semantics"]

"""Seeing the memory's life: the report's data model, its HTML page, and mermaid / DOT graphs.

``build`` turns the history walk (the same one ``flowgit log`` and ``flowgit
audit`` read) into a :class:`~flowgit.report.model.Report`; ``html`` draws it
as one self-contained page; ``mermaid`` and ``dot`` draw a pattern's life and
an ascend unit as text graphs. Nothing here writes to the repository.
"""

"""Several agents, one memory: merging the continuity file and the store by what they mean.

``continuity`` merges two wraps of one base section by section (patterns by
identity, Actions item by item, REPLACE/REWRITE sections from the newer wrap
with the other kept as a note, protected zones only when identical);
``store`` keeps every episode line of both sides once; ``markers`` finds git
conflict markers; ``driver`` runs a merge as git's merge driver; ``setup``
registers the driver in a repository; ``sync`` fetches, integrates through the
driver, re-runs the gate and pushes.
"""

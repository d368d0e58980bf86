"""Reading the graduation history back out of git: the walk, the timeline and the audit."""

"""The six-step wrap as one git transaction: plan -> episodes -> validation -> edits -> cleanup -> commit."""

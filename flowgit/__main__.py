"""Allow ``python -m flowgit``."""

from flowgit.cli import main

raise SystemExit(main())

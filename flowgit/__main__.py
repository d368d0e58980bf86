"""Allow ``python -m flowgit``."""

from flowgit.entry import main

raise SystemExit(main())

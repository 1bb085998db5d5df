"""``python -m notanda_mcp``: the same as the ``notanda-mcp`` command."""

import sys

from ._cli import main

sys.exit(main())

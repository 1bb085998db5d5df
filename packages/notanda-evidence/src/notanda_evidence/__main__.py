"""Run the auditor's command line: ``python -m notanda_evidence``."""

import sys

from ._cli import main

sys.exit(main())

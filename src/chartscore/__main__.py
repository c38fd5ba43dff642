"""``python -m chartscore`` runs the command-line tool."""

import sys

from chartscore.cli import main

sys.exit(main())

"""`python -m pmforge.surfaces.cli`: the `forge` command."""

import sys

from pmforge.surfaces.cli.main import main

sys.exit(main())

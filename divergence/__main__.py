"""``python -m divergence``: the command line (see divergence.cli)."""
import sys

from .cli import main

sys.exit(main())

"""``python -m divergence``: the command line (see divergence.cli)."""
import sys

from .cli import _quick_numba_start, main

_quick_numba_start()
sys.exit(main())

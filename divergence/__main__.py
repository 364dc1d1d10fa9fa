"""``python -m divergence``: the command line (see divergence.cli)."""
from .cli import console

if __name__ == "__main__":
    console()

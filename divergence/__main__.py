"""``python -m divergence``: the command line (see divergence.cli.cli)."""
from .cli.cli import console

if __name__ == "__main__":
    console()

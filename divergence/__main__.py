"""``python -m divergence``: the command line (see divergence.cli.cli)."""
if __name__ == "__main__":  # the start-up handler first: the imports below are the window it covers
    from .cli.starting import catch_while_starting

    catch_while_starting()

from .cli.cli import console  # noqa: E402

if __name__ == "__main__":
    console()

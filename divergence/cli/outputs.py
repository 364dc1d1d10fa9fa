"""The files a command writes, checked against the files it reads and against each other before anything
runs (issue 33 F12, issue 47 N1 and N4): no output ever replaces the user's data or another output."""
from __future__ import annotations

import os

from ..errors import DivergenceInputError, shown

__all__ = ["refuse_output_over_input", "INPUT_OPTIONS", "OUTPUT_OPTIONS"]

#: the options naming a file the command reads, and those naming a file it writes
INPUT_OPTIONS = (("DATA", "data"), ("PLAN", "plan"), ("--previous", "previous"), ("--replicate", "replicate"))
OUTPUT_OPTIONS = (("--output", "output"), ("--save-plan", "save_plan"))


def _input_files(args) -> list[tuple[str, str]]:
    """(what, file) for every file the command reads: a folder or a glob given as the data
    (``--engine duckdb``) expanded to the files it names, as the engine will read them."""
    out = []
    for what, name in INPUT_OPTIONS:
        given = getattr(args, name, None)
        if not given:
            continue
        given = str(given)
        if os.path.isfile(given):
            out.append((what, given))
        elif name == "data" and (os.path.isdir(given) or any(ch in given for ch in "*?[")):
            from ..engines.duckdb_engine import resolve_files

            try:
                out.extend((what, f) for f in resolve_files(given)[0])
            except DivergenceInputError:  # no file, or mixed kinds: the scan itself says so
                pass
    return out


def _same_file(a: str, b: str) -> bool:
    """Two paths naming one file, by any name or link (the second may not exist yet)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except OSError:
        return False


def refuse_output_over_input(args) -> None:
    """An output (``--output``, ``--save-plan``) that is one of the command's inputs (the data, each
    file of a folder or a glob, the plan, the previous data, the replication table), by any name or
    link, or that is another output, is refused before anything runs: writing it would replace the
    user's file, or one output the other."""
    outputs = [(flag, str(getattr(args, name))) for flag, name in OUTPUT_OPTIONS if getattr(args, name, None)]
    if not outputs:
        return
    inputs = _input_files(args)
    for i, (flag, out) in enumerate(outputs):
        for what, given in inputs:
            if _same_file(out, given):
                where = "the input file" if what in ("DATA", "PLAN") else f"the {what} file"
                raise DivergenceInputError(f"{flag} {shown(out)} is {where} {shown(given)}: writing it would replace "
                                           "your data. Choose another file name.")
        for other_flag, other in outputs[i + 1:]:
            if _same_file(out, other):
                raise DivergenceInputError(f"{flag} {shown(out)} and {other_flag} {shown(other)} are the same file: "
                                           "one would replace the other. Choose two file names.")

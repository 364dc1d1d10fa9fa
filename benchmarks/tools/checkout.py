"""Every benchmark script measures the checkout it lives in, not whichever ``divergence`` the venv has
installed (an editable install points at one checkout; a git worktree is another). A script calls,
before it imports the package:

    ROOT = Path(__file__).resolve().parents[2]
    runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)

Run as a program, a script whose ``divergence`` would come from elsewhere starts again with
PYTHONPATH=ROOT first (its child processes inherit it); loaded by another module, it says so and stops.
Nothing edits ``sys.path`` (tests/test_package.py)."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

AGAIN = "DIVERGENCE_BENCHMARK_CHECKOUT"  # set on the second start: never a third


def imported_from(root: Path) -> bool:
    """Whether ``import divergence`` in this process gives ``root``'s package."""
    spec = importlib.util.find_spec("divergence")
    origin = spec.origin if spec is not None else None
    return origin is not None and Path(origin).resolve() == (root / "divergence" / "__init__.py").resolve()


def use_checkout(root: Path, name: str) -> None:
    """Make this process import ``root``'s divergence (and ui): start again with PYTHONPATH=root when it
    would not; ``name`` is the calling script's ``__name__`` (only a program is started again)."""
    if imported_from(root):
        return
    spec = importlib.util.find_spec("divergence")
    where = spec.origin if spec is not None else "nowhere"
    if name != "__main__" or os.environ.get(AGAIN) == str(root):
        raise ImportError(f"divergence imports from {where}, not from the checkout {root}: "
                          f"run with PYTHONPATH={root}")
    paths = [str(root), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), AGAIN: str(root)}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)

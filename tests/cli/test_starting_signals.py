"""Issue 47 F26: ``python -m divergence`` imports the package (divergence/__init__.py) before its
``__main__`` runs, so the start-up handler is installed at the top of the package itself. Each test
sends the signal at an exact point of the start-up (when the package imports ``typing``), through
``runpy`` as ``python -m`` does; benchmarks/validation/signals_at_start.py measures the timing."""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from conftest import ROOT

#: runs the package as `python -m divergence scan --help` does, with a signal sent to itself the moment
#: divergence/__init__.py imports `typing` (before the fix, the handler came only in __main__)
AS_MINUS_M = """
import os, runpy, signal, sys
sys.argv = ["-m", "scan", "--help"]
sys.orig_argv = [sys.executable, "-m", {module!r}, "scan", "--help"]
class SignalOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == "typing":
            os.kill(os.getpid(), {sig})
        return None
sys.modules.pop("typing", None)
sys.meta_path.insert(0, SignalOnImport())
runpy._run_module_as_main({module!r})
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_the_package_is_imported_is_one_line(sig):
    proc = subprocess.run([sys.executable, "-c", AS_MINUS_M.format(module="divergence", sig=int(sig))], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 128 + sig, (proc.returncode, proc.stderr)
    assert proc.stderr == f"divergence: stopped ({signal.Signals(sig).name}) while starting; nothing was written.\n"


def test_another_module_of_the_package_run_with_minus_m_keeps_the_usual_handlers():
    """``python -m divergence.kernels._aot`` (a build) is not the command: SIGINT stays KeyboardInterrupt."""
    code = ("import sys; sys.argv = ['-m']; sys.orig_argv = [sys.executable, '-m', 'divergence.kernels._aot'];"
            "import signal, divergence; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
            "signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["True", "True"], proc.stderr


def test_the_console_script_installs_it_when_it_imports_the_package(tmp_path):
    """The ``divergence`` console script imports ``divergence.cli.cli`` (and the package) before its
    ``console()`` runs: the package installs the handler first there too."""
    script = tmp_path / "divergence"
    script.write_text("import signal\nimport divergence\nh = signal.getsignal(signal.SIGTERM)\nprint(getattr(h, \"__name__\", \"default\" if h == signal.SIG_DFL else h))\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT)})
    assert proc.stdout.strip() == "stopped_while_starting", proc.stderr
    other = tmp_path / "analysis.py"  # any other script importing the library: handlers untouched
    other.write_text(script.read_text())
    proc = subprocess.run([sys.executable, str(other)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT)})
    assert proc.stdout.strip() == "default", (proc.stdout, proc.stderr)


def test_the_command_runs_one_blas_thread_unless_the_user_set_a_number():
    """``python -m divergence`` sets one BLAS thread before numpy is imported (OpenBLAS's pool of a
    thread per core cost CPU for products that small); a number the user set is kept, and a library
    user's process (not the command) is left alone."""
    import os

    read = ("import sys; sys.argv = ['-m']; sys.orig_argv = [sys.executable, '-m', {module!r}];"
            "import os, divergence, numpy; from threadpoolctl import threadpool_info;"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'), [p['num_threads'] for p in threadpool_info()"
            " if p['user_api'] == 'blas'])")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}

    def run(module, **extra):
        proc = subprocess.run([sys.executable, "-c", read.format(module=module)], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, env={**env, **extra})
        return proc.stdout.strip(), proc.stderr

    assert run("divergence")[0] == "1 [1]"
    assert run("divergence", OPENBLAS_NUM_THREADS="2")[0] == "2 [2]"
    assert run("divergence.kernels._aot")[0].startswith("None")

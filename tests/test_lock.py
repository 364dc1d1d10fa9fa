"""The lock files (issue 29 point 5): every package the requirements install is pinned with hashes,
the direct pins of requirements*.txt agree with them, and the Makefile's venv holds exactly them."""
from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETS = [("requirements.txt", "requirements.lock"), ("requirements-dev.txt", "requirements-dev.lock"),
        ("requirements-spark.txt", "requirements-spark.lock")]


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes), the lines joined at their backslashes."""
    text = re.sub(r"\\\n", " ", path.read_text())
    entries = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        spec, *options = line.split()
        name, version = spec.split("==")
        entries[normal(name)] = (version, [o.removeprefix("--hash=sha256:") for o in options])
        assert all(o.startswith("--hash=sha256:") for o in options), line
    return entries


def read_pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            pins[normal(name.split("[")[0])] = version.strip()
    return pins


LOCKS = {lock: read_lock(ROOT / lock) for _, lock in SETS}


def test_every_locked_package_has_its_version_and_hashes():
    for lock, entries in LOCKS.items():
        assert len(entries) >= 2, lock
        for name, (version, hashes) in entries.items():
            assert re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version), (lock, name, version)
            assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), (lock, name)


def test_no_package_is_locked_twice():
    seen: dict[str, str] = {}
    for lock, entries in LOCKS.items():
        for name in entries:
            assert name not in seen, f"{name} is in {seen.get(name)} and {lock}"
            seen[name] = lock


def test_the_direct_pins_agree_with_the_locks():
    """A pin edited in requirements*.txt without `make lock` fails here, naming the package."""
    locked: dict[str, str] = {}
    for (req, lock) in SETS:
        locked.update({name: version for name, (version, _) in LOCKS[lock].items()})
        for name, version in read_pins(ROOT / req).items():
            assert locked.get(name) == version, f"{req} pins {name}=={version}, the locks say {locked.get(name)}: run make lock"


def test_the_makefile_installs_the_locks_with_hashes():
    makefile = (ROOT / "Makefile").read_text()
    for _, lock in SETS:
        assert re.search(rf"install --require-hashes -r requirements\.lock( -r {re.escape(lock)})?\n", makefile), lock


def test_the_venv_holds_what_the_locks_say():
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"not the Makefile's venv ({sys.prefix}): its packages are whatever that venv holds")
    import sysconfig

    # the venv's own site-packages only: setuptools puts its vendored packages (an older packaging among
    # them) on sys.path once it is imported
    site = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    installed = {normal(d.metadata["Name"]): d.version for d in metadata.distributions(path=site)}
    for lock, entries in LOCKS.items():
        if lock == "requirements-spark.lock" and "pyspark" not in installed:
            continue  # installed by make test only
        for name, (version, _) in entries.items():
            assert installed.get(name) == version, f"{name}: {installed.get(name)} installed, {version} in {lock}"

"""The documentation's Python examples run, and its links land.

Every ```python block of README.md and docs/*.md is executed, a page's blocks in order in one
namespace (as a reader runs them), in a fresh working folder. A block is marked by the HTML comment
on the line before it:

- ``<!-- doctest: skip REASON -->``: not run (needs a Spark session, illustrative column names).
- ``<!-- doctest: needs-data -->``: reads a file of ../shared/data by its bare name; the shared
  datasets are linked into the working folder, and the page is skipped, saying so, when they are
  absent.
- ``<!-- doctest: setup ... -->``: the code inside the comment runs first, unseen by readers
  (for instance the table an example takes as given).

Relative links of every page must name a file of the repository, and their anchors a heading
of that page (GitHub's anchor rule).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import DATA_DIR, ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
MARK = re.compile(r"<!--\s*doctest:\s*(skip|needs-data|setup)\b(.*?)-->", re.S)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


@dataclass
class Block:
    code: str
    line: int
    skip: str | None = None
    needs_data: bool = False
    setup: str = ""


def blocks(page: Path) -> list[Block]:
    """The page's Python blocks with the marks of the comments just before them."""
    text = page.read_text()
    out = []
    for m in BLOCK.finditer(text):
        before = text[:m.start()]
        block = Block(m.group(1), before.count("\n") + 1)
        # the comments directly above the block (only blank lines between), nearest first
        before = before.rstrip()
        while before.endswith("-->"):
            start = before.rfind("<!--")
            mark = MARK.match(before[start:])
            if not mark:
                break
            kind, body = mark.group(1), mark.group(2).strip()
            if kind == "skip":
                block.skip = body or "marked skip"
            elif kind == "needs-data":
                block.needs_data = True
            else:
                block.setup = body + "\n" + block.setup
            before = before[:start].rstrip()
        out.append(block)
    return out


def _pages_with_code() -> list[Path]:
    return [p for p in PAGES if blocks(p)]


@pytest.mark.parametrize("page", _pages_with_code(), ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page_blocks = blocks(page)
    runnable = [b for b in page_blocks if not b.skip]
    if not runnable:
        pytest.skip(f"every example of {page.name} is marked skip: "
                    + "; ".join(b.skip for b in page_blocks))
    if any(b.needs_data for b in runnable):
        if not DATA_DIR.is_dir():
            pytest.skip(f"{page.name}'s examples read ../shared/data, not found at {DATA_DIR} "
                        "(the shared datasets are not part of a fresh clone)")
        for f in DATA_DIR.iterdir():
            (tmp_path / f.name).symlink_to(f)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__doc_example__"}
    for b in runnable:
        where = f"{page.relative_to(ROOT)}:{b.line}"
        if b.setup:
            exec(compile(b.setup, f"{where} (setup)", "exec"), namespace)
        exec(compile(b.code, where, "exec"), namespace)


def test_every_block_is_found_and_marked_consistently() -> None:
    """The parser sees every ```python fence (a typo in a mark would run or skip the wrong block)."""
    for page in PAGES:
        text = page.read_text()
        assert len(blocks(page)) == text.count("```python\n"), page.name
        assert text.count("<!-- doctest:") == len(MARK.findall(text)), f"a malformed mark in {page.name}"


def _anchors(page: Path) -> set[str]:
    out = set()
    in_code = False
    for line in page.read_text().split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        out.add(slug)
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_land(page: Path) -> None:
    text = BLOCK.sub("", page.read_text())
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, mailto:
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{target}: no heading '{anchor}' in {dest.name}")
    assert not bad, f"{page.name}: " + "; ".join(bad)


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_bytes()
    assert len(readme) <= 8 * 1024, f"README.md is {len(readme):,} bytes; the rest belongs in docs/"
    first_block = re.search(r"```bash\n(.*?)```", readme.decode(), re.S).group(1).split("\n")
    assert [line.split()[:2] for line in first_block if line] == [["make", "app"], ["make", "test"]]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^app:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


@pytest.mark.slow
def test_the_readme_command_line_block_runs_verbatim(tmp_path) -> None:
    """Issue 30 point 8: the README's command-line lines, as written, in the project's environment
    (the activation line sourced, the package importable as from the project's folder)."""
    import subprocess

    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```bash\n(.*?)```", readme, re.S) if "divergence scan" in b)
    assert block.startswith(". .venv/bin/activate")
    script = block.replace(". .venv/bin/activate", f". {ROOT}/.venv/bin/activate", 1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "demo.csv").is_file() and (tmp_path / "slices.csv").read_text().startswith('"itemset"')
    assert "region=South, education=Primary" in proc.stdout

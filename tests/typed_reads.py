"""Counting string reads of a table's per-metric columns (issue 46 point 2): a name glued to a
column suffix, ``f"{m}_divergence"``, ``f"{name}_{suffix}"``, ``metric + "_order"`` or
``"_ci_low".join(...)``-free spellings of the same. Outside the table and its CSV/export view, a
metric's statistics are read typed (:class:`divergence.table.MetricStatistics`,
:class:`divergence.comparison.change_statistics.ChangeStatistics`), so these counts only fall.

Run it to see the counts per file: ``python tests/typed_reads.py [FOLDER ...]``."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: where the reads are capped (issue 46): the consumers of a table outside the table and its CSV view
CAPPED = ("divergence/present", "divergence/report", "divergence/explain", "divergence/cli", "ui", "pages")
#: a column suffix: an underscore and a word (``_divergence``, ``_ci_low``, ``_``)
_SUFFIX = re.compile(r"^_\w*")


def _is_name(node: ast.AST) -> bool:
    """A value that can hold a metric's name: a name, an attribute, a subscript or a call."""
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))


def reads_in(source: str) -> list[int]:
    """The line of every per-metric column read in ``source``: an f-string whose text after a
    placeholder starts with an underscore (``f"{m}_q"``, ``f"{m}_{s}"``; one per f-string), or a
    name plus a string starting with one (``m + "_q"``)."""
    tree = ast.parse(source)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = node.values
            if any(isinstance(a, ast.FormattedValue) and isinstance(b, ast.Constant) and isinstance(b.value, str)
                   and _SUFFIX.match(b.value) and not b.value.startswith("__")
                   for a, b in zip(parts, parts[1:])):
                lines.append(node.lineno)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            right = node.right
            if _is_name(node.left) and isinstance(right, ast.Constant) and isinstance(right.value, str) \
                    and _SUFFIX.match(right.value) and not right.value.startswith("__"):
                lines.append(node.lineno)
    return sorted(lines)


def count_reads(folders: tuple[str, ...] | list[str] = CAPPED, root: Path = ROOT) -> dict[str, int]:
    """Per file under ``folders`` (relative to ``root``) with any, its count of per-metric column reads."""
    out = {}
    for folder in folders:
        base = root / folder
        for path in sorted(base.rglob("*.py") if base.is_dir() else [base]):
            n = len(reads_in(path.read_text(encoding="utf-8")))
            if n:
                out[str(path.relative_to(root))] = n
    return out


if __name__ == "__main__":
    counts = count_reads(sys.argv[1:] or CAPPED)
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"{n:5d}  {name}")
    print(f"{sum(counts.values()):5d}  in all")

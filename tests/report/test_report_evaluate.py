"""The report's findings on their own rows (issue 45 point 3): AUC, F1… of each distinct finding,
against scikit-learn on the finding's rows of the built-in data."""
from __future__ import annotations

import html
import re

from sklearn.metrics import f1_score, roc_auc_score

from divergence import scan
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_TRUTH, load_demo
from divergence.present.formats import format_number
from divergence.report.page import build_report


def test_the_findings_auc_and_f1_on_their_rows():
    df = load_demo(6000)
    t = scan(df, target="defaulted", score="default_score", threshold=0.5, positive="yes", metrics=["fpr"],
             attributes=DEMO_ATTRIBUTES, min_support=0.02)
    page = build_report(t)
    block = page[page.index("The findings on their own rows"):]
    block = block[:block.index("</table>")]
    assert "<th>AUC</th><th>Average precision</th><th>F1</th><th>Balanced accuracy</th>" in block
    rows = {html.unescape(m.group(1)): [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", m.group(0))[1:]]
            for m in re.finditer(r"<tr><td>(.*?)</td>.*?</tr>", block)}
    found = [s for s in t.findings("fpr")["itemset"]]
    assert list(rows) == ["whole dataset"] + found[:6] and DEMO_TRUTH["elevated_fpr"] in rows
    for itemset, cells in rows.items():
        r = df
        if itemset != "whole dataset":
            for item in itemset.split(", "):
                col, value = item.split("=")
                r = r[r[col].astype(str) == value]
        y, s = r["defaulted"] == "yes", r["default_score"]
        assert cells[0] == f"{len(r):,}"
        assert cells[1].startswith(format_number(roc_auc_score(y, s)) + " [")
        assert cells[3].startswith(format_number(f1_score(y, s >= 0.5)) + " [")

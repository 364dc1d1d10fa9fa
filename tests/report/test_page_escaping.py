"""The report's page escapes every value it shows: a column name, an item, the plan's label and the
title carrying markup, quotes or an entity reach the page as text, never as markup (the page is a
Jinja2 template with autoescaping; only Plotly's figures and JavaScript come in marked safe)."""
from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from divergence.report.page import build_report
from divergence.report.plan import SlicePlan
from divergence.report.run import run_plan

SCRIPT = "<script>alert(1)</script>"
QUOTE = '"onmouseover=alert(2)'
ENTITY = "&amp;"


class _Page(HTMLParser):
    """The page as a browser reads it: its tags with their attributes, its text, its scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self._script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = False

    def handle_data(self, data):
        if self._script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


@pytest.fixture(scope="module")
def hostile_page() -> str:
    rng = np.random.default_rng(11)
    n = 2000
    df = pd.DataFrame({SCRIPT: rng.choice([QUOTE, ENTITY, "plain"], n), "channel": rng.choice(["App", "Web"], n),
                       "y": rng.integers(0, 2, n)})
    wrong = np.where(df[SCRIPT] == QUOTE, rng.random(n) < 0.5, rng.random(n) < 0.08)  # a defect on the hostile item
    df["pred"] = np.where(wrong, 1 - df["y"], df["y"])
    plan = SlicePlan(scan=dict(target="y", prediction="pred", positive=1, metrics=["error"],
                               attributes=[SCRIPT, "channel"], min_support=0.05))
    table = run_plan(plan, df)
    assert f"{SCRIPT}={QUOTE}" in set(table.frame["itemset"])
    return build_report(table, plan=plan, plan_label=f"plan {SCRIPT} {QUOTE} {ENTITY}",
                        data_label=f"data {ENTITY}", title=f"title {SCRIPT} {QUOTE} {ENTITY}")


def test_hostile_values_reach_the_page_as_text_only(hostile_page):
    page = _Page()
    page.feed(hostile_page)
    figures = sum(1 for tag, attrs in page.tags if tag == "div" and "plotly-graph-div" in (attrs.get("class") or ""))
    assert figures >= 2
    # no element from the data: the scripts are Plotly's, one per figure, and the page's sorting
    assert sum(1 for tag, _ in page.tags if tag == "script") == 2 + figures
    assert all(s.startswith("/**") or "window.PLOTLYENV" in s or "table.slices" in s for s in page.scripts)
    assert not [(tag, a) for tag, attrs in page.tags for a in attrs if a.startswith("on")]  # no handler attribute
    # the values read back whole as the page's text: the title, the plan's label, the column, the item
    text = "".join(page.text)
    assert f"title {SCRIPT} {QUOTE} {ENTITY}" in text
    assert f"plan {SCRIPT} {QUOTE} {ENTITY}" in text and f"data {ENTITY}" in text
    assert f"{SCRIPT}, channel" in text  # the attributes
    assert f"{SCRIPT}={QUOTE}" in text and f"{SCRIPT}={ENTITY}" in text  # items: slice table and cards
    # and in the page's source they are escaped
    assert "<title>title &lt;script&gt;alert(1)&lt;/script&gt; &quot;onmouseover=alert(2) &amp;amp;</title>" in hostile_page
    assert 'data-v="&lt;script&gt;alert(1)&lt;/script&gt;=&quot;onmouseover=alert(2)"' in hostile_page


def test_outside_scripts_no_hostile_text_is_raw(hostile_page):
    page = _Page()
    page.feed(hostile_page)
    source = hostile_page
    for s in page.scripts:  # Plotly's JSON escapes < and > itself; what is left is the page's markup
        source = source.replace(s, "")
    assert SCRIPT not in source and QUOTE not in source
    assert "data &amp;amp;</dd>" in source and "data &amp;</dd>" not in source  # the entity itself escaped
    assert source.count("&amp;amp;") >= 5  # the title twice, the plan's label, the data's, the items

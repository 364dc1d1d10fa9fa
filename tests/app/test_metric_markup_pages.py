"""Issue 47 N2 in the dashboard: a metric named after an outcome column (text from the data) is drawn as
text in every chart of every page (titles, legends, axis and colour-bar titles), never as a live link."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
from apptest_readers import fresh_app, go, keyed, run_scan

LINK = '<a href="http://198.51.100.7/metric">M</a>'
#: the markup the figures write themselves; any other tag in a drawn string came from the data
OURS = re.compile(r"<(?!/?(?:br|b|sup|sub|i|extra)>)[a-zA-Z/!]")


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def test_every_chart_draws_a_hostile_metric_name_as_text():
    rng = np.random.default_rng(3)
    n = 3000
    df = pd.DataFrame({"team": rng.choice(["A", "B", "C"], n), "channel": rng.choice(["App", "Web"], n)})
    df[LINK] = rng.normal(size=n) + (df["team"] == "A") * 1.0
    at = fresh_app(300)
    at = go(at, "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("metric.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    keyed(at.radio, "w:task").set_value("outcome").run()
    keyed(at.multiselect, "w:outcome").set_value([LINK]).run()
    at = go(at, "outcome")
    keyed(at.number_input, "w:bootstrap").set_value(0).run()
    run_scan(at)
    assert not at.exception
    drawn = 0
    for page in ("slices", "intervals", "attributes"):
        at = go(at, page)
        for chart in at.get("plotly_chart"):
            spec = json.loads(chart.proto.spec)
            live = [s for s in _strings(spec) if OURS.search(s)]
            assert not live, (page, live[:3])
            drawn += any("&lt;a href" in s for s in _strings(spec))
    assert drawn >= 2  # the name is drawn, escaped, in the charts that name the metric

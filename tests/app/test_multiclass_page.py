"""The dashboard with a target of three classes (issue 45 point 1): no positive label asked, the
Outcome page offers error, accuracy and each class's recall, precision, FPR and FNR, and the
Slices page shows what the engine computes."""
from __future__ import annotations

import numpy as np
import pandas as pd
from apptest_readers import fresh_app, go, keyed, metrics, run_scan

from divergence import assess, scan
from divergence.present.formats import format_percent, metric_label


def _frame(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"region": rng.choice(["north", "south", "east"], n), "channel": rng.choice(["web", "shop"], n)})
    y = rng.choice(["bird", "cat", "dog"], n, p=[0.2, 0.5, 0.3])
    right = rng.random(n) < 0.7 + 0.2 * (df["region"] == "north")
    return df.assign(animal=y, guess=np.where(right, y, rng.choice(["bird", "cat", "dog"], n)))


def test_three_classes_from_upload_to_slices():
    df = _frame()
    at = go(fresh_app(90), "data")
    keyed(at.radio, "w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("animals.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    keyed(at.selectbox, "w:target").set_value("animal").run()
    keyed(at.selectbox, "w:prediction").set_value("guess").run()
    assert not at.exception
    assert any("3 classes" in m.value for m in at.markdown)
    assert not any("positive label" in e.value for e in at.error), [e.value for e in at.error]
    at = go(at, "outcome")
    options = keyed(at.multiselect, "w:metrics").options
    for m in ("error", "accuracy", "recall:dog", "precision:bird", "fpr:cat", "fnr:dog"):
        assert metric_label(m, long=True) in options, (m, options)
    assert "fpr" not in [o.split(":")[0] for o in options if ":" not in o[:4]]
    keyed(at.multiselect, "w:metrics").set_value(["error", "recall:dog"]).run()
    run_scan(at)
    assert not [e.value for e in at.error]
    table = assess(scan(df, target="animal", prediction="guess", metrics=["error", "recall:dog"],
                        attributes=["region", "channel"], min_support=0.02),
                   confidence=0.95, correction="bh", bootstrap=0, seed=0, exploratory=True)
    at = go(at, "slices")
    shown = metrics(at)
    assert shown[f"{metric_label('error')}, whole dataset"] == format_percent(table.overall("error"))

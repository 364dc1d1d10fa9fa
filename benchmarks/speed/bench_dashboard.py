"""Speed of what the dashboard does: prints tables (milliseconds).

    python benchmarks/speed/bench_dashboard.py              # every table
    python benchmarks/speed/bench_dashboard.py --interactions   # only the meeting's interactions

- "interactions": every interaction of a review meeting on the built-in dataset, as the server
  runs it (AppTest: the whole script run of the page, warm caches, no browser): sort by a header
  click and by the selectbox, reverse, each filter, show more rows, open a slice by its row, find
  a mined slice by typing it, edit a slice below the support (measured from the rows), switch the
  metric, switch to every page and back, a planted finding in one click (a re-scan), the report's
  first build, and the first PNG with the exporter warmed. Median and worst of 5 repetitions.
- "first open": the app opened on the built-in dataset (AppTest, cold Streamlit caches,
  the compiled miner already on disk): the time until the Slices page has been drawn.
- "re-scan": mining plus statistics as the Run button does them, on the raw COMPAS file
  (7,214 rows, ../shared/data, skipped when absent) and on the built-in dataset.
- "view": the Slices page's work per sort or filter on a table of more than 100,000 slices:
  the top-N view (divergence.present.views.slice_view), its formatting for people and the Plotly table.

Timings on a shared machine vary: rerun it, and read the worst column with that in mind.
"""
from __future__ import annotations

import os
import runpy
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))

from divergence import assess, redundant_itemsets, scan  # noqa: E402
from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo  # noqa: E402
from divergence.present.figures import slice_table_figure
from divergence.present.views import display_frame, slice_view

STATS = dict(confidence=0.95, correction="bh", bootstrap=200, seed=0)


def best(fn, repeat: int = 3) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * min(times)


def first_open() -> float:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()
    t0 = time.perf_counter()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception and any("<b>Who:</b>" in md.value for md in at.markdown), "no finding was drawn"
    return 1000 * (time.perf_counter() - t0)


def app_reruns(big: pd.DataFrame) -> list[tuple[str, float]]:
    """The app on a table of >100,000 slices: the run, then one sort change and one filter
    change on the Slices page (each a full script rerun: headline, view, table, detail)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page("pages/data.py").run()
    at.radio(key="w:source").set_value("upload").run()
    at.file_uploader[0].set_value(("big.csv", big.to_csv(index=False).encode(), "text/csv")).run()
    at.switch_page("pages/outcome.py").run()
    at.number_input(key="w:min_support").set_value(0.001).run()
    at.selectbox(key="w:max_length").set_value(5).run()
    out = []
    t0 = time.perf_counter()
    at.button(key="run").click().run()
    job = at.session_state["scan_job"]  # the scan runs in a worker process; the page shows its result after
    if job is not None:
        job.wait()
        at.run()
    out.append(("app: Run (scan + assess in the worker + page)", 1000 * (time.perf_counter() - t0)))
    at.switch_page("pages/slices.py").run()
    t0 = time.perf_counter()
    at.selectbox(key="w:sort_by").set_value("q").run()
    out.append(("app: Slices page rerun after a sort change", 1000 * (time.perf_counter() - t0)))
    t0 = time.perf_counter()
    at.multiselect(key="w:f_attributes").set_value(["a3"]).run()
    out.append(("app: Slices page rerun after a filter change", 1000 * (time.perf_counter() - t0)))
    assert not at.exception
    return out


def interactions(reps: int = 5) -> list[tuple[str, float, float]]:
    """Server time of each interaction on the built-in dataset (AppTest script runs, warm caches)."""
    import statistics

    import streamlit as st
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.testing.v1 import AppTest

    deferred: dict = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        deferred[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kw)

    MediaFileManager.add_deferred = record
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception

    def grid(**change):
        sel = {k: list(v) for k, v in at.session_state["slice_grid"]["selection"].items()}
        sel.update(change)
        at.session_state["slice_grid"] = {"selection": sel}
        at.run()

    def slices():
        return next(d.value for d in at.dataframe if "Slice" in d.value.columns)["Slice"].tolist()

    steps = [
        ("sort: click the Rows header", lambda k: grid(columns=["Rows"] if k % 2 == 0 else [])),
        ("sort: choose q in Sort by", lambda k: at.selectbox(key="w:sort_by").set_value(
            "q" if k % 2 == 0 else "Divergence").run()),
        ("order: largest/smallest first", lambda k: at.selectbox(key="w:sort_asc").set_value(k % 2 == 0).run()),
        ("filter: verdict above", lambda k: at.multiselect(key="w:f_verdicts").set_value(
            ["above"] if k % 2 == 0 else []).run()),
        ("filter: involving channel", lambda k: at.multiselect(key="w:f_attributes").set_value(
            ["channel"] if k % 2 == 0 else []).run()),
        ("filter: minimum size met", lambda k: at.selectbox(key="w:f_min_size").set_value(
            "meets" if k % 2 == 0 else "all").run()),
        ("filter: items per slice 1-2", lambda k: at.slider(key="w:f_lengths").set_value(
            (1, 2) if k % 2 == 0 else (1, 5)).run()),
        ("filter: show redundant slices", lambda k: at.checkbox(key="w:f_prune").set_value(k % 2 == 1).run()),
        ("show the top 100", lambda k: at.selectbox(key="w:top_n").set_value(100 if k % 2 == 0 else 25).run()),
        ("open a slice: click its row", lambda k: grid(rows=[3 + k % 2], cells=[])),
        ("find a mined slice by typing", lambda k: at.multiselect(key="w:slice_items").set_value(
            ["channel=App"] if k % 2 == 0 else ["channel=Web"]).run()),
        ("edit: a slice below the support", lambda k: at.multiselect(key="w:slice_items").set_value(
            ["sex=Female", "region=South", "education=Primary", ["channel=App", "channel=Web", "channel=Branch",
                                                                 "employment=Retired", "age=<=36"][k]]).run()),
        ("switch metric FPR/FNR", lambda k: at.radio(key="w:view_metric").set_value(
            "fnr" if k % 2 == 0 else "fpr").run()),
    ]
    out: list[tuple[str, float, float]] = []

    def timed(name, fn):
        times = []
        for k in range(reps):
            t0 = time.perf_counter()
            fn(k)
            times.append(1000 * (time.perf_counter() - t0))
            assert not at.exception, (name, at.exception)
        out.append((name, statistics.median(times), max(times)))

    slices()
    for name, fn in steps:
        timed(name, fn)
    for page in ("intervals", "attributes", "export", "data", "outcome", "slices"):
        def go(k, page=page):
            at.switch_page(f"pages/{page}.py").run()
            if page != "slices":
                at.switch_page("pages/slices.py").run()
        timed(f"switch page: {page}" + (" and back" if page != "slices" else ""), go)
    at.switch_page("pages/export.py").run()
    report = deferred.get("slice_report.html")
    t0 = time.perf_counter()
    report()
    out.append(("export: the report's first build", 1000 * (time.perf_counter() - t0), float("nan")))
    from divergence.present.export import PNG_EXPORTER, png_supported, warm_png_exporter

    if png_supported():
        warm_png_exporter()
        while PNG_EXPORTER["state"] == "warming":
            time.sleep(0.1)
        png = deferred.get("intervals.png")
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            png()
            times.append(1000 * (time.perf_counter() - t0))
        out.append(("export: a PNG, exporter warmed", statistics.median(times), max(times)))
    at.switch_page("pages/slices.py").run()
    t0 = time.perf_counter()
    at.button(key="demo-defect").click().run()
    out.append(("planted defect in one click (re-scan: regression)", 1000 * (time.perf_counter() - t0), float("nan")))
    assert not at.exception
    MediaFileManager.add_deferred = original
    return out


def print_interactions(rows: list[tuple[str, float, float]]) -> None:
    w = max(len(r[0]) for r in rows)
    print(f"{'interaction (built-in dataset, server time)':<{w}}  {'median ms':>9}  {'worst ms':>8}")
    for name, med, worst in rows:
        print(f"{name:<{w}}  {med:>9.0f}  {worst:>8.0f}".replace("nan", "   "))


def main() -> None:
    print_interactions(interactions())
    if "--interactions" in sys.argv:
        return
    print()
    rows: list[tuple[str, str, str, float]] = []
    scan(load_demo(500), attributes=DEMO_ATTRIBUTES, min_support=0.1, **DEMO_ROLES["classification"])  # warm-up
    rows.append(("built-in dataset", "1,337", "first open (AppTest, cold caches)", first_open()))

    demo = load_demo()
    t = scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.02, **DEMO_ROLES["classification"])
    rows.append(("built-in dataset", f"{len(t) - 1:,}", "re-scan: scan + assess (B=200)",
                 best(lambda: assess(scan(demo, attributes=DEMO_ATTRIBUTES, min_support=0.02,
                                          **DEMO_ROLES["classification"]), **STATS))))
    raw = DATA / "compas-scores-two-years.csv"
    if raw.exists():
        df = pd.read_csv(raw)
        attrs = ["age_cat", "sex", "race", "c_charge_degree", "priors_count", "juv_fel_count", "age"]
        df["predicted"] = (df["decile_score"] >= 8).astype(int)
        kw = dict(target="two_year_recid", prediction="predicted", positive=1, metrics=["fpr", "fnr"],
                  attributes=attrs, min_support=0.01)
        t = scan(df, **kw)
        rows.append(("COMPAS raw (7,214 rows)", f"{len(t) - 1:,}", "re-scan: scan + assess (B=200)",
                     best(lambda: assess(scan(df, **kw), **STATS))))
    else:
        print(f"(COMPAS skipped: {raw} not found)")

    rng = np.random.default_rng(0)
    n = 20_000
    big = pd.DataFrame({f"a{i}": rng.choice(list("xyz"), n) for i in range(11)})
    big["y"], big["p"] = rng.random(n) < 0.3, rng.random(n) < 0.3
    t = assess(scan(big, target="y", prediction="p", positive=True, metrics=["fpr"], min_support=0.001,
                    max_length=5))
    t.frame
    label = f"{len(t) - 1:,}"
    case = "synthetic (11 attributes)"
    rows.append((case, label, "redundant slices (ε = 0.01), once per result",
                 best(lambda: redundant_itemsets(t, 0.01, metric="fpr"))))
    for what, kw in [("view: top 25 by divergence", dict()), ("view: top 25 by q", dict(sort_by="fpr_q",
                                                                                        ascending=True)),
                     ("view: top 500 by divergence", dict(top_n=500)),
                     ("view: sort by slice name", dict(sort_by="itemset", ascending=True)),
                     ("view: verdict + attribute filters", dict(verdicts=["noise"], attributes=["a3"]))]:
        kw.setdefault("top_n", 25)
        rows.append((case, label, what, best(lambda: slice_view(t, metric="fpr", **kw))))
    v = slice_view(t, metric="fpr", top_n=25)
    rows.append((case, label, "format 25 rows + Plotly table",
                 best(lambda: slice_table_figure(display_frame(t, v.rows, "fpr")))))
    v = slice_view(t, metric="fpr", top_n=500)
    rows.append((case, label, "format 500 rows + Plotly table",
                 best(lambda: slice_table_figure(display_frame(t, v.rows, "fpr")))))

    for step, ms in app_reruns(big):
        rows.append((case, label, step, ms))

    widths = [max(len(r[i]) for r in rows + [("case", "slices", "step", 0)]) for i in range(3)]
    print(f"{'case':<{widths[0]}}  {'slices':>{widths[1]}}  {'step':<{widths[2]}}  {'ms':>8}")
    for case, slices, step, ms in rows:
        print(f"{case:<{widths[0]}}  {slices:>{widths[1]}}  {step:<{widths[2]}}  {ms:>8.1f}")


if __name__ == "__main__":
    main()

"""What an AppTest run shows, read back as plain data (shared by the app tests)."""
from __future__ import annotations

import base64
import html
import json

import numpy as np
import streamlit as st
from conftest import ROOT
from streamlit.testing.v1 import AppTest

#: the dashboard's entry point
APP = str(ROOT / "app.py")


def fresh_app(timeout: float = 90, *, keep_resources: bool = False) -> AppTest:
    """The app on its first screen with empty caches (and, unless ``keep_resources``, none of
    the results the server keeps); it must render without an exception."""
    st.cache_data.clear()
    if not keep_resources:
        st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    assert not at.exception
    return at


def scanned(at: AppTest) -> AppTest:
    """The app after running the scan from the Outcome page, with no exception."""
    at = go(at, "outcome")
    run_scan(at)
    assert not at.exception, at.exception
    return at


def go(at: AppTest, page: str) -> AppTest:
    """Switch to ``pages/<page>.py`` and run it; it must render without an exception."""
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, at.exception
    return at


def metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def decode(x):
    """Plotly's JSON holds numpy arrays as {"dtype", "bdata" (base64)[, "shape"]}: plain lists; a
    string as Plotly shows it (an entity, how figures write text from the data, as its character)."""
    if isinstance(x, str):
        return html.unescape(x)
    if isinstance(x, dict) and "bdata" in x:
        values = np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
        if "shape" in x:
            values = values.reshape([int(n) for n in str(x["shape"]).split(",")])
        return values.tolist()
    if isinstance(x, dict):
        return {k: decode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [decode(v) for v in x]
    return x


def charts(at: AppTest) -> list[dict]:
    return [decode(json.loads(c.proto.spec)) for c in at.get("plotly_chart")]


def table_cells(at: AppTest) -> dict:
    """The slice table (st.dataframe with a 'Slice' column, or a Plotly table): {header: [cells]}."""
    for df in at.dataframe:
        value = df.value
        if "Slice" in value.columns:
            return {c: value[c].tolist() for c in value.columns}
    for spec in charts(at):
        trace = spec["data"][0]
        if trace["type"] == "table":
            heads = [h.replace("<b>", "").replace("</b>", "") for h in trace["header"]["values"]]
            return dict(zip(heads, trace["cells"]["values"]))
    raise AssertionError("no slice table drawn")


def finish_scan(at: AppTest, timeout: float = 600) -> AppTest:
    """Wait for the scan the app runs in its worker process (if any), then run the app once more
    so the page shows its result (a browser's page is redrawn by the progress fragment)."""
    job = at.session_state["scan_job"] if "scan_job" in at.session_state else None
    if job is not None:
        assert job.wait(timeout) != "running", f"the scan did not finish within {timeout} s"
        at.run()
    return at


def run_scan(at: AppTest, timeout: float = 600) -> AppTest:
    """Click "Run the scan" on the Outcome page and wait for its result."""
    at.button(key="run").click().run()
    return finish_scan(at, timeout)


def left_out(at: AppTest) -> dict:
    """The Data page's list of columns left out of the default attributes: {column: kind}."""
    for d in at.dataframe:
        if list(d.value.columns) == ["column", "left out as", "why"]:
            return dict(zip(d.value["column"], d.value["left out as"]))
    return {}


def grid_key(at: AppTest) -> str:
    """The slice table's widget key as last drawn (a sort gives the next table a new one)."""
    try:
        return (at.session_state["grid_shown"] or {}).get("key") or "slice_grid-0"
    except KeyError:
        return "slice_grid-0"


def _grid_selection(at: AppTest) -> dict:
    """The slice table's selection as the browser holds it (what the app last set)."""
    try:
        sel = at.session_state[grid_key(at)]["selection"]
    except (KeyError, TypeError):
        sel = {}
    return {k: list(sel.get(k) or []) for k in ("rows", "columns", "cells")}


def open_row(at: AppTest, itemset: str) -> AppTest:
    """Click a slice's row in the slice table: the browser sends its selection with that row."""
    slices = table_cells(at)["Slice"]
    sel = _grid_selection(at)
    sel["rows"] = [slices.index(itemset)]
    at.session_state[grid_key(at)] = {"selection": sel}
    return at.run()


def click_header(at: AppTest, column: str) -> AppTest:
    """Click a column's header in the slice table: it becomes the selected column, as in the
    browser (which then sends nothing for a click on it: the app draws the table after a sort
    with no column selected)."""
    sel = _grid_selection(at)
    assert sel["columns"] != [column], f"{column!r} is still selected: a click on it would reach nothing"
    sel["columns"] = [column]
    at.session_state[grid_key(at)] = {"selection": sel}
    return at.run()


def keyed(widgets, key: str):
    """The widget of a setting among ``widgets`` (e.g. ``at.selectbox``): drawn under ``key``, or
    under a later key of the same setting (``key#n``: the app draws a widget anew when it sets
    the widget's value itself, ``ui.state.widget_key``)."""
    found = [w for w in widgets if w.key == key or (w.key or "").startswith(key + "#")]
    assert len(found) == 1, f"{len(found)} widgets drawn for {key!r}: {[w.key for w in found]}"
    return found[0]


def setting(at: AppTest, key: str):
    """A setting as the pages read it (``ui.state.get``): a field of the session's Settings, its
    draft, or a plain key of the form."""
    from ui.state import read

    return read(at.session_state, key)

"""The example notebook (docs/notebook.ipynb, issue 31 point 2) runs in a kernel with no error cell,
and its outputs show the built-in data's planted finding: in the table's HTML, its text, the findings
frame and the figures."""
from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT

from divergence.data.datasets import DEMO_TRUTH

nbformat = pytest.importorskip("nbformat", reason="nbformat and nbclient (requirements-dev.txt) run the notebook")
nbclient = pytest.importorskip("nbclient")


def test_the_example_notebook_runs_and_shows_the_finding():
    nb = nbformat.read(ROOT / "docs" / "notebook.ipynb", as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "the notebook is kept without outputs"
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    finding = DEMO_TRUTH["elevated_fpr"]
    html = [o.data["text/html"] for o in outputs if o.output_type in ("execute_result", "display_data")
            and "text/html" in o.data and "Slice table" in o.data["text/html"]]
    assert len(html) == 1 and finding in html[0] and "1 distinct finding" in html[0]
    assert "Whole dataset: <b>10.2%</b>" in html[0]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert f"first '{finding}' (above)" in text
    figures = [o.data["application/vnd.plotly.v1+json"] for o in outputs if "data" in o
               and "application/vnd.plotly.v1+json" in o.data]
    assert len(figures) == 4
    assert finding in json.dumps(figures[1])  # the Shapley chart is the finding's
    assert "Lattice of" in json.dumps(figures[2]) and "region=South" in json.dumps(figures[3])
    # every plot cell's output carries a form an export and a repository's viewer show, offline
    plot_cells = [c for c in nb.cells if c.cell_type == "code" and ".plot." in c.source]
    assert len(plot_cells) == 4
    for cell in plot_cells:
        shown = [o for o in cell.outputs if o.output_type in ("execute_result", "display_data")]
        assert len(shown) == 1 and _exportable(shown[0].data), cell.source


#: the first bytes of a PNG file
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _exportable(data: dict) -> bool:
    """A PNG, or HTML drawing the figure with plotly.js inline or already sent (never from a CDN)."""
    import base64

    if "image/png" in data:
        return base64.b64decode(data["image/png"])[:8] == PNG_MAGIC and "text/html" not in data
    page = data.get("text/html", "")
    return "Plotly.newPlot" in page and not re.search(r"<script[^>]*\bsrc=", page)  # no script fetched


def test_a_figure_without_png_embeds_plotly_js_once(monkeypatch):
    """Where kaleido or Chromium is missing, the first figure's HTML carries plotly.js, the later ones
    draw with it: an HTML export shows both offline."""
    import divergence as dv
    from divergence.data.datasets import DEMO_ROLES, load_demo
    from divergence.present import export, notebook

    monkeypatch.setattr(export, "png_supported", lambda: False)
    monkeypatch.setitem(notebook._PLOTLYJS, "sent", False)
    t = dv.scan(load_demo(3000), **DEMO_ROLES["classification"])
    first, second = (f._repr_mimebundle_() for f in (t.plot.intervals("fpr"), t.plot.items("fpr")))
    for b in (first, second):
        assert "image/png" not in b and _exportable(b) and notebook.PLOTLY_MIME in b
    assert len(first["text/html"]) > 1_000_000 and len(second["text/html"]) < 200_000  # the library once

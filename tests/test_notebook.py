"""The example notebook (docs/notebook.ipynb, issue 31 point 2) runs in a kernel with no error cell,
and its outputs show the built-in data's planted finding: in the table's HTML, its text, the findings
frame and the figures."""
from __future__ import annotations

import json

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
    assert len(figures) == 2
    assert finding in json.dumps(figures[1])  # the Shapley chart is the finding's

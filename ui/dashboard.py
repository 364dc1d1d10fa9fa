"""The dashboard's script, run by ``app.py`` for each session: the shared set-up and the page
navigation (``app.py`` itself also names the guarded server Streamlit serves)."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from ui import job, state
from ui.guard import allowed_origins, same_origin
from ui.serve import SERVED_AS, warning_text

#: the folder of app.py: the pages and the app's own icon are found from it
ROOT = Path(__file__).resolve().parents[1]


def server_never_compiles() -> bool:
    """In Streamlit's server, kernels never compile (:func:`divergence.kernels.compiled.never_compile_here`):
    numba's compiler would hold the GIL for seconds, and every session and the health check would wait
    (issue 47 N9). Not under AppTest, whose runtime is a stand-in (a mock of the Runtime class): its process
    also runs the tests' own scans, which must keep the compiled kernels. True when set."""
    from streamlit import runtime

    if not runtime.exists() or type(runtime.get_instance()) is not runtime.Runtime:
        return False
    import divergence

    divergence.never_compile_here()
    return True


def main() -> None:
    """One run of the dashboard for the session (what ``app.py`` does as a script)."""
    server_never_compiles()
    # the icon is served by the app itself: a material icon here made the browser fetch it from a Google font host
    # (fails offline; a meeting room may be offline)
    st.set_page_config(page_title="Divergence", page_icon=str(ROOT / ".streamlit" / "favicon.png"),
                       layout="wide")
    # `make app` refuses another origin's WebSocket before a session opens (ui.guard); a bare `streamlit run`
    # does not, so a session opened from another site (or another local port) shows nothing
    _headers = st.context.headers
    if not same_origin(_headers.get("Origin"), _headers.get("Host"), allowed_origins(),
                       secure=(st.context.url or "").startswith("https:")):
        st.error("This dashboard was opened from another site's page: it answers its own address only.")
        st.stop()
    state.init_state()
    # less empty space above the title: a projector has 800 rows of pixels
    st.markdown("<style>[data-testid='stMainBlockContainer']{padding-top:3.5rem}</style>", unsafe_allow_html=True)

    PAGES = [
        st.Page("pages/data.py", title="1 · Data", icon=":material/table:"),
        st.Page("pages/outcome.py", title="2 · Outcome and thresholds", icon=":material/tune:"),
        st.Page("pages/slices.py", title="3 · Slices", icon=":material/view_list:", default=True),
        st.Page("pages/intervals.py", title="4 · Intervals", icon=":material/align_horizontal_center:"),
        st.Page("pages/attributes.py", title="5 · Attributes", icon=":material/bar_chart:"),
        st.Page("pages/export.py", title="6 · Export", icon=":material/download:"),
        st.Page("pages/compare.py", title="7 · Compare models", icon=":material/compare_arrows:"),
    ]
    # navigation along the top: the full width stays for the tables (a 1280x800 projector)
    page = st.navigation(PAGES, position="top")
    if os.environ.get(SERVED_AS):  # `make app SERVE=name`: every page says who can reach it
        st.warning(warning_text(os.environ[SERVED_AS], markdown=True), icon=":material/public:")
    page.run()
    # a running scan's progress (and its Cancel button) on a page that did not draw it
    job.show_scan_status()

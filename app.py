"""The dashboard: ``streamlit run app.py`` (or ``make app``). Page navigation only.

It opens on the Slices page with the built-in dataset scanned on its default settings,
so a first finding is visible without touching anything.

``streamlit run app.py`` first reads this file for an ASGI app (``app`` below) and serves it:
Streamlit's own server with :mod:`ui.guard`'s middleware in front (no other site frames it, its
WebSocket answers its own page only), however the dashboard is started. Each session then runs
this file as its script (``__name__ == "__main__"``): the pages.
"""
from __future__ import annotations

import streamlit as st

if __name__ == "__main__":  # a session's run: the dashboard
    from ui.dashboard import main

    main()
else:  # imported by `streamlit run app.py` (or an ASGI server): the guarded server
    from ui.guard import middleware

    app = st.App(__file__, middleware=middleware())

"""The dashboard's support, imported by ``app.py`` and the pages (``from ui import state, render``):

- ``state``: session-state keys, defaults, widgets bound to them;
- ``cache``: cached calls into the engine, the results the server keeps;
- ``settings``: the settings <-> engine keywords <-> slice plan;
- ``data``: the data in use (built-in, upload, local path), switching it;
- ``job``, ``run``: a scan in a worker process: started, followed, cancelled, collected;
- ``worker``: that worker process (no Streamlit import: the worker imports only it and ``divergence``);
- ``render``: captions, the slice table, the open slice, figures;
- ``compare``: comparing two models.

Nothing is imported here: importing ``ui.worker`` in a worker must not import Streamlit.
"""

"""The dashboard's support that needs no Streamlit (the worker process imports it)."""

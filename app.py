"""The dashboard: `streamlit run app.py` opens on the built-in dataset."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from divergence import DivergenceInputError, scan
from divergence.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo

st.set_page_config(page_title="Divergence", layout="wide")


@st.cache_data(show_spinner="Mining slices…")
def demo_scan(min_support: float):
    df = load_demo()
    return scan(df, attributes=DEMO_ATTRIBUTES, min_support=min_support, **DEMO_ROLES["classification"]).frame


st.title("Where does the model behave differently?")
st.caption("Built-in dataset: credit applications, a classifier's default predictions.")
support = st.slider("Minimum support", 0.005, 0.2, 0.02, 0.005, format="%.3f")
try:
    frame = demo_scan(support)
except DivergenceInputError as exc:
    st.error(str(exc))
    st.stop()
metric = st.radio("Metric", ["fpr", "fnr"], horizontal=True)
st.metric(f"Whole-dataset {metric.upper()}", f"{frame.loc[0, metric]:.1%}")
top = frame.iloc[1:].sort_values(f"{metric}_divergence", ascending=False)
st.dataframe(top[["itemset", "support", "count", metric, f"{metric}_divergence", f"{metric}_t", f"{metric}_p"]],
             hide_index=True, width="stretch")

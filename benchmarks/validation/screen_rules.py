"""The attribute screen's measured rules on real and synthetic tables (docs/discretization.md, "Default attributes"):
per column, what the rules measure and what the screen decides, to show where the lines fall.

    .venv/bin/python benchmarks/validation/screen_rules.py

Columns: the column's leave-one-out accuracy alone (``alone``) against the model's and the
commonest-class guess's (the rule: at most half of both errors), the sharpest group it marks (rows,
purity, the share the model predicts that class on), the agreement with the prediction (Cohen's kappa
for labels, AUC for numbers), and the screen's decision.
"""
from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
_FIXTURES = runpy.run_path(str(ROOT / "tests" / "screen_fixtures.py"))
post_outcome, two_models = _FIXTURES["post_outcome"], _FIXTURES["two_models"]

from divergence import screen_attributes  # noqa: E402
from divergence.data.column_rules import MARK_ROWS, MARK_SHARE, _kappa, auc_of, groups, loo_accuracy, model_of  # noqa: E402
from divergence.data.io import load_table  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def rows(name: str, df: pd.DataFrame, roles: dict, columns: list[str] | None = None) -> list[dict]:
    used = [c for c in (roles.get("target"), roles.get("prediction"), roles.get("score")) if c]
    screen = screen_attributes(df, used, **roles)
    m = model_of(df, roles.get("target"), roles.get("prediction"), roles.get("score"), roles.get("threshold"))
    ok = (m.y >= 0) & (m.p >= 0)
    y, p = m.y[ok], m.p[ok]
    out = []
    for col in columns or [c for c in df.columns if c not in used]:
        if col not in screen.attributes and screen.kinds.get(col) not in ("after the outcome", "another model",
                                                                        "near copy", "leakage"):
            continue
        s = df[col][ok]
        codes, k, missing = groups(s)
        alone = loo_accuracy(codes, k, y, m.ky)
        best = ""
        marks = [codes == c for c in range(k)] + ([~missing] if missing.any() else [])
        top = None
        for r in marks:
            size = int(r.sum())
            if size < max(MARK_ROWS, MARK_SHARE * len(y)) or size == len(y):
                continue
            counts = np.bincount(y[r], minlength=m.ky)
            c = int(counts.argmax())
            purity, pred = counts[c] / size, float(np.mean(p[r] == c))
            if top is None or purity - pred > top[1] - top[2]:
                top = (size, purity, pred)
        if top:
            best = f"{top[0]:,} rows, {top[1]:.0%} one class, model {top[2]:.0%}"
        x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float) if pd.api.types.is_numeric_dtype(s) else None
        agree = ""
        if x is not None and len(np.unique(x[~np.isnan(x)])) <= 2:
            agree = f"kappa {_kappa(np.nan_to_num(x).astype(int), p, max(m.ky, 2))[1]:.2f}"
        elif x is not None and m.ky == 2:
            auc = auc_of(x, p.astype(float))
            agree = f"AUC {max(auc, 1 - auc):.2f}" if auc is not None else ""
        out.append(dict(data=name, column=col, alone=f"{alone:.1%}", model=f"{np.mean(y == p):.1%}",
                        commonest=f"{np.bincount(y).max() / len(y):.1%}", sharpest_group=best, agreement=agree,
                        decision=screen.kinds.get(col, "attribute")))
    return out


def main() -> None:
    table: list[dict] = []
    if DATA.is_dir():
        raw = load_table(DATA / "compas-scores-two-years.csv").frame
        table += rows("raw COMPAS", raw, dict(target="two_year_recid", score="decile_score", threshold=8),
                      ["priors_count", "age", "juv_fel_count", "c_charge_degree", "c_charge_desc", "start",
                       "event", "end", "r_days_from_arrest", "is_violent_recid", "vr_charge_degree",
                       "vr_charge_desc", "v_decile_score", "priors_count.1"])
        adult = pd.read_csv(DATA / "adult_discretized.csv")
        table += rows("Adult", adult, dict(target="class", prediction="predicted"))
    table += rows("synthetic credit", post_outcome(), dict(target="defaulted", prediction="predicted"))
    table += rows("synthetic two models", two_models(), dict(target="survived", prediction="pred_gb"))
    frame = pd.DataFrame(table)
    print("| " + " | ".join(frame.columns) + " |")
    print("|" + "---|" * len(frame.columns))
    for r in frame.itertuples(index=False):
        print("| " + " | ".join(str(v) for v in r) + " |")


if __name__ == "__main__":
    main()

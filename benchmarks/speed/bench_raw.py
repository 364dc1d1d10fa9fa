"""Raw, wide tables with nothing but the roles given: slices, seconds and peak memory of a whole
`python -m divergence scan ... --output` run, each distinct set of rows once (the default)
against every itemset (--exhaustive), within the default budget. Prints a table.

    python benchmarks/speed/bench_raw.py                  # raw COMPAS (../shared/data) + synthetic 60 columns
    python benchmarks/speed/bench_raw.py --rows 50000     # a larger synthetic table
    python benchmarks/speed/bench_raw.py --max-slices 200000 --time-limit 30   # another budget

Each run is its own process; "peak MiB" is that process's maximum resident set size and
"seconds" its wall time (reading, screening the columns, mining, every statistic, writing the
CSV). "budget" says whether the table is complete or, past the budget, up to which length.
The synthetic table has 60 columns as a raw export has them: row ids, UUIDs, names, dates,
free text, e-mails, copies of the target, a second spelling of the score, constant and empty
columns, and 45 genuine attributes (some repeating others); its target depends on a few.
"""
from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))


#: the 44 attributes the scan took by default before columns were screened (every column but the
#: roles, the row number and text columns with more distinct values than half the rows): the
#: request that hung the dashboard in issue 10; here it meets the budget
OLD_DEFAULT = ("first,compas_screening_date,sex,age,age_cat,race,juv_fel_count,juv_misd_count,juv_other_count,"
               "priors_count,days_b_screening_arrest,c_offense_date,c_arrest_date,c_days_from_compas,"
               "c_charge_degree,c_charge_desc,is_recid,r_case_number,r_charge_degree,r_days_from_arrest,"
               "r_offense_date,r_charge_desc,r_jail_in,r_jail_out,violent_recid,is_violent_recid,vr_case_number,"
               "vr_charge_degree,vr_offense_date,vr_charge_desc,type_of_assessment,decile_score.1,score_text,"
               "screening_date,v_type_of_assessment,v_decile_score,v_score_text,v_screening_date,in_custody,"
               "out_custody,priors_count.1,start,end,event")


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    """A raw export of 60 columns, the target and the score among them."""
    rng = np.random.default_rng(seed)
    cat = {f"cat{k:02d}": rng.choice(list("abcde")[: 2 + k % 4], n) for k in range(20)}
    num = {f"num{k:02d}": rng.normal(size=n).round(3) for k in range(15)}
    code = {f"code{k}": rng.integers(1, 6, n) for k in range(8)}
    logit = -0.8 + 0.9 * (cat["cat01"] == "a") + 0.6 * (num["num02"] > 1) - 0.5 * (code["code3"] == 5)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    score = np.clip(rng.normal(0.3 + 0.35 * y + 0.1 * (cat["cat04"] == "b"), 0.2), 0, 1).round(4)
    cols: dict = {
        "row_id": np.arange(1, n + 1),
        "uuid": [f"{rng.integers(1 << 62):x}-{i}" for i in range(n)],
        "customer_name": [f"{a} {b}" for a, b in zip(rng.choice([f"Name{k}" for k in range(900)], n),
                                                      rng.choice([f"Surname{k}" for k in range(1500)], n))],
        "email": [f"user{i}@example.org" for i in rng.permutation(n)],
        "created": (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900 * 86400, n), unit="s"))
        .strftime("%Y-%m-%d %H:%M:%S"),
        "updated": (pd.Timestamp("2021-06-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D"))
        .strftime("%d/%m/%Y"),
        "note": [f"called on day {i} about order {rng.integers(1e6)}, customer {w}"
                 for i, w in enumerate(rng.choice(["happy", "angry", "unsure"], n))],
        "source": "export", "unused": np.nan,
        "label_copy": y, "label_text": np.where(y == 1, "churned", "stayed"),
        "score_pct": (score * 100).round(2), "score_band": np.round(score, 1),
        **cat, **num, **code,
        "cat00_copy": cat["cat00"],
        "num00_missing": np.where(rng.random(n) < 0.1, np.nan, num["num00"]),
    }
    df = pd.DataFrame(cols)
    df["y"], df["score"] = y, score
    return df


def run(path: Path, roles: list[str], exhaustive: bool, budget: list[str]) -> dict:
    """One whole command-line run in its own process: wall seconds, peak MiB, slices, budget."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "slices.csv"
        cmd = [sys.executable, "-m", "divergence", "scan", str(path), *roles, "--output", str(out), *budget]
        if exhaustive:
            cmd.append("--exhaustive")
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        err = proc.stderr.read()
        proc.returncode = os.waitstatus_to_exitcode(status)
        slices = sum(1 for _ in open(out)) - 2 if out.exists() else 0
    note = next((ln[6:] for ln in err.splitlines() if ln.startswith("note: Complete up to")), "")
    if proc.returncode != 0:
        budget_text = "error: " + err.strip().splitlines()[-1][len("divergence: error: "):][:60]
    elif note:
        why = note.split(";", 1)[1] if ";" in note else ""
        budget_text = note.split(";")[0].replace("Complete", "complete") + (
            " (time)" if "time limit" in why else " (work)" if "units of mining work" in why else " (slices)")
    else:
        budget_text = "complete"
    return dict(exit=proc.returncode, seconds=seconds, peak_mib=usage.ru_maxrss / 1024, slices=slices,
                budget=budget_text)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=20_000, help="rows of the synthetic table (default 20,000)")
    p.add_argument("--max-slices", type=int, default=None, help="budget: slices (default: the scan's)")
    p.add_argument("--time-limit", type=float, default=None, help="budget: seconds of mining (default: the scan's)")
    args = p.parse_args()
    budget = []
    if args.max_slices:
        budget += ["--max-slices", str(args.max_slices)]
    if args.time_limit:
        budget += ["--time-limit", str(args.time_limit)]
    cases = []
    compas = DATA / "compas-scores-two-years.csv"
    if compas.exists():
        roles = ["--target", "two_year_recid", "--score", "decile_score", "--threshold", "8", "--positive", "1",
                 "--metric", "fpr,fnr"]
        cases.append(("raw COMPAS (7,214 x 53)", compas, roles))
        cases.append(("  44 old default attributes", compas, roles + ["--attributes", OLD_DEFAULT]))
    else:
        print(f"(raw COMPAS skipped: {compas} not found)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wide.csv"
        synthetic(args.rows).to_csv(path, index=False)
        cases.append((f"synthetic ({args.rows:,} x 60)", path,
                      ["--target", "y", "--score", "score", "--threshold", "0.5", "--positive", "1",
                       "--metric", "fpr,fnr"]))
        from divergence.kernels.compiled import build_status

        print(f"kernels: {build_status()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'data':<28} {'mode':<11} {'exit':>4} {'slices':>10} {'seconds':>8} {'peak MiB':>9}  budget")
        for name, path_, roles in cases:
            for exhaustive in (False, True):
                r = run(path_, roles, exhaustive, budget)
                mode = "exhaustive" if exhaustive else "default"
                print(f"{name:<28} {mode:<11} {r['exit']:>4} {r['slices']:>10,} {r['seconds']:>8.1f} "
                      f"{r['peak_mib']:>9.0f}  {r['budget']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

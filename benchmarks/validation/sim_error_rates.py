"""Error rates of the worst-slice statistics, measured by simulation: prints one table of
setting, runs, measured rate and target (and whether the rate meets it within simulation
error: two binomial standard errors).

    python benchmarks/validation/sim_error_rates.py                       # 200 runs per setting (about an hour on 2 busy cores)
    python benchmarks/validation/sim_error_rates.py --runs 20 --coverage-runs 100   # a quick look
    python benchmarks/validation/sim_error_rates.py --only null,coverage  # some sections: null, coverage, small, verdicts,
                                                           # shrinkage, power
    python benchmarks/validation/sim_error_rates.py --speed               # the speed table (see --before)
    python benchmarks/validation/sim_error_rates.py --speed --before /path/to/an/older/checkout

Sections (every table seeded; the same numbers for the same runs):

- null: tables where no attribute changes the outcome (10,000 rows, six random attributes,
  support 0.005, so slices down to 50 rows); a run alarms when any slice has q <= 0.05.
  "plain Welch" rows switch the skew guard off, to show what it prevents.
- coverage: one slice against the rest; how often the 95% divergence interval holds the true
  divergence (the slice's mean minus the whole dataset's, given its row count).
- small: a 40-row slice at rate 0.02 (zero events 45% of the time) and a 40-row lognormal
  slice: coverage of the slice's interval, its bootstrap interval (B = 200) and the
  divergence interval; intervals of zero width are counted.
- verdicts: the built-in dataset's planted hard cohort and defect (abs_error), significant
  refinements of the hard cohort, a regression cohort with noisier labels, a classifier with
  a hard cohort and a defect (0/1 error); and the same without rows (tallies only).
- shrinkage: the largest shrunk divergence on null data against the largest raw one; a
  planted divergence recovered by the shrunk estimate; the test and the corrected interval
  agreeing.
- power: what the skew guard costs: a planted lognormal slice found above and below the rest,
  with the guard and with plain Welch.
- speed (--speed): scan() seconds without and with a bootstrap of every slice (B = 200; an
  error metric's verdict included), here and in the checkout given by --before.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))

ALPHA = 0.05


@dataclasses.dataclass
class Row:
    section: str
    setting: str
    runs: int
    rate: float
    target: tuple  # ("<=", x), (">=", x), ("in", lo, hi) or ()
    note: str = ""

    def target_text(self) -> str:
        t = self.target
        if not t:
            return "reported"
        if t[0] == "in":
            return f"{t[1]:.2f}–{t[2]:.2f}"
        return f"{'≤' if t[0] == '<=' else '≥'} {t[1]:.2f}"

    def meets(self) -> str:
        t = self.target
        if not t or self.runs == 0:
            return ""
        se = 2 * math.sqrt(max(self.rate * (1 - self.rate), 0.25 / self.runs) / self.runs)
        if t[0] == "<=":
            ok = self.rate <= t[1] + se
        elif t[0] == ">=":
            ok = self.rate >= t[1] - se
        else:
            ok = t[1] - se <= self.rate <= t[2] + se
        return "yes" if ok else "NO"


def _scan(df, kw, **extra):
    from divergence import scan

    return scan(df, **{"min_support": 0.005, **kw, **extra})


# ----------------------------------------------------------------------------------- sections

def null_section(runs: int) -> list[Row]:
    import divergence.stats.stats as stats
    from divergence.simulate import null_table

    rows = []
    settings = [("0/1 outcome at rate 0.2", "rate", {}), ("normal outcome", "normal", {}),
                ("abs_error of a null regression", "abs_error", {}),
                ("squared_error of a null regression", "squared_error", {}),
                ("lognormal(0, 1) outcome", "lognormal", {}),
                ("fpr, fnr, error scanned together (family scan)", "three_rates", {"family": "scan"}),
                ("fpr, fnr, error, family metric (per-metric q, the default)", "three_rates", {"family": "metric"}),
                ("lognormal, Bonferroni", "lognormal", {"correction": "bonferroni"})]
    for label, kind, extra in settings:
        alarms, tested = 0, []
        for seed in range(runs):
            df, kw, _ = null_table(kind, seed)
            t = _scan(df, kw, **extra)
            qs = [t.frame[f"{m}_q"].to_numpy()[1:] for m in t.metric_names]
            alarms += any(np.nanmin(q) <= ALPHA for q in qs)
            tested.append(sum(t.n_tested.values()))
        target = () if extra.get("family") == "metric" else ("<=", ALPHA)
        rows.append(Row("null", f"no slice differs: {label}", runs, alarms / runs, target,
                        f"{np.mean(tested):,.0f} tests per run"))
        print(rows[-1], flush=True)
    guard = stats.SKEW_GUARD
    try:
        stats.SKEW_GUARD = math.inf
        for label, kind in [("abs_error", "abs_error"), ("squared_error", "squared_error"),
                            ("lognormal outcome", "lognormal")]:
            alarms = 0
            for seed in range(runs):
                df, kw, _ = null_table(kind, seed)
                t = _scan(df, kw)
                alarms += np.nanmin(t.frame[f"{t.metric_names[0]}_q"].to_numpy()[1:]) <= ALPHA
            rows.append(Row("null", f"plain Welch (the guard off), {label}", runs, alarms / runs, (),
                            "what the skew guard prevents"))
            print(rows[-1], flush=True)
    finally:
        stats.SKEW_GUARD = guard
    return rows


COVERAGE = [
    ("normal, equal sd, share 1%", dict(share=0.01)),
    ("normal, equal sd, share 40%", dict(share=0.4)),
    ("normal, sd 0.3 in slice / 2 elsewhere, share 1%", dict(share=0.01, slice_sd=0.3, rest_sd=2.0)),
    ("normal, sd 0.3 in slice / 2 elsewhere, share 5%", dict(share=0.05, slice_sd=0.3, rest_sd=2.0)),
    ("normal, sd 0.3 in slice / 2 elsewhere, share 40%", dict(share=0.4, slice_sd=0.3, rest_sd=2.0)),
    ("normal, sd 2 in slice / 0.3 elsewhere, share 1%", dict(share=0.01, slice_sd=2.0, rest_sd=0.3)),
    ("normal, sd 2 in slice / 0.3 elsewhere, share 40%", dict(share=0.4, slice_sd=2.0, rest_sd=0.3)),
    ("rate 0.02 in slice / 0.3 elsewhere, share 1%", dict(share=0.01, kind="rate", slice_mean=0.02, rest_mean=0.3)),
    ("rate 0.02 in slice / 0.3 elsewhere, share 5%", dict(share=0.05, kind="rate", slice_mean=0.02, rest_mean=0.3)),
    ("rate 0.02 in slice / 0.3 elsewhere, share 40%", dict(share=0.4, kind="rate", slice_mean=0.02, rest_mean=0.3)),
    ("rate 0.3 everywhere, share 40%", dict(share=0.4, kind="rate", slice_mean=0.3, rest_mean=0.3)),
    ("rate 0.01 everywhere, share 1%", dict(share=0.01, kind="rate", slice_mean=0.01, rest_mean=0.01)),
    ("rate 0.005 in slice / 0.05 elsewhere, share 20%", dict(share=0.2, kind="rate", slice_mean=0.005, rest_mean=0.05)),
]
COVERAGE_SKEWED = [
    ("lognormal, same distribution, share 1%", dict(share=0.01, kind="lognormal", slice_mean=0.0, rest_mean=0.0)),
    ("lognormal, slice log-mean +0.2, share 40%", dict(share=0.4, kind="lognormal", slice_mean=0.2, rest_mean=0.0)),
]


def coverage_section(runs: int) -> list[Row]:
    from divergence.simulate import two_group_table

    rows = []
    for settings, target in ((COVERAGE, ("in", 0.94, 0.96)), (COVERAGE_SKEWED, (">=", 0.94))):
        for label, kw in settings:
            hit = 0
            for seed in range(runs):
                df, skw, truth = two_group_table(10_000 + seed, **kw)
                t = _scan(df, skw, min_support=0.001)
                r = t.row(truth["itemset"])
                hit += r["o_divergence_ci_low"] <= truth["divergence"] <= r["o_divergence_ci_high"]
            rows.append(Row("coverage", f"95% divergence interval: {label}", runs, hit / runs, target))
            print(rows[-1], flush=True)
    return rows


def small_section(runs: int) -> list[Row]:
    from divergence.simulate import two_group_table

    rows = []
    cases = [("rate 0.02", dict(kind="rate", slice_mean=0.02, rest_mean=0.02), 0.02, (">=", 0.93)),
             ("lognormal(0, 1)", dict(kind="lognormal", slice_mean=0.0, rest_mean=0.0), math.exp(0.5), ())]
    for label, kw, value, target in cases:
        hit = {"interval": 0, "bootstrap": 0, "divergence": 0}
        flat = 0
        for seed in range(runs):
            df, skw, truth = two_group_table(20_000 + seed, share=0.02, n=2000, **kw)
            t = _scan(df, skw, min_support=0.001, bootstrap=200, seed=seed)
            r = t.row(truth["itemset"])
            hit["interval"] += r["o_ci_low"] <= value <= r["o_ci_high"]
            hit["bootstrap"] += r["o_boot_low"] <= value <= r["o_boot_high"]
            hit["divergence"] += r["o_divergence_ci_low"] <= truth["divergence"] <= r["o_divergence_ci_high"]
            flat += (r["o_ci_low"] == r["o_ci_high"]) + (r["o_boot_low"] == r["o_boot_high"])
        name = "Wilson" if "rate" in label else "Student t"
        rows.append(Row("small", f"40-row slice, {label}: 95% {name} interval covers", runs, hit["interval"] / runs, target))
        rows.append(Row("small", f"40-row slice, {label}: bootstrap interval (B = 200) covers", runs,
                        hit["bootstrap"] / runs, target))
        rows.append(Row("small", f"40-row slice, {label}: divergence interval covers", runs,
                        hit["divergence"] / runs, target))
        rows.append(Row("small", f"40-row slice, {label}: intervals of zero width", 2 * runs, flat / (2 * runs),
                        ("<=", 0.0) if "rate" in label else ()))
        for r in rows[-4:]:
            print(r, flush=True)
    return rows


def _without_rows(table):
    from divergence import assess

    bare = dataclasses.replace(table, kept_rows=None, assessment=None)
    return assess(bare)


def verdicts_section(runs: int) -> list[Row]:
    from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, DEMO_TRUTH, load_demo
    from divergence.simulate import classifier_cohorts_table, noisier_labels_table

    rows = []
    hard_ok = defect_ok = 0
    refinements = refinements_defect = 0
    bare_wrong = bare_undetermined = 0
    disagree = tested = 0
    for seed in range(runs):
        t = _scan(load_demo(seed=100 + seed), dict(attributes=DEMO_ATTRIBUTES, **DEMO_ROLES["regression"]),
                  min_support=0.01)
        f = t.frame
        hard_ok += t.row(DEMO_TRUTH["hard_cohort"])["abs_error_verdict"] == "hard cohort"
        defect_ok += t.row(DEMO_TRUTH["defect"])["abs_error_verdict"] == "defect"
        ref = (f["itemset"].str.contains("employment=Self-employed", regex=False)
               & ~f["itemset"].str.contains("channel=App", regex=False) & (f["length"] > 1)
               & (f["abs_error_q"] <= ALPHA) & (f["abs_error_divergence"] > 0))
        refinements += int(ref.sum())
        refinements_defect += int((ref & (f["abs_error_verdict"] == "defect")).sum())
        q = f["abs_error_q"].to_numpy()[1:]
        excl = ((f["abs_error_divergence_adj_low"] > 0) | (f["abs_error_divergence_adj_high"] < 0)).to_numpy()[1:]
        ok = np.isfinite(q)
        disagree += int(((q[ok] <= ALPHA) != excl[ok]).sum())
        tested += int(ok.sum())
        b = _without_rows(t)
        for key, want in (("hard_cohort", "hard cohort"), ("defect", "defect")):
            v = b.row(DEMO_TRUTH[key])["abs_error_verdict"]
            bare_wrong += v in ("hard cohort", "defect") and v != want
            bare_undetermined += v == "undetermined"
    rows += [Row("verdicts", "built-in data: planted hard cohort called hard cohort", runs, hard_ok / runs, (">=", 0.95)),
             Row("verdicts", "built-in data: planted defect called defect", runs, defect_ok / runs, (">=", 0.95)),
             Row("verdicts", "significant refinements of the hard cohort called defect", runs,
                 refinements_defect / max(refinements, 1), ("<=", 0.05), f"{refinements:,} refinements"),
             Row("verdicts", "abs_error: q <= 0.05 and corrected interval excluding 0 disagree", runs,
                 disagree / max(tested, 1), ("<=", 0.0), f"{tested:,} slices"),
             Row("verdicts", "without rows: planted cohorts given the wrong one of defect / hard cohort", 2 * runs,
                 bare_wrong / (2 * runs), ("<=", 0.0), f"undetermined {bare_undetermined / (2 * runs):.0%}")]
    for r in rows:
        print(r, flush=True)
    noisy_defect = noisy_hard = 0
    c_hard = c_defect = c_bare_wrong = 0
    for seed in range(runs):
        df, kw, truth = noisier_labels_table(seed)
        t = _scan(df, kw)
        v = t.row(truth["cohort"])["abs_error_verdict"]
        noisy_defect += v == "defect"
        noisy_hard += v == "hard cohort"
        df, kw, truth = classifier_cohorts_table(seed)
        t = _scan(df, kw)
        c_hard += t.row(truth["hard_cohort"])["error_verdict"] == "hard cohort"
        c_defect += t.row(truth["defect"])["error_verdict"] == "defect"
        b = _without_rows(t)
        for key, want in (("hard_cohort", "hard cohort"), ("defect", "defect")):
            v = b.row(truth[key])["error_verdict"]
            c_bare_wrong += v in ("hard cohort", "defect") and v != want
    more = [Row("verdicts", "noisier labels, model as good as possible: called defect", runs, noisy_defect / runs, ("<=", 0.05)),
            Row("verdicts", "noisier labels, model as good as possible: called hard cohort", runs, noisy_hard / runs, (">=", 0.95)),
            Row("verdicts", "classifier (0/1 error): labels near 1/2 called hard cohort", runs, c_hard / runs, (">=", 0.95)),
            Row("verdicts", "classifier (0/1 error): 30% of predictions flipped called defect", runs, c_defect / runs, (">=", 0.95)),
            Row("verdicts", "classifier without rows: the wrong one of defect / hard cohort", 2 * runs,
                c_bare_wrong / (2 * runs), ("<=", 0.0))]
    for r in more:
        print(r, flush=True)
    return rows + more


def shrinkage_section(runs: int) -> list[Row]:
    from divergence.simulate import null_table, planted_rate_table

    rows = []
    halved = 0
    ratios = []
    for seed in range(runs):
        df, kw, _ = null_table("rate", seed)
        f = _scan(df, kw).frame.iloc[1:]
        raw, shr = np.nanmax(np.abs(f["o_divergence"])), np.nanmax(np.abs(f["o_divergence_shrunk"]))
        halved += shr <= 0.5 * raw
        ratios.append(shr / raw)
    rows.append(Row("shrinkage", "null data: largest shrunk divergence at most half the largest raw one", runs,
                    halved / runs, (">=", 0.95), f"median ratio {np.median(ratios):.3f}"))
    print(rows[-1], flush=True)
    within = 0
    raw_err, shr_err, rep_err = [], [], []
    top_raw, top_shr, top_rep = [], [], []
    disagree = tested = 0
    for seed in range(runs):
        df, kw, truth = planted_rate_table(seed)
        t = _scan(df, kw, holdout=0.5, seed=seed)
        f = t.frame
        # the holdout halves the rows: the truth is the planted slice's on the mining half
        r = t.row(truth["itemset"])
        share = r["o_count"] / f.loc[0, "o_count"]
        true_div = (1 - share) * truth["effect"]
        within += abs(r["o_divergence_shrunk"] - true_div) <= 0.03
        raw_err.append(r["o_divergence"] - true_div)
        shr_err.append(r["o_divergence_shrunk"] - true_div)
        rep_err.append(r["o_replicated_divergence"] - true_div)
        top = f.iloc[1:]["o_divergence"].idxmax()
        top_raw.append(f.loc[top, "o_divergence"])
        top_shr.append(f.loc[top, "o_divergence_shrunk"])
        top_rep.append(f.loc[top, "o_replicated_divergence"])
        q = f["o_q"].to_numpy()[1:]
        excl = ((f["o_divergence_adj_low"] > 0) | (f["o_divergence_adj_high"] < 0)).to_numpy()[1:]
        ok = np.isfinite(q)
        disagree += int(((q[ok] <= ALPHA) != excl[ok]).sum())
        tested += int(ok.sum())
    rows.append(Row("shrinkage", "planted divergence 0.2 (rate): shrunk estimate within 0.03", runs, within / runs,
                    (">=", 0.95), f"mean error raw {np.mean(raw_err):+.4f}, shrunk {np.mean(shr_err):+.4f}, "
                                  f"replicated {np.mean(rep_err):+.4f}"))
    rows.append(Row("shrinkage", "largest raw divergence per run: raw / shrunk / replicated (means)", runs,
                    float(np.mean(top_raw)), (), f"shrunk {np.mean(top_shr):.4f}, replicated {np.mean(top_rep):.4f}"))
    rows.append(Row("shrinkage", "0/1 outcome: Fisher q <= 0.05 and corrected Newcombe interval disagree", runs,
                    disagree / max(tested, 1), (), f"{tested:,} slices; a finding needs both"))
    for r in rows[-3:]:
        print(r, flush=True)
    return rows


def power_section(runs: int) -> list[Row]:
    """What the skew guard costs: a planted lognormal slice found, with and without it."""
    import divergence.stats.stats as stats
    from divergence.simulate import planted_lognormal_table

    rows = []
    guard = stats.SKEW_GUARD
    for shift, side in ((0.3, "above (long-tail side)"), (-0.3, "below (short-tail side, guarded)")):
        for label, value in (("skew guard", guard), ("plain Welch", math.inf)):
            found = 0
            try:
                stats.SKEW_GUARD = value
                for seed in range(runs):
                    df, kw, truth = planted_lognormal_table(seed, shift=shift)
                    t = _scan(df, kw)
                    r = t.row(truth["itemset"])
                    # at the Bonferroni bar of the same family (BH's bar would reward plain
                    # Welch for its false findings elsewhere)
                    found += r["o_p"] <= ALPHA / t.n_tested["o"] and np.sign(r["o_divergence"]) == np.sign(shift)
            finally:
                stats.SKEW_GUARD = guard
            rows.append(Row("power", f"lognormal slice (5% of rows, log-mean {shift:+.1f}) {side}, "
                                     f"p ≤ 0.05/tests: {label}",
                            runs, found / runs, ()))
            print(rows[-1], flush=True)
    return rows


SECTIONS = {"null": null_section, "coverage": coverage_section, "small": small_section,
            "verdicts": verdicts_section, "shrinkage": shrinkage_section, "power": power_section}


def print_table(rows: list[Row]) -> None:
    print()
    print("| setting | runs | measured rate | target | meets | note |")
    print("|---|---:|---:|---|---|---|")
    for r in rows:
        rate = f"{r.rate:.4f}" if r.section != "shrinkage" or r.target or "disagree" in r.setting else f"{r.rate:.4f}"
        print(f"| {r.setting} | {r.runs:,} | {rate} | {r.target_text()} | {r.meets()} | {r.note} |")


# ----------------------------------------------------------------------------------------- speed

SPEED_CHILD = r'''
import json, sys, time
import numpy as np, pandas as pd
from divergence import scan
spec = json.loads(sys.argv[2])
if spec["data"] == "demo":
    from divergence.data.datasets import load_demo, DEMO_ATTRIBUTES, DEMO_ROLES
    df = load_demo()
    kw = dict(attributes=DEMO_ATTRIBUTES, **DEMO_ROLES[spec["roles"]])
else:
    df = pd.read_csv(spec["data"])
    kw = dict(target="class", prediction="predicted", positive=1, metrics=["fpr", "fnr"])
kw.update(min_support=spec["support"], bootstrap=spec["bootstrap"])
if spec["bootstrap"]:
    kw["top_k"] = 10 ** 9  # every slice (older code bootstrapped the top 1,000 by default)
t = scan(df, **kw)  # warm-up: kernels loaded
best = float("inf")
for _ in range(3):
    t0 = time.perf_counter()
    t = scan(df, **kw)
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"seconds": best, "slices": len(t) - 1}))
'''


def speed(before: str | None) -> None:
    cases = [("demo fpr, fnr", dict(data="demo", roles="classification", support=0.002)),
             ("demo abs_error", dict(data="demo", roles="regression", support=0.002)),
             ("demo abs_error", dict(data="demo", roles="regression", support=0.001))]
    adult = DATA / "adult_discretized.csv"
    if adult.exists():
        cases.append(("Adult fpr, fnr", dict(data=str(adult), roles="", support=0.01)))
    roots = [("after", str(ROOT))] + ([("before", before)] if before else [])
    print("| data | slices | support | code | B = 0 (s) | B = 200 (s) | ratio |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for label, spec in cases:
        for code, root in roots:
            out = {}
            for b in (0, 200):
                # run in the checkout: `python -c` imports its divergence first
                r = subprocess.run([sys.executable, "-c", SPEED_CHILD, root, json.dumps({**spec, "bootstrap": b})],
                                   capture_output=True, text=True, cwd=root)
                if r.returncode != 0:
                    raise SystemExit(r.stderr)
                out[b] = json.loads(r.stdout.strip().splitlines()[-1])
            print(f"| {label} | {out[0]['slices']:,} | {spec['support']} | {code} | {out[0]['seconds']:.2f} | "
                  f"{out[200]['seconds']:.2f} | {out[200]['seconds'] / out[0]['seconds']:.1f}× |", flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=200, help="runs per setting (default 200)")
    p.add_argument("--coverage-runs", type=int, default=1000,
                   help="runs per coverage setting (cheap: default 1000, a standard error of 0.007)")
    p.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    p.add_argument("--speed", action="store_true", help="the speed table instead")
    p.add_argument("--before", default=None, help="with --speed: a checkout of the code before, to compare")
    args = p.parse_args(argv)
    if args.speed:
        speed(args.before)
        return
    rows = []
    t0 = time.time()
    for name in args.only.split(","):
        name = name.strip()
        rows += SECTIONS[name](args.coverage_runs if name == "coverage" else args.runs)
    print_table(rows)
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()

"""The budget: no request hangs. Past it the table is complete up to the longest length that
fits and says so, or the scan stops with one line naming the remedy; progress is reported."""
from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from divergence import DivergenceBudgetError, DivergenceInputError, scan
from divergence.cli.cli import main
from divergence.errors import DivergenceTimeLimitWarning
from divergence.mining.mining import mine


def wide(n: int = 1500, attrs: int = 14, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"c{j:02d}": rng.choice(list("abcd"), n) for j in range(attrs)})
    df["o"] = rng.normal(size=n)
    return df


def test_complete_up_to_the_longest_length_that_fits():
    df = wide()
    t = scan(df, outcome="o", min_support=0.002, max_slices=20_000)
    k = t.lattice.complete_length
    assert k is not None and 1 <= k < 14
    assert len(t) - 1 <= 20_000 and t.lengths.max() == k
    note = next(n for n in t.notes if n.startswith("Complete up to"))
    assert note.startswith(f"Complete up to {k} items; {k + 1}-item slices would exceed the budget "
                           "(more than 20,000 slices): to see them, raise the support, limit items per slice")
    assert "drop attributes (the most slices: 'c" in note
    # complete: exactly the table asked for with max_length=k
    ref = scan(df, outcome="o", min_support=0.002, max_length=k)
    assert ref.lattice.complete_length is None
    assert list(ref.frame["itemset"]) == list(t.frame["itemset"])


def test_exhaustive_tables_obey_the_budget_too():
    df = wide(attrs=10)
    t = scan(df, outcome="o", min_support=0.002, max_slices=5_000, exhaustive=True)
    assert t.lattice.complete_length is not None and len(t) - 1 <= 5_000
    ref = scan(df, outcome="o", min_support=0.002, max_length=t.lattice.complete_length, exhaustive=True)
    assert len(ref) == len(t)


def test_stop_with_one_line_when_nothing_fits():
    df = wide(attrs=6)
    with pytest.raises(DivergenceBudgetError) as err:
        scan(df, outcome="o", min_support=0.01, max_slices=10)
    msg = str(err.value)
    assert isinstance(err.value, DivergenceInputError) and "\n" not in msg
    assert msg.startswith("The scan would need more than 10 slices even for single items: raise the support")
    assert "'c00' (4 items)" in msg


def test_command_line_exit_2_and_the_note(tmp_path, capsys):
    path = tmp_path / "w.csv"
    wide(attrs=6).to_csv(path, index=False)
    assert main(["scan", str(path), "--outcome", "o", "--max-slices", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("divergence: error: The scan would need more than 10 slices")
    out = tmp_path / "o.csv"
    assert main(["scan", str(path), "--outcome", "o", "--min-support", "0.002", "--max-slices", "500",
                 "--output", str(out)]) == 0
    err = capsys.readouterr().err
    assert "note: Complete up to " in err and "would exceed the budget (more than 500 slices)" in err
    assert len(pd.read_csv(out)) <= 501


def test_time_limit_ends_a_pathological_request():
    """Tiny support over many attributes: the time limit ends it, complete up to a short length."""
    df = wide(n=4000, attrs=30, seed=3)
    with pytest.warns(DivergenceTimeLimitWarning, match=r"The time limit \(1 s, a safety net\) cut this scan"):
        t = scan(df, outcome="o", min_support=0.0005, time_limit=1.0, max_slices=10**8, max_work=None)
    assert t.lattice.complete_length is not None and t.lattice.cut_by == "time"
    assert any("more than 1 seconds of screening and mining" in n for n in t.notes)  # the limit covers both


def test_pathological_request_in_a_subprocess_ends():
    """The command line on the same request: exit 0 with the note (never a hang)."""
    # 20,000 rows: each slice costs enough that no machine reaches the memory-lowered slice budget (about
    # 950,000) within the 3 s, so the time limit is what cuts it (at 3,000 rows a fast run hit the slices first)
    path_code = ("import numpy as np, pandas as pd, sys; rng = np.random.default_rng(3); "
                 "df = pd.DataFrame({f'c{j}': rng.choice(list('abcd'), 20000) for j in range(40)}); "
                 "df['o'] = rng.normal(size=20000); df.to_csv(sys.argv[1], index=False)")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        csv = f"{tmp}/p.csv"
        subprocess.run([sys.executable, "-c", path_code, csv], check=True)
        r = subprocess.run([sys.executable, "-m", "divergence", "scan", csv, "--outcome", "o", "--min-support",
                            "0.001", "--time-limit", "3", "--max-slices", "100000000", "--max-work", "1e15",
                            "--output", f"{tmp}/o.csv"], cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    # the time limit (a safety net) cut it: said first, with what it means
    assert "note: The time limit (3 s, a safety net) cut this scan: unlike the slice and work budgets it depends " \
           "on this machine's speed and load" in r.stderr and "Complete up to" in r.stderr


def test_progress_reports_every_stage_with_plain_values():
    seen = []
    df = wide(n=3000, attrs=12)
    scan(df, outcome="o", min_support=0.002, max_slices=200_000, progress=seen.append)
    stages = [s["stage"] for s in seen]
    assert stages[0] == "discretizing" and stages[-1] == "done"
    assert "mining" in stages and "statistics" in stages
    assert stages.index("statistics") > max(i for i, s in enumerate(stages) if s == "mining")
    for info in seen:
        # the statistics' steps add what they are doing and of how many (Progress allows a step's own keys)
        assert set(info) == {"stage", "slices", "length", "fraction"} | ({"step", "steps"} if "step" in info else set()) \
            | ({"step_fraction"} if "step_fraction" in info else set())
        assert isinstance(info["slices"], int)
        assert info["fraction"] is None or 0.0 <= info["fraction"] <= 1.0
        assert pickle.loads(pickle.dumps(info)) == info  # forwarded through a queue by the app
    # slices mined so far grow while one length limit is mined (a budget past it starts shorter ones)
    for length in {s["length"] for s in seen if s["stage"] == "mining"}:
        mining = [s["slices"] for s in seen[:-3] if s["stage"] == "mining" and s["length"] == length]
        assert mining == sorted(mining)


def test_progress_during_a_long_mining_run():
    """At least every ~0.5 s of mining work: a run of several seconds reports many times."""
    seen = []
    df = wide(n=4000, attrs=24, seed=9)
    mine_codes = np.column_stack([pd.factorize(df[c])[0] for c in df.columns[:-1]]).astype(np.int32)
    mine(mine_codes, np.ones((len(df), 1)), np.full(24, 4), min_support=0.0005, time_limit=3.0,
         max_slices=10**8, progress=seen.append)
    assert len(seen) >= 4


@pytest.mark.parametrize("kwargs, message", [
    (dict(max_slices=0), "max_slices must be a positive integer; got 0"),
    (dict(max_slices=2.5), "max_slices must be a positive integer; got 2.5"),
    (dict(time_limit=0), r"time_limit must be a positive number of seconds \(or None\); got 0"),
    (dict(time_limit="soon"), "time_limit must be a positive number"),
])
def test_bad_budgets(kwargs, message):
    with pytest.raises(DivergenceInputError, match=message):
        scan(wide(n=50, attrs=2), outcome="o", **kwargs)

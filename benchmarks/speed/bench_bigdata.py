"""Tables bigger than memory: DuckDB (and Spark local) do the heavy step, the miner the rest.
Prints a table (engine, rows, distinct rows, itemsets, seconds, peak MiB).

    python benchmarks/speed/bench_bigdata.py                      # 1e7 and 1e8 rows, duckdb and spark
    python benchmarks/speed/bench_bigdata.py --rows 1e7 --engines duckdb pandas
    python benchmarks/speed/bench_bigdata.py --memory-limit 1GB --threads 2

The synthetic Parquet files are generated once under benchmarks/data/ (git-ignored; about
1.1 GB for 1e8 rows), in row groups, never whole in memory. Each scan runs in a fresh
process; "peak MiB" is the largest resident memory of that process and its children (the
JVM for Spark), sampled every 0.1 s. "seconds" is the scan call (for Spark, after the
session has started; the start is in "note"). DuckDB runs with the given memory limit and
thread count and spills to a temporary folder beyond it.

Measured here (2 cores shared with other work; support 0.01, fpr/fnr/error):

engine           rows  distinct rows  itemsets   seconds  peak MiB  note
duckdb     10,000,000         22,997     2,153      10.4       436  memory_limit 2GB, 2 threads
pandas     10,000,000         22,997     2,153       9.8     1,987  in memory
spark      10,000,000         22,997     2,153      90.2     1,608  local[2], session start 7 s, approximate quantiles
duckdb    100,000,000         23,040     2,151      42.9       367  memory_limit 2GB, 2 threads, approximate quantiles
spark     100,000,000         23,040     2,151     746.9     1,965  local[2], session start 13 s, approximate quantiles
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
runpy.run_path(str(ROOT / "benchmarks" / "tools" / "checkout.py"))["use_checkout"](ROOT, __name__)  # this checkout's divergence
DATA = ROOT / "benchmarks" / "data"
ROLES = dict(target="y", prediction="pred", positive=1, metrics=["fpr", "fnr", "error"], min_support=0.01)
CHUNK = 5_000_000


def generate(path: Path, rows: int, seed: int = 0) -> None:
    """Synthetic evaluation table: 2 continuous, 1 integer and 4 text/boolean attributes, a
    label and a prediction with planted slices (written row group by row group)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    regions = np.array(["north", "south", "east", "west", "centre", "islands", "coast", "alps"])
    devices = np.array(["phone", "tablet", "desktop", "tv"])
    plans = np.array(["free", "basic", "premium"])
    tmp = path.with_suffix(".tmp")
    writer = None
    for start in range(0, rows, CHUNK):
        n = min(CHUNK, rows - start)
        age = rng.normal(42, 13, n).round(1)
        age[rng.random(n) < 0.02] = np.nan
        income = np.exp(rng.normal(10.3, 0.6, n)).round(2)
        region = rng.integers(0, len(regions), n)
        device = rng.choice(len(devices), n, p=[0.5, 0.2, 0.25, 0.05])
        plan = rng.choice(len(plans), n, p=[0.5, 0.35, 0.15])
        tenure = rng.integers(0, 10, n)
        member = rng.random(n) < 0.3
        logit = -0.8 + 0.02 * (np.nan_to_num(age, nan=42) - 42) + 0.5 * (plan == 2) - 0.4 * member
        y = rng.random(n) < 1 / (1 + np.exp(-logit))
        err = np.where((region == 5) & (device == 3), 0.35, 0.12) + 0.1 * (tenure == 0)
        pred = y ^ (rng.random(n) < err)
        table = pa.table({
            "age": age, "income": income,
            "region": pa.DictionaryArray.from_arrays(pa.array(region, pa.int32()), pa.array(regions)),
            "device": pa.DictionaryArray.from_arrays(pa.array(device, pa.int32()), pa.array(devices)),
            "plan": pa.DictionaryArray.from_arrays(pa.array(plan, pa.int32()), pa.array(plans)),
            "tenure": tenure.astype(np.int16), "member": member,
            "y": y.astype(np.int8), "pred": pred.astype(np.int8),
        })
        if writer is None:
            writer = pq.ParquetWriter(tmp, table.schema, compression="zstd")
        writer.write_table(table, row_group_size=1_000_000)
    writer.close()
    tmp.rename(path)


CHILD = r'''
import json, sys, time, warnings
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
out = {{}}
if spec["engine"] == "duckdb":
    from divergence import scan_duckdb
    t = time.perf_counter()
    table = scan_duckdb(spec["path"], memory_limit=spec["memory_limit"], threads=spec["threads"], **spec["roles"])
    out["seconds"] = time.perf_counter() - t
elif spec["engine"] == "spark":
    from divergence.engines.spark_engine import scan_spark, spark_session
    t = time.perf_counter()
    spark = spark_session("local[{{}}]".format(spec["threads"]), config={{"spark.driver.memory": spec["spark_memory"]}})
    out["start"] = time.perf_counter() - t
    t = time.perf_counter()
    table = scan_spark(spark.read.parquet(spec["path"]), **spec["roles"])
    out["seconds"] = time.perf_counter() - t
    spark.stop()
else:
    import pandas as pd
    from divergence import scan
    t = time.perf_counter()
    table = scan(pd.read_parquet(spec["path"]), **spec["roles"])
    out["seconds"] = time.perf_counter() - t
out["itemsets"] = len(table) - 1
out["approx"] = any("approximate" in n for n in table.notes)
out["fpr_top"] = float(table.frame["fpr"].iloc[1:].max())
print("RESULT " + json.dumps(out))
'''


def _tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants, from /proc."""
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack += [int(c) for c in fh.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def run(spec: dict) -> dict:
    # run in the checkout: `python -c` imports its divergence first
    proc = subprocess.Popen([sys.executable, "-c", CHILD.format(), json.dumps(spec)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_kib(proc.pid))
        time.sleep(0.1)
    out, err = proc.communicate()
    if "RESULT " not in out:
        raise SystemExit(f"{spec['engine']} on {spec['path']} failed:\n{err[-3000:]}")
    result = json.loads(out[out.rindex("RESULT ") + 7:].splitlines()[0])
    result["peak_mib"] = peak / 1024
    return result


def distinct_rows(path: Path, threads: int, memory_limit: str) -> int:
    """Distinct discretized rows, as the engine groups them (same bins as the scan)."""
    import duckdb

    from divergence import scan_duckdb
    from divergence.engines.sql import DUCKDB, Column

    table = scan_duckdb(str(path), memory_limit=memory_limit, threads=threads, **{**ROLES, "min_support": 1.0})
    con = duckdb.connect(config={"memory_limit": memory_limit, "threads": threads})
    con.execute("SET disabled_optimizers = 'statistics_propagation,filter_pushdown'")  # NaN: see duckdb_engine
    keys = []
    for b in table.bins:
        c = DUCKDB.ident(b.name)
        if b.kind == "categorical":
            keys.append(c)
        else:
            keys.append(DUCKDB.bin_code(DUCKDB.number(Column(b.name, "float", "DOUBLE")), b.edges, b.missing_code))
    sql = f"SELECT COUNT(*) FROM (SELECT {', '.join(keys)} FROM read_parquet('{path}') GROUP BY ALL)"
    return int(con.execute(sql).fetchall()[0][0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", nargs="+", default=["1e7", "1e8"])
    ap.add_argument("--engines", nargs="+", default=["duckdb", "spark"], choices=["duckdb", "spark", "pandas"])
    ap.add_argument("--memory-limit", default="2GB", help="DuckDB memory limit (default 2GB)")
    ap.add_argument("--spark-memory", default="4g", help="Spark driver memory (default 4g)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    rows_out = []
    for text in args.rows:
        n = int(float(text))
        path = DATA / f"synthetic_{text}.parquet"
        if not path.exists():
            t = time.perf_counter()
            generate(path, n)
            print(f"generated {path} ({path.stat().st_size / 2**20:,.0f} MiB) in {time.perf_counter() - t:.0f} s",
                  file=sys.stderr)
        distinct = distinct_rows(path, args.threads, args.memory_limit)
        for engine in args.engines:
            spec = dict(engine=engine, path=str(path), roles=ROLES, memory_limit=args.memory_limit,
                        threads=args.threads, spark_memory=args.spark_memory)
            r = run(spec)
            note = {"duckdb": f"memory_limit {args.memory_limit}, {args.threads} threads",
                    "spark": f"local[{args.threads}], session start {r.get('start', 0):.0f} s",
                    "pandas": "in memory"}[engine]
            if r["approx"]:
                note += ", approximate quantiles"
            rows_out.append((engine, n, distinct, r["itemsets"], r["seconds"], r["peak_mib"], note))
            print(f"  {engine} {n:.0e}: {r['seconds']:.1f} s, {r['peak_mib']:,.0f} MiB, top fpr {r['fpr_top']:.6f}",
                  file=sys.stderr)
    head = f"{'engine':<8}{'rows':>13}{'distinct rows':>15}{'itemsets':>10}{'seconds':>10}{'peak MiB':>10}  note"
    print(head)
    print("-" * len(head))
    for engine, n, distinct, itemsets, seconds, peak, note in rows_out:
        print(f"{engine:<8}{n:>13,}{distinct:>15,}{itemsets:>10,}{seconds:>10.1f}{peak:>10,.0f}  {note}")


if __name__ == "__main__":
    main()

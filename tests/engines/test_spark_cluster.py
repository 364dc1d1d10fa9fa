"""A real Spark cluster (issue 31 point 3): a standalone master and two workers on this machine
(loopback only, free ports, stopped at the end), a partitioned Parquet table of 10^6 rows scanned
through ``scan_spark`` against ``spark://127.0.0.1:PORT``, and the pandas table: counts exact, sums
to 1e-9 of their scale (the executors add in another order).

The scan runs in a process of its own: one process holds one Spark driver, and the other Spark tests
keep a local one. Skipped with the reason without pyspark or Java.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import ROOT
from engine_cases import CASES, assert_same_table, pandas_reference, synthetic

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -r requirements-spark.txt)")
if shutil.which("java") is None:
    pytest.skip("no java on PATH: Spark needs Java 17 or later", allow_module_level=True)

ROWS = 1_000_000
WORKERS = 2

#: the scan, in its own driver process: argv = master URL, Parquet folder, keywords (JSON), output pickle
DRIVER = """
import json, pickle, sys, warnings
warnings.simplefilter("ignore", FutureWarning)
from divergence import scan_spark
from divergence.engines.spark_engine import read_spark, spark_session
master, folder, kw, out = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
spark = spark_session(master, config={"spark.executor.memory": "1g", "spark.executor.cores": "1",
                                      "spark.cores.max": "2", "spark.sql.shuffle.partitions": "4"})
table = scan_spark(read_spark(folder, spark=spark), spark=spark, quantiles="exact", **kw)
executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # less the driver; after the work
pickle.dump({"table": table, "executors": executors, "master": spark.sparkContext.master}, open(out, "wb"))
spark.stop()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master and two one-core workers on 127.0.0.1; the master's URL."""
    home = os.path.dirname(pyspark.__file__)
    logs = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "SPARK_HOME": home, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    spark_class = os.path.join(home, "bin", "spark-class")
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = [subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env, start_new_session=True,
                              stdout=open(logs / "master.log", "w"), stderr=subprocess.STDOUT)]
    procs += [subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                "--webui-port", str(_free_port()), "--cores", "1", "--memory", "1536m",
                                "--work-dir", str(logs / f"work{i}"), url], env=env, start_new_session=True,
                               stdout=open(logs / f"worker{i}.log", "w"), stderr=subprocess.STDOUT)
              for i in range(WORKERS)]
    try:
        deadline = time.monotonic() + 240
        alive = 0
        while time.monotonic() < deadline and alive < WORKERS:
            try:
                state = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2).read())
                alive = sum(w.get("state") == "ALIVE" for w in state.get("workers", []))
            except OSError:
                pass
            time.sleep(0.5)
        if alive < WORKERS:
            pytest.fail(f"the standalone cluster did not start {WORKERS} workers; see {logs}")
        yield url, logs
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def test_a_standalone_cluster_gives_the_pandas_table(cluster, tmp_path):
    url, logs = cluster
    import pyarrow as pa
    import pyarrow.parquet as pq

    df = synthetic(ROWS, seed=4)
    folder = tmp_path / "table.parquet"
    folder.mkdir()
    parts = 8
    for i in range(parts):  # eight files, each its own row groups: the executors split the reading
        chunk = df.iloc[i * ROWS // parts:(i + 1) * ROWS // parts]
        pq.write_table(pa.Table.from_pandas(chunk, preserve_index=False), folder / f"part-{i}.parquet",
                       row_group_size=50_000)
    kw = {**CASES["labels"], "min_support": 0.01}
    out = tmp_path / "table.pickle"
    proc = subprocess.run([sys.executable, "-c", DRIVER, url, str(folder), json.dumps(kw), str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = pickle.load(open(out, "rb"))
    assert result["master"] == url and result["executors"] == WORKERS
    got = result["table"]
    _, want = pandas_reference(df, **kw)
    assert len(got) > 100
    assert_same_table(got, want, rtol=1e-9)

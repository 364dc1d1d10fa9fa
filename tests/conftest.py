"""Shared fixtures: the public datasets in ../shared/data (skipped with a reason when absent)."""
from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("DIVERGENCE_DATA", ROOT.parent / "shared" / "data"))


def data_file(name: str) -> Path:
    """Path of a shared dataset, or skip the test saying why."""
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"{name} not found in {DATA_DIR} (the shared datasets are not part of a fresh clone)")
    return path


@pytest.fixture(scope="session")
def compas() -> pd.DataFrame:
    return pd.read_csv(data_file("compas_discretized.csv"))


@pytest.fixture(scope="session")
def adult() -> pd.DataFrame:
    return pd.read_csv(data_file("adult_discretized.csv"))


#: the nested columns of :func:`nested_parquet` (a list, a struct, bytes, a map)
NESTED = ["lst", "st", "bin", "mp"]


@pytest.fixture(scope="session")
def nested_parquet(tmp_path_factory) -> Path:
    """A Parquet file of 300 rows with a label, a prediction, one plain attribute and the
    :data:`NESTED` columns no one slices by."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 300
    rng = np.random.default_rng(0)
    t = pa.table({"label": rng.integers(0, 2, n), "predicted": rng.integers(0, 2, n), "a": [f"v{i % 3}" for i in range(n)],
                  "lst": [[i % 3, 1] for i in range(n)], "st": [{"k": i % 2, "s": "x"} for i in range(n)],
                  "bin": [bytes([i % 4]) for i in range(n)],
                  "mp": pa.array([[("a", i % 2)] for i in range(n)], type=pa.map_(pa.string(), pa.int64()))})
    path = tmp_path_factory.mktemp("nested") / "nested.parquet"
    pq.write_table(t, path)
    return path



def random_shape(draw, max_rows: int, max_attributes: int, min_rows: int = 1):
    """For a hypothesis strategy: a row count, an attribute count and a seeded generator."""
    from hypothesis import strategies as st

    n = draw(st.integers(min_rows, max_rows))
    n_attr = draw(st.integers(1, max_attributes))
    return n, n_attr, np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


def engine_cli_tables(main, args: list[str], engine_args: list[str], tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The command line's scan table in memory and with ``engine_args`` (DuckDB, Spark), each
    written to CSV and read back, checked to list the same slices with the same row counts."""
    assert main(args + ["--output", str(tmp_path / "pandas.csv")]) == 0
    assert main(args + engine_args + ["--output", str(tmp_path / "engine.csv")]) == 0
    a, b = pd.read_csv(tmp_path / "pandas.csv"), pd.read_csv(tmp_path / "engine.csv")
    assert list(a["itemset"].fillna("")) == list(b["itemset"].fillna(""))
    np.testing.assert_array_equal(a["count"], b["count"])
    return a, b

def itemset_masks(codes: np.ndarray, n_values, min_count: int, max_length: int | None = None, *,
                  shortest: int = 1):
    """The one brute-force enumerator of the tests: every itemset of ``shortest`` to
    ``max_length`` items with at least ``min_count`` rows, by boolean masks, as (code tuple, mask)."""
    n, a = codes.shape
    max_length = a if max_length is None else max_length
    for length in range(shortest, max_length + 1):
        for attrs in itertools.combinations(range(a), length):
            for values in itertools.product(*[range(n_values[j]) for j in attrs]):
                mask = np.ones(n, dtype=bool)
                for j, v in zip(attrs, values):
                    mask &= codes[:, j] == v
                if mask.sum() >= min_count:
                    key = [-1] * a
                    for j, v in zip(attrs, values):
                        key[j] = v
                    yield tuple(key), mask


def brute_force(codes: np.ndarray, weights: np.ndarray, n_values, min_count: int,
                max_length: int | None = None) -> dict:
    """Every itemset with count >= min_count, tallies by boolean masks: {code tuple: tallies}."""
    out = {tuple([-1] * codes.shape[1]): weights.sum(axis=0)}
    out.update({key: weights[mask].sum(axis=0) for key, mask in itemset_masks(codes, n_values, min_count, max_length)})
    return out


# ----------------------------------------------------------------------------- fast and slow

#: what `make test-fast` leaves out (``-m "not slow and not e2e"``; `make test` runs everything):
#: a test file (every test in it) or one test (``file::name``, parameters included), each with why.
#: Measured: a test that takes more than about three seconds on an idle 2-core machine is slow.
SLOW = {
    "engines/test_spark_engine.py": "Spark: a JVM per session, tens of seconds a test",
    "engines/test_spark_cluster.py": "a standalone Spark cluster of two workers and 10^6 rows",
    "kernels/test_aot.py": "the compiled kernels: builds, fresh processes and the JIT",
    "stats/test_findings_sim.py": "simulation",
    "stats/test_verdicts_sim.py": "simulation",
    "comparison/test_compare_sim.py": "simulation",
    "test_real_data.py": "real data: Adult and COMPAS against the peers",
    "test_raw_tables.py": "real data: raw files with every column",
    "mining/test_deterministic_budget.py": "subprocesses under load",
    "cli/test_output_safety.py": "subprocesses and signals",
    "data/test_hostile_files.py": "subprocesses reading hostile files",
    "app/test_serving.py": "a Streamlit server per test",
    "test_notebook.py": "a Jupyter kernel runs the example notebook",
    "test_lint.py": "ruff and mypy over the repository",
    "prepare/test_model_outputs.py": "scikit-learn models fitted on Adult",
    "app/test_worker_pool.py": "worker processes",
    "app/test_scan_worker.py": "worker processes",
    "app/test_safety_pages.py": "AppTest pages with workers and files",
    "app/test_app_raw_tables.py": "AppTest pages on real data",
    "app/test_app_screen.py": "AppTest pages on real data",
    "app/test_app_every_way_in.py": "AppTest pages on real data",
    "data/test_every_way_in.py::test_fitted_model_on_raw_compas_slices_by_no_other_model_nor_copy":
        "real data: raw COMPAS and a fitted model",
    "prepare/test_score_threshold.py::test_command_line_refuses_in_one_line_and_notes_the_default":
        "two command-line processes",
    "app/test_large_data.py": "AppTest pages with DuckDB",
    "app/test_pages.py": "AppTest: every page run, seconds each",
    "app/test_slices_page.py": "AppTest: every page run, seconds each",
    "app/test_compare_pages.py": "AppTest: every page run, seconds each",
    "app/test_metric_markup_pages.py": "AppTest: an upload, a scan and three pages",
    "engines/test_rules.py::test_classification_rules_from_a_score_same_in_pandas_and_sql": "pandas and SQL twice",
    "engines/test_rules.py::test_classification_rules_same_in_pandas_and_sql": "pandas and SQL twice",
    "prepare/test_cutpoints.py::test_where_the_data_lies_the_cuts_are_chosen_once_and_the_rest_measured": "Spark",
    "prepare/test_queries.py::test_metrics_per_slice_equal_brute_force": "brute force over every slice",
    "stats/test_assess.py::test_bootstrap_covers_at_about_the_nominal_rate": "simulation",
    "stats/test_assess.py::test_null_data_false_findings_stay_within_the_promised_rate": "simulation",
    "stats/test_stats.py::test_fisher_matches_scipy_on_random_tables": "thousands of random tables",
    "mining/test_budget.py::test_pathological_request_in_a_subprocess_ends": "a subprocess on a pathological request",
    "mining/test_budget.py::test_progress_reports_every_stage_with_plain_values": "a scan of 200,000 slices",
    "report/test_report.py::test_report_cli_on_compas_with_previous_cycle": "real data, two cycles",
    "app/test_state.py": "AppTest: every page run, seconds each",
    "present/test_csv_formulas.py::test_the_command_line_writes_no_formula_cell": "a command-line process per case",
    "engines/test_duckdb_engine.py::test_compas_raw_csv_numeric_columns": "real data through DuckDB",
    "data/test_screen_rules.py::test_raw_compas_with_roles_only": "real data: raw COMPAS",
    "cli/test_summary.py::test_raw_compas_summary_fits_in_120_columns_and_says_what_pandas_says": "real data: raw COMPAS",
    "cli/test_summary.py::test_law_data_summary_fits_in_120_columns_and_says_what_pandas_says": "real data: law_data",
    "prepare/test_multiclass.py::test_command_line_metric_names_a_class": "two command-line processes",
    "app/test_multiclass_page.py": "AppTest: upload, three pages and a scan",
    "app/test_evaluate_panel.py": "AppTest: the app, and a second scan",
    "stats/test_evaluate.py::test_command_line_evaluate": "two scans from the command line",
    "mining/test_mining.py::test_itemsets_and_supports_equal_mlxtend_fpgrowth": "mlxtend's FP-growth as the reference",
    "engines/test_rules.py::test_regression_rules_same_in_pandas_and_sql": "pandas and SQL twice",
    "comparison/test_compare.py::test_rates_and_change_equal_brute_force": "brute force over every slice",
    "comparison/test_compare.py::test_regression_change_equals_brute_force": "brute force over every slice",
    "data/test_nested_columns.py::test_the_command_line_says_so_and_scans": "a command-line process",
    "mining/test_budget.py::test_progress_during_a_long_mining_run": "a long mining run",
    "present/test_views.py::test_slice_view_on_100k_slices_returns_top_n": "100,000 slices",
    "present/test_export_network.py": "a PNG export in a process of its own under strace (Chromium)",
    "kernels/test_concurrent_builds.py": "three real kernel builds at once (about a minute)",
    "cli/test_explain_cli.py::test_compas_explain_from_the_command_line": "real data: COMPAS",
    "data/test_personal.py::test_the_export_from_the_command_line_and_duckdb": "a 25,000-row table, CLI and DuckDB",
    "data/test_personal.py::test_the_export_slices_by_no_personal_identifier_from_python": "a 25,000-row table scanned",
    "data/test_personal.py::test_the_real_tables_lose_no_attribute": "real data: five tables screened",
    "stats/test_error_rates.py::test_noisier_labels_are_a_hard_cohort_and_random_flips_a_defect": "simulation",
}

#: kept in `make test-fast` although their file is slow: one dashboard smoke run (the first page on
#: the built-in data, with its finding) and one compiled-kernel check (a command-line job runs on
#: the ahead-of-time build, never importing numba), each a second or two
FAST_ANYWAY = {
    "app/test_pages.py::test_opens_on_the_built_in_data_with_a_finding",
    "kernels/test_aot.py::test_command_line_never_imports_numba",
}


#: `make test` runs on every core (pytest-xdist, ``-n auto --dist loadgroup``): these files, each of which
#: starts several processes of its own (JVMs, kernel builds, a Spark cluster), run one after the other on
#: one worker, never two at once on a 2-core machine
HEAVY = {
    "engines/test_spark_engine.py", "engines/test_spark_cluster.py", "kernels/test_aot.py",
    "kernels/test_concurrent_builds.py", "mining/test_deterministic_budget.py",
}


def xdist_group(path: str) -> str | None:
    """The worker group of a test file under ``--dist loadgroup``: "heavy" for :data:`HEAVY`; the file
    itself for a browser test and every other file :data:`SLOW` names whole (their servers and page runs
    are module fixtures, started once on one worker, not once on each); None (any worker) otherwise."""
    if path in HEAVY:
        return "heavy"
    if path.startswith("e2e/") or path in SLOW:
        return path
    return None


def pytest_collection_modifyitems(config, items):
    """Mark :data:`SLOW` tests ``slow`` (and the browser tests ``e2e``, by their folder), and put each in
    its :func:`xdist_group`."""
    here = Path(__file__).parent
    for item in items:
        path = Path(str(item.fspath)).resolve().relative_to(here).as_posix()
        name = item.name.split("[")[0]
        if (path in SLOW or f"{path}::{name}" in SLOW) and f"{path}::{name}" not in FAST_ANYWAY:
            item.add_marker(pytest.mark.slow)
        if path.startswith("e2e/"):
            item.add_marker(pytest.mark.e2e)
        group = xdist_group(path)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _own_temporary_folder(tmp_path_factory, monkeypatch):
    """Each test's temporary files (and its child processes', through TMPDIR) go in a folder of its own,
    so that no test sees another's, whichever worker runs it, in whatever order, or another checkout's."""
    import multiprocessing.util

    multiprocessing.util.get_temp_dir()  # the process's own (its fork server's socket), made once where it lasts
    folder = tmp_path_factory.mktemp("tmp")
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test leaves a screenshot of each page it had open, and puts the page's words
    in the failure report (CI keeps only the printed output: a timeout then says what was on screen)."""
    outcome = yield
    report = outcome.get_result()
    browser = getattr(item, "funcargs", {}).get("browser")
    if report.when != "call" or not report.failed or browser is None or not hasattr(browser, "contexts"):
        return
    from test_browser import ARTIFACTS

    for c, context in enumerate(browser.contexts):
        for p, page in enumerate(context.pages):
            try:
                shot = ARTIFACTS / f"failed_{item.name}_{c}_{p}.png"
                page.screenshot(path=shot, full_page=True, timeout=15_000)
                script = page.evaluate("() => document.querySelector('[data-testid=stApp]')"
                                       "?.getAttribute('data-test-script-state')")
                words = page.locator('[data-testid="stMain"]').inner_text(timeout=15_000)
            except Exception as exc:  # the page may be gone with the failure: say so, never mask it
                report.sections.append((f"page {c}.{p} at the failure", f"not readable: {exc}"))
                continue
            report.sections.append((f"page {c}.{p} at the failure ({page.url}, script {script}; {shot})",
                                    words[:3000]))

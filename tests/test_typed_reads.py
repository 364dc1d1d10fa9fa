"""Typed reads (issue 46 point 2): outside the table and its CSV/export view, a metric's statistics
are read through :class:`~divergence.table.MetricStatistics` (or a comparison's
:class:`~divergence.comparison.change_statistics.ChangeStatistics`), not by gluing a metric's name
to a column suffix. The count of such string reads is capped where they were many, and the
comparison builds none."""
from __future__ import annotations

import numpy as np
import pytest
from typed_reads import CAPPED, count_reads, reads_in

#: the cap on ``f"{m}_…"``-style reads in present/, report/, explain/, cli/, ui/ and pages/ together
CAP = 60


def test_the_counter_finds_each_spelling_of_a_column_read():
    source = '''
a = f"{m}_divergence"
b = f"{info.name}_{suffix}"
c = metric + "_order"
d = row[f'{name}_ci_low'], row[f'{name}_ci_high']
e = f"{m} rows"            # text, not a column
g = "_q" + m               # a suffix first is no column of m
h = f"{a}__{b}"            # a double underscore is a dunder, not a suffix
'''
    assert reads_in(source) == [2, 3, 4, 5, 5]


def test_string_reads_of_the_table_are_capped():
    counts = count_reads(CAPPED)
    assert sum(counts.values()) <= CAP, (
        f"{sum(counts.values())} f\"{{m}}_…\" column reads in {', '.join(CAPPED)} (at most {CAP}): read the "
        f"table through table.statistics(metric) instead. Per file: {counts}")


def test_the_comparison_builds_no_column_name_outside_its_typed_statistics():
    counts = count_reads(["divergence/comparison"])
    assert counts == {"divergence/comparison/change_statistics.py": 1}, counts  # change_column, the one place


def test_metric_statistics_name_and_read_every_column(demo_table):
    stats = demo_table.statistics("fpr")
    assert stats.column("value") == "fpr" and stats.column("q") == "fpr_q"
    assert stats.column("replicated_value") == "fpr_replicated_value"
    for name, values in demo_table.columns.items():
        if name.startswith("fpr_"):
            key = name[len("fpr_"):]
            assert stats.column(key) == name
            np.testing.assert_array_equal(np.asarray(stats.get(key)), np.asarray(values))
    assert stats.get("no_such_statistic") is None


def test_change_statistics_are_the_comparisons_columns(demo_comparison):
    c = demo_comparison
    for m in c.metric_names:
        s = c.statistics(m)
        assert list(s.columns()) == [col for col in c.frame.columns if col == m or col.startswith(m + "_")]
        for name, values in s.columns().items():
            np.testing.assert_array_equal(np.asarray(values), np.asarray(c.table.columns[name]))
        assert set(s.details()) <= set(c.details) and s.count is c.details[s.column("count")]
        assert s.min_size is c.assessment.min_size[m]


@pytest.fixture(scope="module")
def demo_table():
    from divergence import scan
    from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_ROLES, load_demo

    return scan(load_demo(4000), attributes=DEMO_ATTRIBUTES, min_support=0.05, **DEMO_ROLES["classification"])


@pytest.fixture(scope="module")
def demo_comparison():
    from divergence import compare
    from divergence.data.datasets import DEMO_ATTRIBUTES, DEMO_COMPARE, load_demo_models

    return compare(load_demo_models(4000), attributes=DEMO_ATTRIBUTES, min_support=0.05,
                   **DEMO_COMPARE["classification"])

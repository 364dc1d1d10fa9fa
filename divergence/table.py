"""SliceTable: the result of a scan, one row per itemset, the whole dataset first."""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from .data.csv_writer import FORMULA_START, formula_safe, write_csv
from .errors import DivergenceInputError
from .hooks import view
from .prepare.discretize import AttributeBins
from .prepare.kept_rows import KeptRows
from .prepare.replication_rows import ReplicationRows
from .prepare.tallies import MetricInfo

__all__ = ["SliceTable", "Lattice", "MetricInfo", "MetricStatistics", "Assessment", "MinSize", "write_csv", "formula_safe", "FORMULA_START",
           "split_items", "find_metric", "metric_column"]


def find_metric(metrics: Sequence, name: str | None, where: str):
    """The metric called ``name`` among ``metrics`` (the first when None), else an error
    naming ``where`` it was looked for and what is there."""
    if name is None:
        return metrics[0]
    for m in metrics:
        if m.name == name:
            return m
    raise DivergenceInputError(f"Metric '{name}' is not in {where}; it has {', '.join(m.name for m in metrics)}.")


@dataclass(frozen=True)
class MinSize:
    """One metric's minimum size, derived from δ before any slice is looked at
    (:func:`divergence.stats.min_size.min_size_derivation`; the comparison's from the per-row change).

    ``n_min``: the rows from which the interval the table shows is narrower than δ (the method's
    minimum size); ``n_power``: the rows a δ divergence needs to be found at ``power`` among the
    ``tests`` corrected together (None: more than the data has). ``text`` and ``power_text`` say how
    each was found, in the words every surface shows."""

    delta: float
    confidence: float
    n_min: int
    n_power: int | None
    text: str
    power_text: str
    #: the spread the sizes were derived from (the outcome's, or the per-row change's)
    sigma: float
    power: float
    #: the p-value a test must reach, alpha over the tests corrected together
    bar: float
    tests: int
    #: rows where the metric is defined over the whole dataset
    n_total: int
    correction: str | None = None
    #: the value at which the interval is widest (the whole dataset's shifted by δ), where derived
    width_at: float | None = None
    #: the normal approximation of n_min
    closed_form: float | None = None
    #: n_power at each side ("above", "below"), where derived per side
    sides: Mapping[str, int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Assessment:
    """How a scan's table was assessed (:func:`divergence.assess`): its settings, the family of
    tests the q-values were corrected over, each metric's minimum size, the replication and where
    the search for distinct findings stopped."""

    confidence: float
    correction: str
    #: bootstrap replicates asked for (0: none), their seed and how many top slices got them
    bootstrap: int
    seed: int
    top_k: int | None
    #: slices tested per metric (those with a p-value)
    n_tested: Mapping[str, int]
    min_size: Mapping[str, MinSize]
    #: "scan": every slice of every metric corrected together; "metric": each metric on its own
    family: str
    #: per metric, the tests its q-values were corrected over
    family_size: Mapping[str, int]
    corrected_level: Mapping[str, float]
    #: False for a scan from a pre-registered slice plan
    exploratory: bool
    #: the words naming the rows every slice was measured again on (None: no replication)
    replication: str | None
    replication_rows: int | None
    #: bootstrap asked for but not computed (no rows kept)
    bootstrap_skipped: bool
    #: "analytic", or "analytic and bootstrap"
    intervals: str
    #: what the verdicts' reference models were fitted on: "rows", or "tallies" when no rows were kept
    verdicts_from: str
    #: per metric whose search for distinct findings its work budget stopped, the sentence saying so
    #: (absent: the search finished)
    findings_cut: Mapping[str, str] = field(default_factory=dict)


#: at most this many names are joined in Python by :meth:`SliceTable.itemsets_of` (a scan's findings
#: and their ties); more are taken from the Arrow column of every name, built once
FEW_NAMES = 4096

#: a metric's statistics that every assessed table has, each a named field of MetricStatistics
#: (the column ``M_<suffix>``; '' is the metric itself)
_NAMED = {"value": "", "count": "count", "divergence": "divergence", "t": "t", "p": "p", "q": "q",
          "ci_low": "ci_low", "ci_high": "ci_high", "divergence_ci_low": "divergence_ci_low",
          "divergence_ci_high": "divergence_ci_high", "divergence_shrunk": "divergence_shrunk",
          "divergence_bound": "divergence_bound", "meets_min_size": "meets_min_size", "verdict": "verdict",
          "finding": "finding", "explained_by": "explained_by", "order": "order"}


def metric_column(metric: str, key: str) -> str:
    """The table's column holding a metric's statistic ``key`` (a field of :class:`MetricStatistics` or
    a column's suffix; ``"value"`` is the metric itself): ``metric_column("fpr", "q")`` is ``fpr_q``."""
    suffix = _NAMED.get(key, key)
    return metric if suffix == "" else f"{metric}_{suffix}"


@dataclass(frozen=True)
class MetricStatistics:
    """One metric's statistics for every slice, typed (in the manner of fairlearn's ``MetricFrame``):
    position i is the table's slice i, the whole dataset first. A mined table (before
    :func:`divergence.assess`) has the value, count, divergence, t and p (a table built only to
    explain an outcome, as ``Comparison.change_table``, the value and divergence); the others are None there. Every other column of
    the metric (baselines, lift, replication, bootstrap) is in ``other``, by its suffix;
    :attr:`frame` is the same as a DataFrame."""

    name: str
    info: MetricInfo
    itemsets: np.ndarray
    value: np.ndarray
    divergence: np.ndarray
    count: np.ndarray | None = None
    t: np.ndarray | None = None
    p: np.ndarray | None = None
    q: np.ndarray | None = None
    ci_low: np.ndarray | None = None
    ci_high: np.ndarray | None = None
    divergence_ci_low: np.ndarray | None = None
    divergence_ci_high: np.ndarray | None = None
    divergence_shrunk: np.ndarray | None = None
    divergence_bound: np.ndarray | None = None
    meets_min_size: np.ndarray | None = None
    verdict: np.ndarray | None = None
    finding: np.ndarray | None = None
    explained_by: np.ndarray | None = None
    order: np.ndarray | None = None
    #: the metric's minimum size: n_min, n_power, δ and the sentences deriving them
    min_size: MinSize | None = None
    other: dict = field(default_factory=dict)

    @property
    def n_min(self) -> int | None:
        """The minimum slice size: the defined rows from which the slice's interval is narrower than δ."""
        return self.min_size.n_min if self.min_size is not None else None

    @property
    def n_power(self) -> int | None:
        """The defined rows at which a divergence of δ is found among the scan's tests at 80% power."""
        return self.min_size.n_power if self.min_size is not None else None

    @property
    def delta(self) -> float | None:
        return self.min_size.delta if self.min_size is not None else None

    @property
    def overall(self) -> float:
        """The whole dataset's value."""
        return float(self.value[0])

    def get(self, key: str) -> np.ndarray | None:
        """The statistic ``key`` of every slice: a named field (``"q"``, ``"verdict"``) or a column of
        :attr:`other` by its suffix (``"baseline"``, ``"replicated_value"``); None when the table has none."""
        return getattr(self, key) if key in _NAMED else self.other.get(key)

    def column(self, key: str) -> str:
        """The table's column holding ``key`` (a named field or a suffix; ``"value"`` is the metric
        itself): the name a sort key or an export names it by (``column("q")`` is ``fpr_q``)."""
        return metric_column(self.name, key)

    def at(self, column: str, index: int):
        """Slice ``index``'s value of the metric's ``column`` in :attr:`other` (its suffix, e.g.
        ``"replicated_divergence"``), or None when the table has no such column."""
        values = self.other.get(column)
        return None if values is None else values[index]

    @property
    def frame(self) -> pd.DataFrame:
        """These statistics as a DataFrame, one row per slice, indexed by the itemset."""
        data = {k: getattr(self, k) for k in _NAMED if getattr(self, k) is not None}
        data.update(self.other)
        return pd.DataFrame(data, index=pd.Index(self.itemsets, name="itemset"))

    def _repr_html_(self) -> str:
        return view("statistics_html")(self)

    @classmethod
    def of(cls, table: SliceTable, metric: str | None = None) -> MetricStatistics:
        """The statistics of ``metric`` (the first when None) in ``table``."""
        info = table.metric(metric)
        m, cols = info.name, table.columns
        key = {k: metric_column(m, k) for k in _NAMED}
        named = {k: cols[c] for k, c in key.items() if c in cols}
        taken = set(key.values())
        longer = [n for n in table.metric_names if n != m and n.startswith(m + "_")]  # "spend" and "spend_2"
        other = {c[len(m) + 1:]: v for c, v in cols.items() if c.startswith(m + "_") and c not in taken
                 and not any(c == n or c.startswith(n + "_") for n in longer)}
        size = table.assessment.min_size.get(m) if table.assessment is not None else None
        return cls(name=m, info=info, itemsets=table.itemsets, min_size=size, other=other, **named)


@dataclass(frozen=True, eq=False)
class Lattice:
    """The mined lattice beside a table's rows of itemsets: each itemset's parent, the distinct rows
    that were mined (the findings tally any set of rows from them; a table listing each distinct set
    of rows once finds an unlisted itemset's slice through them), and what the budget cut."""

    #: parent itemset of each row (the itemset without its last attribute's item)
    parent: np.ndarray | None = None
    #: unless exhaustive: the distinct rows that were mined (item codes, row counts) and two
    #: random numbers per distinct row, and each slice's fingerprint (the sums of its rows')
    groups: np.ndarray | None = None
    group_counts: np.ndarray | None = None
    group_fp: np.ndarray | None = None
    slice_fp: np.ndarray | None = None
    #: the distinct rows that were mined (item codes, -1 where none) with their tallies in the
    #: layout of the table's ``tallies``: any set of rows' tallies are sums of these (distinct
    #: findings tally a slice's rows inside and outside a finding from them); None when not kept
    distinct_codes: np.ndarray | None = None
    distinct_tallies: np.ndarray | None = None
    #: when the budget cut the scan: every slice up to this many items is listed (notes say so)
    complete_length: int | None = None
    #: what cut it: "slices" or "work" (counted: the same table on any machine and at any load),
    #: "time" (the time limit, a safety net: this table depends on the machine's speed and load)
    cut_by: str | None = None
    #: units of mining work the scan took (the miner's count of rows x attributes visited)
    work: int = 0


@dataclass(frozen=True, eq=False)
class SliceTable:
    """Every mined itemset with its support, row count and per-metric statistics.

    ``frame`` is a DataFrame with one row per itemset (row 0 is the whole dataset, the
    empty itemset) and the columns ``itemset``, ``length``, ``support``, ``count`` and,
    per metric M, ``M`` (mean outcome), ``M_count`` (defined rows), ``M_divergence``,
    ``M_t`` and ``M_p``. ``codes[i, a]`` is itemset i's item code on attribute a (-1:
    none), so any itemset's row is found fast with :meth:`lookup` or :meth:`index_of`.
    """

    codes: np.ndarray
    tallies: np.ndarray
    columns: dict
    attributes: tuple[str, ...]
    bins: tuple[AttributeBins, ...]
    metrics: tuple[MetricInfo, ...]
    n_rows: int
    #: as given: a share of the rows in (0, 1], or a row count above 1 (:attr:`min_count` is the bar in rows)
    min_support: float | int
    max_length: int | None
    engine: str
    notes: tuple[str, ...] = ()
    params: dict = field(default_factory=dict)
    #: every itemset above the support (True), or each distinct set of rows once, described
    #: by its shortest itemset (False): then an itemset with the same rows as a listed slice
    #: is found through :meth:`lookup`, and :meth:`implied_items` lists its other items
    exhaustive: bool = True
    #: how the itemsets hang together and what the miner did: parents, the rows mined, the budget's cut
    lattice: Lattice = field(default_factory=Lattice)
    #: the measured rows' item codes and outcomes (None when the rows were not kept, e.g. a scan
    #: of a table larger than memory); needed for bootstrap intervals and median baselines
    kept_rows: KeptRows | None = None
    #: the rows :func:`divergence.mine` keeps for :func:`divergence.assess` to measure every slice
    #: again on (a holdout's held-out rows, a split's confirming rows or the second table given)
    replication: ReplicationRows | None = None
    #: how the worst-slice statistics were computed (:func:`divergence.assess`): their settings, the
    #: family of tests, each metric's minimum size, the replication (None: not assessed)
    assessment: Assessment | None = None

    #: what is computed once from the itemsets and their bins alone (not from the columns)
    _OF_ITEMSETS = ("item_labels", "lengths", "itemsets", "_itemset_array", "_hash_index", "_fp_index")

    def with_columns(self, **changes) -> SliceTable:
        """This table with other columns, metrics, notes or parts (``dataclasses.replace``), keeping
        what was computed from its itemsets (their strings, lengths and lookup index: a table of
        10⁵ itemsets spends a second on them) when neither the itemsets nor their bins change."""
        if {"codes", "bins", "attributes", "lattice"} & set(changes):
            raise ValueError("with_columns keeps the itemsets: use dataclasses.replace to change them")
        out = dataclasses.replace(self, **changes)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k in self._OF_ITEMSETS})
        return out

    # ----- shape and basic accessors
    def __repr__(self) -> str:
        return view("table_text")(self)

    def _repr_html_(self) -> str:
        """The table in a notebook: per metric the whole dataset, the findings in words, the first
        rows of the default order with their verdicts, the notes."""
        return view("table_html")(self)

    @property
    def plot(self):
        """Figures of this table: ``plot.intervals(metric)``, ``plot.shapley(itemset, metric)``,
        ``plot.slices(metric)`` (Plotly figures, as the dashboard and the report draw them)."""
        return view("TablePlots")(self)

    def evaluate(self, metrics: dict, slices=None, bootstrap: int = 200, seed: int = 0) -> pd.DataFrame:
        """Any metric on each slice's own rows, MetricFrame-style, with a seeded bootstrap interval and its
        divergence, the whole dataset first (:func:`divergence.stats.evaluate.evaluate`)."""
        return view("evaluate")(self, metrics, slices=slices, bootstrap=bootstrap, seed=seed)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @property
    def min_count(self) -> int:
        """The fewest rows a mined slice holds (the support bar in rows)."""
        from .settings import min_count_for

        return min_count_for(self.min_support, self.n_rows)

    @property
    def support_kind(self) -> str:
        """How the support was given: ``"rows"`` (a row count) or ``"share"``."""
        return "rows" if self.min_support > 1 else "share"

    @property
    def support_text(self) -> str:
        """The support bar in words: ``109 rows (1.77% of 6,172)`` or ``0.02 (124 rows of 6,172)``."""
        from .settings import support_text

        return support_text(self.min_support, self.n_rows)

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def outcome(self, name: str | None = None):
        """The :class:`~divergence.prepare.outcomes.Outcome` (per-row values) of a metric, if kept."""
        if self.kept_rows is None or self.kept_rows.outcomes is None:
            raise DivergenceInputError("This result did not keep its rows (per-row outcomes).")
        return self.kept_rows.outcomes[self.metric_names.index(self.metric(name).name)]

    def rows_of(self, index: int) -> np.ndarray:
        """Boolean mask of the data rows in the slice at ``index`` (needs the kept rows)."""
        if self.kept_rows is None:
            raise DivergenceInputError("This result did not keep its rows (per-row item codes).")
        row_codes = self.kept_rows.codes
        mask = np.ones(row_codes.shape[0], dtype=bool)
        for a in np.nonzero(self.codes[index] >= 0)[0]:
            mask &= row_codes[:, a] == self.codes[index, a]
        return mask

    def metric(self, name: str | None = None) -> MetricInfo:
        """The metric called ``name`` (the first one when None)."""
        return find_metric(self.metrics, name, "this result")

    def statistics(self, metric: str | None = None) -> MetricStatistics:
        """One metric's statistics for every slice, typed (:class:`MetricStatistics`; the first metric
        when None): ``table.statistics("fpr").q`` is the q-value of every slice."""
        return MetricStatistics.of(self, metric)

    @property
    def by_metric(self) -> dict[str, MetricStatistics]:
        """Every metric's :class:`MetricStatistics`, by name."""
        return {m: MetricStatistics.of(self, m) for m in self.metric_names}

    def overall(self, metric: str | None = None) -> float:
        """The whole-dataset outcome of a metric."""
        return float(self.columns[self.metric(metric).name][0])

    def overall_interval(self, metric: str | None = None) -> tuple[float, float]:
        """The whole-dataset outcome's interval (after :func:`divergence.assess`)."""
        name = self.metric(metric).name
        if f"{name}_ci_low" not in self.columns:
            raise DivergenceInputError("This result has no intervals: run it through divergence.assess().")
        return float(self.columns[f"{name}_ci_low"][0]), float(self.columns[f"{name}_ci_high"][0])

    @property
    def n_tested(self) -> dict:
        """Slices tested per metric (those with a p-value), after :func:`divergence.assess`.
        Which tests the q-values were corrected over is :attr:`family`."""
        return dict(self.assessment.n_tested) if self.assessment is not None else {}

    @property
    def family(self) -> tuple[str, dict]:
        """How the q-values were corrected: ``("scan", {metric: tests})`` when every slice of
        every metric is one family (each metric's count is then the total), ``("metric", ...)``
        when each metric's slices were corrected on their own."""
        a = self.assessment
        if a is None:
            return ("", {})
        return (a.family, dict(a.family_size or a.n_tested))

    @cached_property
    def item_labels(self) -> list[list[str]]:
        """``item_labels[a][v]``: the readable item for code v of attribute a."""
        return [[b.item(v) for v in range(b.n_items)] for b in self.bins]

    @cached_property
    def lengths(self) -> np.ndarray:
        return (self.codes >= 0).sum(axis=1).astype(np.int64)

    @cached_property
    def itemsets(self) -> np.ndarray:
        """Readable itemset strings, ``attr=value, attr=value`` in attribute order."""
        return np.asarray(self._itemset_array.to_numpy(zero_copy_only=False), dtype=object)

    def itemsets_of(self, rows) -> list[str]:
        """The readable itemsets of ``rows`` (positions), from the Arrow column: a few names without
        :attr:`itemsets`' Python string for every row (10 MiB on Adult's 65,410 slices)."""
        import pyarrow as pa

        rows = np.asarray(rows, dtype=np.int64).ravel()
        if "itemsets" in self.__dict__ or rows.size == 0:
            return [str(x) for x in self.itemsets[rows]] if rows.size else []
        if "_itemset_array" in self.__dict__ or rows.size > FEW_NAMES:
            return self._itemset_array.take(pa.array(rows)).to_pylist()
        return self.itemset_names(self.codes[rows])  # a few (a scan's findings): no column of every name

    def itemset_names(self, codes: np.ndarray) -> list[str]:
        """The readable itemsets of rows of item codes (one per attribute, -1: no item on it), mined
        or not, joined one by one: for a few."""
        labels = self.item_labels
        return [", ".join(labels[a][v] for a, v in enumerate(c.tolist()) if v >= 0) for c in np.atleast_2d(codes)]

    @cached_property
    def _itemset_array(self):
        """:attr:`itemsets` as an Arrow string array (joined in C++: far faster than Python string
        building on 10^5+ itemsets, and written to CSV without a round trip through Python)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        n = len(self)
        if n == 0 or not self.attributes:
            return pa.array([""] * n, type=pa.string())
        # one column of item labels per attribute (null where the itemset has no item on it)
        columns = []
        for a, labels in enumerate(self.item_labels):
            codes = self.codes[:, a]
            present = codes >= 0
            taken = pa.array(labels, type=pa.string()).take(pa.array(np.where(present, codes, 0)))
            columns.append(pc.if_else(pa.array(present), taken, pa.scalar(None, pa.string())))
        # a leading empty column keeps rows without any item (pyarrow drops rows whose
        # every value is null under "skip"); its separator is then cut off
        lead = pa.array(np.full(n, "", dtype=object), type=pa.string())
        joined = pc.binary_join_element_wise(lead, *columns, ", ", null_handling="skip")
        return pc.utf8_slice_codeunits(joined, start=2)

    def _last_attribute(self) -> np.ndarray:
        present = self.codes >= 0
        idx = np.arange(self.codes.shape[1])
        return np.where(present, idx, -1).max(axis=1) if self.codes.shape[1] else np.full(len(self), -1)

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame (built on first use)."""
        data = {"itemset": self.itemsets, "length": self.lengths}
        data.update(self.columns)
        return pd.DataFrame(data)

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`frame`."""
        return self.frame.copy()

    def to_arrow(self):
        """:attr:`frame` as a ``pyarrow.Table`` (missing values as nulls), built from the arrays
        without a DataFrame: what :meth:`to_csv` writes."""
        import pyarrow as pa

        arrays = [self._itemset_array, pa.array(self.lengths)]
        arrays += [pa.array(np.asarray(v), from_pandas=True) for v in self.columns.values()]
        return pa.Table.from_arrays(arrays, names=["itemset", "length", *self.columns])

    # ----- lookup
    @cached_property
    def _hash_index(self):
        rng = np.random.default_rng(20240917)
        n_values = [b.n_items for b in self.bins]
        item_hash = [rng.integers(1, 2 ** 63 - 1, size=max(k, 1), dtype=np.int64).astype(np.uint64)
                     for k in n_values]
        h = self._hash_codes(self.codes, item_hash)
        order = np.argsort(h, kind="stable")
        sorted_h = h[order]
        return item_hash, sorted_h, order

    @staticmethod
    def _hash_codes(codes: np.ndarray, item_hash) -> np.ndarray:
        """The sum (wrapping) of each itemset's items' random numbers, from its items alone (an
        itemset has a few items among many attributes)."""
        h = np.zeros(codes.shape[0], dtype=np.uint64)
        rows, attrs = np.nonzero(codes >= 0)  # row by row
        if rows.size:
            offsets = np.concatenate([[0], np.cumsum([len(x) for x in item_hash])])
            flat = np.concatenate(item_hash)
            values = flat[offsets[attrs] + codes[rows, attrs]]
            starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
            with np.errstate(over="ignore"):
                h[rows[starts]] = np.add.reduceat(values, starts)
        return h

    def index_of(self, codes: np.ndarray) -> np.ndarray:
        """Row index of each itemset given as a code row (-1 for none), or -1 if not mined."""
        codes = np.atleast_2d(np.asarray(codes, dtype=np.int32))
        item_hash, sorted_h, order = self._hash_index
        h = self._hash_codes(codes, item_hash)
        pos = np.searchsorted(sorted_h, h)
        pos = np.minimum(pos, max(sorted_h.size - 1, 0))
        out = np.full(codes.shape[0], -1, dtype=np.int64)
        if sorted_h.size == 0:
            return out
        cand = order[pos]
        ok = (sorted_h[pos] == h) & np.all(self.codes[cand] == codes, axis=1)
        out[ok] = cand[ok]
        # a hash shared by several itemsets: check every candidate (collisions are never trusted)
        for k in np.nonzero(~ok & (sorted_h[pos] == h))[0]:
            j = pos[k]
            while j < sorted_h.size and sorted_h[j] == h[k]:
                r = order[j]
                if np.array_equal(self.codes[r], codes[k]):
                    out[k] = r
                    break
                j += 1
        return out

    def parse_itemset(self, itemset: str | Iterable[str]) -> np.ndarray:
        """Code row of an itemset written ``attr=value, attr=value`` (or a list of items)."""
        row = np.full(len(self.attributes), -1, dtype=np.int32)
        if isinstance(itemset, str):
            items = self._split_known(itemset) or split_items(itemset, self.attributes)
        else:
            items = [str(x).strip() for x in itemset]
        for item in items:
            attr, sep, value = item.partition("=")
            # attribute names may hold '=': take the longest known attribute prefix
            matches = [a for a in self.attributes if item.startswith(a + "=")]
            if not matches:
                raise DivergenceInputError(
                    f"Item {item!r} does not start with a known attribute "
                    f"({', '.join(self.attributes)})."
                )
            attr = max(matches, key=len)
            value = item[len(attr) + 1:].strip()
            a = self.attributes.index(attr)
            labels = self.bins[a].labels
            if value not in labels:
                raise DivergenceInputError(
                    f"'{value}' is not an item of '{attr}'; its items are {', '.join(labels)}."
                )
            if row[a] >= 0:
                raise DivergenceInputError(f"Attribute '{attr}' appears twice in {itemset!r}.")
            row[a] = labels.index(value)
        return row

    def _split_known(self, text: str) -> list[str] | None:
        """The items of ``text`` split where every piece is a known ``attr=value`` of this table, each
        attribute once (a value may hold ``", b=1"`` itself: the text is cut where the table's own
        items allow, trying the pieces in order); None when no cut does."""
        parts = text.strip().split(",")
        if not text.strip():
            return []
        labels = [set(b.labels) for b in self.bins]
        by_name = {a: i for i, a in enumerate(self.attributes)}

        def item_of(piece: str) -> int | None:
            piece = piece.strip()
            for a in sorted((a for a in self.attributes if piece.startswith(a + "=")), key=len, reverse=True):
                if piece[len(a) + 1:].strip() in labels[by_name[a]]:
                    return by_name[a]
            return None

        @functools.lru_cache(maxsize=4096)
        def cut(i: int, used: frozenset) -> list[str] | None:
            if i == len(parts):
                return []
            for j in range(i + 1, len(parts) + 1):
                piece = ",".join(parts[i:j])
                a = item_of(piece)
                if a is not None and a not in used:
                    rest = cut(j, used | {a})
                    if rest is not None:
                        return [piece.strip()] + rest
            return None

        return cut(0, frozenset()) if len(parts) <= 64 else None

    def lookup(self, itemset: str | Iterable[str]) -> int:
        """Row index of an itemset (``"age=<25, sex=Male"``); an error if it was not mined.

        In a table that lists each distinct set of rows once (not exhaustive), an itemset with
        the same rows as a listed slice (``age_cat=<25`` beside ``age=<=24``) gives that slice.
        """
        codes = self.parse_itemset(itemset)
        idx = int(self.index_of(codes)[0])
        if idx < 0:
            idx = self.equivalent_of(codes)
        if idx < 0:
            longer = self.max_length or self.lattice.complete_length
            raise DivergenceInputError(
                f"Itemset {itemset!r} was not mined: its support is below {self.support_text}"
                + (f" or it is longer than {longer}" if longer else "") + "."
            )
        return idx

    def _group_mask(self, codes: np.ndarray) -> np.ndarray:
        groups = self.lattice.groups
        assert groups is not None  # only a table that lists each distinct set of rows once asks
        mask: np.ndarray = np.ones(groups.shape[0], dtype=bool)
        for a in np.nonzero(codes >= 0)[0]:
            mask &= groups[:, a] == codes[a]
        return mask

    @cached_property
    def _fp_index(self) -> dict:
        fp = self.lattice.slice_fp
        return {(int(a), int(b)): i for i, (a, b) in enumerate(fp)} if fp is not None else {}

    def equivalent_of(self, codes: np.ndarray) -> int:
        """Row index of the listed slice with the same rows as the itemset ``codes`` (-1: none).

        Only a table that lists each distinct set of rows once has equivalents; its shortest
        description is the one listed.
        """
        lat = self.lattice
        if self.exhaustive or lat.groups is None or lat.slice_fp is None:
            return -1
        assert lat.group_counts is not None and lat.group_fp is not None  # written with the groups
        mask = self._group_mask(np.asarray(codes))
        count = lat.group_counts[mask].sum()
        if count <= 0:
            return -1
        fp = lat.group_fp[mask].sum(axis=0)  # wrapping sums, as the miner adds them
        idx = self._fp_index.get((int(fp[0]), int(fp[1])), -1)
        if idx >= 0 and self.columns["count"][idx] != round(float(count)):
            return -1
        return idx

    def implied_items(self, itemset: str | Iterable[str] | int) -> list[str]:
        """The items that hold on every row of a slice but are not in its description: adding
        any of them describes the same rows (``age=<=24`` and ``age_cat=Less than 25``).

        Needs a table that lists each distinct set of rows once (empty for an exhaustive one,
        where such itemsets are rows of their own).
        """
        idx = itemset if isinstance(itemset, (int, np.integer)) else self.lookup(itemset)
        if self.lattice.groups is None:
            return []
        codes = self.codes[int(idx)]
        mask = self._group_mask(codes)
        rows = self.lattice.groups[mask]
        out = []
        for a in range(len(self.attributes)):
            if codes[a] >= 0 or rows.shape[0] == 0:
                continue
            first = rows[0, a]
            if first >= 0 and np.all(rows[:, a] == first):
                out.append(self.item_labels[a][first])
        return out

    def row(self, itemset: str | Iterable[str]) -> pd.Series:
        """The result row of one itemset."""
        return self.frame.iloc[self.lookup(itemset)]

    def default_sort_column(self, metric: str | None = None) -> str:
        """The column a metric's slices are sorted by unless told otherwise: ``M_order``, each
        slice's position in the default order (smallest first: distinct findings, then the other
        significant slices, then the rest, those below the minimum size after those that meet
        it; see :func:`divergence.stats.findings.default_order`). Without statistics, the divergence
        (largest first). The one rule behind :meth:`top`, the dashboard and the report."""
        m = self.metric(metric).name
        return f"{m}_order" if f"{m}_order" in self.columns else f"{m}_divergence"

    def default_order(self, metric: str | None = None) -> np.ndarray:
        """The slices' rows in the default order (the whole dataset left out)."""
        col = self.default_sort_column(metric)
        values = np.asarray(self.columns[col], dtype=float)
        if col.endswith("_order"):
            order = np.argsort(values, kind="stable")
        else:
            order = np.lexsort((-np.asarray(self.columns["support"], dtype=float),
                                np.where(np.isnan(values), np.inf, -values)))
        return order[order != 0]

    def findings(self, metric: str | None = None) -> pd.DataFrame:
        """The distinct findings of a metric in the default order, each with ``covers``: how many
        significant slices it accounts for, itself included (its own and those explained by it)."""
        m = self.metric(metric).name
        if f"{m}_finding" not in self.columns:
            raise DivergenceInputError("This result has no findings: run it through divergence.assess().")
        f = self.frame
        rows = f.iloc[[i for i in self.default_order(m) if bool(self.columns[f"{m}_finding"][i])]]
        counts = f[f"{m}_explained_by"].value_counts()
        return rows.assign(covers=[1 + int(counts.get(s, 0)) for s in rows["itemset"]])

    def top(self, k: int = 10, *, by: str | None = None, metric: str | None = None,
            ascending: bool | None = None, min_length: int = 1) -> pd.DataFrame:
        """The first k itemsets in the default order (:meth:`default_order`), or sorted by ``by``
        (largest first unless ``ascending``; ties go to the larger support). ``by`` is a column or a
        peer's score (``sliceline``, ``sliceline:0.9``, ``wracc``, ``lift``: :mod:`divergence.scores`),
        of ``metric``."""
        # the order comes from a frame of the columns it reads only, the rows from :meth:`_rows`: a summary's
        # ten rows without a DataFrame of every slice (the same rows, index and dtypes as ``frame``'s)
        if by is None and ascending is None:
            keys = pd.DataFrame({"length": self.lengths}).iloc[self.default_order(metric)]
            return self._rows(keys[keys["length"] >= min_length].head(k).index)
        from .scores import sort_column

        table, col = sort_column(self, by, metric)
        col = col or self.default_sort_column(metric)
        if col not in table.columns and col not in ("itemset", "length"):
            raise DivergenceInputError(f"Cannot sort by {col!r}: not a column of this result, nor a score "
                                       "(sliceline, sliceline:ALPHA, wracc, lift).")
        asc = bool(ascending) if ascending is not None else col.endswith("_order")
        by_col = table.itemsets if col == "itemset" else table.lengths if col == "length" else table.columns[col]
        keys = pd.DataFrame({"length": table.lengths, "support": table.columns["support"], col: by_col})
        keys = keys[keys["length"] >= min_length]
        return table._rows(keys.sort_values([col, "support"], ascending=[asc, False],
                                             na_position="last", kind="stable").head(k).index)

    def _rows(self, index: pd.Index) -> pd.DataFrame:
        """The rows of :attr:`frame` at ``index`` (positions, as an index of ``frame`` holds them), with
        that index; built from the columns' arrays alone when the frame is not built yet and every column
        is one a few rows give the same dtype as all of them (numbers, booleans, text with no missing value)."""
        at = np.asarray(index, dtype=np.int64)
        if "frame" not in self.__dict__ and at.size:
            data = {"itemset": self.itemsets, "length": self.lengths}
            data.update(self.columns)
            if all(isinstance(v, np.ndarray) and v.ndim == 1
                   and (v.dtype != object or pd.api.types.infer_dtype(v, skipna=False) == "string")
                   for v in data.values()):
                return pd.DataFrame({c: v[at] for c, v in data.items()}, index=index)
        rows = self.frame.iloc[at]
        rows.index = index
        return rows

    def to_csv(self, path, *, neutralise_formulas: bool = True) -> None:
        """Write the table as CSV: floats at full precision, undefined values as empty cells;
        text a spreadsheet would run as a formula gets a leading apostrophe (see :func:`write_csv`)."""
        write_csv(self.to_arrow(), path, neutralise_formulas=neutralise_formulas)


def split_items(text: str, attributes: Sequence[str]) -> list[str]:
    """Split ``a=x, b=y`` on commas that start a new ``attr=`` item (values may hold commas)."""
    text = text.strip()
    if not text:
        return []
    parts = [p for p in text.split(",")]
    items: list[str] = []
    for part in parts:
        stripped = part.strip()
        if items and not any(stripped.startswith(a + "=") for a in attributes):
            items[-1] = items[-1] + "," + part
        else:
            items.append(stripped)
    return [i.strip() for i in items]

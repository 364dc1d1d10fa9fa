"""Slices typed by hand, and the rows slices share.

A person editing a slice (adding or removing an item, or typing one the scan did not mine:
below the support, longer than the length limit, or on a column left out of the attributes)
sees the same statistics as for a mined slice: :func:`measure_slice` finds the slice's rows
from the discretized codes (the scan's own bins), tallies the slice and every subset of it,
and assesses them with the result's settings, the mined slices counted in the correction's
family. :func:`overlap` says how many rows the reported findings share.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DivergenceInputError
from ..prepare.discretize import AttributeBins, discretize
from ..prepare.kept_rows import KeptRows
from ..table import Lattice, SliceTable

__all__ = ["MeasuredSlice", "measure_slice", "item_catalog", "slice_rows", "overlap", "rows_covered", "MAX_ITEMS"]

#: most items in a slice typed by hand (its 2^k subsets are measured for the Shapley values)
MAX_ITEMS = 10


@dataclass(frozen=True)
class MeasuredSlice:
    """A slice and its statistics: row ``index`` of ``table``, which holds the whole dataset,
    the slice and every subset of it (or is the scan's result itself, for a mined slice), with
    every column the result has."""

    table: SliceTable
    index: int
    itemset: str
    mined: bool
    #: why the scan did not mine it ('' when it did)
    why_not_mined: str
    #: per metric, the slices the correction counts (the mined ones, plus the new ones)
    n_family: dict
    #: the listed slice with the same rows, when the items typed describe it another way
    #: (a result that lists each distinct set of rows once); '' otherwise
    same_rows_as: str = ""

    @property
    def row(self) -> pd.Series:
        return self.table.frame.iloc[self.index]


def _listed(table: SliceTable, code_row: np.ndarray) -> int:
    """The result's row of an itemset: itself, or the listed slice with the same rows (-1: none)."""
    idx = int(table.index_of(code_row)[0])
    if idx < 0 and hasattr(table, "equivalent_of"):
        idx = int(table.equivalent_of(np.asarray(code_row, dtype=np.int32)))
    return idx


def _needs_rows(table: SliceTable) -> None:
    if table.kept_rows is None or table.kept_rows.outcomes is None:
        raise DivergenceInputError(
            "Measuring a slice that was not mined needs the rows, and this result kept none (a scan by DuckDB "
            "or Spark): open a mined slice, or scan the data in memory.")


def _role_columns(table: SliceTable) -> list[str]:
    from ..data.columns import role_columns

    p = table.params
    return role_columns(target=p.get("target"), prediction=p.get("prediction"), score=p.get("score"),
                        outcome=p.get("outcome"), rank=p.get("rank"), rank_by=p.get("rank_by"))


def _left_out_bins(table: SliceTable, data: pd.DataFrame | None,
                   columns: Sequence[str] | None = None) -> tuple[AttributeBins, ...]:
    """Bins of columns the scan left out of its attributes, cut as the scan would have cut them."""
    if data is None:
        return ()
    data = _scanned_rows(table, data)
    if len(data) != table.n_rows:
        return ()
    from ..data.columns import default_attributes

    if columns is None:
        columns, _ = default_attributes(data, _role_columns(table) + list(table.attributes))
    columns = [c for c in columns if c in data.columns and c not in table.attributes]
    if not columns:
        return ()
    p = table.params
    bins = {c: v for c, v in (p.get("bins") or {}).items() if c in columns}
    return discretize(data, list(columns), bins=bins, quantile_bins=int(p.get("quantile_bins", 3)),
                      binning=p.get("binning", "quantile")).bins


def item_catalog(table: SliceTable, data: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every item a slice can be built from, one row each: ``attribute``, ``item``
    ('attr=value') and ``scanned`` (False for a column left out of the scan's attributes,
    offered when ``data`` holds the scanned rows). Attributes in the scan's order first."""
    rows = [(b.name, f"{b.name}={label}", True) for b in table.bins for label in b.labels]
    if table.kept_rows is not None:
        for b in _left_out_bins(table, data):
            rows += [(b.name, f"{b.name}={label}", False) for label in b.labels]
    return pd.DataFrame(rows, columns=["attribute", "item", "scanned"])


def _parse(items: Iterable[str], bins: Sequence[AttributeBins]) -> list[tuple[int, int]]:
    """(attribute index, item code) of each item, sorted by attribute; errors name the item."""
    names = [b.name for b in bins]
    out: dict[int, int] = {}
    for item in items:
        item = str(item).strip()
        attr = _attribute_of(item, names)
        if attr is None:
            raise DivergenceInputError(f"Item {item!r} does not start with a known attribute ({', '.join(names)}).")
        a = names.index(attr)
        value = item[len(attr) + 1:].strip()
        labels = list(bins[a].labels)
        if value not in labels:
            raise DivergenceInputError(f"'{value}' is not an item of '{attr}'; its items are {', '.join(labels)}.")
        if a in out:
            raise DivergenceInputError(f"A slice holds one item per attribute: '{attr}' appears twice.")
        out[a] = labels.index(value)
    return sorted(out.items())


def _attribute_of(item: str, names: Iterable[str]) -> str | None:
    """The attribute an item names: the longest name followed by '=' (names may hold '=')."""
    matches = [a for a in names if item.startswith(str(a) + "=")]
    return max(matches, key=len) if matches else None


def _scanned_rows(table: SliceTable, data: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``data`` the result measured: every row, or (a held-out share, the rows that
    chose tree cut points set aside) those at the kept rows' positions."""
    positions = table.kept_rows.positions if table.kept_rows is not None else None
    if len(data) != table.n_rows and positions is not None and len(data) > int(np.max(positions, initial=-1)):
        return data.iloc[positions].reset_index(drop=True)
    return data


def _numeric_columns(table: SliceTable, data: pd.DataFrame | None) -> list[str]:
    """The columns a typed cut may be on: numeric columns of the rows (attributes or not)."""
    if data is None:
        return []
    from ..data.column_kinds import is_numeric

    taken = set(_role_columns(table))
    return [str(c) for c in data.columns if c not in taken and is_numeric(data[c])]


def _looks_cut_on_unknown(item: str, table: SliceTable, data: pd.DataFrame | None) -> bool:
    from ..prepare.typed_cuts import looks_like_cut

    return looks_like_cut(item) and "=" not in item.split("<")[0].split(">")[0]


def _with_cuts(table: SliceTable, bins: tuple, codes: np.ndarray, cuts: dict, data: pd.DataFrame | None):
    """Bins and codes with each typed cut as its attribute's two items (the cut, other): in place of
    a scanned attribute's bins, or as an attribute of its own."""
    if not cuts:
        return bins, codes, set()
    if data is None:
        raise DivergenceInputError("A cut typed by hand is measured from the rows' values: give the data.")
    rows = _scanned_rows(table, data)
    if len(rows) != table.n_rows:
        raise DivergenceInputError(
            f"The rows given ({len(data):,}) are not the {table.n_rows:,} rows the result measured: a cut typed by "
            "hand needs them.")
    out: list[AttributeBins] = list(bins)
    codes = codes.copy()
    replaced: set[int] = set()
    names = [b.name for b in out]
    for cut in cuts.values():
        col_codes, ab = cut.bins(rows[cut.column].to_numpy(dtype=float, na_value=np.nan))
        if cut.column in names:
            a = names.index(cut.column)
            if a >= len(table.attributes):
                raise DivergenceInputError(f"A slice holds one item per attribute: '{cut.column}' appears twice.")
            out[a], replaced = ab, replaced | {a}
            codes[:, a] = col_codes
        else:
            out.append(ab)
            names.append(cut.column)
            codes = np.hstack([codes, col_codes[:, None].astype(codes.dtype)])
    return tuple(out), np.ascontiguousarray(codes), replaced


def _with_left_out(table: SliceTable, items: Sequence[str], data: pd.DataFrame | None):
    """Bins and per-row codes of the scanned attributes plus the left-out columns the items name."""
    names = list(table.attributes)
    unknown = [i for i in items if _attribute_of(i, names) is None]
    extra: tuple[AttributeBins, ...] = ()
    kept = table.kept_rows
    assert kept is not None  # the callers checked (_needs_rows)
    codes = kept.codes
    if unknown:
        others = [c for c in (data.columns if data is not None else []) if c not in names]
        wanted = []
        for item in unknown:
            col = _attribute_of(item, others)
            if col is None:
                raise DivergenceInputError(f"Item {item!r} does not start with a known attribute "
                                           f"({', '.join(names + [str(c) for c in others])}).")
            wanted.append(col)
        wanted = sorted(set(wanted), key=str)
        data = _scanned_rows(table, data)  # type: ignore[arg-type]
        if len(data) != table.n_rows:  # type: ignore[arg-type]
            raise DivergenceInputError(
                f"Column '{wanted[0]}' was left out of the scan, and the rows given ({len(data):,}) are not the "  # type: ignore[arg-type]
                f"{table.n_rows:,} rows it mined (a held-out share?): choose items of the scanned attributes.")
        p = table.params
        disc = discretize(data, wanted, bins={c: v for c, v in (p.get("bins") or {}).items() if c in wanted},
                          quantile_bins=int(p.get("quantile_bins", 3)), binning=p.get("binning", "quantile"))
        extra = disc.bins
        codes = np.hstack([codes, disc.codes.astype(codes.dtype)])
    return tuple(table.bins) + tuple(extra), np.ascontiguousarray(codes)


def slice_rows(table: SliceTable, items: Sequence[str], *, data: pd.DataFrame | None = None) -> np.ndarray:
    """Boolean mask of the scanned rows in the slice of ``items`` (the scan's bins; a column
    left out of the scan is cut as the scan would have cut it, from ``data``)."""
    _needs_rows(table)
    bins, codes = _with_left_out(table, items, data)
    mask = np.ones(codes.shape[0], dtype=bool)
    for a, v in _parse(items, bins):
        mask &= codes[:, a] == v
    return mask


def _row_weights(table: SliceTable) -> np.ndarray:
    """Per-row tally columns in the layout of ``table.tallies``."""
    from ..prepare.row_weights import row_weights

    w = np.column_stack(row_weights(table.kept_rows.outcomes, table.metrics))  # type: ignore[union-attr,arg-type]
    if w.shape[1] != table.tallies.shape[1]:
        raise DivergenceInputError("This result's tallies do not match its outcomes; scan again.")
    return w


def _why_not_mined(table: SliceTable, count: float, k: int, left_out: Sequence[str]) -> str:
    if left_out:
        cols = ", ".join(f"'{c}'" for c in left_out)
        return f"{cols} {'was' if len(left_out) == 1 else 'were'} left out of the scan's attributes"
    if table.max_length and k > table.max_length:
        return f"it has {k} items and the scan stopped at {table.max_length}"
    if count == 0:
        return "no row matches all its items"
    return (f"its {int(count):,} rows ({count / table.n_rows:.2%}) are below the minimum support "
            f"{table.support_text}")


def measure_slice(table: SliceTable, items: Sequence[str] | str, *, data: pd.DataFrame | None = None,
                  replicate: pd.DataFrame | None = None, replication_label: str | None = None) -> MeasuredSlice:
    """The statistics of the slice of ``items`` (a list of 'attr=value', or one string
    'a=x, b=y'), as the result has them for a mined slice.

    A mined slice is read from the result. Any other slice (below the support, longer than
    the length limit, or using a column of ``data`` the scan left out, cut with the scan's
    binning) is tallied with all its subsets from the scanned rows and assessed with the
    result's settings (confidence, correction, δ, bootstrap and seed, replication on
    ``replicate``): its q-value counts it as one more slice of the family the result tested,
    so the correction covers the mined slices and this one.
    """
    from ..prepare.typed_cuts import parse_cut, split_typed

    if isinstance(items, str):
        names = list(table.attributes) + ([c for c in data.columns if c not in table.attributes]
                                          if data is not None else [])
        items = split_typed(items, names)
    items = [str(i).strip() for i in items if str(i).strip()]
    if not items:
        raise DivergenceInputError("A slice needs at least one item (attribute=value).")
    if len(items) > MAX_ITEMS:
        raise DivergenceInputError(f"A slice of {len(items)} items is too long to measure here; at most {MAX_ITEMS}.")
    labels = {b.name: set(b.labels) for b in table.bins}
    cuts = {}
    for i in items:
        cut = parse_cut(i, _numeric_columns(table, data), labels)
        if cut is None and _attribute_of(i, table.attributes) is None and _looks_cut_on_unknown(i, table, data):
            raise DivergenceInputError(f"The cut {i!r} is not on a numeric column of the rows scanned.")
        if cut is not None:
            cuts[i] = cut
    if len(set(c.column for c in cuts.values())) < len(cuts):
        raise DivergenceInputError("A slice holds one item per attribute: two cuts name the same column.")
    scanned = [i for i in items if i not in cuts and _attribute_of(i, table.attributes) is not None]
    if len(scanned) == len(items):
        code_row = np.full(len(table.attributes), -1, dtype=np.int32)
        for attr, v in _parse(items, table.bins):
            code_row[attr] = v
        idx = _listed(table, code_row)
        if idx >= 0:
            listed = str(table.itemsets[idx])
            typed = table.itemset_names(code_row)[0]
            return MeasuredSlice(table=table, index=idx, itemset=listed, mined=True, why_not_mined="",
                                 n_family=dict(table.n_tested), same_rows_as=listed if listed != typed else "")
    _needs_rows(table)
    bins, row_codes = _with_left_out(table, [i for i in items if i not in cuts], data)
    bins, row_codes, replaced = _with_cuts(table, bins, row_codes, cuts, data)
    items = [cuts[i].item if i in cuts else i for i in items]
    parsed = _parse(items, bins)
    k = len(parsed)
    n_attr = len(bins)
    # each row's pattern of matched items (bit j: item j), then every subset's tallies from the patterns
    pattern = np.zeros(row_codes.shape[0], dtype=np.int64)
    for j, (attr, v) in enumerate(parsed):
        pattern |= (row_codes[:, attr] == v).astype(np.int64) << j
    weights = _row_weights(table)
    per_pattern = np.zeros((2 ** k, weights.shape[1]))
    for c in range(weights.shape[1]):
        per_pattern[:, c] = np.bincount(pattern, weights=weights[:, c], minlength=2 ** k)
    masks = np.array(sorted(range(2 ** k), key=lambda x: (bin(x).count("1"), x)), dtype=np.int64)
    pats = np.arange(2 ** k)
    tallies = np.vstack([per_pattern[(pats & s) == s].sum(axis=0) for s in masks])
    codes = np.full((masks.size, n_attr), -1, dtype=np.int32)
    for j, (attr, v) in enumerate(parsed):
        codes[(masks >> j) & 1 == 1, attr] = v
    position = {int(s): i for i, s in enumerate(masks)}
    parent = np.array([-1] + [position[int(s) & ~(1 << (int(s).bit_length() - 1))] for s in masks[1:]],
                      dtype=np.int64)
    from ..stats.tabulate import measure_columns

    small = SliceTable(codes=codes, tallies=tallies, columns=measure_columns(tallies, table.metrics, table.n_rows),
                       attributes=tuple(b.name for b in bins), bins=tuple(bins), metrics=table.metrics,
                       n_rows=table.n_rows, min_support=table.min_support, max_length=table.max_length,
                       engine=table.engine, notes=(), params=dict(table.params), lattice=Lattice(parent=parent),
                       kept_rows=KeptRows(row_codes, table.kept_rows.outcomes))  # type: ignore[union-attr]
    # the family: every slice the result tested, less those measured again here
    n_orig = len(table.attributes)
    in_result = np.zeros(len(table), dtype=bool)
    plain = np.all(codes[:, n_orig:] < 0, axis=1) if n_attr > n_orig else np.ones(masks.size, dtype=bool)
    for attr in replaced:  # a cut typed on a scanned attribute: not the scan's item of that code
        plain &= codes[:, attr] < 0
    for row in codes[plain][:, :n_orig]:
        j = _listed(table, row)  # the same rows listed under another description count once
        if j >= 0:
            in_result[j] = True
    in_result[0] = True
    family = {m: np.asarray(stats.p, dtype=float)[~in_result] for m, stats in table.by_metric.items()}
    a = table.assessment
    # the table's own statistics settings (the defaults for a table not assessed)
    settings: dict[str, Any] = {} if a is None else dict(
        delta={m: info.delta for m, info in a.min_size.items()} or None, confidence=a.confidence,
        correction=a.correction, bootstrap=a.bootstrap, seed=a.seed, top_k=a.top_k)
    from ..stats.assess import assess

    assessed = assess(small, replicate=replicate, replication_label=replication_label,
                      exploratory=a.exploratory if a is not None else True, family_p=family, **settings)
    idx = masks.size - 1
    left_out = sorted({bins[a].name for a, _ in parsed if a >= n_orig and bins[a].name not in
                       {c.column for c in cuts.values()}})
    why = _why_not_mined(table, float(tallies[idx, 0]), k, left_out)
    if cuts:
        typed = ", ".join(f"'{c.item}'" for c in cuts.values())
        why = (f"{typed} {'is a cut' if len(cuts) == 1 else 'are cuts'} typed by hand, not the scan's bins"
               + (f"; {why}" if left_out else ""))
    return MeasuredSlice(table=assessed, index=idx, itemset=str(assessed.itemsets[idx]), mined=False,
                         why_not_mined=why, n_family=dict(assessed.n_tested))


def overlap(table: SliceTable, itemsets: Sequence[str]) -> pd.DataFrame:
    """Rows shared by each pair of slices: a square frame indexed and labelled by the itemsets,
    the diagonal holding each slice's own rows. From the scanned rows when the result kept
    them; otherwise from the mined lattice (the rows two slices share are the slice of both
    their items: 0 when they disagree on an attribute, NaN when that slice was not mined)."""
    idx = [table.lookup(s) for s in itemsets]
    labels = [str(table.itemsets[i]) for i in idx]
    k = len(idx)
    out = np.full((k, k), np.nan)
    if table.kept_rows is not None:
        masks = np.vstack([table.rows_of(i) for i in idx]).astype(np.float32) if k else np.zeros((0, 0))
        out = masks @ masks.T if k else out
    else:
        for i in range(k):
            for j in range(k):
                a, b = table.codes[idx[i]], table.codes[idx[j]]
                clash = (a >= 0) & (b >= 0) & (a != b)
                if clash.any():
                    out[i, j] = 0
                    continue
                union = np.where(a >= 0, a, b)
                u = int(table.index_of(union)[0])
                if u >= 0:
                    out[i, j] = float(table.columns["count"][u])
    return pd.DataFrame(np.rint(out) if np.isfinite(out).all() else out, index=labels, columns=labels)


def rows_covered(table: SliceTable, itemsets: Sequence[str]) -> int | None:
    """How many distinct rows the slices hold together (None when the result kept no rows)."""
    if table.kept_rows is None:
        return None
    covered = np.zeros(table.kept_rows.codes.shape[0], dtype=bool)
    for s in itemsets:
        covered |= table.rows_of(table.lookup(s))
    return int(covered.sum())

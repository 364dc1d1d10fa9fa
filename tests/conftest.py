"""Shared fixtures: the public datasets in ../shared/data (skipped with a reason when absent)."""
from __future__ import annotations

import itertools
import os
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


def brute_force(codes: np.ndarray, weights: np.ndarray, n_values, min_count: int,
                max_length: int | None = None) -> dict:
    """Every itemset with count >= min_count, tallies by boolean masks: {code tuple: tallies}."""
    n, a = codes.shape
    max_length = a if max_length is None else max_length
    out = {tuple([-1] * a): weights.sum(axis=0)}
    for length in range(1, max_length + 1):
        for attrs in itertools.combinations(range(a), length):
            for values in itertools.product(*[range(n_values[j]) for j in attrs]):
                mask = np.ones(n, dtype=bool)
                for j, v in zip(attrs, values):
                    mask &= codes[:, j] == v
                if mask.sum() >= min_count:
                    key = [-1] * a
                    for j, v in zip(attrs, values):
                        key[j] = v
                    out[tuple(key)] = weights[mask].sum(axis=0)
    return out

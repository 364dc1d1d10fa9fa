"""The benchmarks' synthetic table: 12 attributes (2 to 6 values) drawn from 6 latent segments,
each with its own skewed distribution per attribute, so the attributes are correlated like a
real table's and distinct rows grow sublinearly with rows (about 68k at 1e5, 279k at 1e6, 900k
at 1e7). Kept beside the benchmarks rather than in the package: their child processes import it
whichever checkout they measure."""
from __future__ import annotations

import numpy as np
import pandas as pd

SEGMENT_SHARES = (0.3, 0.25, 0.18, 0.12, 0.1, 0.05)
ATTRIBUTE_SIZES = (2, 3, 4, 5, 3, 4, 6, 2, 3, 5, 4, 3)


def segmented_attributes(rng: np.random.Generator, n: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The attributes ``a0``..``a11`` (int8 codes) of n rows, and each row's segment."""
    seg = rng.choice(len(SEGMENT_SHARES), n, p=list(SEGMENT_SHARES))
    cols = {}
    for j, k in enumerate(ATTRIBUTE_SIZES):
        cdf = np.cumsum(rng.dirichlet(np.full(k, 0.6), size=len(SEGMENT_SHARES)), axis=1)
        u = rng.random(n)
        col = np.zeros(n, dtype=np.int8)
        for v in range(k - 1):
            col += (u > cdf[seg, v]).astype(np.int8)
        cols[f"a{j}"] = col
    return pd.DataFrame(cols), seg

"""Regenerate tests/peer_values.py: pysubgroup's WRAcc top-k on Adult (0/1 error of the given
random forest), the table of values tests/stats/test_scores.py checks our table against.

pysubgroup 0.9.0 requires numpy < 2, so it cannot be a test dependency of this project (numpy 2.4
is pinned); run this in an environment that has it (or with `pip install --no-deps --target DIR
pysubgroup==0.9.0 statsmodels patsy matplotlib` and PYTHONPATH=DIR):

    python benchmarks/tools/peer_reference.py ../shared/data/adult_discretized.csv tests/peer_values.py
"""
from __future__ import annotations

import sys

import pandas as pd


def main(path: str, out: str, k: int = 20, depth: int = 3) -> None:
    import pysubgroup as ps

    df = pd.read_csv(path)
    data = df.drop(columns=["class", "predicted"]).astype(str)
    data["error"] = (df["class"] != df["predicted"]).to_numpy()
    task = ps.SubgroupDiscoveryTask(data, ps.BinaryTarget("error", True), ps.create_selectors(data, ignore=["error"]),
                                    result_set_size=k, depth=depth, qf=ps.WRAccQF())
    result = ps.Apriori().execute(task).to_dataframe()
    lines = []
    print = lines.append  # noqa: A001 - pysubgroup prints to standard output itself
    print('"""pysubgroup 0.9.0\'s WRAcc top-%d on Adult (target: the random forest\'s 0/1 error; Apriori, depth %d),'
          % (k, depth))
    print('made by benchmarks/tools/peer_reference.py: (items, rows, errors, quality)."""')
    print("PYSUBGROUP_WRACC_ADULT = [")
    for sg, size, pos, q in zip(result["subgroup"], result["size_sg"], result["positives_sg"], result["quality"]):
        items = sorted(f"{s.attribute_name}={s.attribute_value}" for s in sg.selectors)
        print(f"    ({items!r}, {int(size)}, {int(pos)}, {float(q)!r}),")
    print("]")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(*(sys.argv[1:3] if len(sys.argv) > 2 else ["../shared/data/adult_discretized.csv", "tests/peer_values.py"]))

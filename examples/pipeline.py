"""A small, dependency-free training pipeline with phases, for `memgauge run`.

    memgauge run examples/pipeline.py --rows 300000

load builds rows of features, featurize makes a column-major copy (the peak: rows and columns are
alive together), fit runs least squares by gradient descent in a worker process, report prints.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random

import memgauge


@memgauge.phase("load")
def load(rows: int, features: int) -> list[list[float]]:
    rng = random.Random(0)
    return [[rng.random() for _ in range(features)] for _ in range(rows)]


@memgauge.phase("featurize")
def featurize(data: list[list[float]]) -> list[list[float]]:
    return [list(column) for column in zip(*data, strict=True)]


def _fit(columns: list[list[float]], epochs: int) -> list[float]:
    with memgauge.phase("fit-worker"):
        n = len(columns[0])
        target = [sum(values) for values in zip(*columns, strict=True)]
        weights = [0.0] * len(columns)
        for _ in range(epochs):
            predictions = [sum(w * c[i] for w, c in zip(weights, columns, strict=True)) for i in range(n)]
            errors = [p - t for p, t in zip(predictions, target, strict=True)]
            for j, column in enumerate(columns):
                weights[j] -= 0.5 * sum(e * x for e, x in zip(errors, column, strict=True)) / n
        return weights


@memgauge.phase("fit")
def fit(columns: list[list[float]], epochs: int) -> list[float]:
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(_fit, (columns, epochs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    data = load(args.rows, args.features)
    columns = featurize(data)
    del data
    weights = fit(columns, args.epochs)
    with memgauge.phase("report"):
        print("weights:", " ".join(f"{w:.3f}" for w in weights))


if __name__ == "__main__":
    main()

"""An MLPRegressor fit of about 1-2 s (issue 16's "MLP" case): scikit-learn imported, a small
regression problem made, an MLP fitted on it and scored. For what a container needs
(bench/needs_bench.py): its libraries are most of its memory."""

import warnings

from sklearn.datasets import make_regression
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPRegressor

X, y = make_regression(n_samples=5_000, n_features=20, noise=0.5, random_state=0)
model = MLPRegressor(hidden_layer_sizes=(50, 50), max_iter=10, random_state=0)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    model.fit(X, y)
print(f"R^2 {model.score(X, y):.3f}")

"""A LinearRegression on 1,000,000 rows, about 5 s (issue 16's "LinearRegression 1M" case):
scikit-learn imported, 1,000,000 x 10 rows made, a linear model fitted, predicted and scored. For
what a container needs (bench/needs_bench.py): its arrays are most of its memory."""

from sklearn.datasets import make_regression
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

X, y = make_regression(n_samples=1_000_000, n_features=10, noise=0.5, random_state=0)
model = LinearRegression().fit(X, y)
print(f"R^2 {r2_score(y, model.predict(X)):.4f}")

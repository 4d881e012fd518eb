"""The environment that asks a measured process for ``memgauge fit``'s what-if runs: remedies
hooked on the model (``_remedies``) or a prediction under fake tensors (``_predict``). Standard
library only: the runner's side reads these names without importing torch."""

from __future__ import annotations

HOOKED_REMEDIES = ("checkpoint", "autocast", "offload")
TABULAR_REMEDIES = ("dtypes",)  # hooked on pandas once imported (``_remedies_tabular``)

"""The environment that asks a measured process for ``memgauge fit``'s what-if runs: remedies
hooked on the model (``_remedies``) or a prediction under fake tensors (``_predict``). Standard
library only: the runner's side reads these names without importing torch."""

from __future__ import annotations

ENV_REMEDY = "MEMGAUGE_REMEDY"  # comma-separated names of HOOKED_REMEDIES
ENV_REMEDY_REPORT = "MEMGAUGE_REMEDY_REPORT"  # where the hooks list what they changed (JSON)
ENV_PREDICT = "MEMGAUGE_PREDICT"  # where the prediction run writes its figures (JSON)
HOOKED_REMEDIES = ("checkpoint", "autocast", "offload")
TABULAR_REMEDIES = ("dtypes",)  # hooked on pandas once imported (``_remedies_tabular``)

"""fit-limit figures (docs/benchmarks.md): numpy imported, then 200 MiB of float64 ones held."""

import numpy as np

a = np.ones(200 << 17)  # 200 MiB of float64
print(a.sum())

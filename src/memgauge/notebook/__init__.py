"""memgauge in IPython and Jupyter: ``%load_ext memgauge``.

``%memit``/``%%memit`` (peak and increment of a statement or a cell, exact), ``%%mgprofile`` (the
cell's full report inline), ``%memgauge watch on`` (one line of figures after every cell) and
``%mprun`` (memory per line of a function). Needs IPython (``pip install 'memgauge[notebook]'``);
this face loads nothing until a name is used, so the measuring parts work without it.
docs/notebooks.md says how each figure is measured.
"""

from __future__ import annotations

from memgauge._lazy import attach

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.notebook._gpu import GpuMonitor, GpuPeak, NoGpu, TorchCudaMonitor
    from memgauge.notebook._magics import (
        MemgaugeMagics,
        load_ipython_extension,
        unload_ipython_extension,
        use_gpu_monitor,
    )
    from memgauge.notebook._measure import Measured, MemitResult, measure
    from memgauge.notebook._mprun import FunctionLines, LineMemory, LineProfile, LineRow
    from memgauge.notebook._report import inline_bundle
    from memgauge.notebook._watch import CellMemory

_NAMES = {
    "GpuMonitor": "_gpu",
    "GpuPeak": "_gpu",
    "NoGpu": "_gpu",
    "TorchCudaMonitor": "_gpu",
    "CellMemory": "_watch",
    "FunctionLines": "_mprun",
    "inline_bundle": "_report",
    "LineMemory": "_mprun",
    "LineProfile": "_mprun",
    "LineRow": "_mprun",
    "load_ipython_extension": "_magics",
    "measure": "_measure",
    "Measured": "_measure",
    "MemgaugeMagics": "_magics",
    "MemitResult": "_measure",
    "unload_ipython_extension": "_magics",
    "use_gpu_monitor": "_magics",
}
__all__ = [
    "CellMemory",
    "FunctionLines",
    "GpuMonitor",
    "GpuPeak",
    "LineMemory",
    "LineProfile",
    "LineRow",
    "Measured",
    "MemgaugeMagics",
    "MemitResult",
    "NoGpu",
    "TorchCudaMonitor",
    "inline_bundle",
    "load_ipython_extension",
    "measure",
    "unload_ipython_extension",
    "use_gpu_monitor",
]
__getattr__, __dir__ = attach(__name__, _NAMES)

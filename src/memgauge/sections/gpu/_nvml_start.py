"""Starting NVML's sampler, decided without loading it: on a machine without an NVIDIA driver
(most runs), ``memgauge run`` imports none of NVML's modules. They create dataclasses, and would do
so on the runner's main thread just after the spawn, where every millisecond delays the watcher's
first samples of a program that may not live long."""

from __future__ import annotations

from memgauge.sections.gpu._nvml_driver import NO_DRIVER, no_driver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.sections.gpu._nvml_sampler import NvmlSampler


def start_nvml_sampler(main_pid: int | None = None, interval: float | None = None) -> NvmlSampler | str:
    """A started sampler (polling every ``interval`` seconds, else its own default), or the line
    saying why there are no NVML figures."""
    if no_driver():
        return NO_DRIVER
    from memgauge.sections.gpu._nvml_sampler import open_sampler

    return open_sampler(main_pid, interval)


# The section's "watch" part (``memgauge.sections``): what the runner starts beside the program.
# NVML's samples make the run's "nvml" source; a run where NVML saw nothing says so in its
# ``measurement`` line.
SOURCE = "nvml"
UNSEEN = "no GPU used by the run"


def start(main_pid: int) -> NvmlSampler | str:
    """NVML's thread, polling the GPUs while the program ``main_pid`` runs; or why it does not."""
    return start_nvml_sampler(main_pid)

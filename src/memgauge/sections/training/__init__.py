"""The training section: a loop's steps, data wait, FLOPs, copies between devices and I/O per phase,
each process's CPU over the loop, and the loop's budgets.

Its parts, by layer: ``_capture*`` runs in the measured process (``memgauge.step``,
``timed_iter``, the torch hooks of a followed loop; standard library only); ``_read`` reads what
it wrote; ``_record`` is its part of the profile (``Profile.training``); ``_analysis*`` its pure
functions; ``_assemble`` puts a run's part together; ``_report*`` its report blocks; ``_budget``
its metrics; ``_inprocess`` its part of ``memgauge.profile``. Lazy: importing this face loads
nothing until a name is used."""

from __future__ import annotations

from memgauge import _lazy

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.sections.training._analysis import (
        TrainingFigure,
        summarize_training,
        training_figures,
        training_loop,
        unfollowed_frameworks,
        warmup_steps,
    )
    from memgauge.sections.training._analysis_cpu import training_cpu_lines, training_cpu_sentence, with_cpu
    from memgauge.sections.training._analysis_gpu import with_gpu
    from memgauge.sections.training._analysis_io import PhaseIo, phase_io
    from memgauge.sections.training._analysis_movement import (
        data_movement_figures,
        sent_rates,
        summarize_copies,
    )
    from memgauge.sections.training._analysis_peaks import known_peak
    from memgauge.sections.training._assemble import training_of
    from memgauge.sections.training._budget import TRAINING_METRICS, training_figure
    from memgauge.sections.training._capture import current_loop, step, timed_iter
    from memgauge.sections.training._capture_block import BlockLoop, start_block_loop
    from memgauge.sections.training._capture_torch import attach
    from memgauge.sections.training._inprocess import BlockTraining
    from memgauge.sections.training._read import LoopRecord, read_training
    from memgauge.sections.training._record import (
        Training,
        TrainingCopies,
        TrainingCopyLine,
        TrainingCounter,
        TrainingProcess,
        TrainingStat,
        TrainingStep,
    )
    from memgauge.sections.training._report import phase_io_section, training_section

_NAMES = {
    "BlockTraining": "_inprocess",
    "TRAINING_METRICS": "_budget",
    "attach": "_capture_torch",
    "current_loop": "_capture",
    "phase_io_section": "_report",
    "training_figure": "_budget",
    "training_of": "_assemble",
    "training_section": "_report",
    "BlockLoop": "_capture_block",
    "data_movement_figures": "_analysis_movement",
    "known_peak": "_analysis_peaks",
    "LoopRecord": "_read",
    "phase_io": "_analysis_io",
    "PhaseIo": "_analysis_io",
    "read_training": "_read",
    "sent_rates": "_analysis_movement",
    "start_block_loop": "_capture_block",
    "step": "_capture",
    "summarize_copies": "_analysis_movement",
    "summarize_training": "_analysis",
    "timed_iter": "_capture",
    "Training": "_record",
    "training_cpu_lines": "_analysis_cpu",
    "training_cpu_sentence": "_analysis_cpu",
    "training_figures": "_analysis",
    "training_loop": "_analysis",
    "TrainingCopies": "_record",
    "TrainingCopyLine": "_record",
    "TrainingCounter": "_record",
    "TrainingFigure": "_analysis",
    "TrainingProcess": "_record",
    "TrainingStat": "_record",
    "TrainingStep": "_record",
    "unfollowed_frameworks": "_analysis",
    "warmup_steps": "_analysis",
    "with_cpu": "_analysis_cpu",
    "with_gpu": "_analysis_gpu",
}

__all__ = [
    "TRAINING_METRICS",
    "BlockLoop",
    "BlockTraining",
    "LoopRecord",
    "PhaseIo",
    "Training",
    "TrainingCopies",
    "TrainingCopyLine",
    "TrainingCounter",
    "TrainingFigure",
    "TrainingProcess",
    "TrainingStat",
    "TrainingStep",
    "attach",
    "current_loop",
    "data_movement_figures",
    "known_peak",
    "phase_io",
    "phase_io_section",
    "read_training",
    "sent_rates",
    "start_block_loop",
    "step",
    "summarize_copies",
    "summarize_training",
    "timed_iter",
    "training_cpu_lines",
    "training_cpu_sentence",
    "training_figure",
    "training_figures",
    "training_loop",
    "training_of",
    "training_section",
    "unfollowed_frameworks",
    "warmup_steps",
    "with_cpu",
    "with_gpu",
]

__getattr__, __dir__ = _lazy.attach(__name__, _NAMES)

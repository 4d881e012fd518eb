"""Does nothing: its wall time under a tool minus its plain wall time is the tool's fixed start-up
and shutdown cost."""

pass

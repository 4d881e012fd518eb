"""Every environment variable memgauge reads or sets, in one place: what it says, who sets it and
who reads it. Constants only (the measured process imports this at start-up); each module that
reads a variable imports its name from here, and no other module spells ``MEMGAUGE_...`` out
(``tests/unit/test_env.py`` checks that). docs/measurement.md and README describe the ones a user
sets.

The one exception is ``capture/_autostart/sitecustomize.py``: it runs in every Python process of a
measured tree before memgauge is imported, and checks ``MEMGAUGE_EVENTS_DIR`` by its literal name to
stay free of imports where no run asked for capture (the test holds it to ``ENV_EVENTS_DIR``).
"""

from __future__ import annotations

# -- set by the user ---------------------------------------------------------------------------

# auto | outside | inside: who samples the lines (``RunOptions.line_sampler``; the runner reads it)
ENV_LINE_SAMPLER = "MEMGAUGE_LINE_SAMPLER"
LINE_SAMPLERS = ("auto", "outside", "inside")  # its values; unset: inside, the default
# a cgroup hierarchy's root other than /sys/fs/cgroup (a delegated subtree, a test's fake host)
ENV_CGROUP_ROOT = "MEMGAUGE_CGROUP_ROOT"
# any value: the CLI prints the traceback of an unexpected error, not only its one line
ENV_DEBUG = "MEMGAUGE_DEBUG"
# the validation service's address and token for `memgauge submit`
ENV_SERVER = "MEMGAUGE_SERVER"
ENV_TOKEN = "MEMGAUGE_TOKEN"
# the admin token `memgauge serve` starts with
ENV_ADMIN_TOKEN = "MEMGAUGE_ADMIN_TOKEN"

# -- set by the runner for the measured process --------------------------------------------------

# where the measured process writes its events (the wire format); its presence starts capture in
# every Python process of the tree (``capture/_autostart``)
ENV_EVENTS_DIR = "MEMGAUGE_EVENTS_DIR"
# "1": sample lines, folding library frames into the user's; "lib": keep library frames
ENV_LINES = "MEMGAUGE_LINES"
# the lines are read from outside: the runner's pid (the main process, its child, waits to be
# attached; any other process of the run does not)
ENV_LINES_OUTSIDE = "MEMGAUGE_LINES_OUTSIDE"
# memray's allocation tracking (``--alloc``): its options
ENV_ALLOC = "MEMGAUGE_ALLOC"
# torch tracking's mode (summary | full | off)
ENV_TORCH = "MEMGAUGE_TORCH"
# torch steps' sampling (how many steps keep their per-step figures)
ENV_TORCH_STEPS = "MEMGAUGE_TORCH_STEPS"
# the index of the training step whose FLOPs are counted; "off": none
ENV_FLOP_STEP = "MEMGAUGE_FLOP_STEP"
# a gpu budget's bytes: the cap put on torch's caching allocator (``check --enforce``)
ENV_GPU_CAP = "MEMGAUGE_GPU_CAP_BYTES"
# ``--gpu-snapshot``: the file torch's memory history is written to, its entries, and the pid of
# the process that writes it (set by the first one, inherited by the others)
ENV_GPU_SNAPSHOT = "MEMGAUGE_GPU_SNAPSHOT"
ENV_GPU_SNAPSHOT_ENTRIES = "MEMGAUGE_GPU_SNAPSHOT_ENTRIES"
ENV_GPU_SNAPSHOT_OWNER = "MEMGAUGE_GPU_SNAPSHOT_OWNER"
# the knobs a sweep or fit sets in the program (a script's module-level constants; JSON)
ENV_KNOBS = "MEMGAUGE_KNOBS"
# fit's remedies: comma-separated names of the hooked remedies, where the hooks list what they
# changed (JSON), and where the prediction run writes its figures (JSON)
ENV_REMEDY = "MEMGAUGE_REMEDY"
ENV_REMEDY_REPORT = "MEMGAUGE_REMEDY_REPORT"
# the names ENV_REMEDY may give: hooked on the model once torch is imported (the torch section's
# ``_capture_remedies``), or on pandas once imported (``capture/_remedies_tabular``)
HOOKED_REMEDIES = ("checkpoint", "autocast", "offload")
TABULAR_REMEDIES = ("dtypes",)
ENV_PREDICT = "MEMGAUGE_PREDICT"
# marks a run's processes as a service submission's, to find them after a crash
ENV_SUBMISSION = "MEMGAUGE_SERVICE_SUBMISSION"

# -- test hooks (nothing else sets them) -----------------------------------------------------------

# a JSON file of scripted allocator figures the measured process reads instead of torch.cuda
ENV_FAKE_CUDA = "MEMGAUGE_TEST_FAKE_CUDA"
# a JSON file of scripted NVML figures the runner reads instead of NVML
ENV_FAKE_NVML = "MEMGAUGE_TEST_FAKE_NVML"

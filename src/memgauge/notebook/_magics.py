"""The IPython magics: ``%memit``/``%%memit``, ``%%mgprofile``, ``%mprun`` and ``%memgauge``.

Each compiles its code first (``_code``), then measures one call of it (``_measure``), so parsing
is never part of a figure. Code runs in the user's namespace; an error in it is raised again, as
IPython raises a cell's, once what was measured has been shown.
"""

from __future__ import annotations

import os
from typing import Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class
from IPython.display import display

from memgauge.notebook._code import CellCode
from memgauge.notebook._gpu import GpuMonitor, TorchCudaMonitor
from memgauge.notebook._measure import Measured, MemitResult, measure
from memgauge.notebook._mprun import LineMemory, LineProfile
from memgauge.notebook._report import inline_bundle, report_page, summary, text_bundle
from memgauge.notebook._watch import Watch

_MEMGAUGE_HELP = """usage: %memgauge watch on|off   after every cell: peak, increment, time, GPU peak
       %memgauge watch          whether watching is on
       %memgauge history        every watched cell's figures, as a table"""


def _raise(m: Measured) -> None:
    if m.error is not None:
        raise m.error


@magics_class
class MemgaugeMagics(Magics):
    """memgauge in IPython and Jupyter; ``%load_ext memgauge`` registers it."""

    def __init__(self, shell: InteractiveShell, gpu: GpuMonitor) -> None:
        super().__init__(shell)
        self.gpu = gpu
        self.watch = Watch(shell, gpu)

    @property
    def _shell(self) -> InteractiveShell:
        assert self.shell is not None  # registered magics always have their shell
        return self.shell

    @line_cell_magic
    def memit(self, line: str, cell: str | None = None) -> MemitResult | None:
        """Peak memory and increment of a statement (``%memit``) or a cell (``%%memit``).

        ``%memit [-r N] [-c] [-o] [-q] statement``

        -r N  run N times; the peak is the highest of the runs, the increment is measured from
              the resident size before the first
        -c    include child processes (sampled every 10 ms; the figure says its error bound)
        -o    return a MemitResult (sizes in bytes, per-run figures, each run's Profile)
        -q    print nothing

        The peak is this process's VmHWM, reset before each run: exact, however short the spike.
        """
        opts, stmt = self.parse_options(line, "r:coq", posix=False, strict=False)
        if cell is not None and stmt.strip():
            raise UsageError("%%memit takes only options on its line; the code is the cell")
        source = cell if cell is not None else stmt
        if not source.strip():
            raise UsageError("%memit needs a statement: %memit x = np.ones(10**8)")
        try:
            repeat = int(opts.get("r", 1))
        except ValueError:
            raise UsageError(f"-r takes a number of runs, not {opts['r']!r}") from None
        if repeat < 1:
            raise UsageError("-r takes a number of runs of at least 1")
        code = CellCode(self._shell, source, last_expression=False)
        runs = []
        for _ in range(repeat):
            m = measure(code.run, gpu=self.gpu, children="c" in opts)
            _raise(m)
            runs.append(m)
        result = MemitResult.of(runs)
        if "q" not in opts:
            print(result.line())
        return result if "o" in opts else None

    @cell_magic
    def mgprofile(self, line: str, cell: str) -> Any:
        """The cell's full memgauge report, inline: peak, timeline, lines, phases.

        ``%%mgprofile [-c] [--no-lines] [-o NAME] [--save PATH] [--html PATH] [--text]``

        -c, --children  include child processes
        --no-lines      no line sampler (the timeline and the peak only)
        -o NAME         keep the Profile in the variable NAME
        --save PATH     write the profile as JSON (memgauge report/compare read it)
        --html PATH     write the report as a standalone HTML file too
        --text          show the report as text (markdown) instead of HTML

        The cell runs in the notebook's namespace; its last expression's value is displayed.
        """
        opts, rest = self.parse_options(line, "co:", "children", "no-lines", "save=", "html=", "text")
        if rest.strip():
            raise UsageError(f"%%mgprofile: unexpected {rest.strip()!r} (the code is the cell)")
        shell = self._shell
        code = CellCode(shell, cell, last_expression=True)
        m = measure(
            code.run,
            gpu=self.gpu,
            children="c" in opts or "children" in opts,
            lines="no-lines" not in opts,
            timeline=True,
        )
        p = m.profile
        # the report's title: the cell, not the kernel's command line
        p.command = ["%%mgprofile", f"cell:{shell.execution_count}"]
        if m.gpu is not None:
            # kept with the profile: the saved JSON says what the GPU held too
            p.metrics["gpu.peak_allocated_bytes"] = m.gpu.peak_bytes
            p.metrics["gpu.peak_reserved_bytes"] = sum(m.gpu.peak_reserved_bytes)
        if "o" in opts:
            shell.user_ns[opts["o"]] = p
        if "save" in opts:
            p.save(opts["save"])
        cwd = os.getcwd()
        if "html" in opts:
            with open(opts["html"], "w", encoding="utf-8") as f:
                f.write(report_page(p, cwd))
        show = text_bundle if "text" in opts else inline_bundle
        display(show(p, m.start_resident_bytes, m.gpu, cwd), raw=True)  # type: ignore[no-untyped-call]  # IPython's, unannotated
        _raise(m)
        return m.value

    @line_magic
    def mprun(self, line: str) -> LineProfile | None:
        """Memory of each line of the functions named with -f while a statement runs.

        ``%mprun -f FUNCTION [-f FUNCTION ...] [-o] [-q] statement``

        Per line: hits; peak (the highest resident size while the line ran, exact: VmHWM reset at
        every line event); temporary (the most it rose above its starting size: what it needed);
        increment (resident after less before, summed over hits: what it kept).
        """
        opts, stmt = self.parse_options(line, "f:oq", list_all=True, posix=False, strict=False)
        names = opts.get("f", [])
        if not names or not stmt.strip():
            raise UsageError("usage: %mprun -f FUNCTION [-f ...] statement")
        shell = self._shell
        functions = []
        for name in names:
            try:
                functions.append(eval(name, shell.user_global_ns, shell.user_ns))
            except Exception as e:
                raise UsageError(f"-f {name}: {e}") from None
        code = CellCode(shell, stmt, last_expression=False)
        try:
            tracer = LineMemory(functions)
        except TypeError as e:
            raise UsageError(str(e)) from None

        def run() -> None:
            with tracer:
                code.run()

        m = measure(run, gpu=self.gpu)
        result = tracer.result()
        if "q" not in opts:
            print(summary(m.profile, m.start_resident_bytes, m.gpu) + "\n")
            print(result)
        _raise(m)
        return result if "o" in opts else None

    @line_magic
    def memgauge(self, line: str) -> None:
        """``%memgauge watch on|off``: one line of figures after every cell; ``%memgauge history``."""
        words = line.split()
        if words[:1] == ["watch"] and len(words) <= 2:
            if words[1:] == ["on"]:
                self.watch.start()
            elif words[1:] == ["off"]:
                self.watch.stop()
            elif words[1:]:
                raise UsageError(_MEMGAUGE_HELP)
            print(f"memgauge: watch is {'on' if self.watch.on else 'off'}")
        elif words == ["history"]:
            print(self.watch.table())
        else:
            raise UsageError(_MEMGAUGE_HELP)


def _magics(shell: InteractiveShell) -> MemgaugeMagics | None:
    found = shell.magics_manager.registry.get(MemgaugeMagics.__name__)
    return found if isinstance(found, MemgaugeMagics) else None


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext memgauge``: registers the magics (once per shell)."""
    if _magics(ipython) is None:
        ipython.register_magics(MemgaugeMagics(ipython, TorchCudaMonitor()))


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """``%unload_ext memgauge``: stops watching; the magics stay, as IPython keeps them."""
    magics = _magics(ipython)
    if magics is not None:
        magics.watch.stop()


def use_gpu_monitor(monitor: GpuMonitor, ipython: InteractiveShell | None = None) -> None:
    """Replaces the GPU monitor of the loaded extension (tests inject a fake one)."""
    if ipython is None:
        from IPython import get_ipython

        ipython = get_ipython()
    magics = _magics(ipython) if ipython is not None else None
    if magics is None:
        raise RuntimeError("memgauge's IPython extension is not loaded (%load_ext memgauge)")
    magics.gpu = monitor
    magics.watch.gpu = monitor

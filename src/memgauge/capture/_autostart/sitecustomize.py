"""memgauge: instruments every Python process of a measured run.

The runner puts this directory first on ``PYTHONPATH``, so every Python process the program starts
(multiprocessing spawn, ``subprocess`` running Python) imports it at start-up, as ``site`` imports
any ``sitecustomize``. It takes its own directory off ``sys.path`` again, starts memgauge's
in-process capture, and then runs the ``sitecustomize`` it shadows, if there is one.
"""


def _memgauge_autostart() -> None:
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    while here in sys.path:
        sys.path.remove(here)
    if sys.version_info >= (3, 10) and os.environ.get("MEMGAUGE_EVENTS_DIR"):
        try:
            if "memgauge" not in sys.modules:
                # memgauge may not be installed for this interpreter: import it from where the
                # runner's copy lives, without leaving that directory on the program's path
                parent = os.path.dirname(os.path.dirname(os.path.dirname(here)))
                sys.path.insert(0, parent)
                try:
                    from memgauge.capture import _start
                finally:
                    sys.path.remove(parent)
            else:
                from memgauge.capture import _start
            _start.start_all()
        except Exception:
            pass
    for entry in sys.path:
        candidate = os.path.join(entry or ".", "sitecustomize.py")
        if os.path.isfile(candidate):
            import importlib.util

            spec = importlib.util.spec_from_file_location("sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                sys.modules["sitecustomize"] = module
                spec.loader.exec_module(module)
            break


_memgauge_autostart()

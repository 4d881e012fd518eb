"""memgauge: instruments every Python process of a measured run.

The runner puts this directory first on ``PYTHONPATH``, so every Python process the program starts
(multiprocessing spawn, ``subprocess`` running Python) imports it at start-up, as ``site`` imports
any ``sitecustomize``. It takes its own directory off ``sys.path`` again, starts memgauge's
in-process capture, and then runs the ``sitecustomize`` it shadows, if there is one.
"""


# This file must parse under any Python a program may start (Python 2 included): no annotations,
# no f-strings. It only does anything under Python >= 3.10.


def _memgauge_autostart():
    # type: () -> None
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
            # the one it shadows runs as the sitecustomize module, as site would have run it
            module = type(sys)("sitecustomize")
            module.__file__ = candidate
            sys.modules["sitecustomize"] = module
            with open(candidate, "rb") as f:
                code = compile(f.read(), candidate, "exec")
            exec(code, module.__dict__)
            break


_memgauge_autostart()

"""What python runs to start a measured program: ``python .../memgauge/capture/_launch.py
script|module TARGET ARGS`` (``BOOTSTRAP_FILE``). A file, as python runs a script, not ``python -m``
(whose runpy the program would find loaded, ~4 ms), and a few lines: python compiles the file it
runs on every start, and the bootstrap itself (``_child``) is imported, from its bytecode."""

import sys

if __name__ == "__main__":
    from memgauge.capture._child import main

    main(sys.argv[1:])

"""What the measured Python program itself runs with: its interpreter and the libraries it imported.

Imported by the bootstrap before the program runs and needing nothing but ``sys``, so that reporting
at exit imports nothing a program's own module could shadow.
"""

from __future__ import annotations

import sys

# not `from typing import ...`: the measured process should not pay for typing
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# libraries whose version changes memory behaviour; reported only when the program imported them
WATCHED_LIBRARIES = ("numpy", "pandas", "sklearn", "scipy", "torch", "tensorflow", "jax", "polars", "pyarrow")


def program_environment() -> dict[str, Any]:
    """Run inside the measured Python process, at its end: what it actually imported."""
    libraries: dict[str, str] = {}
    for name in WATCHED_LIBRARIES:
        module = sys.modules.get(name)
        if module is not None:
            libraries[name] = str(getattr(module, "__version__", "unknown"))
    v = sys.version_info
    return {
        "python": f"{v.major}.{v.minor}.{v.micro}",
        "python_implementation": sys.implementation.name,
        "python_executable": sys.executable,
        "libraries": libraries,
    }

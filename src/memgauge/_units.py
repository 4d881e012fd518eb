"""Human-readable sizes and durations, in binary units (a budget of 512 MiB means 512 * 2**20)."""

from __future__ import annotations

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def format_bytes(n: float, *, signed: bool = False) -> str:
    sign = "-" if n < 0 else ("+" if signed and n > 0 else "")
    value = abs(float(n))
    for unit in _BYTE_UNITS:
        if value < 1024 or unit == _BYTE_UNITS[-1]:
            if unit == "B":
                return f"{sign}{int(value)} B"
            return f"{sign}{value:.1f} {unit}" if value < 100 else f"{sign}{value:.0f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.0f} ms"
    if s < 60:
        return f"{s:.2f} s"
    if s < 3600:
        return f"{int(s // 60)} min {s % 60:.0f} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60)} min"

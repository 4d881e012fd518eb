"""Human-readable sizes and durations, in binary units (a budget of 512 MiB means 512 * 2**20)."""

from __future__ import annotations

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def format_bytes(n: float, *, signed: bool = False) -> str:
    sign = "-" if n < 0 else ("+" if signed and n > 0 else "")
    value = abs(float(n))
    for unit in _BYTE_UNITS:
        # compare what will be printed, so 1048575 B reads "1.0 MiB", not "1024 KiB"
        shown = round(value) if value >= 100 or unit == "B" else round(value, 1)
        if shown < 1024 or unit == _BYTE_UNITS[-1]:
            if unit == "B":
                return f"{sign}{int(shown)} B"
            return f"{sign}{value:.1f} {unit}" if value < 100 else f"{sign}{value:.0f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_seconds(s: float) -> str:
    if s < 0:  # a span whose clock ran backwards: "-500 ms", not "-500000 µs"
        return "-" + format_seconds(-s)
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.0f} ms"
    if s < 60:
        return f"{s:.2f} s"
    if s < 3599.5:
        whole = round(s)
        return f"{whole // 60} min {whole % 60} s"
    minutes = round(s / 60)
    return f"{minutes // 60} h {minutes % 60} min"

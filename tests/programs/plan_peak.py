"""Ground truth for ``memgauge plan``: a program whose memory peak is at a known time.

    python plan_peak.py PEAK_AT PEAK_MIB [DURATION] [BASE_MIB] [PEAK_SECONDS]

holds BASE_MIB (default 20) for DURATION seconds (default 4.5) and, from PEAK_AT seconds after its
start for PEAK_SECONDS (default 0.5), PEAK_MIB more; every page written."""

import sys
import time

start = time.monotonic()
peak_at, peak_mib = float(sys.argv[1]), int(sys.argv[2])
duration = float(sys.argv[3]) if len(sys.argv) > 3 else 4.5
base_mib = int(sys.argv[4]) if len(sys.argv) > 4 else 20
peak_seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 0.5


def until(t: float) -> None:
    left = start + t - time.monotonic()
    if left > 0:
        time.sleep(left)


base = b"\x01" * (base_mib << 20)
until(peak_at)
spike = b"\x02" * (peak_mib << 20)
until(peak_at + peak_seconds)
del spike
until(duration)
print(len(base) >> 20)

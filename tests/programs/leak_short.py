"""Ground truth: not a leak, too short to judge. A script of a few tenths of a second that keeps
200 x 2 MiB in a module-level list until it ends: what it holds at exit (400 MiB, on the line marked
``LINE: keep``) must be reported even though no growth can be judged in so short a run."""

MIB = 1 << 20
kept = []
for _ in range(200):
    kept.append(bytearray(b"k" * (2 * MIB)))  # LINE: keep
print(len(kept))

"""The file working set the need counts (``watcher._working_set``): the ``smaps`` parser and the
windows (tests/integration/test_working_set.py: on a real process)."""

from __future__ import annotations

import os

from memgauge.watcher._working_set import FileWorkingSet, parse_file_referenced

SMAPS = b"""00400000-00452000 r-xp 00000000 08:02 173521      /usr/lib/libfoo.so
Size:                328 kB
Rss:                 300 kB
Anonymous:             0 kB
Referenced:          120 kB
7f00-7f10 rw-p 00001000 08:02 173521      /usr/lib/libfoo.so
Rss:                  40 kB
Anonymous:            30 kB
Referenced:           40 kB
7f20-7f30 rw-p 00000000 00:00 0
Rss:                5000 kB
Anonymous:          5000 kB
Referenced:         5000 kB
7f40-7f50 rw-s 00000000 00:05 99      /dev/shm/segment
Rss:                 800 kB
Anonymous:             0 kB
Referenced:          800 kB
7f60-7f70 rw-p 00000000 00:00 0                  [heap]
Rss:                 100 kB
Anonymous:           100 kB
Referenced:          100 kB
"""


def test_only_file_mappings_count_their_referenced_pages_less_copied_ones() -> None:
    # 120 kB of the library's text, 10 kB of its data not copied (40 referenced, at most 40 - 30):
    # anonymous, heap and /dev/shm pages are counted elsewhere
    assert parse_file_referenced(SMAPS) == 130 * 1024
    assert parse_file_referenced(b"") == 0


def test_the_open_window_at_the_end_counts_all_file_pages_before_any_window_closed() -> None:
    ws = FileWorkingSet(window=0.5)
    assert not ws.due(0.1) and ws.flush({}, 0.3) is None
    ws.note(100, 0, 50, 0.1, {7: 50})
    ws.note(90, 20, 50, 0.2, {7: 50})  # 110: the window's largest
    assert ws.due(0.6)
    # no process to read: the window stays open
    assert ws.close({}, 0.6) is None and ws.windows == 0
    # at the end, no window closed: every mapped file page counts, and the process's final
    # high-water mark (a spike between samples) stands whole
    assert ws.flush({7: 200}, 0.7) == (150, 50, 0, 0.7)
    ws.note(100, 0, 50, 0.1, {7: 50})
    assert ws.flush({7: 120}, 0.7) == (100, 50, 0, 0.1)  # 150, the sample's, over 120


def test_the_typical_window_is_the_median_of_three_or_more_after_the_first() -> None:
    from memgauge.watcher._working_set import typical_window

    # the first (every page since exec, never cleared) left out: with no other, no figure (every
    # mapped file page counts, as for a program ending before any window closed)
    assert typical_window([50]) is None
    # one or two windows after it: no median yet (one window's figure moves with what it ran)
    assert typical_window([50, 8]) is None and typical_window([50, 8, 16]) is None
    assert typical_window([50, 8, 16, 10]) == 10
    assert typical_window([50, 8, 16, 10, 12]) == 11  # an even count: the middle two's mean


def test_a_costly_read_leaves_a_gap_before_the_next_window_opens_past_the_first_windows() -> None:
    from memgauge.watcher._working_set import BACK_TO_BACK

    # the watcher's CPU clock: each read and clear takes 20 ms, the last one 0.5 ms
    costs = [0.020] * BACK_TO_BACK + [0.0005]
    ticks = iter([t for c in costs for t in (0.0, c)])
    ws = FileWorkingSet(window=0.5, share=0.01, cost=lambda: next(ticks))
    me = {os.getpid(): (0, 0)}  # this process: its own smaps and bits
    now = 0.5
    for n in range(1, BACK_TO_BACK):
        # the first windows back to back, however much they cost
        assert ws.due(now)
        ws.turn(me, now)
        now += 0.5
        assert ws.windows == n and not ws.due(now - 0.01) and ws.due(now)
    ws.turn(me, now)
    assert ws.windows == BACK_TO_BACK
    # 20 ms at a 1% share: one window every 2 s, so the next opens 1.5 s after this one closed
    assert not ws.due(now + 1.49) and ws.due(now + 1.5)
    assert ws.turn(me, now + 1.5) is None and ws.windows == BACK_TO_BACK  # opened: bits cleared
    now += 2.0
    assert not ws.due(now - 0.01) and ws.due(now)  # a window as long as ever
    ws.turn(me, now)
    # a cheap read: the next window opens at once
    assert ws.windows == BACK_TO_BACK + 1 and not ws.due(now + 0.49) and ws.due(now + 0.5)


def test_a_process_no_second_window_read_counts_all_its_mapped_file_pages() -> None:
    ws = FileWorkingSet(window=0.5)
    me = {os.getpid(): (0, 1 << 40)}  # this process: its own smaps, read at windows' ends
    ws.turn(me, 0.5)
    assert ws.last_file == 1 << 40  # its first window only: all of its file RSS
    for n, at in enumerate((1.0, 1.5, 2.0), start=2):
        ws.turn(me, at)
        if n < 4:  # fewer than three windows after its first: still all of it
            assert ws.last_file == 1 << 40
    assert ws.windows == 4 and ws.last_file is not None and ws.last_file < 1 << 30  # its typical
    # a child that lived between two window ends and mapped 96 MiB of a file: its own mapped pages,
    # not the typical window of the process that lived on
    child, mib = os.getpid() + 1, 1 << 20
    ws.note(10 * mib, 0, 96 * mib, 2.2, {child: 96 * mib})
    assert ws.flush({child: 110 * mib}, 2.4) == (14 * mib, 96 * mib, 0, 2.4)

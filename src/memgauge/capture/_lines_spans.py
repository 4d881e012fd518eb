"""The outside sampler's spans, adjusted before the join (``_lines_join``): which frames a stack is
charged to (``user_keys``), memgauge's bootstrap left out, a change of stack moved to where the
thread's CPU counters say it happened (``snap_spans``), and a thread's first line of the program
moved back over the C call it was already in when py-spy first read it (``first_span_back``)."""

from __future__ import annotations

import bisect
import re

from memgauge.capture._frames import is_library, is_own

Key = tuple[str, int, str]
# a poll: (t, resident bytes, {native tid: (ns on a CPU, ns runnable without one, running now)})
Poll = tuple[float, int, dict[int, tuple[int, int, bool]]]
# a span of one thread: (start, end, frames innermost first)
Span = tuple[float, float, list[Key]]

# py-spy's stack changes land up to ~50 ms off the kernel's counters (its trace's times are when
# its main thread handled a sample; its sampling thread runs late under load): a change between an
# idle and a busy line is moved to the thread's start or stop of running within this much of it
SNAP = 0.05
IDLE, BUSY = 0.3, 0.7  # a line's CPU share over the run, below which it waits, above which it runs
# another interpreter's standard library and packages (the program may run under another Python)
_LIB_DIR = re.compile(r"/lib(64)?/python\d+\.\d+t?/")


def user_keys(frames: list[Key], lib: bool) -> tuple[list[Key], bool]:
    """The keys to charge, innermost first, as ``_frames.StackReader`` folds them: the user's frames
    (every frame but memgauge's with ``lib``), else the innermost library frame; and whether a user
    frame is among them."""
    keys: list[Key] = []
    fallback: Key | None = None
    users = 0  # keys[:users] ends with the outermost user frame seen so far
    own = False
    for key in frames:
        name = key[0]
        if is_own(name):
            own = True
            continue
        library = is_library(name) or bool(_LIB_DIR.search(name))
        if not library or lib:
            keys.append(key)
            if not library:
                users, own = len(keys), False
        elif fallback is None:
            fallback = key
    if own and lib:
        # memgauge's frames outside every user frame: the library frames between them (runpy
        # running the script) are memgauge's
        del keys[users:]
    if not keys and fallback is not None and not own:
        keys.append(fallback)
    return keys, users > 0


def bootstrap_spans(spans: list[Span], program_start: float) -> list[Span]:
    """The main thread's spans less memgauge's start-up: before the program started, a stack of
    runpy and the import system alone (no frame of memgauge's, none of the user's) is the
    bootstrap being imported, which the in-process sampler does not see either (kept, ``--lib``
    showed it as the program's library lines)."""

    def startup(span: Span) -> bool:
        frames = span[2]
        return (
            span[0] < program_start
            and bool(frames)
            and frames[-1][0].endswith(("/runpy.py", "<frozen runpy>"))
            and not user_keys(frames, lib=False)[1]
            and not any(is_own(f[0]) for f in frames)
        )

    return [span for span in spans if not startup(span)]


def first_span_back(
    spans: list[Span], polls: list[Poll], tid: int, not_before: float = float("-inf")
) -> list[Span]:
    """``spans`` with the first one of the program's own (a user frame on its stack) started
    earlier, back over the polls before it in which the thread ran (a third of the time at least)
    and the process grew at least a quarter as fast as in the span's own first interval (a
    start-up grows ten times slower than a call that builds; one interval's growth is noisy): the
    call begun before py-spy first read the process (it finds a new child process within ~100 ms)
    or right as the program started, whose growth would otherwise be the process's start-up. The
    spans before it (memgauge's bootstrap, the interpreter's start) end where it now begins.
    ``not_before``: when the bootstrap started the program, where it says so. No line of the
    program ran before it: what grew fast just before is memgauge's own start (memray's tracker
    under ``--alloc``, ~15 MiB), which went to the first line 1 run in 4 where the line's own
    first sample came late."""
    k = next((i for i, span in enumerate(spans) if user_keys(span[2], lib=False)[1]), None)
    if k is None:
        return spans
    start = max(_back(spans[k][0], polls, tid), min(not_before, spans[k][0]))
    if start >= spans[k][0]:
        return spans
    before = [(s, min(e, start), f) for s, e, f in spans[:k] if s < start]
    return [*before, (start, spans[k][1], spans[k][2]), *spans[k + 1 :]]


def _back(begin: float, polls: list[Poll], tid: int) -> float:
    """How far back from ``begin`` the polls say the call running then had already run."""
    times = [p[0] for p in polls]
    i = bisect.bisect_right(times, begin)  # polls[i - 1] <= begin < polls[i]
    if i <= 0 or i >= len(polls):
        return begin
    rate = (polls[i][1] - polls[i - 1][1]) / max(polls[i][0] - polls[i - 1][0], 1e-9)
    if rate <= 0:
        return begin
    start = begin
    for j in range(i - 1, 0, -1):
        a, b = polls[j - 1], polls[j]
        if tid not in a[2] or tid not in b[2]:
            break
        wall = max(b[0] - a[0], 1e-9)
        cpu, grown = (b[2][tid][0] - a[2][tid][0]) / 1e9, b[1] - a[1]
        # a poll is read late now and then: a thread that ran throughout shows 0.4-1.3 of an
        # interval, so the growth decides, and the CPU only that the thread was there to make it
        if cpu < 0.3 * wall or grown / wall < rate / 4:
            if cpu >= 0.1 * wall and grown > 0:
                # the call began within this interval: as much of it as it ran and as its growth
                # at the call's rate says
                start = max(a[0], b[0] - min(cpu, grown / rate))
            break
        start = a[0]
    return min(start, begin)


def _edge(polls: list[Poll], times: list[float], tid: int, t: float, rising: bool) -> float | None:
    """The time near ``t`` (within ``SNAP``) at which thread ``tid`` started (``rising``) or
    stopped running, from its CPU time between polls (``times``: theirs, for a bisection: a run
    has thousands of such changes): in the first poll interval where its CPU share crosses one
    half, it ran from the interval's end back (rising) or from its start on."""
    before: float | None = None
    first = max(0, bisect.bisect_left(times, t - SNAP) - 1)
    for i in range(first, len(polls) - 1):
        a, b = polls[i], polls[i + 1]
        if b[0] < t - SNAP or tid not in a[2] or tid not in b[2]:
            continue
        if a[0] > t + SNAP:
            break
        cpu = (b[2][tid][0] - a[2][tid][0]) / 1e9
        share = cpu / max(b[0] - a[0], 1e-9)
        if before is not None and (before < 0.5 <= share if rising else share < 0.5 <= before):
            return b[0] - min(cpu, b[0] - a[0]) if rising else a[0] + min(cpu, b[0] - a[0])
        before = share
    return None


def _rate(a: Poll, b: Poll) -> float:
    return (b[1] - a[1]) / max(b[0] - a[0], 1e-9)


def _growth_edge(polls: list[Poll], times: list[float], runs: tuple[float, float], s1: float) -> float | None:
    """Where, within ``SNAP`` before ``s1``, a change from one running line to another happened
    by the process's growth, when the second grows at least four times as fast as the first (an
    import, then ``np.ones``): the CPU counters cannot tell two running lines apart, and py-spy
    places the change up to ~50 ms late. ``runs``: when the first line's run of spans began (py-spy
    cuts a line's time into many spans, one per change of its library frames) and when the
    second's ends. Each poll interval back from ``s1`` is read as a mix of the two rates (the
    first's over its run less ``SNAP``, the second's fastest interval within ``SNAP`` of ``s1``);
    the change is where the mix says the second began. None where a rate is unknown (a run
    shorter than a poll interval) or the rates are alike (two C calls back to back)."""
    began, ends = runs
    i = bisect.bisect_right(times, s1)  # polls[i - 1] <= s1 < polls[i]
    lo, hi = bisect.bisect_left(times, began), bisect.bisect_right(times, s1 - SNAP) - 1
    top = bisect.bisect_right(times, min(ends, s1 + SNAP)) - 1
    if i <= 0 or top <= i or hi <= lo:
        return None
    first = max(0.0, _rate(polls[lo], polls[hi]))
    second = max(_rate(polls[j], polls[j + 1]) for j in range(i - 1, top))
    if second <= 4 * first:
        return None
    edge = s1
    for j in range(i, 0, -1):
        a, b = polls[j - 1], polls[j]
        wall = b[0] - a[0]
        # seconds of the interval the second line ran, by its growth over the first's rate
        part = min(max((b[1] - a[1] - first * wall) / (second - first), 0.0), wall)
        edge = b[0] - part
        if part < 0.9 * wall or a[0] <= s1 - SNAP:
            break
    return max(edge, s1 - SNAP)


def _runs(keys: list[Key | None], spans: list[Span]) -> tuple[list[float], list[float]]:
    """For each span, when the run of spans of its line it is in began and when it ends (a run:
    spans one after the other, each charged to the same line)."""
    began, ends = [0.0] * len(spans), [0.0] * len(spans)
    for i, (s, _, _) in enumerate(spans):
        same = i > 0 and keys[i] is not None and keys[i] == keys[i - 1] and spans[i - 1][1] == s
        began[i] = began[i - 1] if same else s
    for i in range(len(spans) - 1, -1, -1):
        same = i + 1 < len(spans) and keys[i] is not None and keys[i] == keys[i + 1]
        ends[i] = ends[i + 1] if same and spans[i][1] == spans[i + 1][0] else spans[i][1]
    return began, ends


def snap_spans(
    spans: list[Span], polls: list[Poll], tid: int, busy: dict[Key, float], lib: bool
) -> list[Span]:
    """``spans`` with each change between a waiting line and a running one (by ``busy``, each line's
    CPU share over the run) moved to where the kernel's counters say the thread started or stopped
    running: a C call's growth is then not charged to the sleep beside it; and each change between
    two running lines to where the growth says it was (``_growth_edge``)."""
    out = list(spans)
    times = [p[0] for p in polls]
    keys = [next(iter(user_keys(f, lib)[0]), None) for _, _, f in out]
    began, ends = _runs(keys, out)
    for i in range(1, len(out)):
        (s0, e0, f0), (s1, e1, f1) = out[i - 1], out[i]
        k0, k1 = keys[i - 1], keys[i]
        if e0 != s1 or k0 is None or k1 is None or k0 == k1:
            continue
        b0, b1 = busy.get(k0, 0.5), busy.get(k1, 0.5)
        if b0 < IDLE < BUSY < b1:
            edge = _edge(polls, times, tid, s1, rising=True)
        elif b1 < IDLE < BUSY < b0:
            edge = _edge(polls, times, tid, s1, rising=False)
        elif b0 >= IDLE and b1 >= IDLE:
            edge = _growth_edge(polls, times, (began[i - 1], ends[i]), s1)
        else:
            continue
        if edge is not None and s0 < edge < e1:
            out[i - 1], out[i] = (s0, edge, f0), (edge, e1, f1)
    return out

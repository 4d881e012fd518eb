"""Which line made what grew while a thread ran and then blocked (``_bytecode.blocked_line``):
the sampler finds a request loop on its ``time.sleep`` line, after the line that allocated
(issue 16). ``probe`` stands for the blocking call: it captures the caller's code object and
instruction as the sampler sees them."""

from __future__ import annotations

import sys

from memgauge.capture._bytecode import blocked_keys, blocked_line


def _blocked(source: str) -> int | None:
    seen: dict[str, object] = {}

    def probe(*_args: object) -> int:
        frame = sys._getframe(1)
        seen["code"], seen["lasti"] = frame.f_code, frame.f_lasti
        return 0

    namespace: dict[str, object] = {"probe": probe, "N": 10, "keep": [], "cache": {}}
    exec(compile(source, "<test>", "exec"), namespace)
    namespace["run"]()  # type: ignore[operator]
    return blocked_line(seen["code"], seen["lasti"])  # type: ignore[arg-type]


def test_the_line_before_the_block_that_builds_is_named() -> None:
    assert _blocked("def run():\n    keep.append(bytearray(b'x' * N))\n    probe(0.01)\n") == 2


def test_a_store_builds_nothing_the_call_that_made_the_value_is_named() -> None:
    source = "def run():\n    result = bytearray(N)\n    cache[1] = result\n    probe(0.01)\n"
    assert _blocked(source) == 2


def test_what_the_blocking_line_builds_for_its_call_is_its_own() -> None:
    assert _blocked("def run():\n    keep.append(1)\n    probe(bytearray(N))\n") == 3


def test_no_building_line_before_the_block_in_its_function_or_loop_is_none() -> None:
    assert _blocked("def run():\n    x = 1\n    probe(x)\n") is None
    source = "def run():\n    for _ in range(1):\n        probe(0.01)\n        keep.append(bytearray(N))\n"
    assert _blocked(source) is None


def test_keys_change_only_in_their_innermost_line() -> None:
    seen: dict[str, object] = {}

    def probe() -> None:
        frame = sys._getframe(1)
        seen["position"] = (frame.f_code, frame.f_lasti)

    def run() -> None:
        keep = [bytearray(10)]  # the line that builds
        probe()
        del keep

    run()
    keys = [("f.py", 99, "run"), ("f.py", 5, "main")]
    assert blocked_keys(keys, None) is keys
    moved = blocked_keys(keys, seen["position"])  # type: ignore[arg-type]
    assert moved == [("f.py", run.__code__.co_firstlineno + 1, "run"), ("f.py", 5, "main")]


def test_a_sequence_repetition_before_a_call_is_named_over_the_call() -> None:
    # a child builds its array, signals that it is ready, then sleeps (tests/programs/spawn_child_peak.py)
    source = "def run():\n    block = b'x' * N\n    keep.append(len(block))\n    probe(0.5)\n"
    assert _blocked(source) == 2

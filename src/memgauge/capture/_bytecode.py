"""Which line held the GIL through a long C operation.

When C code keeps the GIL (``b"x" * n``, ``json.loads``, ``np.array(a_list)``), the sampler gets it
back only at the thread's next eval-breaker check, which may already be on a later line. The
operation must lie between the previous instruction that always checks (a function's start, a
loop's jump back) and the current instruction. Of the operations there, the one most likely to run
long in C is taken, the last of equals: sequence repetition (``b"x" * n``) first, then calls and
other C operations; calls of builtins that are always quick (``len``, ``isinstance``) never. The
call that follows a long operation on the next line can therefore be blamed for it when the
operation is not a sequence repetition: a known limit of sampling without an allocator hook.
Used only after such a stall, so ``dis`` is imported only then.

The same reading of the bytecode names the line that grew a process while a thread ran and then
blocked (``blocked_line``): sampling finds a request loop on its ``time.sleep`` line, after the
line that allocated. ``dis`` is imported the first time such growth is seen.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

    from memgauge.capture._frames import At, Position

    Key = tuple[str, int, str]

# instructions that always check for a GIL drop request (3.10 to 3.13). Calls check too, but not
# every specialised form (3.11's len() does not), so they do not bound the search.
_BREAKERS = frozenset({"RESUME", "JUMP_BACKWARD", "JUMP_ABSOLUTE"})
_CALLS = frozenset(
    {"PRECALL", "CALL", "CALL_FUNCTION", "CALL_METHOD", "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "CALL_KW"}
)
_OTHER_LONG = frozenset(
    {
        "BINARY_OP",
        "BINARY_MULTIPLY",
        "INPLACE_MULTIPLY",
        "BINARY_SUBSCR",
        "STORE_SUBSCR",
        "BUILD_STRING",
        "LIST_EXTEND",
    }
)
_CHEAP_CALLEES = frozenset(
    {"len", "isinstance", "issubclass", "id", "type", "hasattr", "getattr", "callable"}
)

# code object -> [(offset, opname, line, rank)]: how likely the instruction is to hold the GIL long:
# 2 sequence repetition (b"x" * n), 1 a call or another C operation, 0 never
_cache: dict[CodeType, list[tuple[int, str, int, int]]] = {}


def _rank(opname: str, argrepr: str, callee: str | None) -> int:
    if opname in _CALLS:
        return 0 if callee in _CHEAP_CALLEES else 1
    if opname in _OTHER_LONG:
        return 2 if argrepr in ("*", "*=") or opname in ("BINARY_MULTIPLY", "INPLACE_MULTIPLY") else 1
    return 0


def _instructions(code: CodeType) -> list[tuple[int, str, int, int]]:
    found = _cache.get(code)
    if found is None:
        import dis

        found = []
        line = code.co_firstlineno
        callee: str | None = None
        for ins in dis.get_instructions(code):
            positions = getattr(ins, "positions", None)  # 3.11+
            if positions is not None and positions.lineno is not None:
                line = positions.lineno
            elif isinstance(ins.starts_line, int) and not isinstance(ins.starts_line, bool):
                line = ins.starts_line
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                callee = str(ins.argval)
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                callee = None
            found.append((ins.offset, ins.opname, line, _rank(ins.opname, ins.argrepr, callee)))
        _cache[code] = found
    return found


def stalled_line(code: CodeType, lasti: int) -> int | None:
    """The line of the operation that most likely kept the GIL until the frame running ``code``
    reached the eval-breaker check at ``lasti``, or None when it cannot be told."""
    try:
        instructions = _instructions(code)
    except Exception:
        return None
    span: list[tuple[int, str, int, int]] = []
    for ins in instructions:
        if ins[0] > lasti:
            break
        if ins[1] in _BREAKERS and ins[0] < lasti:
            span = []  # the thread checked here, so the stall began after it
        else:
            span.append(ins)
    if not span:
        return None
    best = max(span, key=lambda ins: (ins[3], ins[0]))
    return best[2] if best[3] > 0 else span[-1][2]


# what builds a new object: calls (but the quick builtins), operators, subscripts (slices copy),
# literals. A store (``cache[key] = value``, ``obj.attr = value``) keeps what another line built.
_BUILDS = frozenset({"BINARY_OP", "BINARY_MULTIPLY", "INPLACE_MULTIPLY", "BINARY_SUBSCR", "LIST_EXTEND"})


def _allocates(opname: str, rank: int) -> bool:
    return (rank > 0 and (opname in _CALLS or opname in _BUILDS)) or opname.startswith("BUILD_")


_blocked: dict[tuple[CodeType, int], int | None] = {}


def blocked_line(code: CodeType, lasti: int) -> int | None:
    """The line that most likely made what grew while a thread ran, when it was then found blocked
    (sleeping, waiting) in a call at ``lasti`` of ``code``: of the lines before the blocking one
    that build something, the one whose operation is likeliest to build much (a sequence
    repetition, ``b"x" * n``, over a call), the nearest of equals; the blocking line itself when
    it builds what it passes; None when no line before it in the function builds anything.

    The thread spent its CPU time, and touched its new pages, before it blocked: a request loop
    ``keep.append(bytearray(n)); time.sleep(...)`` is seen on the sleep line almost every sample.
    Lines are taken in code order, not execution order: a blocking call first in a ``for`` loop's
    body, or first in a function, keeps the growth itself (issue 16)."""
    # once per blocking instruction: a loop that sleeps is seen at the same one every sample
    key = (code, lasti)
    if key in _blocked:
        return _blocked[key]
    try:
        instructions = _instructions(code)
    except Exception:
        return None
    _blocked[key] = found = _line_before(instructions, lasti)
    return found


_compiled: dict[str, CodeType | None] = {}


def blocked_line_of_source(filename: str, function: str, line: int) -> int | None:
    """``blocked_line`` for a thread seen from outside the process (py-spy gives a file, a function
    and a line, not a code object): the file compiled here, the function's code found by name and
    line, the block taken at the last call on ``line``. None where the file cannot be read or
    compiled, or no such code is in it."""
    if filename not in _compiled:
        try:
            with open(filename, "rb") as f:
                _compiled[filename] = compile(f.read(), filename, "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            _compiled[filename] = None
    module = _compiled[filename]
    code = None if module is None else _code_at(module, function, line)
    if code is None:
        return None
    instructions = _instructions(code)
    on_line = [ins for ins in instructions if ins[2] == line]
    calls = [ins for ins in on_line if ins[1] in _CALLS]
    if not on_line:
        return None
    return blocked_line(code, (calls or on_line)[-1][0])


def _code_at(code: CodeType, function: str, line: int) -> CodeType | None:
    """The innermost code object named ``function`` (``<module>`` for the file's own) whose lines
    hold ``line``."""
    for const in code.co_consts:
        if hasattr(const, "co_lines"):  # a nested function's or class's code
            inner = _code_at(const, function, line)
            if inner is not None:
                return inner
    if code.co_name == function and any(n == line for _, _, n in code.co_lines()):
        return code
    return None


def _line_before(instructions: list[tuple[int, str, int, int]], lasti: int) -> int | None:
    # the instruction running (the blocking call) is the last at or before ``lasti``, which may
    # point into the call's inline cache
    ran = [ins for ins in instructions if ins[0] <= lasti]
    if not ran:
        return None
    current = ran[-1][2]
    # (rank, line): the likeliest to build much (sequence repetition first, as for a stall), the
    # nearest of equals
    found: tuple[int, int] | None = None
    for _, opname, line, rank in ran[:-1]:
        if opname in ("RESUME", "FOR_ITER"):
            # a function's start, or a loop's head: the body before it did not run last
            found = None
            continue
        # on the blocking line itself, anything but the blocking call's own set-up: what it
        # builds for the call (``queue.put(bytearray(n))``) is the blocking line's
        builds = _allocates(opname, rank) and (line != current or opname != "PRECALL")
        if builds and (found is None or max(rank, 1) >= found[0]):
            found = (max(rank, 1), line)
    return None if found is None else found[1]


def entered(code: CodeType, lasti: int) -> bool:
    """Whether a frame at ``lasti`` of ``code`` has run nothing of its body yet: ``lasti`` is at its
    first ``RESUME`` (3.11+) or before it."""
    try:
        instructions = _instructions(code)
    except Exception:
        return False
    return next((lasti <= ins[0] for ins in instructions if ins[1] == "RESUME"), False)


def stalled_keys(keys: list[Key], position: At) -> None:
    """Charge a long GIL-holding operation to its own line: ``keys[0]`` becomes that line. A frame
    found just entered ran none of it: the operation was its caller's, before the call (a pool's
    worker building its result, found as it enters ``queue.put``), and the caller's line takes it."""
    code, lasti, caller = position
    if caller is not None and entered(code, lasti):
        key, code, lasti = caller
        # the caller is keys[1] when it is charged too; else it takes the callee's place
        keys[:] = [key, *keys[2 if keys[1:2] == [key] else 1 :]]
    line = stalled_line(code, lasti)
    if line is not None:
        keys[0] = (keys[0][0], line, keys[0][2])


def blocked_keys(keys: list[Key], blocked: Position) -> list[Key]:
    """The keys to credit with what grew while a thread ran that is now blocked at ``blocked``
    (None: it is not): the line before the block that built something (``blocked_line``)."""
    if blocked is None:
        return keys
    line = blocked_line(blocked[0], blocked[1])
    if line is None or line == keys[0][1]:
        return keys
    return [(keys[0][0], line, keys[0][2]), *keys[1:]]

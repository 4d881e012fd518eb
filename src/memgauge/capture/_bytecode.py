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
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

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

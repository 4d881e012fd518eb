"""The server's front door: which connections it keeps, in front of uvicorn's HTTP/1.1 protocol.

uvicorn alone counts every open connection against ``limit_concurrency`` and gives a connection
that never finishes its request headers no deadline, so a few hundred idle sockets from anyone
make every request answer 503. The other ASGI servers on PyPI do not have all three rules below
either (docs/service.md says which has what), so the front is a subclass of uvicorn's h11 protocol
that adds them:

- a **deadline for a request's headers**: a connection whose request headers are not complete
  ``header_seconds`` after it opened, or after its last response, is closed (idle and slow
  clients alike: a header byte every few seconds does not keep it);
- a **limit per client address**: past ``per_client`` open connections from one address, a new
  one from it is closed at once;
- **idle connections do not take the places of working ones**: when ``max_connections`` are
  open, a new connection closes the oldest one still waiting for its headers (one that has a
  request in flight is never closed for it); only when every place is working is the new one
  refused.

Requests are not counted against a concurrency limit: a connection holds one request at a time, so
``max_connections`` bounds the requests in flight too.
"""

from __future__ import annotations

import asyncio
import resource
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    _Protocol = H11Protocol
else:
    _Protocol = object  # uvicorn is the service extra's: imported where a server starts

__all__ = ["Front", "FrontLimits", "open_files_limit", "protocol_class", "run_server"]

# files the server keeps for itself beside its connections: the database, logs, runs' pipes
_RESERVED_FILES = 256


@dataclass(frozen=True)
class FrontLimits:
    """``memgauge serve --max-connections``, ``--max-connections-per-client``, ``--header-timeout``."""

    max_connections: int = 4096
    per_client: int = 128
    header_seconds: float = 10.0


@dataclass
class Front:
    """What the server's connections share: how many each client address holds, and the ones
    waiting for their request headers, oldest first (the ones a new connection may close)."""

    limits: FrontLimits
    by_client: dict[str, int] = field(default_factory=dict)
    waiting: OrderedDict[Any, None] = field(default_factory=OrderedDict)
    open: int = 0
    refused: int = 0
    evicted: int = 0
    expired: int = 0


def open_files_limit(wanted: int) -> int:
    """Raises this process's soft limit on open files towards ``wanted`` connections plus what the
    server keeps for itself (as far as the hard limit allows) and returns the connections it leaves
    room for."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = wanted + _RESERVED_FILES
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - _RESERVED_FILES))


class _FrontRules(_Protocol):
    """The front's rules over uvicorn's h11 protocol (the class ``protocol_class`` makes puts this
    before ``H11Protocol``): ``front`` is the state its connections share."""

    front: Front
    _counted: str | None = None
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        front, limits = self.front, self.front.limits
        host = self.client[0] if self.client else ""
        if front.by_client.get(host, 0) >= limits.per_client:
            front.refused += 1
            transport.close()
            return
        if front.open >= limits.max_connections and not self._make_room():
            front.refused += 1
            transport.close()
            return
        self._counted = host
        front.by_client[host] = front.by_client.get(host, 0) + 1
        front.open += 1
        self._wait_for_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_done()
        self._uncount()
        super().connection_lost(exc)

    def _uncount(self) -> None:
        host = self._counted
        if host is None:
            return
        self._counted = None
        self.front.open -= 1
        left = self.front.by_client.get(host, 1) - 1
        if left > 0:
            self.front.by_client[host] = left
        else:
            self.front.by_client.pop(host, None)

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # a request's headers are complete: it is working now
            self._headers_done()

    def on_response_complete(self) -> None:
        cycle = self.cycle
        super().on_response_complete()
        # the next request's headers have a deadline of their own (uvicorn's keep-alive timeout
        # ends a silent connection sooner; a slow trickle of bytes cancels that one, not this)
        if self.cycle is cycle and self._counted is not None and not self.transport.is_closing():
            self._wait_for_headers()

    def _wait_for_headers(self) -> None:
        self._headers_done()
        self._deadline = self.loop.call_later(self.front.limits.header_seconds, self._expire)
        self.front.waiting[self] = None

    def _headers_done(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self.front.waiting.pop(self, None)

    def _expire(self) -> None:
        self._deadline = None
        self.front.waiting.pop(self, None)
        if not self.transport.is_closing():
            self.front.expired += 1
            self.transport.close()

    def _make_room(self) -> bool:
        """Closes the oldest connection still waiting for its headers; False when every open
        connection has a request in flight."""
        front = self.front
        while front.waiting:
            oldest, _ = front.waiting.popitem(last=False)
            oldest._headers_done()
            if not oldest.transport.is_closing():
                front.evicted += 1
                # its place is free now, not once the loop reports it lost: a burst of new
                # connections closes one waiting connection each, not more
                oldest._uncount()
                oldest.transport.close()
                return True
        return False


def protocol_class(front: Front) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the front's rules (``uvicorn.Config(http=...)`` takes the class;
    uvicorn makes one per connection)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    made: type[H11Protocol] = type("FrontProtocol", (_FrontRules, H11Protocol), {"front": front})
    return made


def run_server(app: Any, sock: Any, limits: FrontLimits, *, log_level: str = "warning") -> Front:
    """Serves ``app`` on the listening socket ``sock`` behind the front until the server stops;
    the front's counts are returned. The open-files limit is raised first, and ``max_connections``
    lowered to what it allows."""
    import dataclasses

    import uvicorn

    room = open_files_limit(limits.max_connections)
    if room < limits.max_connections:
        limits = dataclasses.replace(limits, max_connections=room)
    front = Front(limits)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        http=protocol_class(front),
        # the front bounds connections (and so requests) itself; uvicorn's limit would count idle ones
        limit_concurrency=None,
    )
    uvicorn.Server(config).run(sockets=[sock])
    return front

"""The Ray engine: each job is one Ray task, placed on a node with room for its ``Resources``.

Ray places work; the job isolates and measures it. The task runs ``_job.execute_job`` on the node
(a fresh ``memgauge run`` child process there) and returns the ``JobResult`` as plain data, so
nothing but dicts crosses the wire.

``address=None`` joins the Ray cluster this machine already runs (``ray start``, ``RAY_ADDRESS``) or
starts a local one; an address (``HOST:PORT``, ``ray://HOST:PORT``) connects to that cluster. The
nodes must have memgauge installed in the Python that runs their Ray workers (the same version as
here); a local cluster started by this engine uses this very interpreter, so it has. A job without
a ``cwd`` runs in the directory the sweep runs in, as it would locally: on a remote cluster, give
jobs a ``cwd`` that exists on the nodes. Clusters with token authentication (Ray's default for
clusters it starts itself) need ``RAY_AUTH_MODE=token`` and the token (``RAY_AUTH_TOKEN`` or
``~/.ray/auth_token``) to connect to by address.

Cancelling a running job interrupts its task politely (``ray.cancel(force=False)``): the task then
stops the run the way a timeout does (SIGTERM, then SIGKILL to the run's process group) and returns
what it measured. Only a task that does not stop within ``CANCEL_GRACE_SECONDS`` has its worker
killed (``force=True``), which could leave the run's processes behind, as their own session.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import socket
import threading
import time
from collections import deque
from concurrent.futures import Future
from typing import Any

from memgauge._errors import UsageError
from memgauge.sweep._engine import JobHandle
from memgauge.sweep._job import Job, JobResult, execute_job

# after a polite cancel, how long a task has to stop its run (execute_job gives SIGTERM 5 s)
CANCEL_GRACE_SECONDS = 12.0
# how long close() waits for cancelled tasks to come back before giving up on them
CLOSE_SECONDS = CANCEL_GRACE_SECONDS + 8.0
# how long to try to reach a cluster's address before saying it cannot be reached
CONNECT_SECONDS = 5.0

_INSTALL_HINT = "--engine ray needs Ray: pip install 'memgauge[ray]'"


def _run_on_node(job_data: dict[str, Any]) -> dict[str, Any]:
    """The Ray task (on the node): run the job to its end and return its result as plain data.

    The job runs in a thread, so the KeyboardInterrupt that ``ray.cancel`` raises in the task's
    main thread lands here, outside execute_job, and becomes its cancel event: the run is stopped
    and reaped, not orphaned."""
    job = Job.from_dict(job_data)
    cancel = threading.Event()
    box: list[JobResult] = []

    def target() -> None:
        try:
            box.append(execute_job(job, cancel))
        except BaseException as e:  # a bug in memgauge, not in the job: still a result
            box.append(JobResult(job.id, None, f"memgauge failed on the node: {e!r}", None))

    thread = threading.Thread(target=target, name=f"memgauge-job-{job.id}", daemon=True)
    try:
        thread.start()
    except KeyboardInterrupt:
        cancel.set()
    while thread.is_alive():
        try:
            thread.join(0.1)
        except KeyboardInterrupt:
            cancel.set()
    if not box:
        return JobResult(job.id, None, "cancelled", None, host=socket.gethostname(), cancelled=True).to_dict()
    return box[0].to_dict()


class _RayHandle:
    def __init__(self, job: Job, engine: RayEngine) -> None:
        self.job = job
        self._engine = engine
        self._future: Future[JobResult] = Future()
        self._future.add_done_callback(self._on_future_cancelled)
        # the engine's thread owns these
        self.ref: Any = None
        self.cancel_requested = False
        self.cancel_sent = False

    @property
    def future(self) -> Future[JobResult]:
        return self._future

    def cancel(self) -> None:
        self.cancel_requested = True
        self._engine._post(("cancel", self))

    def _on_future_cancelled(self, future: Future[JobResult]) -> None:
        # someone cancelled the future itself: stop the job too
        if future.cancelled():
            self.cancel()

    def _resolve(self, result: JobResult) -> None:
        with contextlib.suppress(Exception):  # InvalidStateError: resolved or cancelled already
            self._future.set_result(result)


def _import_ray() -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError as e:
        raise UsageError(_INSTALL_HINT) from e
    return ray


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _check_reachable(address: str) -> None:
    """Fail in seconds, with the reason, where Ray would retry an unreachable address for long."""
    host_port = address.removeprefix("ray://")
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        return  # "auto", "local", or a form Ray understands and we do not
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS):
            pass
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise UsageError(f"cannot connect to the Ray cluster at {address}: {reason}") from e


def _connect(ray: Any, address: str | None) -> bool:
    """Connect this process to Ray; True when this call made the connection (and so owns it)."""
    if ray.is_initialized():
        return False  # the program already uses Ray: share its connection
    if address is not None:
        _check_reachable(address)
    try:
        ray.init(
            address=address,
            ignore_reinit_error=True,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=True,
            logging_level=logging.ERROR,
        )
    except Exception as e:
        where = "a local Ray cluster" if address is None else f"the Ray cluster at {address}"
        message = f"cannot connect to {where}: {_one_line(e)}"
        if address is not None and "RAY_AUTH_MODE" not in os.environ:
            message += " (if it uses token authentication, set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN)"
        raise UsageError(message) from e
    return True


def _failure(job: Job, error: BaseException) -> str:
    cause = getattr(error, "cause", None)  # RayTaskError: the exception the task raised
    text = _one_line(cause if isinstance(cause, BaseException) else error)
    if isinstance(cause, ImportError) and "memgauge" in str(cause):
        text += " (install memgauge on the cluster's nodes)"
    return f"ray task failed: {text}"


class RayEngine:
    """Jobs as Ray tasks, each asking for its ``Resources`` (CPUs, GPUs, memory). ``concurrency``:
    at most that many tasks submitted at once, the rest wait here; None lets Ray run as many as
    the cluster has room for."""

    name = "ray"

    def __init__(self, address: str | None = None, concurrency: int | None = None) -> None:
        if concurrency is not None and concurrency < 1:
            raise UsageError("--concurrency must be at least 1")
        self.concurrency: int | None = concurrency
        self.address = address
        self._ray = _import_ray()
        self._owns_connection = _connect(self._ray, address)
        # no retries: a job is one run; a crashed or killed worker is reported, not run again
        self._remote = self._ray.remote(max_retries=0)(_run_on_node)
        self._cwd = os.getcwd()
        self._events: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._pending: deque[_RayHandle] = deque()
        self._running: set[_RayHandle] = set()
        self._closing = False
        self._closed = False
        self._close_lock = threading.Lock()
        # one thread makes every Ray call and resolves every future: Ray's completion callbacks
        # only post to it, and callbacks on our futures never run on Ray's own threads
        self._thread = threading.Thread(target=self._loop, name="memgauge-ray", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> JobHandle:
        if self._closing:
            raise RuntimeError("the Ray engine is closed")
        handle = _RayHandle(job, self)
        self._post(("submit", handle))
        return handle

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._closing = True
        self._post(("close",))
        self._thread.join(CLOSE_SECONDS + 5)
        if self._owns_connection:
            with contextlib.suppress(Exception):
                self._ray.shutdown()

    def __enter__(self) -> RayEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # the engine's thread

    def _post(self, event: tuple[Any, ...]) -> None:
        self._events.put(event)

    def _loop(self) -> None:
        deadline: float | None = None
        while True:
            timeout = None if deadline is None else max(0.0, deadline - _now())
            try:
                event = self._events.get(timeout=timeout)
            except queue.Empty:
                break  # closing, and the cancelled tasks did not come back in time
            first_close = event[0] == "close" and deadline is None
            if first_close:
                deadline = _now() + CLOSE_SECONDS
            try:
                self._handle(event, first_close, closing=deadline is not None)
            except Exception as e:  # a Ray call failed: fail the job it was for, keep going
                failed = event[1] if len(event) > 1 else None
                if isinstance(failed, _RayHandle):
                    self._running.discard(failed)
                    failed._resolve(JobResult(failed.job.id, None, _failure(failed.job, e), None))
            if deadline is not None and not self._running and not self._pending:
                break
        for handle in [*self._pending, *self._running]:
            handle._resolve(_cancelled(handle.job))

    def _handle(self, event: tuple[Any, ...], first_close: bool, *, closing: bool) -> None:
        """One event on the engine's thread: at the first "close", every job is cancelled; while
        closing, nothing submitted starts."""
        kind = event[0]
        if kind == "submit":
            self._pending.append(event[1])
        elif kind == "done":
            self._done(event[1], event[2])
        elif kind == "cancel":
            self._cancel(event[1])
        elif kind == "force":
            self._force(event[1])
        elif first_close:
            for handle in [*self._pending, *self._running]:
                handle.cancel_requested = True
                self._cancel(handle)
        if not closing:
            self._pump()
            return
        # submitted while closing: never started
        while self._pending:
            handle = self._pending.popleft()
            handle._resolve(_cancelled(handle.job))

    def _pump(self) -> None:
        while self._pending and (self.concurrency is None or len(self._running) < self.concurrency):
            handle = self._pending.popleft()
            if handle.cancel_requested:
                handle._resolve(_cancelled(handle.job))
                continue
            try:
                ref = self._options(handle.job).remote(self._job_data(handle.job))
            except Exception as e:  # bad resources, lost connection
                error = f"ray could not submit the job: {_one_line(e)}"
                handle._resolve(JobResult(handle.job.id, None, error, None))
                continue
            handle.ref = ref
            self._running.add(handle)
            ref.future().add_done_callback(lambda f, h=handle: self._post(("done", h, f)))

    def _options(self, job: Job) -> Any:
        resources = job.resources
        options: dict[str, Any] = {
            "num_cpus": resources.cpus,
            "num_gpus": resources.gpus,
            "name": f"memgauge-job:{job.id}",
        }
        if resources.memory_bytes is not None:
            options["memory"] = resources.memory_bytes
        return self._remote.options(**options)

    def _job_data(self, job: Job) -> dict[str, Any]:
        data = job.to_dict()
        if data["cwd"] is None:
            data["cwd"] = self._cwd  # as a local run would: relative paths mean the same
        return data

    def _done(self, handle: _RayHandle, ray_future: Future[Any]) -> None:
        if handle not in self._running:
            return
        self._running.discard(handle)
        try:
            data = ray_future.result()
        except BaseException as e:  # TaskCancelledError, WorkerCrashedError, RayTaskError, ...
            if handle.cancel_requested:
                handle._resolve(_cancelled(handle.job))
            else:
                handle._resolve(JobResult(handle.job.id, None, _failure(handle.job, e), None))
            return
        try:
            result = JobResult.from_dict(data)
        except Exception as e:  # a node with another memgauge version
            error = f"the node returned a result this memgauge cannot read: {_one_line(e)}"
            result = JobResult(handle.job.id, None, error, None)
        handle._resolve(result)

    def _cancel(self, handle: _RayHandle) -> None:
        if handle in self._pending:
            self._pending.remove(handle)
            handle._resolve(_cancelled(handle.job))
        elif handle in self._running and not handle.cancel_sent:
            handle.cancel_sent = True
            self._ray.cancel(handle.ref, force=False)
            timer = threading.Timer(CANCEL_GRACE_SECONDS, self._post, (("force", handle),))
            timer.daemon = True
            timer.start()

    def _force(self, handle: _RayHandle) -> None:
        if handle in self._running:
            self._ray.cancel(handle.ref, force=True)


def _cancelled(job: Job) -> JobResult:
    return JobResult(job.id, None, "cancelled", None, cancelled=True)


def _now() -> float:
    return time.monotonic()

"""Engines: where jobs run. One interface for the sweep and the validation service.

An engine places jobs and hands back a handle per job; it neither isolates nor measures them, the
job does that itself (``_job.execute_job``: a fresh ``memgauge run`` child process wherever it
lands). ``LocalEngine`` runs them on this machine, ``concurrency`` at a time; ``RayEngine``
(``_ray.py``, optional extra) places each on a node of a Ray cluster with room for its
``Resources``.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from memgauge._errors import UsageError
from memgauge.sweep._job import Job, JobResult, execute_job


class JobHandle(Protocol):
    """A submitted job. ``future`` resolves to its ``JobResult`` (never to an exception for
    anything the job did); ``cancel()`` stops it whether it is queued or running."""

    job: Job

    @property
    def future(self) -> Future[JobResult]: ...

    def cancel(self) -> None: ...


class Engine(Protocol):
    """``name``: for records and messages; ``concurrency``: how many jobs may run at once (None:
    as many as the cluster has room for)."""

    name: str
    concurrency: int | None

    def submit(self, job: Job) -> JobHandle: ...

    def close(self) -> None:
        """Cancel what is still queued or running and release the engine's resources."""


class _LocalHandle:
    def __init__(self, job: Job, executor: ThreadPoolExecutor) -> None:
        self.job = job
        self._cancel = threading.Event()
        self._future = executor.submit(self._execute)

    def _execute(self) -> JobResult:
        if self._cancel.is_set():
            return JobResult(self.job.id, None, "cancelled", None, cancelled=True)
        return execute_job(self.job, self._cancel)

    @property
    def future(self) -> Future[JobResult]:
        return self._future

    def cancel(self) -> None:
        self._cancel.set()


class LocalEngine:
    """Jobs on this machine, ``concurrency`` at a time (default 1: concurrent runs disturb each
    other's times, and on a small machine each other's memory)."""

    name = "local"

    def __init__(self, concurrency: int = 1) -> None:
        if concurrency < 1:
            raise UsageError("--concurrency must be at least 1")
        self.concurrency: int | None = concurrency
        self._executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="memgauge-job")
        self._handles: list[_LocalHandle] = []

    def submit(self, job: Job) -> JobHandle:
        handle = _LocalHandle(job, self._executor)
        self._handles.append(handle)
        return handle

    def close(self) -> None:
        for handle in self._handles:
            handle.cancel()
        self._executor.shutdown(wait=True)

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

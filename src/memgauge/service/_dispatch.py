"""The dispatcher: takes queued submissions from the database, runs them through an engine (the
sweep's: local workers or Ray), stores what came back, judges it against the submission's budget.

The database is the queue. A submission is claimed (status ``running``, a worker name, a heartbeat)
before it is handed to the engine, and its result is stored only while the claim holds. So:

- a server that stops on purpose puts its running submissions back in the queue, uncharged;
- a server that dies leaves them ``running``; the next server on the same host (at start) or any
  server after the lease expires (a heartbeat older than ``lease_seconds``) re-queues them, charged
  one attempt, and kills what is left of their runs on this host;
- a worker (the run's ``memgauge run`` process, a Ray worker) that dies mid-run gives a result
  without a profile: the submission is re-queued, charged;
- after ``max_attempts`` charged starts the submission fails with the reason.

A submission whose policy proves a pass (``prove``) runs twice while it holds its claim: the
measured run (held at the server's memory cap only), then, when that passed, the proof under the
budget's ``rss`` (``_proof``); its result is stored once both are in.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from memgauge._env import ENV_SUBMISSION
from memgauge.service import _admission as admission
from memgauge.service import _store as store
from memgauge.service._models import Submission, utcnow

if TYPE_CHECKING:
    from memgauge.service._db import Database
    from memgauge.service._proof import Pending
    from memgauge.service._settings import Settings
    from memgauge.sweep import Engine, Job, JobHandle, JobResult

HEARTBEAT_SECONDS = 5.0


class Dispatcher:
    def __init__(self, db: Database, settings: Settings, engine: Engine) -> None:
        self.db = db
        self.settings = settings
        self.engine = engine
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._done: queue.Queue[tuple[str, JobResult | BaseException]] = queue.Queue()
        self._handles: dict[str, JobHandle] = {}
        self._thread = threading.Thread(target=self._loop, name="memgauge-dispatch", daemon=True)
        self._last_heartbeat = 0.0
        self._last_recovery = 0.0
        # submissions whose measured run passed, their proof running: what to store with it
        self._proving: dict[str, Pending] = {}
        self._caches: dict[str, str] = {}  # how cold a proof's runs were

    @property
    def in_flight(self) -> int:
        return len(self._handles)

    def start(self) -> None:
        from memgauge.isolation import reap_orphaned_runs

        # before the queue: what a killed server's runs left on this host dies now, not when (and
        # if) another run starts; found by their cgroups and uids, whatever they did to their
        # environment and session
        reap_orphaned_runs()
        self.recover()
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        """Stop taking work. Runs still going are stopped and go back to the queue, uncharged; a
        run that finished before it is stored as usual."""
        self._stopping.set()
        self._wake.set()
        self._thread.join()
        for handle in self._handles.values():
            handle.cancel()
        self.engine.close()
        while True:
            try:
                sub_id, outcome = self._done.get_nowait()
            except queue.Empty:
                break
            self._handles.pop(sub_id, None)
            sub = self._own(sub_id)
            if sub is None:
                continue
            if isinstance(outcome, BaseException) or outcome.cancelled:
                self._put_back(sub)
            else:
                self._store_or_fail(sub, outcome)
        for sub_id in list(self._handles):
            sub = self._own(sub_id)
            if sub is not None:
                self._put_back(sub)
        self._handles.clear()
        self._proving.clear()

    def _put_back(self, sub: Submission) -> None:
        """A run stopped with the server: queued again, or cancelled if its owner asked."""
        if sub.cancel_requested:
            store.finish(
                self.db, sub.id, self.worker, status=store.CANCELLED, finished_at=utcnow(), reason="cancelled"
            )
        else:
            store.requeue_or_fail(
                self.db, sub, "the server stopped", self.settings.max_attempts, charge=False
            )

    def _own(self, sub_id: str) -> Submission | None:
        sub = store.get_submission(self.db, sub_id)
        if sub is None or sub.status != store.RUNNING or sub.worker != self.worker:
            return None
        return sub

    # -- the loop ----------------------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                self._step()
            except Exception as e:  # a database hiccup must not end dispatching for good
                import sys

                print(f"memgauge serve: dispatcher: {type(e).__name__}: {e}", file=sys.stderr)
                time.sleep(1.0)
            self._wake.wait(self.settings.poll_seconds)
            self._wake.clear()

    def _step(self) -> None:
        self._collect()
        ids = list(self._handles)
        for sub_id in store.cancel_requested(self.db, ids):
            self._handles[sub_id].cancel()
        now = time.monotonic()
        if now - self._last_heartbeat >= HEARTBEAT_SECONDS:
            store.heartbeat(self.db, ids)
            self._last_heartbeat = now
        if now - self._last_recovery >= self.settings.lease_seconds / 2:
            self.recover()
        if self._stopping.is_set():
            return
        free = self.settings.workers - len(self._handles)
        for sub in store.claim_queued(self.db, self.worker, free):
            self._submit(sub)

    def _submit(self, sub: Submission) -> None:
        try:
            job = self._job(sub)
        except Exception as e:
            self._fail(sub, f"cannot start the run: {e}")
            return
        self._launch(sub, job)

    def _launch(self, sub: Submission, job: Job) -> None:
        """``job`` (``sub``'s run, or its proof) to the engine, its result to the queue."""
        from memgauge.service._proof import cold_caches, proof_limit

        try:
            if proof_limit(sub) is not None:
                # both runs of a proof start cold (where the runs are on this host)
                self._caches[sub.id] = cold_caches(self.engine.name)
            handle = self.engine.submit(job)
        except Exception as e:
            self._fail(sub, f"cannot start the run: {e}")
            return
        self._handles[sub.id] = handle

        def done(future: Any, sub_id: str = sub.id) -> None:
            try:
                self._done.put((sub_id, future.result()))
            except BaseException as e:
                self._done.put((sub_id, e))
            self._wake.set()

        handle.future.add_done_callback(done)

    def _job(self, sub: Submission) -> Job:
        from memgauge.gate import parse_budget
        from memgauge.isolation import Sandbox, Upload
        from memgauge.sweep import Job

        s = self.settings
        whole = {limit.metric: limit.value for limit in parse_budget(sub.budget) if limit.phase is None}
        memory = min(int(whole["rss"]), s.max_memory_bytes) if "rss" in whole else s.max_memory_bytes
        if sub.prove:
            # the measured run of a proof is the unlimited one: the limit is the proof's to apply
            memory = s.max_memory_bytes
        wall = min(whole["wall"], s.max_wall_seconds) if "wall" in whole else s.max_wall_seconds
        disk = min(int(whole["disk"]), s.max_disk_bytes) if "disk" in whole else s.max_disk_bytes
        # the entry is a path in the upload: one starting with '-' (an archive's "--json=x.py")
        # must not be read as an option of memgauge run
        entry = f"./{sub.entry}" if sub.entry.startswith("-") else sub.entry
        return Job(
            id=sub.id,
            target=(entry, *json.loads(sub.args)),
            env={ENV_SUBMISSION: sub.id},
            sandbox=Sandbox(
                memory_bytes=memory,
                wall_seconds=wall,
                max_processes=s.max_processes,
                max_output_bytes=s.max_output_bytes,
                disk_bytes=disk,
                network=False,
                unprivileged=True,
                hidden_paths=(s.data_dir,),
            ),
            upload=Upload(sub.filename, sub.upload),
            # the sandbox's watchdog stops the run at ``wall``; this is the backstop
            timeout_seconds=wall + 30.0,
        )

    def _collect(self) -> None:
        while True:
            try:
                sub_id, outcome = self._done.get_nowait()
            except queue.Empty:
                return
            handle = self._handles.get(sub_id)
            try:
                sub = self._own(sub_id)
                if sub is not None:
                    self._store_or_fail(sub, outcome)
                else:
                    self._proving.pop(sub_id, None)
            except Exception:
                # the database cannot be reached: the run stays ours (and heartbeaten) until its
                # result is stored at a later step; forgotten here, it would stay running for good
                self._done.put((sub_id, outcome))
                raise
            # a proof started by the store holds the submission's place now
            if self._handles.get(sub_id) is handle:
                self._handles.pop(sub_id, None)

    def _store_or_fail(self, sub: Submission, outcome: JobResult | BaseException) -> None:
        """``_store``; a result the database refuses (or that cannot be judged) fails the
        submission with the reason, instead of leaving it running."""
        try:
            self._store(sub, outcome)
        except Exception as e:
            self._fail(sub, f"the run's result could not be stored: {type(e).__name__}: {e}"[:2000])

    def _fail(self, sub: Submission, reason: str) -> None:
        self._proving.pop(sub.id, None)
        self._caches.pop(sub.id, None)
        store.finish(
            self.db,
            sub.id,
            self.worker,
            status=store.FAILED,
            verdict="error",
            finished_at=utcnow(),
            reason=reason,
        )

    def _store(self, sub: Submission, outcome: JobResult | BaseException) -> None:
        from memgauge.service._judge import outcome_values

        # the proof's result, when one was running: the measured run's outcome is waiting for it
        pending = self._proving.pop(sub.id, None)
        caches = self._caches.pop(sub.id, "")
        if isinstance(outcome, BaseException):
            store.requeue_or_fail(
                self.db,
                sub,
                f"the engine failed: {type(outcome).__name__}: {outcome}",
                self.settings.max_attempts,
            )
            return
        if outcome.cancelled:
            store.finish(
                self.db,
                sub.id,
                self.worker,
                status=store.CANCELLED,
                finished_at=utcnow(),
                reason="cancelled while it ran",
                sandbox=_json(outcome.sandbox),
                output_tail=outcome.output_tail,
            )
            return
        # no profile, killed by a signal (or an engine's failure, which has no sandbox record):
        # the worker was lost, not the program's doing. A refused upload has a record: final.
        lost = outcome.exit_code is None and outcome.sandbox is None
        if outcome.profile is None and (lost or (outcome.exit_code or 0) < 0):
            why = outcome.error or "the worker stopped"
            store.requeue_or_fail(
                self.db, sub, f"the run's worker was lost ({why})", self.settings.max_attempts
            )
            return
        if pending is not None:
            self._store_proved(sub, pending, outcome, caches)
            return
        values = outcome_values(sub, outcome)
        if not self._proof_started(sub, values, outcome):
            admission.finish(self.db, sub, self.worker, values)

    def _proof_started(self, sub: Submission, values: dict[str, Any], outcome: JobResult) -> bool:
        """A pass of a policy that proves: its proof started (True), or put back when the server
        is stopping (True: never stored unproved); False when there is nothing to prove."""
        from memgauge.service._proof import Pending, proof_job, proof_limit

        limit = proof_limit(sub)
        if limit is None or values.get("verdict") != "pass":
            return False
        if self._stopping.is_set():
            self._put_back(sub)
            return True
        limit = min(limit, self.settings.max_memory_bytes)
        self._proving[sub.id] = Pending(values, outcome, limit)
        self._launch(sub, proof_job(self._job(sub), limit))
        return True

    def _store_proved(self, sub: Submission, pending: Pending, proof: JobResult, caches: str) -> None:
        from memgauge.service._proof import proved_values

        values = proved_values(pending.values, pending.base, proof, pending.limit_bytes, caches)
        values["finished_at"] = utcnow()  # the proof's end, not the measured run's
        admission.finish(self.db, sub, self.worker, values)

    # -- recovery ----------------------------------------------------------------------------------

    def recover(self) -> None:
        """Re-queue (or fail) running submissions whose server is gone: at start, those of an
        earlier server on this host; at any time, any whose heartbeat is older than the lease."""
        self._last_recovery = time.monotonic()
        host = socket.gethostname()
        stale = store.stale_before(self.settings.lease_seconds)
        for sub in store.running(self.db):
            if sub.worker == self.worker:
                continue
            owner_host, _, rest = (sub.worker or "").partition(":")
            owner_pid = rest.partition(":")[0]
            # a pid of ours in another worker name: an earlier server with our pid (a container's 1)
            dead_here = owner_host == host and (owner_pid == str(os.getpid()) or not _alive(owner_pid))
            expired = sub.heartbeat_at is None or _aware(sub.heartbeat_at) < stale
            if not (dead_here or expired):
                continue
            if owner_host == host:
                kill_orphans(sub.id)
            store.requeue_or_fail(self.db, sub, "the server running it stopped", self.settings.max_attempts)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _aware(t: Any) -> Any:
    import datetime as dt

    return t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)


def kill_orphans(sub_id: str) -> int:
    """Kill the process groups left by a dead server's run of ``sub_id`` on this host (found by
    the variable every run's processes carry). Returns how many groups were killed."""
    marker = f"{ENV_SUBMISSION}={sub_id}".encode()
    groups: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if marker not in f.read().split(b"\0"):
                    continue
            groups.add(os.getpgid(int(name)))
        except (OSError, ProcessLookupError):
            continue
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    return len(groups)

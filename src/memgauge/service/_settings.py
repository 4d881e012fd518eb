"""What a server is configured with (``memgauge serve`` options)."""

from __future__ import annotations

import os
from dataclasses import dataclass

MiB = 1 << 20


@dataclass
class Settings:
    """``data_dir``: the SQLite file, the first admin token, nothing a run may see (every run has
    it hidden). ``workers``: how many runs at once at most, whatever the engine could take.
    ``max_*``: the ceiling of every run; a policy's own rss and wall limits are enforced below
    them (``max_disk_bytes``: the run's scratch space, below which a policy's ``disk`` limit is
    enforced). ``max_queued`` and ``max_stored_bytes``: each token's quota of submissions waiting
    or running, and of bytes its submissions keep. ``max_attempts``: how many times a submission
    is started before a lost worker or a server stop counts against it (see docs/service.md)."""

    data_dir: str
    db_url: str | None = None
    engine: str = "local"
    address: str | None = None
    workers: int = 1
    max_upload_bytes: int = 16 * MiB
    max_memory_bytes: int = 4096 * MiB
    max_wall_seconds: float = 600.0
    max_processes: int = 64
    max_output_bytes: int = 1 * MiB
    max_disk_bytes: int = 1024 * MiB
    max_queued: int = 100
    max_stored_bytes: int = 1024 * MiB
    max_attempts: int = 2
    lease_seconds: float = 60.0
    poll_seconds: float = 0.5
    admin_token: str | None = None

    def __post_init__(self) -> None:
        self.data_dir = os.path.abspath(self.data_dir)

"""A cgroup v2 file tree laid out as a current kernel lays out /sys/fs/cgroup, in a temporary
directory, for the watcher's real ``CgroupHost`` to read. Only what the kernel itself does stays
fake, in :class:`V2Kernel`: filling a new group's directory with its files (``mkdir``), and
removing a group with them (``rmdir``), which a plain directory cannot do. The tests write the
counters (``memory.current``, ``memory.peak``, ``memory.events``) as the kernel would."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from memgauge.watcher import CgroupHost

ALL_CONTROLLERS = "cpuset cpu io memory hugetlb pids rdma misc"
EVENTS = "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n"


def group_files(path: Path, *, controllers: str, peak: bool, procs: str = "") -> None:
    """The files a v2 group with ``controllers`` enabled by its parent holds (Linux 6.x)."""
    enabled = controllers.split()
    files = {
        "cgroup.controllers": controllers + "\n",
        "cgroup.subtree_control": "\n",
        "cgroup.procs": procs,
        "cgroup.type": "domain\n",
        "cgroup.events": "populated 0\nfrozen 0\n",
    }
    if "memory" in enabled:
        files.update(
            {
                "memory.current": "0\n",
                "memory.max": "max\n",
                "memory.high": "max\n",
                "memory.events": EVENTS,
                "memory.events.local": EVENTS,
                "memory.stat": "anon 0\nfile 0\nshmem 0\nfile_mapped 0\ninactive_file 0\nactive_file 0\n",
                "memory.swap.current": "0\n",
                "memory.swap.max": "max\n",
            }
        )
        if peak:
            files["memory.peak"] = "0\n"
    if "cpu" in enabled:
        files["cpu.max"] = "max 100000\n"
    if "pids" in enabled:
        files.update({"pids.max": "max\n", "pids.current": "0\n", "pids.events": "max 0\n"})
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text)


def _words(path: Path) -> list[str]:
    return path.read_text().split()


class V2Kernel(CgroupHost):
    """The watcher's ``CgroupHost`` over a temporary tree; ``make_group_dir``, ``write`` and
    ``remove_group_dir`` do what the kernel does in cgroupfs: a new group gets the files of the
    controllers its parent enables; ``cgroup.subtree_control`` takes ``+name``/``-name`` for the
    controllers in ``cgroup.controllers``, and refuses (EBUSY) to enable one while processes are
    in the group, as ``cgroup.procs`` refuses a process in a group that enabled one (the "no
    internal processes" rule; the root is exempt); a process written to a ``cgroup.procs`` leaves
    the group it was in. A read-only tree refuses every change, as a container's read-only
    /sys/fs/cgroup does for root too."""

    def __init__(self, *args: object, peak: bool = True, read_only: bool = False, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.peak = peak
        self.read_only = read_only

    def make_group_dir(self, path: str) -> None:
        self._refuse_if_read_only(path)
        parent = Path(path).parent
        enabled = (parent / "cgroup.subtree_control").read_text()
        os.mkdir(path)
        group_files(Path(path), controllers=" ".join(enabled.split()), peak=self.peak)

    def _refuse_if_read_only(self, path: str) -> None:
        if self.read_only:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)

    def write(self, path: str, text: str) -> None:
        self._refuse_if_read_only(path)
        file = Path(path)
        group, top = file.parent, Path(self.mounts()["v2"][0])
        if file.name == "cgroup.subtree_control":
            enabled = _words(file)
            for token in text.split():
                name = token[1:]
                if token[0] == "+" and name not in enabled:
                    if name not in _words(group / "cgroup.controllers"):
                        raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), path)
                    if group != top and _words(group / "cgroup.procs"):
                        raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), path)
                    enabled.append(name)
                elif token[0] == "-" and name in enabled:
                    enabled.remove(name)
            file.write_text(" ".join(enabled) + "\n")
        elif file.name == "cgroup.procs":
            if group != top and _words(group / "cgroup.subtree_control"):
                raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), path)
            pid = text.strip()
            for procs in top.rglob("cgroup.procs"):
                pids = _words(procs)
                if pid in pids:
                    procs.write_text("".join(f"{p}\n" for p in pids if p != pid))
            file.write_text(file.read_text() + f"{pid}\n")
        else:
            file.write_text(text)

    def remove_group_dir(self, path: str) -> None:
        self._refuse_if_read_only(path)
        if (Path(path) / "cgroup.procs").read_text().split():
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), path)
        shutil.rmtree(path)


def v2_host(
    tmp: Path,
    *,
    delegated: str = "",
    available: str = "cpu io memory pids",
    peak: bool = True,
    read_only: bool = False,
    container: bool = False,
    others: tuple[int, ...] = (),
) -> tuple[V2Kernel, Path]:
    """A systemd host's v2 tree with this process in ``/system.slice/job.service``, which may
    enable the ``available`` controllers for its children, has ``delegated`` enabled (none: a
    cgroup with processes cannot have any, the "no internal processes" rule) (``container``:
    a container's cgroup ``/system.slice/docker-abc.scope`` mounted as the root of its
    /sys/fs/cgroup, without a cgroup namespace, as older Docker does), its ``/proc/self``
    beside it; ``others``: more processes in that cgroup. Returns the host and this process's own
    cgroup directory."""
    procs = "".join(f"{pid}\n" for pid in (os.getpid(), *others))
    mount = tmp / "sys" / "fs" / "cgroup"
    group_files(mount, controllers=ALL_CONTROLLERS, peak=False)
    (mount / "cgroup.subtree_control").write_text("cpu io memory pids\n")
    (mount / "memory.stat").write_text("anon 0\nfile 0\n")
    (mount / "cgroup.procs").write_text("1\n")
    slice_ = "docker-abc.scope" if container else "job.service"
    group_files(mount / "system.slice", controllers="cpu io memory pids", peak=peak)
    (mount / "system.slice" / "cgroup.subtree_control").write_text(available + "\n")
    own_path = f"/system.slice/{slice_}"
    own = mount / "system.slice" / slice_
    group_files(own, controllers=available, peak=peak, procs=procs)
    (own / "cgroup.subtree_control").write_text(delegated + "\n")
    proc = tmp / "proc" / "self"
    proc.mkdir(parents=True)
    if container:
        # the container sees its own cgroup at the top of its mount
        own = mount
        group_files(own, controllers=available, peak=peak, procs=procs)
        (own / "cgroup.subtree_control").write_text(delegated + "\n")
        root = own_path
    else:
        root = "/"
    (proc / "mountinfo").write_text(
        f"22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
        f"35 25 0:30 {root} {mount} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
        "rw,nsdelegate,memory_recursiveprot\n"
    )
    (proc / "cgroup").write_text(f"0::{own_path}\n")
    return V2Kernel(proc=str(proc), peak=peak, read_only=read_only), own

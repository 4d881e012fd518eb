"""Where this process's cgroups are: the cgroup v2 hierarchy and the v1 hierarchies, and this
process's own directory in each, read from ``/proc/self/mountinfo`` and ``/proc/self/cgroup``.

One class, :class:`CgroupHost`, answers for the whole watcher (memory and pids groups, the limit
memgauge itself runs under, the OOM kills around it). Its root is injectable, through the
constructor or ``MEMGAUGE_CGROUP_ROOT``: a directory that stands for the one hierarchy this process
sees, its own cgroup at the top, as inside a container with a cgroup namespace. Tests lay out a
kernel's tree there; a path that is missing or not writable is a host with no cgroup, or one that
did not delegate its cgroup to memgauge, reached through the code production runs.
"""

from __future__ import annotations

import os

from memgauge._env import ENV_CGROUP_ROOT

__all__ = ["CgroupHost", "current_host"]

# os.path, not pathlib, and no dataclass: this module is imported before the program starts

# every cgroup memgauge makes is named PREFIX<its pid>-...; "-self" the leaf it moves itself into
PREFIX = "memgauge-"


def self_leaf_name() -> str:
    """The leaf of its own cgroup memgauge moves into to enable a v2 controller for its children
    (``_cgroup_delegate``): still its own cgroup, as far as the groups it makes are concerned."""
    return f"{PREFIX}{os.getpid()}-self"


class CgroupHost:
    """The cgroup hierarchies of this process. ``proc``: the directory holding ``mountinfo`` and
    ``cgroup`` (``/proc/self``); ``root``: instead of those, one directory that is this process's
    own cgroup at the top of its hierarchy: v2 where it holds ``cgroup.controllers`` (as every v2
    cgroup does), else v1 with the controllers whose files it holds."""

    def __init__(self, root: str | None = None, proc: str = "/proc/self") -> None:
        self.root = None if root is None else os.path.abspath(root).rstrip("/") or "/"
        self.proc = proc

    def __repr__(self) -> str:
        where = f"root={self.root!r}" if self.root is not None else f"proc={self.proc!r}"
        return f"CgroupHost({where})"

    # -- discovery

    def mounts(self) -> dict[str, tuple[str, str]]:
        """(mount point, root of the hierarchy mounted there) of the cgroup2 hierarchy (key 'v2')
        and of each v1 controller (key the controller's name). The root is '/' unless a container
        mounted a subtree."""
        if self.root is not None:
            return self._injected_mounts()
        found: dict[str, tuple[str, str]] = {}
        try:
            with open(os.path.join(self.proc, "mountinfo")) as f:
                lines = f.read().splitlines()
        except OSError:
            return found
        for line in lines:
            left, _, right = line.partition(" - ")
            fstype, _source, options = [*right.split(), "", ""][:3]
            fields = left.split()
            if len(fields) < 5:
                continue
            root, mount_point = fields[3], fields[4]
            if fstype == "cgroup2" and "v2" not in found:
                found["v2"] = (mount_point, root)
            elif fstype == "cgroup":
                for controller in options.split(","):
                    found.setdefault(controller, (mount_point, root))
        return found

    def _injected_mounts(self) -> dict[str, tuple[str, str]]:
        root = self.root
        assert root is not None
        if os.path.exists(os.path.join(root, "cgroup.controllers")):
            return {"v2": (root, "/")}
        found: dict[str, tuple[str, str]] = {}
        for controller, probe in (("memory", "memory.limit_in_bytes"), ("pids", "pids.max")):
            if os.path.exists(os.path.join(root, probe)):
                found[controller] = (root, "/")
        return found

    def own_paths(self) -> dict[str, str]:
        """This process's cgroup path in the v2 hierarchy ('v2') and in each v1 controller's."""
        if self.root is not None:
            return {key: "/" for key in self._injected_mounts()}
        paths: dict[str, str] = {}
        try:
            with open(os.path.join(self.proc, "cgroup")) as f:
                lines = f.read().splitlines()
        except OSError:
            return paths
        for line in lines:
            parts = line.split(":", 2)
            if len(parts) != 3:
                continue
            _, controllers, path = parts
            if controllers == "":
                paths["v2"] = path
            else:
                for controller in controllers.split(","):
                    paths[controller] = path
        return paths

    def own_dir(
        self, key: str, found: tuple[dict[str, tuple[str, str]], dict[str, str]] | None = None
    ) -> tuple[str, str] | None:
        """(this process's own cgroup directory, the mount point) in the v2 hierarchy (``key``
        'v2') or the v1 hierarchy of controller ``key``; None where there is none. ``found``:
        ``(mounts(), own_paths())`` already read."""
        mounts, own = found or (self.mounts(), self.own_paths())
        if key not in mounts or key not in own:
            return None
        mount_point, root = mounts[key]
        path = own[key]
        if root != "/" and (path == root or path.startswith(root + "/")):
            path = path[len(root) :]
        if os.path.basename(path) == self_leaf_name():
            path = os.path.dirname(path)
        mount_point = mount_point.rstrip("/") or "/"
        return os.path.join(mount_point, path.lstrip("/")).rstrip("/") or "/", mount_point

    def own_dirs(self) -> dict[str, tuple[str, str]]:
        """``own_dir`` of the v2 hierarchy ('v2') and of the v1 memory controller ('v1')."""
        dirs: dict[str, tuple[str, str]] = {}
        tables = (self.mounts(), self.own_paths())  # read once for both
        for key, controller in (("v2", "v2"), ("v1", "memory")):
            found = self.own_dir(controller, tables)
            if found is not None:
                dirs[key] = found
        return dirs

    def missing(self) -> str:
        """Why this host shows no cgroup hierarchy at all ("" where it shows one)."""
        if self.root is not None and not os.path.isdir(self.root):
            return f"no cgroup tree at {self.root}"
        return "" if self.mounts() else "no cgroup hierarchy is mounted"

    def holds(self, path: str) -> bool:
        """``path`` lies in one of this host's cgroup hierarchies (links resolved)."""
        real = os.path.realpath(path)
        for mount_point, _ in self.mounts().values():
            top = os.path.realpath(mount_point)
            if real.startswith(top.rstrip("/") + "/"):
                return True
        return False

    # -- the one way memgauge makes a cgroup

    def make_group_dir(self, path: str) -> None:
        """Create a cgroup: the kernel fills the new directory with the group's files."""
        os.mkdir(path)

    def write(self, path: str, text: str) -> None:
        """Write a cgroup control file (``cgroup.procs``, ``cgroup.subtree_control``)."""
        with open(path, "w") as f:
            f.write(text)

    def remove_group_dir(self, path: str) -> None:
        """Remove an empty cgroup (its files go with it); OSError while processes remain."""
        os.rmdir(path)


def current_host() -> CgroupHost:
    """The host as memgauge's process sees it: ``MEMGAUGE_CGROUP_ROOT`` where set, else /proc."""
    return CgroupHost(os.environ.get(ENV_CGROUP_ROOT) or None)

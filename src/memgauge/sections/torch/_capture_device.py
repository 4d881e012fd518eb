"""The device log another section gives the torch tracker (``DeviceLog``: the GPU section's
allocator log, set by its "torch" part), and the log of a tracker no section gave one."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class DeviceLog(Protocol):
        """What the tracker tells a device log: tensors made and freed per device, step windows,
        and the record it writes with the tracker's (None: nothing to write)."""

        def tensor_add(self, device: str, n: int) -> None: ...

        def tensor_remove(self, device: str, n: int) -> None: ...

        def window_end(self, kind: str, index: int) -> None: ...

        def record(self) -> dict[str, Any] | None: ...


class _NoDeviceLog:
    """The log of a tracker no section gave one: keeps nothing."""

    def tensor_add(self, device: str, n: int) -> None:
        pass

    def tensor_remove(self, device: str, n: int) -> None:
        pass

    def window_end(self, kind: str, index: int) -> None:
        pass

    def record(self) -> dict[str, Any] | None:
        return None


NO_DEVICE_LOG = _NoDeviceLog()

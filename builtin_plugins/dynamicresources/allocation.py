"""What the structured allocator (allocator.py) and consumable capacity (consumable.py) share:
the device ID, the allocator's error, a device's result (internalDeviceResult), klog.KObj and
lookupAttribute. Imports neither of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

DeviceID = Tuple[str, str, str]  # (driver, pool, device): structured.DeviceID


class AllocationError(Exception):
    """An error of Allocate: invalid input (a selector that does not compile, a missing class,
    ...); the scheduler reports it as an Error status."""


def kobj(obj: Mapping[str, Any]) -> str:
    """klog.KObj: namespace/name."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace") or ""
    return f"{ns}/{md.get('name', '')}" if ns else md.get("name", "")


@dataclass
class DeviceResult:
    """internalDeviceResult."""

    request: str
    parent_request: str
    id: DeviceID
    device: Mapping[str, Any]
    slice: Any
    admin_access: Optional[bool] = None
    shared: bool = False  # allowMultipleAllocations: the result gets a shareID
    consumed_capacity: Optional[Dict[str, Any]] = None  # name -> consumable.Q

    def request_name(self) -> str:
        return self.request if not self.parent_request else f"{self.parent_request}/{self.request}"


def lookup_attribute(device: Mapping[str, Any], device_id: DeviceID, name: str):
    """lookupAttribute: the fully qualified name, or the id alone when the domain is the driver."""
    attrs = device.get("attributes") or {}
    if name in attrs:
        return attrs[name]
    i = name.find("/")
    if i < 0 or name[:i] != device_id[0]:
        return None
    return attrs.get(name[i + 1:])

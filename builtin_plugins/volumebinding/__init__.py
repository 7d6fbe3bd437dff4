"""VolumeBinding (framework/plugins/volumebinding): binds a pod's PersistentVolumeClaims during
scheduling, with the PV controller and provisioner simulated by the harness's API server."""

from .volume_binding import VolumeBinding

__all__ = ["VolumeBinding"]

PLUGINS = [VolumeBinding]

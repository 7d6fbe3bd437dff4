"""validatePodExtendedResourceClaimStatus (pkg/apis/core/validation, DRAExtendedResource): a pod's
`status.extendedResourceClaimStatus`, checked by the case's API server (harness.case.dra_fields)
and by DynamicResources' status patch."""

from __future__ import annotations

from typing import Any, Dict, Mapping

from .field_checks import _dns_label, _duplicate, _invalid, _required
from .validation import is_dns1123_subdomain


def extended_resource_claim_status(st: Any, spec: Mapping[str, Any], features) -> None:
    """validatePodExtendedResourceClaimStatus: the first error. Until v1.35 a mapping is a
    duplicate when another one has its container and resource; from v1.35, its request too."""
    fld = "status.extendedResourceClaimStatus"
    if not isinstance(st, dict):
        _invalid(fld, st, "must be an object")
    containers: Dict[str, Mapping[str, Any]] = {}
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or []:
            if isinstance(c, dict):
                containers[c.get("name", "")] = c
    mappings = st.get("requestMappings") or []
    if not mappings:
        _required(f"{fld}.requestMappings", "at least one request mapping is required")
    by_request = features.has("PodExtendedClaimStatusDuplicateByRequest")
    seen = set()
    for i, rm in enumerate(mappings):
        rm = rm if isinstance(rm, dict) else {}
        idx = f"{fld}.requestMappings[{i}]"
        cname, rname, req = rm.get("containerName", ""), rm.get("resourceName", ""), rm.get("requestName", "")
        c = containers.get(cname)
        if c is None:
            _invalid(f"{idx}.containerName", cname, "must match the name of an entry in spec.initContainers.name "
                     "or spec.containers.name")
        elif rname not in ((c.get("resources") or {}).get("requests") or {}):
            _invalid(f"{idx}.resourceName", rname, "must match the extended resource name of an entry in "
                     "spec.initContainers.resources.requests or spec.containers.resources.requests")
        _dns_label(str(req), f"{fld}.requestName")  # upstream's path, without the index
        k = (cname, rname, req) if by_request else (cname, rname)
        if k in seen:
            _duplicate(f"{idx}.containerName", cname)
        seen.add(k)
    name = st.get("resourceClaimName") or ""
    if not name:
        _required(f"{fld}.resourceClaimName", "")
    for detail in is_dns1123_subdomain(str(name)):
        _invalid(f"{fld}.resourceClaimName", name, detail)

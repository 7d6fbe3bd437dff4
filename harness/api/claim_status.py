"""The API server's check of a ResourceClaim status update (PUT .../resourceclaims/NAME/status).

Mirrors pkg/apis/resource/validation ValidateResourceClaimStatusUpdate ->
validateResourceClaimStatusUpdate, as far as the scheduler's writes can trip it: the size of
`status.reservedFor`, at most ResourceClaimReservedForMaxSize (256) entries, checked with
validateSet's field.TooMany (v1.34.9, v1.35.6 and v1.36.3 word it alike). A refused update is
errors.NewInvalid (422) and stores nothing.
"""

from __future__ import annotations

from typing import Any, List, Mapping

from ..apierrors import Invalid

RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256  # resource.ResourceClaimReservedForMaxSize
QUALIFIED_KIND = "ResourceClaim.resource.k8s.io"  # schema.GroupKind.String()


def resource_claim_status_errors(status: Mapping[str, Any]) -> List[str]:
    """The field errors validateResourceClaimStatusUpdate reports for `status` (field.Error
    strings): `status.reservedFor: Too many: N: must have at most 256 items`."""
    reserved = status.get("reservedFor") or []
    if len(reserved) > RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE:
        return [f"status.reservedFor: Too many: {len(reserved)}: must have at most "
                f"{RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE} items"]
    return []


def check_resource_claim_status_update(name: str, status: Mapping[str, Any]) -> None:
    """Raise Invalid as the API server answers a status update it refuses."""
    errors = resource_claim_status_errors(status)
    if errors:
        raise Invalid(QUALIFIED_KIND, name, errors)

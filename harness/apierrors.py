"""Errors the simulated API server answers with, worded as kube-apiserver words them.

Mirrors k8s.io/apimachinery/pkg/api/errors (NewNotFound, NewAlreadyExists, NewConflict,
NewInvalid and the IsNotFound / IsAlreadyExists / IsConflict / IsInvalid predicates): a
StatusError carries the HTTP code and the reason; its message is the one a client sees. `Unreachable` is not a status at all: the request
never got an answer (a partitioned replica), as a transport error in client-go.
"""

from __future__ import annotations

# GroupResource.String() of the kinds the harness writes with these errors.
_QUALIFIED_RESOURCE = {
    "Pod": "pods",
    "Node": "nodes",
    "Lease": "leases.coordination.k8s.io",
    "Binding": "bindings",
    "pods/binding": "pods/binding",
}

# storage.NewResourceVersionConflictsError's text (the apiserver's optimistic concurrency check).
OPTIMISTIC_LOCK_ERROR = ("the object has been modified; please apply your changes to the latest "
                         "version and try again")


def qualified_resource(kind: str) -> str:
    """schema.GroupResource.String() for a kind: `pods`, `leases.coordination.k8s.io`, ..."""
    return _QUALIFIED_RESOURCE.get(kind, kind.lower() + "s")


class StatusError(Exception):
    """errors.StatusError: an API answer that is not a success."""

    code = 500
    reason = "InternalError"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotFound(StatusError):
    """errors.NewNotFound: `<resource> "<name>" not found` (404)."""

    code = 404
    reason = "NotFound"

    def __init__(self, kind: str, name: str):
        super().__init__(f'{qualified_resource(kind)} "{name}" not found')


class AlreadyExists(StatusError):
    """errors.NewAlreadyExists: `<resource> "<name>" already exists` (409)."""

    code = 409
    reason = "AlreadyExists"

    def __init__(self, kind: str, name: str):
        super().__init__(f'{qualified_resource(kind)} "{name}" already exists')


class Conflict(StatusError):
    """errors.NewConflict: `Operation cannot be fulfilled on <resource> "<name>": <detail>` (409)."""

    code = 409
    reason = "Conflict"

    def __init__(self, kind: str, name: str, detail: str = OPTIMISTIC_LOCK_ERROR):
        super().__init__(f'Operation cannot be fulfilled on {qualified_resource(kind)} "{name}": {detail}')


class Invalid(StatusError):
    """errors.NewInvalid: `<Kind>.<group> "<name>" is invalid: <errors>` (422), the field errors
    as ErrorList.ToAggregate prints them (one: as it is; more: `[a, b]`)."""

    code = 422
    reason = "Invalid"

    def __init__(self, qualified_kind: str, name: str, errors: "list[str]"):
        joined = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        super().__init__(f'{qualified_kind} "{name}" is invalid: {joined}')
        self.errors = list(errors)


class Unreachable(Exception):
    """The request got no answer: the client's replica is cut off from the API server. Worded as
    the error client-go returns when a request times out on the wire."""

    def __init__(self, verb: str, path: str):
        super().__init__(f'{verb} "https://kube-apiserver{path}": dial tcp: i/o timeout')


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, NotFound)


def is_already_exists(err: BaseException) -> bool:
    return isinstance(err, AlreadyExists)


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, Conflict)


def is_invalid(err: BaseException) -> bool:
    return isinstance(err, Invalid)


API_ERRORS = (StatusError, Unreachable)  # what an API call can answer (or not)

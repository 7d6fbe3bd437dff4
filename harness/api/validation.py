"""Kubernetes name and label validation (k8s.io/apimachinery/pkg/util/validation), plus
v1helper.IsExtendedResourceName (k8s.io/kubernetes/pkg/apis/core/v1/helper).

Each ``is_*`` validator returns the list of problems, worded exactly as upstream (empty when the
value is valid). Lengths are counted in bytes (Go's len on a string), and the patterns must
match the whole string (Go's ``^...$`` without the multi-line flag: no trailing newline).
"""

from __future__ import annotations

import functools
import re
from typing import Callable, List, Set

__all__ = [
    "regex_error", "max_len_error", "empty_error", "is_qualified_name", "is_valid_label_value",
    "is_dns1123_subdomain", "is_native_resource", "is_extended_resource_name",
]

QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME_ERR_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start "
                          "and end with an alphanumeric character")
QUALIFIED_NAME_MAX_LENGTH = 63
_QUALIFIED_NAME_RE = re.compile(QUALIFIED_NAME_FMT)

LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
LABEL_VALUE_ERR_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
                       "'-', '_' or '.', and must start and end with an alphanumeric character")
LABEL_VALUE_MAX_LENGTH = 63
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT)

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_ERR_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                             "characters, '-' or '.', and must start and end with an alphanumeric "
                             "character")
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)

DEFAULT_RESOURCE_REQUESTS_PREFIX = "requests."  # v1.DefaultResourceRequestsPrefix
RESOURCE_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"  # v1.ResourceDefaultNamespacePrefix


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError (its "', " + " or " makes the double space of the real messages)."""
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    msg += " (e.g. "
    for i, e in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += "'" + e + "', "
    return msg + "regex used for validation is '" + fmt + "')"


def max_len_error(length: int) -> str:
    """validation.MaxLenError."""
    return f"must be no more than {length} characters"


def empty_error() -> str:
    """validation.EmptyError."""
    return "must be non-empty"


def _blen(s: str) -> int:
    return len(s.encode("utf-8"))


def _remember_valid(check: Callable[[str], List[str]]) -> Callable[[str], List[str]]:
    """The check, a string it found valid remembered (up to 100,000 of them: the same names,
    label keys and values recur in every object of a big cluster)."""
    valid: Set[str] = set()

    @functools.wraps(check)
    def remembered(value: str) -> List[str]:
        if type(value) is str and value in valid:
            return []
        errs = check(value)
        if not errs and type(value) is str and len(valid) < 100_000:
            valid.add(value)
        return errs

    return remembered


@_remember_valid
def is_dns1123_subdomain(value: str) -> List[str]:
    """validation.IsDNS1123Subdomain."""
    errs: List[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_ERR_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


@_remember_valid
def is_qualified_name(value: str) -> List[str]:
    """validation.IsQualifiedName."""
    errs: List[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return errs + ["a qualified name "
                       + regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
                       + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part " + empty_error())
    elif _blen(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append("name part "
                    + regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


@_remember_valid
def is_valid_label_value(value: str) -> List[str]:
    """validation.IsValidLabelValue."""
    errs: List[str] = []
    if _blen(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(LABEL_VALUE_ERR_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_native_resource(name: str) -> bool:
    """v1helper.IsNativeResource: unprefixed, or in the *kubernetes.io/ namespace."""
    return "/" not in name or RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName."""
    if is_native_resource(name) or name.startswith(DEFAULT_RESOURCE_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(DEFAULT_RESOURCE_REQUESTS_PREFIX + name)

"""Cases in the schedharness/v1alpha1 format (../shared/CASE_FORMAT.md): loading, the API
server's defaulting, running and comparing with `expect`."""

from .loader import Case, load_case, find_cases
from .runner import CaseResult, run_case

__all__ = ["Case", "CaseResult", "find_cases", "load_case", "run_case"]

"""Cases in the schedharness/v1alpha1 format (../shared/CASE_FORMAT.md): loading (loader, schema,
steps), the API server's defaulting (apiserver), the controllers a case needs, running
(runner, replicas) and comparing with `expect` (checks, decisions, failures); the importer of
`kubectl get -o yaml` dumps.

Imports: scheduler, leaderelection, config, framework, api, versions and the base modules; never
harness.cli, reports, compare, bench or conformance (they build on this).
"""

from .loader import Case, load_case, find_cases
from .runner import CaseResult, run_case

__all__ = ["Case", "CaseResult", "find_cases", "load_case", "run_case"]

"""The Kubernetes objects the scheduler reads, as plain Python objects over their manifests, and
what the API server does with them: validation (object_validation over field_checks,
dra_validation, workload), defaulting helpers, quantities, durations, metav1 times, label and node
selectors.

Imports: harness.versions and the base modules only (and, for now, the DynamicResources plugin's
CEL module: .importlinter names that one exception); everything above may import this.
"""

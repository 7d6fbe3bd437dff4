"""schedharness: run kube-scheduler v1.34's scheduling pipeline on YAML cases, without a cluster."""

__version__ = "0.1.0"

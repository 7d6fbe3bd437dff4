"""The Kubernetes objects the scheduler reads, as plain Python objects over their manifests."""

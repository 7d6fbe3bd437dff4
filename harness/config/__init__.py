"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): loading, defaulting, validation."""

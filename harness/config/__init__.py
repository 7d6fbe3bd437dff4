"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): loading, defaulting, validation,
and the checks of its extenders that scheduler.New makes (extenders).

Imports: framework (the registry's plugins and their args), api, versions and the base modules;
never the scheduler or anything above it.
"""

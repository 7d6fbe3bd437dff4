from harness.framework import CustomResource, hookimpl


@hookimpl
def schedharness_custom_resources():
    return [CustomResource("example.com", "v1", "Quota", namespaced=True),
            CustomResource("example.com", "v1", "Fence", namespaced=False)]

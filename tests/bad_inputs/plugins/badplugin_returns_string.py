from harness.framework.hookspecs import hookimpl


@hookimpl
def schedharness_plugins():
    return 'MyPlugin'

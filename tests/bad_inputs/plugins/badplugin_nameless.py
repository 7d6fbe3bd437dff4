from harness.framework.hookspecs import hookimpl


class P:
    pass


@hookimpl
def schedharness_plugins():
    return [P]

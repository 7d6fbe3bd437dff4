from harness.framework.hookspecs import hookimpl


class P:
    name = 'P'

    @hookimpl
    def filterr(self, state, pod, node_info):
        return None


@hookimpl
def schedharness_plugins():
    return [P]

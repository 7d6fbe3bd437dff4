from harness.framework.hookspecs import hookimpl


class P:
    name = 'P'

    @hookimpl
    def filter(self, state, pod, node_info, extra):
        return None


@hookimpl
def schedharness_plugins():
    return [P]

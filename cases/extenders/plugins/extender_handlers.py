"""Python stand-ins for scheduler extenders, named by the cases of this folder (the case key
`extenders: [{urlPrefix, python: extender_handlers:<function>}]`): each gets the verb and the JSON
document kube-scheduler POSTs, and returns the JSON the extender answers. Each is marked
@extender: a case may name no other callable."""

from harness.framework import extender


@extender
def gpu(verb, args):
    """A node-cache-capable extender: node-a is draining (failedNodes); node-c is preferred
    (priority 10), node-b next (5); it binds whatever it is asked to."""
    if verb == "filter":
        names = args["nodenames"]
        return {"nodenames": [n for n in names if n != "node-a"],
                "failedNodes": {"node-a": "node is draining"} if "node-a" in names else {}}
    if verb == "prioritize":
        prio = {"node-b": 5, "node-c": 10}
        return [{"host": n, "score": prio.get(n, 0)} for n in args["nodenames"]]
    if verb == "bind":
        return {}
    return {"error": f"unknown verb {verb}"}


@extender
def down(verb, args):
    """An extender nobody answers for."""
    raise ConnectionRefusedError(111, "Connection refused")

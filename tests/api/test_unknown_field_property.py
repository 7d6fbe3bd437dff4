"""Strict decoding's unknown-field walk (harness.api.fields._find, which builds no path until it
finds a field) names the same first unknown field as the plain walk, for any object: fields of
the kind's types mixed with unknown ones, wrong types and nesting, in any order."""

from hypothesis import given, settings, strategies as st

from harness.api import fields

_KINDS = sorted(fields._KINDS)


def _walk_reference(value, struct, path, table):
    """The unknown-field walk written plainly, paths built on the way: what fields._find must
    answer."""
    if not isinstance(value, dict):
        return None  # a wrong type is the type check's to report
    known = table[struct]
    for k, v in value.items():
        typ = known.get(k) if isinstance(k, str) else None
        if typ is None:
            if k not in known and (path, k) != ("metadata", "x-creationIndex"):
                return f"{path}.{k}" if path else str(k)
            continue
        if typ == fields._LEAF or typ == fields._FREE or v is None:
            continue
        here = f"{path}.{k}" if path else str(k)  # only for a field walked into
        if typ.startswith("["):
            if isinstance(v, list):
                inner = typ[1:-1]
                for i, item in enumerate(v):
                    bad = _walk_reference(item, inner, f"{here}[{i}]", table)
                    if bad:
                        return bad
        elif typ.startswith("{"):
            if isinstance(v, dict):
                inner = typ[1:-1]
                for mk, item in v.items():
                    bad = _walk_reference(item, inner, f"{here}.{mk}", table)
                    if bad:
                        return bad
        else:
            bad = _walk_reference(v, typ, here, table)
            if bad:
                return bad
    return None


def _value_for(table, struct, draw, depth):
    """A value for a field of the struct: mostly known fields, sometimes an unknown one."""
    known = sorted(table[struct])
    out = {}
    for _ in range(draw(st.integers(0, 4))):
        if known and draw(st.integers(0, 5)):
            k = draw(st.sampled_from(known))
            typ = table[struct][k]
            out[k] = _typed(table, typ, draw, depth)
        else:
            out[draw(st.sampled_from(["bogus", "x-creationIndex", "resoruces", 7, 1, True]))] = 1
    return out


def _typed(table, typ, draw, depth):
    if depth > 3 or typ in (fields._LEAF, fields._FREE) or draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(st.none(), st.integers(), st.text(max_size=3), st.just({"bogus": 1})))
    if typ.startswith("["):
        return [_value_for(table, typ[1:-1], draw, depth + 1) for _ in range(draw(st.integers(0, 2)))]
    if typ.startswith("{"):
        return {draw(st.sampled_from(["a", "b"])): _value_for(table, typ[1:-1], draw, depth + 1)
                for _ in range(draw(st.integers(0, 2)))}
    return _value_for(table, typ, draw, depth + 1)


@settings(max_examples=600, deadline=None)
@given(st.data(), st.sampled_from([34, 35, 36]))
def test_find_names_the_field_the_plain_walk_names(data, minor):
    kind = data.draw(st.sampled_from(_KINDS))
    table = fields._table(minor)
    struct = fields._KINDS[kind]
    if struct not in table:  # a kind a later minor adds (the Workload API: v1.35 on)
        assert fields.unknown_field({"spec": {"bogus": 1}}, kind, minor) is None
        return
    obj = _value_for(table, struct, data.draw, 0)
    if data.draw(st.booleans()) and isinstance(obj.get("metadata", {}), dict):
        obj.setdefault("metadata", {})["x-creationIndex"] = 3  # the harness's own field
    assert fields.unknown_field(obj, kind, minor) == _walk_reference(obj, struct, "", table)

"""One item of a `kubectl get -o yaml` dump read line by line, for `schedharness import`: not an
upstream piece.

kubectl writes YAML in one narrow form (go-yaml's block style: `key: value` and `key:` lines,
`- ` entries, a sequence under a key at the key's own indentation, plain or single-quoted
scalars on one line, `{}` and `[]`). An item in that form is read here by its indentation,
each distinct plain scalar resolved once by the same rules the YAML reader applies
(_build over _StrictLoader's resolver): 3-4x faster than composing the item's YAML events.
Anything else (a scalar over several lines, a block literal, a double-quoted scalar with an
escape, a quoted or complex key, a comment, an anchor, a tag, a flow collection, a duplicate
key, a tab, characters YAML refuses, an indentation YAML would read otherwise) answers None and
the item is read by YAML as before: what this reads is what YAML reads.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

import yaml

from ..yamlfile import _MERGE_TAG, MAX_DEPTH, _StrictLoader, go_yaml_key

# characters a line in the form never holds: tabs, \r, control characters, what YAML refuses or
# reads as a line break (\x85, \u2028, \u2029), surrogates, non-characters
_ODD = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_SINGLE = re.compile(r"'[^']*(?:''[^']*)*'")
_DOUBLE_PLAIN = re.compile(r'"[^"\\]*"')
_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
_KEY_MAX = 900  # a longer key is left to YAML (which refuses a simple key over 1024 characters)


class _NotForm(Exception):
    """The item is not in the form read here."""


class _Generic(Exception):
    """A node _build leaves to _StrictLoader's constructor."""


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_BOOL_VALUES = yaml.constructor.SafeConstructor.bool_values


def _build(loader, node, depth: int) -> Any:
    """What _StrictLoader constructs of a composed node with no aliases, for the tags a dump
    holds (str, null, bool, int, float, timestamp kept as text, map, seq), without the
    constructor's generic machinery (3x faster); raises _Generic for anything else (merge keys,
    other tags, duplicate or unhashable keys, nesting deeper than MAX_DEPTH)."""
    if depth > MAX_DEPTH:
        raise _Generic
    cls = node.__class__
    tag = node.tag
    if cls is yaml.ScalarNode:
        if tag == _STR_TAG:
            return node.value
        if tag == "tag:yaml.org,2002:int":
            v = node.value
            if v.isdigit() and (v[0] != "0" or v == "0"):
                return int(v)
            return loader.construct_yaml_int(node)
        if tag == "tag:yaml.org,2002:null":
            return None
        if tag == "tag:yaml.org,2002:bool":
            return _BOOL_VALUES[node.value.lower()]
        if tag == "tag:yaml.org,2002:float":
            return loader.construct_yaml_float(node)
        if tag == "tag:yaml.org,2002:timestamp":
            return node.value
        raise _Generic
    depth += 1
    if cls is yaml.MappingNode:
        if tag != _MAP_TAG:
            raise _Generic
        out = {}
        for key_node, value_node in node.value:
            if key_node.__class__ is not yaml.ScalarNode or key_node.tag == _MERGE_TAG:
                raise _Generic
            key = _build(loader, key_node, depth)
            if key.__class__ is not str:
                key = go_yaml_key(key)
                if key is None or key.__class__ is not str:
                    raise _Generic
            if key in out:
                raise _Generic
            out[key] = _build(loader, value_node, depth)
        return out
    if cls is yaml.SequenceNode and tag == _SEQ_TAG:
        return [_build(loader, c, depth) for c in node.value]
    raise _Generic


_PLAIN: Dict[str, Tuple[Any]] = {}  # a plain scalar's text -> (its value,)
_LOADER: List[Any] = []


def _plain(text: str) -> Any:
    """A plain scalar's value, as _build makes it of the node YAML composes."""
    hit = _PLAIN.get(text)
    if hit is not None:
        return hit[0]
    if not _LOADER:
        _LOADER.append(_StrictLoader(""))
    loader = _LOADER[0]
    tag = loader.resolve(yaml.ScalarNode, text, (True, False))
    try:
        value = _build(loader, yaml.ScalarNode(tag, text), 0)
    except (_Generic, ValueError, TypeError):
        raise _NotForm from None
    if len(_PLAIN) < 200_000:
        _PLAIN[text] = (value,)
    return value


def _scalar(text: str) -> Any:
    """A value written on its line: plain, single-quoted, double-quoted without escapes, `{}`
    or `[]`."""
    c = text[0]
    if c == " ":
        raise _NotForm
    if c not in _PLAIN_START or (c in "-?:" and len(text) > 1 and text[1] != " "):
        if ": " in text or " #" in text or text[-1] == ":" or text[-1] == " ":
            raise _NotForm
        return _plain(text)
    if c == "'":
        if not _SINGLE.fullmatch(text):
            raise _NotForm
        return text[1:-1].replace("''", "'")
    if c == '"':
        if not _DOUBLE_PLAIN.fullmatch(text):
            raise _NotForm
        return text[1:-1]
    if text == "{}":
        return {}
    if text == "[]":
        return []
    raise _NotForm


def _key(text: str) -> str:
    c = text[0] if text else " "
    if (c in _PLAIN_START and not (c in "-?:" and len(text) > 1 and text[1] != " ")) or c == " " \
            or " #" in text or ": " in text or text[-1] in ": " or len(text) > _KEY_MAX:
        raise _NotForm
    key = _plain(text)
    if key.__class__ is not str:
        key = go_yaml_key(key)
        if key is None or key.__class__ is not str:
            raise _NotForm
    return key


_EMPTY_MAP, _EMPTY_LIST = object(), object()  # `{}`, `[]`: a new one each time they are read
# a line's kind: `key: value`, `key:`, `- value`, `- key: value`, `- key:`
K_VALUE, K_OPEN, S_VALUE, S_KVALUE, S_KOPEN = range(5)
_LINE: Dict[str, Any] = {}  # a line -> (indentation, kind, key, value), or _BAD
_BAD = ()
_LINE_CACHE = 100_000  # lines remembered (the lines that recur, of the first items of a dump)


def _fresh(value: Any) -> Any:
    if value is _EMPTY_MAP:
        return {}
    if value is _EMPTY_LIST:
        return []
    return value


def _entry(text: str) -> Tuple[str, Optional[str]]:
    """A `key: value` or `key:` line as (key text, value text or None); _NotForm for others."""
    if text[-1] == ":":
        return text[:-1], None
    k = text.find(": ")
    if k <= 0:
        raise _NotForm
    return text[:k], text[k + 2:]


def _value(text: str) -> Any:
    v = _scalar(text)
    if v.__class__ is dict:
        return _EMPTY_MAP
    if v.__class__ is list:
        return _EMPTY_LIST
    return v


def _classify(line: str) -> Tuple[int, int, Optional[str], Any]:
    """(indentation, kind, key, value) of one line; _NotForm for a line not in the form."""
    body = line.lstrip(" ")
    if not body or body[0] == "#":
        raise _NotForm  # blank lines and comments: left to YAML
    ind = len(line) - len(body)
    if body[0] == "-" and (len(body) == 1 or body[1] == " "):
        if len(body) < 3 or body[2] == " ":
            raise _NotForm  # `-` alone, or more spaces after it
        rest = body[2:]
        if rest[0] == "-" and (len(rest) == 1 or rest[1] == " "):
            raise _NotForm  # `- - x`
        if rest[-1] == ":" or ": " in rest:
            if rest[0] in "'\"{[":
                raise _NotForm
            k, v = _entry(rest)
            if v is None:
                return ind, S_KOPEN, _key(k), None
            return ind, S_KVALUE, _key(k), _value(v)
        return ind, S_VALUE, None, _value(rest)
    k, v = _entry(body)
    if v is None:
        return ind, K_OPEN, _key(k), None
    return ind, K_VALUE, _key(k), _value(v)


_ASCII_OK = bytes(range(0x20, 0x7f))  # printable ASCII: all a line of ASCII may hold


def _line_info(line: bytes) -> Tuple[int, int, Optional[str], Any]:
    """_classify of one line of the file (with its newline), or _BAD."""
    if line[-1:] != b"\n":
        return _BAD
    data = line[:-1]
    try:
        if data.isascii():
            if data.translate(None, _ASCII_OK):
                return _BAD
            text = data.decode("ascii")
        else:
            text = data.decode("utf-8")
            if _ODD.search(text):
                return _BAD
        return _classify(text)
    except (_NotForm, IndexError, UnicodeDecodeError):
        return _BAD


class _Lines:
    """The item's lines, each as _classify gives it, read by recursive descent."""

    __slots__ = ("info", "i", "n")

    def __init__(self, info: List[Tuple[int, int, Optional[str], Any]]):
        self.info, self.i, self.n = info, 0, len(info)


def _mapping(r: _Lines, indent: int, depth: int) -> Dict[str, Any]:
    """A block mapping whose keys stand at `indent`, from the current line: a key line, or a
    `- key...` line whose key is the first (at indent - 2: its sequence's)."""
    if depth > MAX_DEPTH - 2:
        raise _NotForm
    out: Dict[str, Any] = {}
    info, n = r.info, r.n
    first = True
    while True:
        i = r.i
        if i >= n:
            return out
        ind, kind, key, v = info[i]
        if first and kind >= S_KVALUE:
            kind -= 3  # the key after `- `
        else:
            if ind < indent:
                return out
            if ind > indent or kind >= S_VALUE:
                raise _NotForm
        first = False
        i += 1
        r.i = i
        if key in out:
            raise _NotForm  # a duplicate key: YAML's error
        if kind == K_VALUE:
            out[key] = _fresh(v)
            if i < n and info[i][0] > indent:
                raise _NotForm  # the scalar goes on (or an error): left to YAML
            continue
        if i >= n or info[i][0] < indent:
            out[key] = None
        elif info[i][0] > indent:
            out[key] = _block(r, depth + 1)
        elif info[i][1] >= S_VALUE:
            out[key] = _sequence(r, indent, True, depth + 1)  # kubectl's: at the key's indentation
        else:
            out[key] = None


def _block(r: _Lines, depth: int) -> Any:
    """The block collection starting at the current line (more indented than its key)."""
    ind, kind, _, _ = r.info[r.i]
    if kind >= S_VALUE:
        return _sequence(r, ind, False, depth)
    return _mapping(r, ind, depth)


def _sequence(r: _Lines, indent: int, under_key: bool, depth: int) -> List[Any]:
    if depth > MAX_DEPTH - 2:
        raise _NotForm
    out: List[Any] = []
    info, n = r.info, r.n
    while True:
        i = r.i
        if i >= n:
            return out
        ind, kind, _, v = info[i]
        if ind < indent:
            return out
        if ind > indent:
            raise _NotForm
        if kind < S_VALUE:
            if under_key:
                return out  # the next key of the mapping the sequence's key is in
            raise _NotForm
        if kind == S_VALUE:
            i += 1
            r.i = i
            out.append(_fresh(v))
            if i < n and info[i][0] > indent:
                raise _NotForm
        else:
            out.append(_mapping(r, indent + 2, depth + 1))


def forget() -> None:
    """Let go of the lines and scalars remembered (a dump is read)."""
    _LINE.clear()
    _PLAIN.clear()


def read_lines(lines: List[bytes]) -> Optional[Any]:
    """The item (its lines: `- ...` and the lines under it, each with its newline) as YAML reads
    it, or None when it is not in kubectl's form."""
    if not lines or lines[0][:2] != b"- ":
        return None
    info = []
    cache = _LINE
    for line in lines:
        t = cache.get(line)
        if t is None:
            t = _line_info(line)
            if len(cache) < _LINE_CACHE:
                cache[line] = t
        if t is _BAD:
            return None
        info.append(t)
    r = _Lines(info)
    try:
        value = _sequence(r, 0, False, 0)
    except _NotForm:
        return None
    if r.i != r.n or len(value) != 1:
        return None
    return value[0]


def read_item(text: str) -> Optional[Any]:
    """read_lines of an item's text."""
    return read_lines([line.encode("utf-8", "surrogatepass") for line in text.splitlines(keepends=True)])

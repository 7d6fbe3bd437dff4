"""A case's one-line JSON objects read piece by piece, each piece seen before taken as it was.

`schedharness import` writes a big cluster one object per line (harness/yamlfile.py, json_line).
A Deployment's replicas repeat the same text for their containers, volumes, tolerations,
conditions...: of a 4 KB pod line, all but its names, addresses and container statuses. Decoding
every line whole (the JSON decoder, then harness/sharing.py's table finding each mapping again,
then re-encoding the line to check it is in canonical form) was two thirds of loading the
150,000-pod case. Here a line's object and its metadata/spec/status are parsed by this module,
their scalars read directly, and each of their container values (a "piece": `"containers":
[...]`) looked up by its text: a piece whose text was met before is the value decoded then (the
same shared object), so only new pieces are decoded and checked.

Runs: in a line's object and its metadata/spec/status (and in the mappings of a piece not met
before: a container status, by the key and index it is at), the members that read the same as
the last time at the same place (after the same key, in a line of the same kind) are remembered
together as one run of text with their values; the next line starting the same text there takes
them in one `str.startswith` (most of a replica's spec and status), and only the members that
vary are parsed one by one. A run whose text is not there is forgotten (and learnt again).

Exactness: a piece is only remembered after the JSON decoder read exactly that text as one
value and re-encoding the value gave the text back (canonical); the same text elsewhere is then
the same value in the same form. Everything around the pieces is checked here to be canonical
JSON itself (`{"key": value, ...}` with exactly those separators, strings without escapes,
control characters or characters YAML reads otherwise, keys short enough to be YAML simple keys,
integers in their shortest form, each key once, nested at most MAX_NESTING deep); anything else
(a float, an escape, a missing space, a key twice) gives None, and the line is read as before.
The reader counts the values of what it reads as YAML would (`count`: every container, key and
scalar), the bound of a case's values. A line of a shape met before is first matched whole
against the shape's template (harness/json_templates.py); the lines read here teach them.
Not an upstream piece.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .json_templates import CHARS as _CHARS, LineTemplates
# a key YAML takes as a simple key: from its quote to the `: ` after it at most 900 characters
# (yamlfile._long_key)
_KEY = f'"({_CHARS}{{0,896}})": '
_VALUE = f'(?:"({_CHARS}*)"|(true|false|null)|(0|-?[1-9][0-9]*)(?![0-9.eE])|([\\[{{]))'
# one member of a mapping: its key, then a string, a literal, an integer written as it reads
# back (no -0) and not followed by what would make it a float, or the start of a container
_MEMBER = re.compile(_KEY + _VALUE)
_ITEM = re.compile(_VALUE)  # of a list
_LITERALS = {"true": True, "false": False, "null": None}
# containers nested deeper than this in one line are not read here (YAML reads the line and
# refuses what is nested too deep: yamlfile.MAX_DEPTH)
MAX_NESTING = 100
# a member that changed this often from one line to the next is no longer compared (_Shape)
VARYING = 3


class _Bail(Exception):
    """The line is not read here (the caller reads it the plain way)."""


class _Keys(dict):
    """Mapping keys met, each the value table's string (`intern`)."""

    def __init__(self, intern: Callable[[str], str]) -> None:
        super().__init__()
        self.intern = intern

    def __missing__(self, key: str) -> str:
        got = self[key] = self.intern(key)
        return got


class _Shape:
    """The runs of one place (a line's object, or its metadata/spec/status, in lines of one
    kind): `runs` maps the key before a run (None: the mapping's start) to (its text, its
    members, their value count, its last key, whether it closes the mapping); `seen` the text
    of the member read one by one after each key last time. A member that changed VARYING
    times (a pod's name, its node) is not looked at again: it is read one by one."""

    __slots__ = ("runs", "seen", "changes", "varying")

    def __init__(self) -> None:
        self.runs: Dict[Optional[str], Tuple[str, Dict[str, Any], int, str, bool]] = {}
        self.seen: Dict[Optional[str], str] = {}
        self.changes: Dict[Optional[str], int] = {}  # how often the member after a key changed
        self.varying: Set[Optional[str]] = set()  # keys whose next member changed VARYING times


class PieceReader:
    """Reads canonical one-line JSON objects of one load (see the module's docstring).

    `values`: the load's sharing.ValueTable (strings and lists are shared through it);
    `canonical`: the text a value is written as (yamlfile._canonical)."""

    def __init__(self, values: Any, canonical: Callable[[Any], str]) -> None:
        self.values = values
        self.canonical = canonical
        self.intern = values.interner()  # str -> the table's equal string
        self.known = values.known()  # (str, default) -> the table's equal string, else default
        self.keys = _Keys(self.intern)  # the same for mapping keys (few: a small table)
        # a piece's text -> (its (shared) value, the values below it, its nesting)
        self.memo: Dict[str, Tuple[Any, int, int]] = {}
        # the same of each piece text met once, by the text's hash (the text is remembered when
        # met again: most pieces that are met once are never met again)
        self.once: Dict[int, Tuple[Any, int, int]] = {}
        # (parent, key) -> the text after its piece last time (to its next key; "$" + the line's
        # end when it ended the line)
        self.after: Dict[Tuple[Optional[str], Any], str] = {}
        self.shapes: Dict[Tuple[Any, Optional[str]], _Shape] = {}  # (kind, parent) -> its runs
        self.top = self._shape(None, None)  # (a line's object)
        self.count = 0  # the YAML values of the lines read (keys, scalars and containers)
        self.deepest = 0  # the deepest container of the piece being read
        # lines matched whole against their shape's template (harness/json_templates.py)
        self.templates = LineTemplates(self.known)

    def read(self, line: str, start: int = 0) -> Any:
        """The object of line[start:] (a JSON text), or None when it is not read here."""
        got = self.templates.read(line, start)
        if got is not None:
            self.count += got[1]
            return got[0]
        count = self.count
        self.deepest = 0
        try:
            obj, end = self._object(line, start, None, 0, self.top)
        except (_Bail, IndexError, ValueError, StopIteration, RecursionError):
            self.count = count
            return None
        if end != len(line):
            self.count = count
            return None
        self.count += 1  # (the object itself)
        self.templates.learn(line, start, obj, self.count - count)
        return obj

    def _shape(self, kind: Any, parent: Optional[str]) -> _Shape:
        got = self.shapes.get((kind, parent))
        if got is None:
            got = self.shapes[(kind, parent)] = _Shape()
        return got

    def _object(self, s: str, p: int, parent: Any, depth: int,
                shape: Optional[_Shape] = None) -> Tuple[Dict[str, Any], int]:
        """The mapping at s[p] == "{" whose values are scalars, mappings (at depth 0: parsed
        the same way) or pieces; and the index after it. With `shape`, its runs are taken and
        learnt."""
        if s[p] != "{":
            raise _Bail
        out: Dict[str, Any] = {}
        p += 1
        if depth > self.deepest:
            self.deepest = depth
        if s[p] == "}":
            return out, p + 1
        n = 0
        intern = self.intern
        keys = self.keys
        known = self.known
        member = _MEMBER.match
        runs = shape.runs if shape is not None else None
        varying = shape.varying if shape is not None else None
        parsed: List[Tuple[Optional[str], str, int, int, Any, int]] = []  # members read one by one
        prev: Optional[str] = None
        while True:
            if runs:
                run = runs.get(prev)
                if run is not None:
                    text, pairs, cnt, last, closes = run
                    if s.startswith(text, p):
                        out.update(pairs)
                        n += len(pairs)
                        self.count += cnt
                        p += len(text)
                        prev = last
                        if closes:
                            break
                        continue
                    del runs[prev]  # (learnt again from what follows)
            m = member(s, p)
            if m is None:
                raise _Bail  # not JSON, an escape, a float, a space too many or too few...
            c0 = self.count
            key = m.group(1)
            key = keys[key]
            kind = m.lastindex
            e = m.end()
            runs_it = shape is not None
            if kind == 2:
                val: Any = m.group(2)
                # (a string that varies from line to line is most often the line's own: not
                # added to the table, only taken from it)
                val = known(val, val) if varying and prev in varying else intern(val)
            elif kind == 5:
                if s[e - 1] == "{" and depth == 0:
                    of = out.get("kind")
                    sk = (of if type(of) is str else None, key)
                    val, e = self._object(s, e - 1, key, 1, self.shapes.get(sk) or self._shape(*sk))
                    runs_it = False  # (a private mapping: never in a run)
                else:
                    val, e = self._piece(s, e - 1, parent, key, depth + 1)
            elif kind == 3:
                val = _LITERALS[m.group(3)]
            else:
                val = int(m.group(4))
            out[key] = val
            n += 1
            self.count += 2  # (the key and the value)
            d = s[e]
            if d == "}":
                e += 1
            elif d == "," and s[e + 1] == " ":
                e += 2
            else:
                raise _Bail
            if runs_it and prev not in varying:  # type: ignore[operator]
                parsed.append((prev, key, p, e, val, self.count - c0))
            prev = key
            p = e
            if d == "}":
                break
        if len(out) != n:
            raise _Bail  # a key given twice
        if parsed:
            self._learn(shape, s, parsed)  # type: ignore[arg-type]
        return out, p

    @staticmethod
    def _learn(shape: _Shape, s: str, parsed: List[Tuple[Optional[str], str, int, int, Any, int]]) -> None:
        """Members read one by one that read as last time after the same key: runs of them
        (those next to each other) remembered for the next line."""
        seen = shape.seen
        runs = shape.runs
        group: Optional[List[Any]] = None  # [key before, start, end, members, count, last key]
        for prev, key, a, b, val, cnt in parsed:
            text = s[a:b]
            same = seen.get(prev) == text
            seen[prev] = text
            if not same:
                n = shape.changes[prev] = shape.changes.get(prev, 0) + 1
                if n >= VARYING:
                    shape.varying.add(prev)
            if same and group is not None and group[2] == a:
                group[2] = b
                group[3][key] = val
                group[4] += cnt
                group[5] = key
                continue
            if group is not None:
                runs[group[0]] = (s[group[1]:group[2]], group[3], group[4], group[5], s[group[2] - 1] == "}")
            group = [prev, a, b, {key: val}, cnt, key] if same else None
        if group is not None:
            runs[group[0]] = (s[group[1]:group[2]], group[3], group[4], group[5], s[group[2] - 1] == "}")

    def _list(self, s: str, p: int, parent: Any, depth: int) -> Tuple[List[Any], int]:
        """The list at s[p] == "[" (its containers pieces); and the index after it."""
        out: List[Any] = []
        p += 1
        if depth > self.deepest:
            self.deepest = depth
        if s[p] == "]":
            return out, p + 1
        intern = self.intern
        item = _ITEM.match
        while True:
            m = item(s, p)
            if m is None:
                raise _Bail
            kind = m.lastindex
            e = m.end()
            if kind == 1:
                val: Any = intern(m.group(1))
            elif kind == 4:
                val, e = self._piece(s, e - 1, parent, len(out), depth + 1)  # (by its index)
            elif kind == 2:
                val = _LITERALS[m.group(2)]
            else:
                val = int(m.group(3))
            out.append(val)
            d = s[e]
            if d == "]":
                self.count += len(out)
                return out, e + 1
            if d != "," or s[e + 1] != " ":
                raise _Bail
            p = e + 2

    def _piece(self, s: str, v: int, parent: Any, key: Any, depth: int) -> Tuple[Any, int]:
        """The container value at s[v], nested `depth` deep in its line (its text met before,
        or decoded and checked now)."""
        if depth > MAX_NESTING:
            raise _Bail
        nxt = self.after.get((parent, key))
        found = -1
        if nxt is not None:  # where the piece ended last time: the same text after it
            if nxt[0] == "$":  # (the end of the line)
                found = len(s) - len(nxt) + 1 if s.endswith(nxt[1:]) else -1
            else:
                found = s.find(nxt, v)
            if found > v:
                got = self.memo.get(s[v:found])
                if got is not None:  # (_take, inlined: most pieces are met so)
                    val, cnt, height = got
                    height += depth
                    if height > MAX_NESTING:
                        raise _Bail
                    self.count += cnt
                    if height > self.deepest:
                        self.deepest = height
                    return val, found
        outer = self.deepest
        self.deepest = depth
        c0 = self.count
        if s[v] == "{":
            sk = ((parent,), key)
            val, e = self._object(s, v, key, depth, self.shapes.get(sk) or self._shape(*sk))
        else:
            val, e = self._list(s, v, key, depth)
        height = self.deepest - depth
        if outer > self.deepest:
            self.deepest = outer
        text = s[v:e]
        if e != found:  # what follows the piece, to find its end next time: up to the next key
            if len(s) - e <= 8:
                self.after[(parent, key)] = "$" + s[e:]
            else:
                j = s.find('": ', e, e + 64)
                self.after[(parent, key)] = s[e:j + 3] if j != -1 else s[e:e + 3]
        got = self.memo.get(text)  # (its end was not where it was last time)
        if got is not None:
            self.count = c0
            return self._take(got, depth), e
        h = hash(text)
        first = self.once.get(h)
        if first is None:
            self.once[h] = (val, self.count - c0, height)
        elif self.canonical(first[0]) == text:  # met once before: that value is the one shared
            self.memo[text] = first
            val = first[0]
            del self.once[h]
        return val, e

    def _take(self, got: Tuple[Any, int, int], depth: int) -> Any:
        """A remembered piece's value, its values counted, at `depth` in its line."""
        val, cnt, height = got
        if depth + height > MAX_NESTING:
            raise _Bail
        self.count += cnt
        if depth + height > self.deepest:
            self.deepest = depth + height
        return val

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

Exactness: a piece is only remembered after the JSON decoder read exactly that text as one
value and re-encoding the value gave the text back (canonical); the same text elsewhere is then
the same value in the same form. Everything around the pieces is checked here to be canonical
JSON itself (`{"key": value, ...}` with exactly those separators, strings without escapes or
control characters, integers in their shortest form, each key once); anything else (a float, an
escape, a missing space, a key twice) gives None, and the line is read as before. Not an upstream
piece.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Tuple

# one member of a mapping: its key, then a string, a literal, an integer written as it reads
# back (no -0) and not followed by what would make it a float, or the start of a container
_MEMBER = re.compile(r'"([^"]*)": (?:"([^"]*)"|(true|false|null)|(0|-?[1-9][0-9]*)(?![0-9.eE])|([\[{]))')
_ITEM = re.compile(r'"([^"]*)"|(true|false|null)|(0|-?[1-9][0-9]*)(?![0-9.eE])|([\[{])')  # of a list
_LITERALS = {"true": True, "false": False, "null": None}


class _Bail(Exception):
    """The line is not read here (the caller reads it the plain way)."""


class PieceReader:
    """Reads canonical one-line JSON objects of one load (see the module's docstring).

    `values`: the load's sharing.ValueTable (strings and lists are shared through it); `scan`:
    the scan_once of a JSON decoder whose mappings the table builds; `canonical`: the text a
    value is written as (yamlfile._canonical)."""

    def __init__(self, values: Any, scan: Callable[[str, int], Tuple[Any, int]],
                 canonical: Callable[[Any], str]) -> None:
        self.values = values
        self.scan = scan
        self.canonical = canonical
        self.intern = values.interner()  # str -> the table's equal string
        self.memo: Dict[str, Any] = {}  # a piece's text -> its (shared) value
        # the value of each piece text met once, by the text's hash (the text is remembered when
        # met again: most pieces that are met once are never met again)
        self.once: Dict[int, Any] = {}
        # (parent, key) -> the text after its piece last time (to its next key; "$" + the line's
        # end when it ended the line)
        self.after: Dict[Tuple[Optional[str], str], str] = {}

    def read(self, line: str) -> Any:
        """The object of `line` (a JSON text without backslashes, control characters or
        characters YAML escapes: the caller checks), or None when it is not read here."""
        try:
            obj, end = self._object(line, 0, None, 0)
        except (_Bail, IndexError, ValueError, StopIteration, RecursionError):
            return None
        return obj if end == len(line) else None

    def _object(self, s: str, p: int, parent: Any, depth: int) -> Tuple[Dict[str, Any], int]:
        """The mapping at s[p] == "{" whose values are scalars, mappings (at depth 0: parsed
        the same way) or pieces; and the index after it."""
        if s[p] != "{":
            raise _Bail
        out: Dict[str, Any] = {}
        p += 1
        if s[p] == "}":
            return out, p + 1
        n = 0
        intern = self.intern
        member = _MEMBER.match
        while True:
            m = member(s, p)
            if m is None:
                raise _Bail  # not JSON, an escape, a float, a space too many or too few...
            key = intern(m.group(1))
            kind = m.lastindex
            e = m.end()
            if kind == 2:
                val: Any = intern(m.group(2))
            elif kind == 5:
                if s[e - 1] == "{" and depth == 0:
                    val, e = self._object(s, e - 1, key, 1)
                else:
                    val, e = self._piece(s, e - 1, parent, key)
            elif kind == 3:
                val = _LITERALS[m.group(3)]
            else:
                val = int(m.group(4))
            out[key] = val
            n += 1
            d = s[e]
            if d == "}":
                break
            if d != "," or s[e + 1] != " ":
                raise _Bail
            p = e + 2
        if len(out) != n:
            raise _Bail  # a key given twice
        return out, e + 1

    def _list(self, s: str, p: int, parent: Any) -> Tuple[List[Any], int]:
        """The list at s[p] == "[" (its containers pieces); and the index after it."""
        out: List[Any] = []
        p += 1
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
                val, e = self._piece(s, e - 1, parent, len(out))  # (by its index)
            elif kind == 2:
                val = _LITERALS[m.group(2)]
            else:
                val = int(m.group(3))
            out.append(val)
            d = s[e]
            if d == "]":
                return out, e + 1
            if d != "," or s[e + 1] != " ":
                raise _Bail
            p = e + 2

    def _piece(self, s: str, v: int, parent: Any, key: Any) -> Tuple[Any, int]:
        """The container value at s[v] (its text met before, or decoded and checked now)."""
        nxt = self.after.get((parent, key))
        found = -1
        if nxt is not None:  # where the piece ended last time: the same text after it
            if nxt[0] == "$":  # (the end of the line)
                found = len(s) - len(nxt) + 1 if s.endswith(nxt[1:]) else -1
            else:
                found = s.find(nxt, v)
            if found > v:
                got = self.memo.get(s[v:found])
                if got is not None:
                    return got, found
        if s[v] == "{":
            val, e = self._object(s, v, key, 1)
        else:
            val, e = self._list(s, v, key)
        text = s[v:e]
        if e != found:  # what follows the piece, to find its end next time: up to the next key
            if len(s) - e <= 8:
                self.after[(parent, key)] = "$" + s[e:]
            else:
                j = s.find('": ', e, e + 64)
                self.after[(parent, key)] = s[e:j + 3] if j != -1 else s[e:e + 3]
        got = self.memo.get(text)  # (its end was not where it was last time)
        if got is not None:
            return got, e
        h = hash(text)
        first = self.once.get(h)
        if first is None:
            self.once[h] = val
        elif self.canonical(first) == text:  # met once before: that value is the one shared
            self.memo[text] = val = first
            del self.once[h]
        return val, e

"""A `kubectl get -o yaml` (or `-o json`) dump read item by item, for `schedharness import`: a
dump of a big cluster (785 MB of YAML, 1.9 GB of JSON, 50 million values) is never held whole,
so a dump has no size bound, only each of its items (MAX_ITEM_BYTES, MAX_ITEM_VALUES,
MAX_DEPTH). Files in kubectl's own form are read by a fast path (each item's lines cut out and
read alone, or decoded as JSON); anything else YAML allows falls back to reading event by event. Bounds and errors as
harness.yamlfile's (the one YAML loader, whose strict loader this builds on)."""

from __future__ import annotations

import codecs
import functools
import os
import re
import stat
from typing import Any, Dict, List, Optional, Type

import yaml

from ..errors import UserError
from ..yamlfile import (MAX_DEPTH, MAX_ITEM_VALUES, _NotYaml, _StrictLoader, _YAML_UNSAFE, _long_key,
                         _parse_constant, _parse_float, _yaml_problem, check_regular_file, load_yaml_file)
from .dump_lines import _Generic, _build, forget, read_lines

# The text of one object of a dump: the API server takes a request body of at most 3 MiB
# (k8s.io/apiserver/pkg/server/config.go, MaxRequestBodyBytes: 3 * 1024 * 1024; etcd stores at
# most 1.5 MiB), and kubectl's pretty printing (indentation, one value a line) makes a compact
# object up to about 8x longer: 16x that is more than any real object reaches. A dump itself has
# no size bound (it is read item by item); the reader holds at most one item's text.
MAX_ITEM_BYTES = 16 * 3 * 1024 * 1024


class _ItemTooLarge(Exception):
    """An item of the dump longer than MAX_ITEM_BYTES (args: its key)."""


def _too_large(error_cls: Type[UserError], path: str, key: str) -> UserError:
    return error_cls(f"too large: more than {MAX_ITEM_BYTES} bytes in one object (the API server takes "
                     f"at most 3 MiB)", file=path, key=key)


def _lines(f):
    """The lines of a binary file, each read with a bound (one line longer than an item cannot
    be one of an item's lines, nor is it read whole)."""
    return iter(functools.partial(f.readline, MAX_ITEM_BYTES + 1), b"")


def _node_values(node, memo: dict, depth: int = 0) -> int:
    """The number of values a composed node expands to (aliases counted as expanded)."""
    n = memo.get(id(node))
    if n is not None:
        return n
    if depth > MAX_DEPTH:
        raise RecursionError
    if isinstance(node, yaml.ScalarNode):
        n = 1
    elif isinstance(node, yaml.SequenceNode):
        n = 1 + sum(_node_values(c, memo, depth + 1) for c in node.value)
    else:
        n = 1 + sum(_node_values(k, memo, depth + 1) + _node_values(v, memo, depth + 1) for k, v in node.value)
    memo[id(node)] = n
    return n


def iter_dump_items(path: str, error_cls: Type[UserError], fast: bool = True):
    """The objects of a dump, read one at a time so that a dump of any size is never held whole:
    yields (key, object) for each item of a `kind: List` (`items[12]`), each element of a
    top-level list, or each document; other top-level keys of a List are skipped. The same
    loader rules as load_yaml_file (duplicate keys, kubectl's key conversion); each object is
    bounded by MAX_ITEM_VALUES values and MAX_DEPTH levels. Raises error_cls naming the item.

    A regular file in `kubectl get -o yaml`'s own form is read by _fast_list_items (each item's
    lines cut at its `- ` and read line by line by dump_lines, or, not in kubectl's narrow
    form, composed by libyaml and built by _build: 1.8x faster than composing event by event in
    Python), and one in `kubectl get -o json`'s form by _fast_json_items; at the first thing
    not in that form, or an item that does not load, the reader here takes over, so results
    and errors are those of this reader: at the last item the fast reader gave (_ResumePoint:
    the file's top-level lines, then the rest from that item on, each line at its own line
    number; that item is read again and skipped), or, before the first item, from the start."""
    skip = 0
    at = _ResumePoint()
    if fast and getattr(yaml, "CSafeLoader", None) is not None and _is_regular(path):
        try:
            for key, obj in _fast_list_items(path, at):
                yield key, obj
                skip += 1
            return
        except _Fallback:
            pass
        except _ItemTooLarge as e:
            raise _too_large(error_cls, path, e.args[0]) from None
        except OSError:  # read again below, whose error says why
            at = _ResumePoint()
        finally:  # what the fast readers remembered of the lines (about 50 MB)
            forget()
            _JSON_OK.clear()
    if not at.found(path):
        at = _ResumePoint()  # from the start
    for n, (key, obj) in enumerate(_iter_dump_items(path, error_cls, at if at.index >= 0 else None),
                                   max(at.index, 0)):
        if n >= skip:
            yield key, obj


class _ResumePoint:
    """Where the fast reader's last item began: its index and byte offset, and the file's
    top-level lines before the items (`items:`, or kubectl's JSON up to `"items": [`); `line`,
    the item's line number as YAML counts lines, is found when a fallback resumes there."""

    __slots__ = ("index", "offset", "line", "head")

    def __init__(self) -> None:
        self.index = -1  # none yet
        self.offset = self.line = 0
        self.head = b""

    def mark(self, index: int, offset: int) -> None:
        self.index, self.offset = index, offset

    def found(self, path: str) -> bool:
        """Is there an item to resume at, whose line number is known (set here)? The lines
        before it are counted by their `\\n`; a file with any other line break YAML counts
        (CR, NEL, LS, PS) before it is read again from the start."""
        if self.index < 0:
            return False
        lines = 0
        tail = b""
        try:
            with open(path, "rb") as f:
                left = self.offset
                while left > 0:
                    block = f.read(min(left, 8 << 20))
                    if not block:
                        return False
                    left -= len(block)
                    if any(b in block or b in tail + block[:2] for b in _OTHER_BREAKS):
                        return False
                    lines += block.count(b"\n")
                    tail = block[-2:]
        except OSError:
            return False
        self.line = lines
        return lines > self.head.count(b"\n") or self.offset == len(self.head)


_OTHER_BREAKS = (b"\r", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")  # CR, NEL, LS, PS in UTF-8


class _Resumed:
    """A dump read from a resume point: its top-level lines, then blank lines that put the item
    on its own line and byte offset (YAML's error marks name lines, a reader error the byte
    offset), then the file from the item on."""

    def __init__(self, f, at: _ResumePoint) -> None:
        self.f = f
        self.name = f.name  # (YAML's reader errors name the stream)
        self.pieces = _padding(at.line - at.head.count(b"\n"), at.offset - len(at.head))
        self.pre = at.head
        f.seek(at.offset)

    def read(self, size: int = -1) -> bytes:
        if self.pre:
            out, self.pre = (self.pre, b"") if size is None or size < 0 else (self.pre[:size], self.pre[size:])
            return out
        if self.pieces is not None:
            piece = next(self.pieces, None)
            if piece is not None:
                self.pre = piece
                return self.read(size)
            self.pieces = None
        return self.f.read(size)

    def close(self) -> None:
        self.f.close()


def _padding(lines: int, size: int):
    """`lines` blank lines of `size` bytes in all (spaces, then a newline), in pieces of about
    1 MB."""
    if lines <= 0:
        return
    q, r = divmod(size - lines, lines)
    block = 1 << 20
    first = True
    while lines:
        spaces = q + (r if first else 0)
        first = False
        if spaces >= block:  # a long line of spaces, in pieces
            while spaces:
                n = min(spaces, block)
                yield b" " * n
                spaces -= n
            yield b"\n"
            lines -= 1
            continue
        line = b" " * spaces + b"\n"
        k = 1 if r and spaces != q else min(lines, max(1, block // len(line)))
        yield line * k
        lines -= k


class _Fallback(Exception):
    """The dump is not in the form _fast_list_items reads."""


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


# the top-level lines of `kubectl get -o yaml` around `items:`
_HEAD_LINE = re.compile(rb"(?:apiVersion|kind): [A-Za-z0-9./-]+\r?\n?|metadata:(?: \{\})?\r?\n?")
_META_LINE = re.compile(rb"  [A-Za-z]+: (?:\"\"|''|[A-Za-z0-9./-]*)\r?\n?")
_ITEMS_LINE = re.compile(rb"items:\r?\n")
# cheap bounds of an item's nesting depth (libyaml's composer recurses in C, unchecked, and
# overflows the stack somewhere between 20,000 and 50,000 levels): a block node's ancestors lie on
# at most 2 x indentation + 1 lines, each adding at most its run of `- `/`? ` + 1 levels, and
# each flow bracket one: under 200 columns, runs under 6 and 1000 brackets, under 4000 levels
_DEEP_INDENT = re.compile(rb"\n {200}")
_LONG_INDICATOR_RUN = re.compile(rb"(?:[-?][ \t]+){6}")
_FAST_MAX_BRACKETS = 1000


def _fast_list_items(path: str, at: Optional[_ResumePoint] = None):
    """iter_dump_items for a file in kubectl's form: top-level lines `apiVersion: v1`, `kind:
    List`, `metadata:` (with simple `  key: value` lines) and one `items:` whose entries start
    at column 0 with `- `. Each entry's lines (up to the next line at column 0 that is not a
    comment or blank) are one YAML document of one sequence entry, read by dump_lines.read_lines
    or else composed by libyaml (yaml.CSafeLoader) and constructed by _StrictLoader's rules. Raises _Fallback at the first
    line not in that form or entry that does not load alone as one entry. `at`: where each item
    given began (the resume point of a fallback)."""
    at = at if at is not None else _ResumePoint()
    with open(path, "rb") as f:
        if f.peek(3)[:3] == codecs.BOM_UTF8:
            raise _Fallback
        if f.peek(1)[:1] == b"{":
            yield from _fast_json_items(f, at)
            return
        seen_items = False
        meta = False
        lines = _lines(f)
        head: List[bytes] = []
        keys: set = set()  # the top-level keys and metadata's (indented) met: a duplicate is YAML's error
        for line in lines:  # the header
            head.append(line)
            if _ITEMS_LINE.fullmatch(line):
                seen_items = True
                break
            if meta and _META_LINE.fullmatch(line):
                _new_key(keys, line)
                continue
            if not _HEAD_LINE.fullmatch(line):
                raise _Fallback
            _new_key(keys, line)
            meta = line.startswith(b"metadata:") and not line.startswith(b"metadata: {")
        if not seen_items:
            raise _Fallback
        at.head = b"".join(head)
        chunk: List[bytes] = []
        size = 0  # of the chunk
        i = 0
        tail = None
        offset = 0  # the chunk's first byte
        for line in lines:
            c = line[:1]
            if c == b"-":
                if line[1:2] not in (b" ", b"\n", b"\r", b""):
                    raise _Fallback  # `---`, `-x`: left to YAML
                if chunk:
                    value = _fast_item(chunk)
                    at.mark(i, offset)
                    yield f"items[{i}]", value
                    i += 1
                chunk = [line]
                size = len(line)
                offset = f.tell() - len(line)
            elif c in (b" ", b"#", b"\n", b"\r"):
                if not chunk:
                    raise _Fallback
                chunk.append(line)
                size += len(line)
            else:
                tail = line
                break
            if size > MAX_ITEM_BYTES:
                raise _ItemTooLarge(f"items[{i}]")
        if chunk:
            value = _fast_item(chunk)
            at.mark(i, offset)
            yield f"items[{i}]", value
        if not chunk:
            raise _Fallback  # `items:` with no block entries (`items: []` is not this form)
        meta = False
        while tail is not None:  # the lines after the items
            if meta and _META_LINE.fullmatch(tail):
                _new_key(keys, tail)
            elif _HEAD_LINE.fullmatch(tail):
                _new_key(keys, tail)
                meta = tail.startswith(b"metadata:") and not tail.startswith(b"metadata: {")
            else:
                raise _Fallback
            tail = next(lines, None)


def _new_key(keys: set, line: bytes) -> None:
    """A top-level (or metadata's) line's key, _Fallback when met before (the reader event by
    event says `duplicate key`)."""
    key = line.split(b":", 1)[0]
    if key in keys:
        raise _Fallback
    keys.add(key)


def _fast_item(chunk: List[bytes]) -> Any:
    """One entry's lines (`- ...` and the lines under it) as _construct_item reads them, or
    _Fallback: in kubectl's own form read line by line (dump_lines.read_lines), else composed by
    libyaml."""
    if sum(map(len, chunk)) <= MAX_ITEM_VALUES // 8:  # too few values to exceed the bound
        value = read_lines(chunk)
        if value is not None:
            return value
    return _composed_item(b"".join(chunk))


def _composed_item(text: bytes) -> Any:
    """_fast_item's entry composed by libyaml (and built by _build or _StrictLoader)."""
    if (text.count(b"[") + text.count(b"{") > _FAST_MAX_BRACKETS or _DEEP_INDENT.search(text)
            or _LONG_INDICATOR_RUN.search(text)):
        raise _Fallback  # possibly deeper than libyaml's composer can recurse
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if not isinstance(node, yaml.SequenceNode) or len(node.value) != 1:
            raise _Fallback
        node = node.value[0]
        if b"*" not in text and len(text) <= MAX_ITEM_VALUES // 8:  # no alias, too few values to exceed
            try:
                return _build(loader, node, 0)
            except _Generic:
                pass
        if _node_values(node, {}) > MAX_ITEM_VALUES:
            raise _Fallback
        return loader.construct_document(node)
    except (yaml.YAMLError, RecursionError, ValueError):
        raise _Fallback from None
    finally:
        loader.dispose()


_JSON_HEAD = re.compile(rb'\{\n|    "[A-Za-z]+": (?:"[A-Za-z0-9./-]*"|\{\}),?\n|    "metadata": \{\n'
                        rb'|        "[A-Za-z]+": "[A-Za-z0-9./-]*",?\n|    \},?\n|    \],?\n|\}\n?')
_JSON_STR = rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
# the lines of one item as `kubectl get -o json` prints them: each value, `{`, `[` or closing
# bracket on its own line, `"key": ` with one space
_JSON_LINE_TEXT = (rb" *(?:" + _JSON_STR + rb": )?(?:" + _JSON_STR
                   + rb"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null|[\[{]|\{\}|\[\]|[}\]])?,?\n")
_JSON_ITEM = re.compile(rb"(?:" + _JSON_LINE_TEXT + rb")*")
_JSON_LINE = re.compile(_JSON_LINE_TEXT)  # one line of _JSON_ITEM (no line holds a newline but its last)
_LONG_LINE = re.compile(rb"[^\n]{900}")  # a key too long for YAML needs a line this long
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _fast_json_items(f, at: _ResumePoint):
    """_fast_list_items for `kubectl get -o json`'s form: a pretty-printed object whose
    `"items": [` entries start with a line `        {` and end with `        },` (the last
    `        }`). Each entry is read with the C JSON decoder where YAML reads it the same: a text
    YAML would read otherwise (floats YAML 1.1 reads as strings, duplicate keys, characters YAML
    refuses, surrogate escapes, keys too long for YAML) raises _Fallback."""
    skeleton: List[bytes] = []
    line = b""
    lines = _lines(f)
    for line in lines:
        if line == b'    "items": [\n':
            break
        if not _JSON_HEAD.fullmatch(line):
            raise _Fallback
        skeleton.append(line)
    else:
        raise _Fallback
    skeleton.append(b'    "items": [\n')
    at.head = b"".join(skeleton)
    chunk: List[bytes] = []
    size = 0  # of the chunk
    i = 0
    last = True  # the previous entry ended without a comma (or there is none yet)
    offset = 0  # the chunk's first byte
    for line in lines:
        if line == b"        {\n" and not chunk:
            if i and last:
                raise _Fallback
            chunk = [line]
            size = len(line)
            offset = f.tell() - len(line)
        elif chunk and line in (b"        },\n", b"        }\n"):
            chunk.append(b"        }\n")
            value = _fast_json_lines(chunk)
            at.mark(i, offset)
            yield f"items[{i}]", value
            i += 1
            chunk = []
            last = line == b"        }\n"
        elif chunk and line.startswith(b"            "):
            chunk.append(line)
            size += len(line)
            if size > MAX_ITEM_BYTES:
                raise _ItemTooLarge(f"items[{i}]")
        elif not chunk and i and last and _JSON_HEAD.fullmatch(line):
            skeleton.append(line)
            break
        else:
            raise _Fallback
    else:
        raise _Fallback
    for line in lines:
        if len(skeleton) > 64 or not _JSON_HEAD.fullmatch(line):
            raise _Fallback
        skeleton.append(line)
    try:
        if not isinstance(_strict_json(b"".join(skeleton)), dict):
            raise _Fallback
    except ValueError:
        raise _Fallback from None


def _no_duplicates(pairs):
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _NotYaml("duplicate key")
    return out


_strict_json_decoder = None


def _strict_json(data: bytes) -> Any:
    global _strict_json_decoder
    if _strict_json_decoder is None:
        import json

        _strict_json_decoder = json.JSONDecoder(parse_float=_parse_float, parse_constant=_parse_constant,
                                                object_pairs_hook=_no_duplicates)
    return _strict_json_decoder.decode(data.decode("utf-8"))


def _json_depth(obj: Any, depth: int = 1) -> int:
    deepest = depth
    for v in (obj.values() if isinstance(obj, dict) else obj):
        if isinstance(v, (dict, list)) and v:
            deepest = max(deepest, _json_depth(v, depth + 1))
        elif isinstance(v, (dict, list)):
            deepest = max(deepest, depth + 1)
    return deepest


_JSON_OK: Dict[bytes, bool] = {}  # lines that passed _fast_json_item's checks, one by one
_JSON_OK_LINES = 100_000


def _json_line_ok(line: bytes) -> bool:
    """Does the line pass each of _fast_json_item's checks of the text, as a line: in
    _JSON_ITEM's form, shorter than a long key's line, no tab, surrogate escape or character
    YAML refuses?"""
    if len(line) > 900 or b"\t" in line or _SURROGATE_ESCAPE.search(line) or not _JSON_LINE.fullmatch(line):
        return False
    if line.isascii():
        return b"\x7f" not in line
    try:
        return not _YAML_UNSAFE.search(line.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def _fast_json_lines(chunk: List[bytes]) -> Any:
    """_fast_json_item of an entry's lines: its checks of the text made line by line (each line
    met before passes at once), the JSON decoded, and its depth counted only when the entry has
    more brackets than MAX_DEPTH; an entry any of whose lines does not pass goes through
    _fast_json_item itself."""
    ok = _JSON_OK
    for line in chunk:
        if line not in ok:
            if not _json_line_ok(line):
                return _fast_json_item(b"".join(chunk))
            if len(ok) < _JSON_OK_LINES:
                ok[line] = True
    text = b"".join(chunk)
    if len(chunk) * 2 > MAX_ITEM_VALUES:  # each line in the form holds a key and a value at most
        raise _Fallback
    try:
        obj = _strict_json(text)
        if text.count(b"{") + text.count(b"[") > MAX_DEPTH and _json_depth(obj) > MAX_DEPTH:
            raise _Fallback
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise _Fallback from None
    return obj


def _fast_json_item(text: bytes) -> Any:
    if (text.count(b"\n") * 2 > MAX_ITEM_VALUES or b"\t" in text or _SURROGATE_ESCAPE.search(text)
            or not _JSON_ITEM.fullmatch(text)):
        raise _Fallback
    try:
        s = text.decode("utf-8")
        if _YAML_UNSAFE.search(s) or (_LONG_LINE.search(text) and _long_key(s)):
            raise _Fallback
        obj = _strict_json(text)
        if _json_depth(obj) > MAX_DEPTH:
            raise _Fallback
    except (ValueError, RecursionError):
        raise _Fallback from None
    return obj


def _iter_dump_items(path: str, error_cls: Type[UserError], at: Optional[_ResumePoint] = None):
    """iter_dump_items read event by event (any YAML a dump may be); `at`: from a resume
    point of the fast reader (the file's top-level lines, then its items from at.index on)."""
    check_regular_file(path, error_cls, streams=True)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise error_cls(f"cannot read: {e.strerror or e}", file=path) from None
    head = f.peek(4)[:4]  # a pipe cannot seek back
    if at is not None:
        f = _Resumed(f, at)  # (the fast reader read the same file: UTF-8, no BOM)
    elif head[:3] != codecs.BOM_UTF8 and (b"\0" in head or head[:2] in (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE)):
        f.close()  # UTF-16/32: read whole, as load_yaml_file does
        docs = load_yaml_file(path, error_cls, all_documents=True, streams=True)
        for d, doc in enumerate(docs):
            for key, obj in _split_document(doc, "" if len(docs) == 1 else f"document {d + 1}: ", error_cls, path):
                yield key, obj
        return
    loader = _StreamLoader(f)
    where = "the stream"
    try:
        loader.get_event()  # StreamStart
        doc_index = 0
        while loader.check_event(yaml.DocumentStartEvent):
            loader.get_event()
            doc_index += 1
            prefix = f"document {doc_index}: " if doc_index > 1 else ""
            if loader.check_event(yaml.DocumentEndEvent):
                loader.get_event()
                continue
            if loader.check_event(yaml.MappingStartEvent):
                loader.get_event()
                header = {}
                while not loader.check_event(yaml.MappingEndEvent):
                    key = loader.construct_document(loader.compose_node(None, None))
                    if isinstance(key, str) and key in header:  # the loader's rule, as for every file
                        raise error_cls(f'duplicate key "{key[:60]}"', file=path, key=f"{prefix}{key[:60]}")
                    if key == "items" and loader.check_event(yaml.SequenceStartEvent):
                        if not isinstance(header.get("kind", "List"), str):
                            raise error_cls(f"must be a string, got {header['kind']!r:.40}", file=path,
                                            key=f"{prefix}kind")
                        loader.get_event()
                        i = at.index if at is not None and doc_index == 1 else 0
                        while not loader.check_event(yaml.SequenceEndEvent):
                            where = f"{prefix}items[{i}]"
                            yield where, _construct_item(loader, where, error_cls, path)
                            i += 1
                        loader.get_event()
                        header["items"] = _ITEMS_READ
                    else:
                        header[key] = _construct_item(loader, f"{prefix}{key}"[:80], error_cls, path,
                                                      MAX_HEAD_VALUES, "in a top-level value")
                loader.get_event()
                _check_list_head(header, prefix, error_cls, path)
                if "items" not in header:  # a single object
                    yield prefix.rstrip(": ") or "document", header
            elif loader.check_event(yaml.SequenceStartEvent):
                loader.get_event()
                i = 0
                while not loader.check_event(yaml.SequenceEndEvent):
                    where = f"{prefix}[{i}]"
                    yield where, _construct_item(loader, where, error_cls, path)
                    i += 1
                loader.get_event()
            else:
                where = prefix.rstrip(": ") or "document"
                yield where, _construct_item(loader, where, error_cls, path)
            loader.get_event()  # DocumentEnd
        loader.anchors = {}
    except yaml.YAMLError as e:
        raise error_cls(f"invalid YAML: {_yaml_problem(e)}", file=path, key=where) from None
    except RecursionError:
        raise error_cls("nested too deep to read", file=path, key=where) from None
    finally:
        loader.dispose()
        f.close()


class _StreamLoader(_StrictLoader):
    """_StrictLoader composing one node at a time from the (C) parser's events (libyaml's
    CParser composes only whole documents), for iter_dump_items."""

    compose_node = yaml.composer.Composer.compose_node
    compose_scalar_node = yaml.composer.Composer.compose_scalar_node
    compose_sequence_node = yaml.composer.Composer.compose_sequence_node
    compose_mapping_node = yaml.composer.Composer.compose_mapping_node

    def __init__(self, stream):
        super().__init__(stream)
        self.anchors = {}
        self.item_start = -1  # where the node being composed starts (-1: none)

    def get_event(self):
        """The parser's next event; _ItemTooLarge once the node being composed passes
        MAX_ITEM_BYTES (counted in characters, libyaml's marks: an item is refused before it
        is held whole)."""
        event = super().get_event()
        if self.item_start >= 0 and event.end_mark.index - self.item_start > MAX_ITEM_BYTES:
            raise _ItemTooLarge
        return event


def _construct_item(loader, where: str, error_cls: Type[UserError], path: str,
                    limit: int = MAX_ITEM_VALUES, what: str = "in one object") -> Any:
    """The next node of the stream, bounded before it is built: an item of a dump (at most
    `limit` values), or a top-level value of its document (a List's metadata: an alias bomb
    there is refused as one in an item)."""
    loader.item_start = loader.peek_event().start_mark.index
    try:
        node = loader.compose_node(None, None)
    except _ItemTooLarge:
        raise _too_large(error_cls, path, where) from None
    finally:
        loader.item_start = -1
    try:
        n = _node_values(node, {})
    except RecursionError:
        raise error_cls(f"nested more than {MAX_DEPTH} levels deep", file=path, key=where) from None
    if n > limit:
        raise error_cls(f"too large: more than {limit} YAML values {what} (aliases counted as expanded)",
                        file=path, key=where)
    obj = loader.construct_document(node)
    loader.anchors = {}
    return obj


_ITEMS_READ = object()  # a List's `items`, yielded entry by entry
MAX_HEAD_VALUES = 10_000  # a List's own metadata (kubectl writes resourceVersion: "" there)


def _check_list_head(header: Dict[Any, Any], prefix: str, error_cls: Type[UserError], path: str) -> None:
    """A List's `items` is a list (null: none) and its `kind` a string."""
    items = header.get("items", _ITEMS_READ)
    if items is not _ITEMS_READ and items is not None:
        raise error_cls(f"must be a list of objects, got {_kind_of(items)}", file=path, key=f"{prefix}items")
    if "items" in header and not isinstance(header.get("kind", ""), str):
        raise error_cls(f"must be a string, got {_kind_of(header['kind'])}", file=path, key=f"{prefix}kind")
    if items is None:
        header["items"] = _ITEMS_READ


def _kind_of(v: Any) -> str:
    what = ("a mapping" if isinstance(v, dict) else "a list" if isinstance(v, list) else
            "a boolean" if isinstance(v, bool) else "an integer" if isinstance(v, int) else
            "a string" if isinstance(v, str) else type(v).__name__)
    return f"{what} {str(v)[:40]!r}" if not isinstance(v, (dict, list)) else what


def _split_document(doc: Any, prefix: str, error_cls: Type[UserError] = UserError, path: str = ""):
    if doc is None:
        return
    if isinstance(doc, dict) and "items" in doc:
        head = {k: (_ITEMS_READ if k == "items" and isinstance(v, list) else v) for k, v in doc.items()}
        _check_list_head(head, prefix, error_cls, path)
        for i, item in enumerate(doc["items"] or []):
            yield f"{prefix}items[{i}]", item
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            yield f"{prefix}[{i}]", item
    else:
        yield prefix.rstrip(": ") or "document", doc

"""The one loader for every YAML file the harness reads (cases, configurations, dumps).

- libyaml's C parser (yaml.CSafeLoader, shipped with pyyaml) when present, else the pure-Python one;
- UTF-8, and UTF-16/UTF-32 recognised by their byte order mark or YAML 1.2's null-byte pattern
  (YAML 1.2 section 5.2, "Character Encodings");
- duplicate mapping keys refused, as Kubernetes' strict decoding (sigs.k8s.io/yaml with
  DisallowDuplicateFields) refuses them;
- bounded: a file over MAX_BYTES, a document of more than MAX_VALUES YAML values (aliases counted
  as expanded) or nested deeper than MAX_DEPTH is refused before anything is built, so a hostile
  or mistaken file never hangs, exhausts memory or overflows the C parser's stack. (A case of
  more than MAX_OBJECTS Kubernetes objects is refused by the case loader.)

Every problem is a `error_cls` (a UserError): one line with the file and, where known, the line.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Tuple, Type

import yaml

from .errors import UserError
from .gcpause import collector_paused

if TYPE_CHECKING:
    from .sharing import ValueTable

# sized for a 5000-node / 150,000-pod cluster: its `kubectl get -o yaml` dump with status and
# managedFields is ~785 MB and ~50 million values (README, "Real clusters")
MAX_BYTES = 1024 * 1024 * 1024
MAX_VALUES = 60_000_000
MAX_OBJECTS = 250_000  # Kubernetes objects in one case (harness.case.loader)
MAX_ITEM_VALUES = 1_000_000  # values of one object of a dump read item by item (iter_dump_items)
MAX_DEPTH = 200

_BaseLoader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: str, mark):
        super().__init__(f'duplicate key "{key}"')
        self.problem = f'duplicate key "{_cut(key)}"'
        self.problem_mark = mark


def go_yaml_key(key: Any) -> Any:
    """A mapping key as kubectl's YAML-to-JSON conversion (sigs.k8s.io/yaml
    convertToJSONableObject) turns it into a JSON key: an integer, a float or a boolean key
    becomes its text (`1: x` is the label key "1"); other keys are left as they are."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32_g(key)
    return key


def _go_float32_g(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 32), with go-yaml's .inf/-.inf/.nan."""
    import math

    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    import numpy as np

    sci = np.format_float_scientific(np.float32(f), unique=True, trim="-", exp_digits=2)
    mant, _, exp_s = sci.partition("e")
    exp = int(exp_s)
    neg = mant.startswith("-")
    digits = mant.lstrip("-").replace(".", "")
    if exp < -4 or exp >= 6:  # %e form, shortest digits
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{'-' if neg else ''}{m}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if exp >= 0:
        whole, frac = digits[:exp + 1].ljust(exp + 1, "0"), digits[exp + 1:]
    else:
        whole, frac = "0", "0" * (-exp - 1) + digits
    return f"{'-' if neg else ''}{whole}" + (f".{frac}" if frac else "")


_RESOLVED: dict = {}  # a plain scalar's text -> its implicit tag (_StrictLoader.resolve)


class _StrictLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader that refuses a key given twice in one mapping (merge keys `<<` excepted), keeps
    a timestamp-looking scalar as its text and turns integer, float and boolean keys into text,
    as kubectl's YAML-to-JSON conversion does (go-yaml v2 keeps timestamps decoded into
    interface{} as strings; sigs.k8s.io/yaml stringifies non-string keys)."""

    def construct_yaml_timestamp(self, node):
        return self.construct_scalar(node)

    def resolve(self, kind, value, implicit):
        """Resolver.resolve, its answer for a plain scalar remembered per text (the same keys
        and values recur in every object of a dump: a third of reading one, unremembered)."""
        if kind is yaml.ScalarNode and not self.yaml_path_resolvers:
            if not implicit[0]:
                return self.DEFAULT_SCALAR_TAG
            tag = _RESOLVED.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(_RESOLVED) < 100_000:
                    _RESOLVED[value] = tag
            return tag
        return super().resolve(kind, value, implicit)

    def construct_mapping(self, node, deep=False):
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep=deep)
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = go_yaml_key(self.construct_object(key_node, deep=True))
            try:
                dup = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: refused below
                continue
            if dup:
                raise _DuplicateKey(str(key), key_node.start_mark)
        self.flatten_mapping(node)  # merge keys, as SafeConstructor.construct_mapping does
        mapping = {}
        for key_node, value_node in node.value:
            key = go_yaml_key(self.construct_object(key_node, deep=deep))
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "found unhashable key",
                    key_node.start_mark) from None
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_yaml_int(self, node):
        """An integer; one too long for Python's int() (sys.get_int_max_str_digits, 4300 digits
        by default) is a YAML error at its line, not a ValueError (no Kubernetes field holds
        more than 64 bits anyway)."""
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of {len(str(node.value))} characters is too long to read",
                node.start_mark) from None


_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _StrictLoader.construct_yaml_timestamp)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)


def _cut(text: str, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."


def decode_yaml_bytes(data: bytes) -> str:
    """The text of a YAML stream: BOM or null-byte pattern (YAML 1.2 5.2), else UTF-8.
    Raises UnicodeDecodeError (with the offset) for bytes that are not that encoding."""
    boms = ((codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF32_LE, "utf-32-le"),
            (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_BE, "utf-16-be"),
            (codecs.BOM_UTF16_LE, "utf-16-le"))
    for bom, enc in boms:
        if data.startswith(bom):
            return data[len(bom):].decode(enc)
    head = data[:4]
    if len(head) == 4:
        if head[:3] == b"\0\0\0" and head[3]:
            return data.decode("utf-32-be")
        if head[0] and head[1:] == b"\0\0\0":
            return data.decode("utf-32-le")
    if len(head) >= 2:
        if head[0] == 0 and head[1]:
            return data.decode("utf-16-be")
        if head[0] and head[1] == 0:
            return data.decode("utf-16-le")
    return data.decode("utf-8")


def _check_bounds(text: str, max_values: int = MAX_VALUES) -> Optional[str]:
    """Walk the parser's events (no objects built) and return why the stream is too large or
    too deep, or None. Aliases count as the size and depth of what they expand to."""
    loader = _BaseLoader(text)
    try:
        count = 0
        depth = 0
        stack: List[Tuple[Optional[str], int, int]] = []  # (anchor, count at start, max depth below)
        anchors = {}  # anchor -> (objects, depth) of its expansion
        max_below = [0]
        while loader.check_event():
            ev = loader.get_event()
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                count += 1
                depth += 1
                stack.append((ev.anchor, count - 1, depth))
                max_below.append(depth)
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                anchor, start, d = stack.pop()
                deepest = max_below.pop()
                max_below[-1] = max(max_below[-1], deepest)
                depth -= 1
                if anchor:
                    anchors[anchor] = (count - start, deepest - d + 1)
            elif isinstance(ev, yaml.ScalarEvent):
                count += 1
                if ev.anchor:
                    anchors[ev.anchor] = (1, 1)
                max_below[-1] = max(max_below[-1], depth + 1)
            elif isinstance(ev, yaml.AliasEvent):
                if any(a == ev.anchor for a, _, _ in stack):
                    mark = getattr(ev, "start_mark", None)
                    where = f" (line {mark.line + 1})" if mark is not None else ""
                    return f"alias *{_cut(ev.anchor, 40)} refers to a value that contains it{where}"
                size, d = anchors.get(ev.anchor, (1, 1))
                count += size
                max_below[-1] = max(max_below[-1], depth + d)
            else:
                continue
            if count > max_values:
                return (f"too large: more than {MAX_VALUES} YAML values (aliases counted as "
                        f"expanded); split the file or drop what the scheduler does not read "
                        f"(managedFields, status of pods)")
            if max(depth, max_below[-1]) > MAX_DEPTH:
                mark = getattr(ev, "start_mark", None)
                where = f" (line {mark.line + 1})" if mark is not None else ""
                return f"nested more than {MAX_DEPTH} levels deep{where}"
        return None
    finally:
        loader.dispose()


# --- objects written one per line as JSON (`schedharness import` writes big clusters so) -------
#
# A line `- {...}` at column 0 is a block sequence entry holding a flow mapping; when that mapping
# is in the canonical form json_line writes, YAML and JSON read it as the same value, so the
# C `json` decoder reads it (about 50x faster than PyYAML's constructor, and without composing a
# node graph: a 150,000-pod case never holds a node per value). Every other line, and any such
# line not in canonical form, is read by YAML as before.

# what PyYAML's reader refuses (Reader.NON_PRINTABLE) or reads as a line break, escaped by
# json_line; found raw in a line, the line is not canonical
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
# a mapping key longer than a simple key may be (1024 characters from its start to the `:`, in
# PyYAML and libyaml alike): such a line is left to YAML (which refuses it)
_KEY = re.compile(r'"(?:[^"\\]|\\.)*": ')
_LONG_RUN = re.compile(r'"[^"]{900}')  # a literal first: the regex engine skips to each quote
_YAML_FLOAT = re.compile(r"-?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?$")  # JSON floats YAML 1.1 reads as floats
_JSON_LINE_BATCH = 2000


def _long_key(body: str) -> bool:
    """Has the JSON text a mapping key of more than 900 characters as written (a cheap test
    first: no such key without a run of 900 characters free of quotes, or an escaped quote)?"""
    if len(body) <= 900 or ('\\"' not in body and not _LONG_RUN.search(body)):
        return False
    return any(m.end() - m.start() > 900 for m in _KEY.finditer(body))


class _NotYaml(ValueError):
    """A JSON text that YAML would read otherwise (or not at all)."""


def _parse_float(text: str) -> float:
    if not _YAML_FLOAT.match(text):  # 1e+16: a string in YAML 1.1
        raise _NotYaml(text)
    return float(text)


def _parse_constant(text: str) -> Any:  # NaN, Infinity: not JSON, plain strings in YAML
    raise _NotYaml(text)


_json_decoder = None


def _decoder(values: Optional["ValueTable"] = None):
    """The JSON decoder of canonical lines; with `values`, one that builds the table's shared
    values (sharing.ValueTable.pairs_hook)."""
    global _json_decoder
    import json

    if values is not None:
        return json.JSONDecoder(parse_float=_parse_float, parse_constant=_parse_constant,
                                object_pairs_hook=values.pairs_hook)
    if _json_decoder is None:
        _json_decoder = json.JSONDecoder(parse_float=_parse_float, parse_constant=_parse_constant)
    return _json_decoder


_encoder = None


def _canonical(obj: Any) -> str:
    global _encoder
    if _encoder is None:
        import json

        _encoder = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
    text = _encoder.encode(obj)
    if not (text.isascii() and "\x7f" not in text) and _YAML_UNSAFE.search(text):
        text = _YAML_UNSAFE.sub(lambda m: "\\u%04x" % ord(m.group()), text)
    return text


def json_line(obj: Any) -> Optional[str]:
    """`obj` as one line of JSON that YAML reads back as the same value, or None
    when there is no such line (a non-string key, a float YAML 1.1 would read as a string, a key
    too long for YAML)."""
    try:
        text = _canonical(obj)
    except (TypeError, ValueError):
        return None
    try:
        back = _decoder().decode(text)
    except ValueError:
        return None
    if back != obj or _long_key(text):
        return None
    return text


def _json_values_bound(body: str) -> int:
    """An upper bound of the YAML values (_check_bounds' count: keys, scalars and containers)
    of canonical JSON text: every key is followed by a `:`, every other value but the outermost
    by a `,`, `}` or `]` (each also counted where it sits inside a string, and `{}`, `[]` once
    each, so never less than the true count)."""
    return body.count(":") + body.count(",") + body.count("}") + body.count("]") + 1


def _split_json_lines(text: str, values: Optional["ValueTable"] = None) -> Optional[Tuple[str, List[Any], int, str]]:
    """The text with each canonical `- {...}` line at column 0 replaced by a placeholder entry,
    the objects those lines hold (in order), an upper bound of their YAML values and the
    placeholder; None when the text has no such line or must be read by YAML whole (a character
    YAML reads as a line break that splitting at newlines would miss)."""
    if "\n- {" not in text and not text.startswith("- {"):
        return None
    if "\r" in text or "\x85" in text or "\u2028" in text or "\u2029" in text:
        return None
    return _split_lines(text.split("\n"), values)


def _split_lines(lines: Iterable[str], values: Optional["ValueTable"] = None) -> Optional[Tuple[str, List[Any], int, str]]:
    """_split_json_lines over the text's lines (split at "\\n" alone, in order: a list, or a
    file read line by line, _stream_json_lines), each candidate line decoded in batches as it
    comes: a file is never held whole."""
    import secrets

    decoder = _decoder(values)
    mark = f"schedharness-json-line-{secrets.token_hex(12)}"
    placeholder = f'- "{mark}"'
    out: List[str] = []  # the skeleton's lines
    batch: List[int] = []  # indexes in `out` of the candidate lines not decoded yet
    objs: List[Any] = []
    bound = 0

    def decode_batch() -> None:
        nonlocal bound
        bodies = [out[i][2:] for i in batch]
        joined = ", ".join(bodies)
        try:  # one decode per batch: its keys are shared strings (the decoder's memo)
            decoded = decoder.decode("[" + joined + "]")
        except ValueError:
            decoded = None
        # no line of the batch has a long key when the batch has no candidate for one
        long_keys = len(joined) > 900 and ('\\"' in joined or _LONG_RUN.search(joined) is not None)
        # the batch's bound covers its lines (and, over-counting, those left to YAML)
        bound += _json_values_bound(joined)
        for j, i in enumerate(batch):
            body = bodies[j]
            if decoded is not None:
                value = decoded[j]
            else:
                try:
                    value = decoder.decode(body)
                except ValueError:
                    continue  # left to YAML
            if (body.count("{") + body.count("[") > 100 or (long_keys and _long_key(body))
                    or _canonical(value) != body):
                continue  # left to YAML
            out[i] = placeholder
            if values is not None:
                values.decoded(value)
            objs.append(value)
        batch.clear()

    for line in lines:
        if line.startswith("- {") and line.endswith("}"):
            batch.append(len(out))
            out.append(line)
            if len(batch) >= _JSON_LINE_BATCH:
                decode_batch()
        else:
            out.append(line)
    if batch:
        decode_batch()
    if not objs:
        return None
    return "\n".join(out), objs, bound, mark


# a case file at least this large is read line by line (_stream_json_lines) when its objects are
# shared (values): its text is then never held whole
STREAM_FROM = 1024 * 1024
_BOMS = (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF8, codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE)


class _NotStreamed(Exception):
    """The file is read whole instead (not UTF-8 without a BOM, a byte that is not UTF-8, a
    character YAML reads as a line break): that path gives the value or the error."""


def _file_lines(f, chunk: int = 1 << 23) -> Iterator[str]:
    """The lines of a UTF-8 file as text.split("\\n") gives them, read a chunk at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    carry = ""
    while True:
        block = f.read(chunk)
        try:
            text = carry + decoder.decode(block, not block)
        except UnicodeDecodeError:
            raise _NotStreamed from None
        if "\r" in text or "\x85" in text or "\u2028" in text or "\u2029" in text:
            raise _NotStreamed
        lines = text.split("\n")
        if not block:
            yield from lines
            return
        carry = lines.pop()
        yield from lines


@collector_paused()
def _stream_json_lines(path: str, values: "ValueTable") -> Any:
    """load_yaml_text's JSON lines path over a file read line by line (the 620 MB case of a
    150,000-pod cluster was held three times over: its bytes, its text and its lines); the
    same value, or _NO_FAST_PATH when the file must be read whole."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            if any(head.startswith(bom) for bom in _BOMS) or 0 in head[:2]:
                return _NO_FAST_PATH  # decode_yaml_bytes' other encodings
            f.seek(0)
            split = _split_lines(_file_lines(f), values)
    except (_NotStreamed, OSError):
        return _NO_FAST_PATH
    return _load_split(split)


def _fill_json_lines(data: Any, objs: List[Any], mark: str) -> bool:
    """Put the objects back where their placeholders are (entries of a sequence at column 0: the
    document itself or a value of its top-level mapping); False when not every placeholder was
    found there once."""
    it = iter(objs)
    filled = 0
    seqs = [data] if isinstance(data, list) else \
        [v for v in data.values() if isinstance(v, list)] if isinstance(data, dict) else []
    seen = set()
    for seq in seqs:
        if id(seq) in seen:
            continue
        seen.add(id(seq))
        for i, v in enumerate(seq):
            if v == mark:
                seq[i] = next(it, None)
                filled += 1
    return filled == len(objs)


def _load_with_json_lines(text: str, source: str, error_cls: Type[UserError],
                          values: Optional["ValueTable"] = None) -> Any:
    return _load_split(_split_json_lines(text, values))


def _load_split(split: Optional[Tuple[str, List[Any], int, str]]) -> Any:
    """The document of a split text (_split_lines): the skeleton read by YAML, the objects put
    back; _NO_FAST_PATH when YAML must read the text whole (it then says what is wrong)."""
    if split is None:
        return _NO_FAST_PATH
    skeleton, objs, bound, mark = split
    try:
        if bound > MAX_VALUES or _check_bounds(skeleton, MAX_VALUES - bound):
            return _NO_FAST_PATH  # YAML reads the text whole and says what is wrong
        loader = _StrictLoader(skeleton)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except (yaml.YAMLError, RecursionError):
        return _NO_FAST_PATH
    if not _fill_json_lines(data, objs, mark):
        return _NO_FAST_PATH
    return data


_NO_FAST_PATH = object()


@collector_paused()
def load_yaml_text(text: str, source: str, error_cls: Type[UserError], all_documents: bool = False,
                   values: Optional["ValueTable"] = None) -> Any:
    """The document (or, with all_documents, the list of documents) of YAML text. Lines of
    canonical JSON objects (json_line) are read by the JSON decoder, the rest by YAML; with
    `values` (a case's objects: sharing.ValueTable), the decoder builds them with equal values
    shared, and marks them so (the case loader then gives each object its own top levels)."""
    if not all_documents:
        data = _load_with_json_lines(text, source, error_cls, values)
        if data is not _NO_FAST_PATH:
            return data
    try:
        why = _check_bounds(text)
        if why:
            raise error_cls(why, file=source)
        loader = _StrictLoader(text)
        try:
            if all_documents:
                docs = []
                while loader.check_data():
                    docs.append(loader.get_data())
                return docs
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise error_cls(f"invalid YAML: {_yaml_problem(e)}", file=source) from None
    except RecursionError:
        raise error_cls("nested too deep to read", file=source) from None


def load_yaml_file(path: str, error_cls: Type[UserError], all_documents: bool = False,
                   streams: bool = False, values: Optional["ValueTable"] = None) -> Any:
    """The document of the YAML file at `path`. A file that cannot be read raises
    error_cls("cannot read: <reason>", file=path); one that is not a regular file (a FIFO, a
    device, a socket: reading it could wait forever) is refused before it is opened unless
    `streams` (`import` reads a dump from a pipe); a YAML syntax error
    error_cls("invalid YAML: <problem> (line L, column C)", file=path); a file too large, too
    deep, not text, or with a duplicate key, a one-line error_cls as well."""
    try:
        check_regular_file(path, error_cls, streams=streams)
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise error_cls(f"too large: {size} bytes (the limit is {MAX_BYTES // (1024 * 1024)} MB)",
                            file=path)
    except OSError as e:
        raise error_cls(f"cannot read: {e.strerror or e}", file=path) from None
    if values is not None and not all_documents and size >= STREAM_FROM and _is_regular(path):
        streamed = _stream_json_lines(path, values)
        if streamed is not _NO_FAST_PATH:
            return streamed
    try:
        with open(path, "rb") as f:
            # the file's size and one byte more (read(MAX_BYTES + 1) would ask for a 1 GiB
            # buffer for every file); a stream (size 0), or a file grown since, reads on
            data = f.read(size + 1)
            if len(data) > size:
                data += f.read(MAX_BYTES + 1 - len(data))
        if len(data) > MAX_BYTES:  # a stream, whose size was not known
            raise error_cls(f"too large: more than {MAX_BYTES // (1024 * 1024)} MB", file=path)
    except OSError as e:
        raise error_cls(f"cannot read: {e.strerror or e}", file=path) from None
    try:
        text = decode_yaml_bytes(data)
    except UnicodeDecodeError as e:
        raise error_cls(f"not a text file in UTF-8 (or UTF-16/32 with a byte order mark): "
                        f"{e.encoding} cannot decode byte offset {e.start}", file=path) from None
    del data  # (the text alone while it is read)
    return load_yaml_text(text, path, error_cls, all_documents=all_documents, values=values)


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
    text cut at its `- `, composed by libyaml and built by _build: 1.8x faster than composing
    event by event in Python), and one in `kubectl get -o json`'s form by _fast_json_items; at the first thing not in that form, or an item that does not load, the stream
    is read again here (its first items, already yielded, are read and skipped), so results
    and errors are those of this reader."""
    skip = 0
    if fast and getattr(yaml, "CSafeLoader", None) is not None and _is_regular(path):
        try:
            for key, obj in _fast_list_items(path):
                yield key, obj
                skip += 1
            return
        except _Fallback:
            pass
        except OSError:  # read again below, whose error says why
            pass
    for n, (key, obj) in enumerate(_iter_dump_items(path, error_cls)):
        if n >= skip:
            yield key, obj


class _Fallback(Exception):
    """The dump is not in the form _fast_list_items reads."""


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode) and os.path.getsize(path) <= MAX_BYTES
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


def _fast_list_items(path: str):
    """iter_dump_items for a file in kubectl's form: top-level lines `apiVersion: v1`, `kind:
    List`, `metadata:` (with simple `  key: value` lines) and one `items:` whose entries start
    at column 0 with `- `. Each entry's lines (up to the next line at column 0 that is not a
    comment or blank) are one YAML document of one sequence entry, composed by libyaml
    (yaml.CSafeLoader) and constructed by _StrictLoader's rules. Raises _Fallback at the first
    line not in that form or entry that does not load alone as one entry."""
    with open(path, "rb") as f:
        if f.peek(3)[:3] == codecs.BOM_UTF8:
            raise _Fallback
        if f.peek(1)[:1] == b"{":
            yield from _fast_json_items(f)
            return
        seen_items = False
        meta = False
        for line in f:  # the header
            if _ITEMS_LINE.fullmatch(line):
                seen_items = True
                break
            if meta and _META_LINE.fullmatch(line):
                continue
            if not _HEAD_LINE.fullmatch(line):
                raise _Fallback
            meta = line.startswith(b"metadata:") and not line.startswith(b"metadata: {")
        if not seen_items:
            raise _Fallback
        chunk: List[bytes] = []
        i = 0
        tail = None
        for line in f:
            c = line[:1]
            if c == b"-":
                if line[1:2] not in (b" ", b"\n", b"\r", b""):
                    raise _Fallback  # `---`, `-x`: left to YAML
                if chunk:
                    yield f"items[{i}]", _fast_item(b"".join(chunk))
                    i += 1
                chunk = [line]
            elif c in (b" ", b"#", b"\n", b"\r"):
                if not chunk:
                    raise _Fallback
                chunk.append(line)
            else:
                tail = line
                break
        if chunk:
            yield f"items[{i}]", _fast_item(b"".join(chunk))
        if not chunk:
            raise _Fallback  # `items:` with no block entries (`items: []` is not this form)
        meta = False
        while tail is not None:  # the lines after the items
            if meta and _META_LINE.fullmatch(tail):
                pass
            elif _HEAD_LINE.fullmatch(tail):
                meta = tail.startswith(b"metadata:") and not tail.startswith(b"metadata: {")
            else:
                raise _Fallback
            tail = f.readline() or None


def _fast_item(text: bytes) -> Any:
    """One entry's text (`- ...` with its lines) as _construct_item reads it, or _Fallback."""
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
_JSON_STR = rb'"(?:[^"\\\n]|\\.)*"'
# the lines of one item as `kubectl get -o json` prints them: each value, `{`, `[` or closing
# bracket on its own line, `"key": ` with one space
_JSON_ITEM = re.compile(rb"(?: *(?:" + _JSON_STR + rb": )?(?:" + _JSON_STR
                        + rb"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null|[\[{]|\{\}|\[\]|[}\]])?,?\n)*")
_LONG_LINE = re.compile(rb"[^\n]{900}")  # a key too long for YAML needs a line this long
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _fast_json_items(f):
    """_fast_list_items for `kubectl get -o json`'s form: a pretty-printed object whose
    `"items": [` entries start with a line `        {` and end with `        },` (the last
    `        }`). Each entry is read with the C JSON decoder where YAML reads it the same: a text
    YAML would read otherwise (floats YAML 1.1 reads as strings, duplicate keys, characters YAML
    refuses, surrogate escapes, keys too long for YAML) raises _Fallback."""
    skeleton: List[bytes] = []
    line = b""
    for line in f:
        if line == b'    "items": [\n':
            break
        if not _JSON_HEAD.fullmatch(line):
            raise _Fallback
        skeleton.append(line)
    else:
        raise _Fallback
    skeleton.append(b'    "items": [\n')
    chunk: List[bytes] = []
    i = 0
    last = True  # the previous entry ended without a comma (or there is none yet)
    for line in f:
        if line == b"        {\n" and not chunk:
            if i and last:
                raise _Fallback
            chunk = [line]
        elif chunk and line in (b"        },\n", b"        }\n"):
            chunk.append(b"        }\n")
            yield f"items[{i}]", _fast_json_item(b"".join(chunk))
            i += 1
            chunk = []
            last = line == b"        }\n"
        elif chunk and line.startswith(b"            "):
            chunk.append(line)
        elif not chunk and i and last and _JSON_HEAD.fullmatch(line):
            skeleton.append(line)
            break
        else:
            raise _Fallback
    else:
        raise _Fallback
    for line in f:
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


def _fast_json_item(text: bytes) -> Any:
    if (len(text) > MAX_ITEM_VALUES or b"\t" in text or _SURROGATE_ESCAPE.search(text)
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


def _iter_dump_items(path: str, error_cls: Type[UserError]):
    """iter_dump_items read event by event (any YAML a dump may be)."""
    check_regular_file(path, error_cls, streams=True)
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise error_cls(f"too large: {size} bytes (the limit is {MAX_BYTES // (1024 * 1024)} MB)", file=path)
        f = open(path, "rb")
    except OSError as e:
        raise error_cls(f"cannot read: {e.strerror or e}", file=path) from None
    head = f.peek(4)[:4]  # a pipe cannot seek back
    if head[:3] != codecs.BOM_UTF8 and (b"\0" in head or head[:2] in (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE)):
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
                        i = 0
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


def _construct_item(loader, where: str, error_cls: Type[UserError], path: str,
                    limit: int = MAX_ITEM_VALUES, what: str = "in one object") -> Any:
    """The next node of the stream, bounded before it is built: an item of a dump (at most
    `limit` values), or a top-level value of its document (a List's metadata: an alias bomb
    there is refused as one in an item)."""
    node = loader.compose_node(None, None)
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


def check_regular_file(path: str, error_cls: Type[UserError], streams: bool = False) -> None:
    """Refuse, before opening it, a path that is no regular file: opening a FIFO waits for a
    writer, reading a device may never end. (Missing files and folders are left to open(),
    whose error says so.) With `streams`, FIFOs and character devices (a pipe, /dev/stdin)
    are allowed: their size is bounded while reading."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    if streams and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        return
    what = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a special file")
    raise error_cls(f"not a regular file ({what}): give the path of a YAML file", file=path)


def _yaml_problem(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    problem = _cut(" ".join(str(problem).split()), 160)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return problem

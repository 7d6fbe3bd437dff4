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

A `kubectl get -o yaml` dump is read item by item by harness/case/dumps.py, on these pieces.

Every problem is a `error_cls` (a UserError): one line with the file and, where known, the line.
"""

from __future__ import annotations

import codecs
import io
import itertools
import os
import re
import stat
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Tuple, Type

import yaml

from .errors import UserError
from .gcpause import collector_paused
from .json_pieces import PieceReader

if TYPE_CHECKING:
    from .sharing import ValueTable

# sized for a 5000-node / 150,000-pod cluster: its `kubectl get -o yaml` dump with status and
# managedFields is ~785 MB and ~50 million values (README, "Real clusters")
MAX_BYTES = 1024 * 1024 * 1024
MAX_VALUES = 60_000_000
MAX_OBJECTS = 250_000  # Kubernetes objects in one case (harness.case.loader)
MAX_ITEM_VALUES = 1_000_000  # values of one object of a dump read item by item (harness/case/dumps.py)
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
_KEY = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*": ?')  # ": " as json_line writes it, ":" compact
_LONG_RUN = re.compile(r'"[^"]{900}')  # a literal first: the regex engine skips to each quote
_YAML_FLOAT = re.compile(r"-?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?$")  # JSON floats YAML 1.1 reads as floats
_JSON_LINE_BATCH = 2000
_COMPACT = (",", ":")  # the separators of JSON's compact form (_canonical)


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


_encoders: Dict[str, Any] = {}


def _canonical(obj: Any, separators: Tuple[str, str] = (", ", ": ")) -> str:
    """`obj` as json_line writes it; with separators (",", ":"), the compact form `json.dumps(obj,
    separators=(",", ":"), ensure_ascii=False)` writes (a generator's lines, e.g. OpenB's
    make_case.py), which YAML reads as the same value too: in a flow collection a `:` is the
    value indicator without a space after it, and a `,` ends a plain scalar."""
    encoder = _encoders.get(separators[0])
    if encoder is None:
        import json

        encoder = _encoders[separators[0]] = json.JSONEncoder(ensure_ascii=False, separators=separators,
                                                              allow_nan=False)
    text = encoder.encode(obj)
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


def _split_json_lines(text: str, values: Optional["ValueTable"] = None) -> Optional[Tuple[str, List[Any], int, str, List[int]]]:
    """The text with each canonical `- {...}` line at column 0 replaced by a placeholder entry
    (a run of them by one), the objects those lines hold (in order), an upper bound of their
    YAML values, the placeholder and how many objects each placeholder entry stands for; None
    when the text has no such line or must be read by YAML whole (a character YAML reads as a
    line break that splitting at newlines would miss)."""
    if "\n- {" not in text and not text.startswith("- {"):
        return None
    if "\r" in text or "\x85" in text or "\u2028" in text or "\u2029" in text:
        return None
    return _split_lines(text.split("\n"), values)


_LEFT = object()  # a line left to YAML


def _line_value(decoder: Any, body: str, decoded: Any = _LEFT, maybe_long_key: bool = True) -> Any:
    """The value of one `- {...}` line's JSON text `body` (`decoded`: already decoded), or _LEFT
    when YAML must read the line: nested more than 100 deep, a key too long for a YAML simple
    key (`maybe_long_key` False: its batch has none), not JSON, or neither in canonical form nor
    in the compact one."""
    if body.count("{") + body.count("[") > 100 or (maybe_long_key and _long_key(body)):
        return _LEFT
    if decoded is _LEFT:
        try:
            decoded = decoder.decode(body)
        except ValueError:
            return _LEFT
    if _canonical(decoded) == body or _canonical(decoded, _COMPACT) == body:
        return decoded
    return _LEFT


def _split_lines(lines: Iterable[str], values: Optional["ValueTable"] = None) -> Optional[Tuple[str, List[Any], int, str, List[int]]]:
    """_split_json_lines over the text's lines (split at "\\n" alone, in order: a list, or a
    file read line by line, _stream_json_lines), each candidate line decoded as it comes (in
    batches without a value table): a file is never held whole."""
    import secrets

    decoder = _decoder(values)
    # with a value table, lines are read piece by piece (harness/json_pieces.py)
    reader = None if values is None else PieceReader(values, _canonical)
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
        decoded = None
        try:  # one decode per batch: its keys are shared strings (the decoder's memo)
            decoded = decoder.decode("[" + joined + "]")
        except ValueError:
            pass
        # no line of the batch has a long key when the batch has no candidate for one
        long_keys = len(joined) > 900 and ('\\"' in joined or _LONG_RUN.search(joined) is not None)
        # the batch's bound covers its lines (and, over-counting, those left to YAML)
        bound += _json_values_bound(joined)
        for j, i in enumerate(batch):
            value = _line_value(decoder, bodies[j], _LEFT if decoded is None else decoded[j], long_keys)
            if value is _LEFT:
                continue  # left to YAML
            out[i] = placeholder
            objs.append(value)
        batch.clear()

    for line in lines:
        if line.startswith("- {") and line.endswith("}"):
            if reader is not None:  # read at once, in order (json_pieces.py: canonical or None)
                value = reader.read(line, 2)
                if value is None:
                    body = line[2:]
                    value = _line_value(decoder, body)
                    if value is _LEFT:
                        out.append(line)  # left to YAML
                        continue
                    bound += _json_values_bound(body)
                out.append(placeholder)
                values.decoded(value)  # type: ignore[union-attr]
                objs.append(value)
                continue
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
    if reader is not None:
        bound += reader.count
    # a run of placeholders (entries of one sequence) is one entry standing for as many objects:
    # YAML reads 155,000 placeholders of a big case as a few
    skeleton: List[str] = []
    counts: List[int] = []
    after = False  # the line before was a placeholder
    for line in out:
        if line is placeholder:
            if after:
                counts[-1] += 1
                continue
            counts.append(1)
            after = True
        else:
            after = False
        skeleton.append(line)
    return "\n".join(skeleton), objs, bound, mark, counts


# a case file at least this large is read line by line (_stream_json_lines) when its objects are
# shared (values): its text is then never held whole
STREAM_FROM = 1024 * 1024
_BOMS = (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF8, codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE)


class _NotStreamed(Exception):
    """The file is read whole instead (not UTF-8 without a BOM, a byte that is not UTF-8, a
    character YAML reads as a line break): that path gives the value or the error."""


def _file_lines(f, chunk: int = 1 << 16) -> Iterator[str]:
    """The lines of a UTF-8 file as text.split("\\n") gives them, decoded `chunk` bytes at a time
    by io.TextIOWrapper, whose C code finds each line's end by memchr (text.split("\\n") looks at
    every character: 0.85 s of CPU over the 620 MB case, now ~0.3 s). A line holding a character
    YAML reads as a line break, or bytes that are not UTF-8, raise _NotStreamed."""
    text = io.TextIOWrapper(f, encoding="utf-8", newline="\n")
    text._CHUNK_SIZE = chunk  # (CPython's and PyPy's attribute; 8 KB by default)
    ended = True  # (the text read so far ends with a line break, or is empty)
    try:
        for line in text:
            ended = line[-1:] == "\n"
            if ended:
                line = line[:-1]
            if "\r" in line or (not line.isascii() and ("\x85" in line or "\u2028" in line or "\u2029" in line)):
                raise _NotStreamed
            yield line
    except UnicodeDecodeError:
        raise _NotStreamed from None
    finally:
        text.detach()  # (f stays open: its owner closes it)
    if ended:  # (what follows the last line break)
        yield ""


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


def _fill_json_lines(data: Any, objs: List[Any], mark: str, counts: List[int]) -> bool:
    """Put the objects back where their placeholders are (entries of a sequence at column 0: the
    document itself or a value of its top-level mapping), each placeholder as many as its count;
    False when not every placeholder was found there once."""
    it = iter(objs)
    runs = iter(counts)
    filled = found = 0
    seqs = [data] if isinstance(data, list) else \
        [v for v in data.values() if isinstance(v, list)] if isinstance(data, dict) else []
    seen = set()
    for seq in seqs:
        if id(seq) in seen:
            continue
        seen.add(id(seq))
        if mark not in seq:
            continue
        entries: List[Any] = []
        for v in seq:
            if v == mark:
                found += 1
                got = list(itertools.islice(it, next(runs, 0)))
                filled += len(got)
                entries.extend(got)
            else:
                entries.append(v)
        seq[:] = entries
    return found == len(counts) and filled == len(objs)


def _load_with_json_lines(text: str, source: str, error_cls: Type[UserError],
                          values: Optional["ValueTable"] = None) -> Any:
    return _load_split(_split_json_lines(text, values))


def _load_split(split: Optional[Tuple[str, List[Any], int, str, List[int]]]) -> Any:
    """The document of a split text (_split_lines): the skeleton read by YAML, the objects put
    back; _NO_FAST_PATH when YAML must read the text whole (it then says what is wrong)."""
    if split is None:
        return _NO_FAST_PATH
    skeleton, objs, bound, mark, counts = split
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
    if not _fill_json_lines(data, objs, mark, counts):
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
    # (not `streams`: check_regular_file found a regular file)
    if values is not None and not all_documents and size >= STREAM_FROM and not streams:
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

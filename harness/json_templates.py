"""A case's one-line JSON objects matched whole against a template of their line's shape.

The replicas of a Deployment are written as lines that differ only in a few scalars (a pod's
name, uid, node, addresses, container ids): the rest of a 4 KB pod line repeats. From two lines
read by harness/json_pieces.py that have the same shape (the same text around their scalars,
and scalars of the same kinds: strings, integers, true/false/null), a template is learnt: the
text that is the same in both (its literals) and the scalars that differ (its holes). It is
compiled once into a function (`_compile`) that checks a line against it with `str.startswith`
and `str.find` (C's memcmp and memchr over the 4 KB, not Python's work per member) and builds
the line's object from the template's own values with only the paths to holes copied: a line's
object and its metadata/spec/status are new mappings (the case writes into them), a value below
them without holes is the template's (shared by every line it matches), and one with holes is
looked up by its holes' text among the values built before with the same text around its holes
(`LineTemplates.pieces`), so equal values are still one object. A line that matches no template
is read piece by piece as before, and teaches the templates (a hole more, or a new template).

Exactness: a line a template matches differs from a line the piece reader read (canonical JSON
in YAML's reading) only inside the holes, and a hole only holds what canonical JSON writes for a
scalar of its kind: a string without a quote, a backslash or a character escaped for YAML
(checked over all of a line's strings at once), an integer written as Python writes it (no `-0`,
no leading zero, nothing after it that would make it a float: a hole is always followed by `,`,
`}` or `]` in the literal), or `true`/`false`/`null`. So the line is canonical too, its keys and
nesting are the template's, and its value is the template's value with the holes' scalars in
place: what the JSON decoder reads. Anything else (an escape, a float, a space, a key more or a
nested value where a scalar was) fails the match and goes to the piece reader. Not an upstream
piece.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Tuple

# the characters of a string canonical JSON writes as they are (json_line: not `"`, `\`, a
# control character, nor what yamlfile._canonical escapes for YAML)
CHARS = '[^"\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]'
_STRING = re.compile(CHARS + "*")
# an ASCII byte a string hole may not hold (a control character, DEL, a backslash) -> 0x80, the
# others kept: the holes' text is fine when the translated bytes are still ASCII
_ASCII_CHECK = bytes(0x80 if b < 0x20 or b == 0x7F or b == 0x5C else b for b in range(256))
_LITERALS = {"true": True, "false": False, "null": None}
_BAD = object()
# a canonical line's tokens (a line the piece reader read: strings have no escape, numbers are
# integers): a string (a key when `: ` follows), an integer, a literal, an opening, a closing
_TOKEN = re.compile(r'"([^"\\]*)"(: )?|(-?[0-9]+)|(true|false|null)|([\[{])|([\]}])')
# shapes remembered at most (each with its last line's scalars), templates tried by their
# lines' length before the recent ones, recent templates tried on a line of a new length
MAX_SHAPES = 512
MAX_LENGTHS = 100_000
TRY_RECENT = 6
LEARN_FREE = 256 * 1024
# a shape's template is compiled at most so often (each time a scalar more varies), with at most
# so many holes (a line most of whose scalars vary is as fast read piece by piece)
MAX_COMPILES = 8
MAX_HOLES = 1000


class _Node:
    """One value of a parsed line: `kind` "{", "[", "s" (string), "i" (integer), "l" (literal);
    its span (a string's inside its quotes, a container's brackets included); a container's
    members (key or index, node); a scalar's index among the line's scalars."""

    __slots__ = ("kind", "start", "end", "members", "leaf", "holes")

    def __init__(self, kind: str, start: int) -> None:
        self.kind = kind
        self.start = start
        self.end = start
        self.members: List[Tuple[Any, "_Node"]] = []
        self.leaf = -1
        self.holes = False  # (the node or a value in it is a hole of the template being made)


def _parse(s: str, p: int) -> Optional[Tuple[_Node, List[_Node]]]:
    """The tree of the canonical JSON object s[p:] and its scalars in order; None when the
    text is not what the piece reader accepts (tokens only separated by `, `)."""
    stack: List[_Node] = []
    leaves: List[_Node] = []
    root: Optional[_Node] = None
    key: Any = None
    last = p
    for m in _TOKEN.finditer(s, p):
        gap = m.start() - last
        if gap and (gap != 2 or s[last:m.start()] != ", "):
            return None
        last = m.end()
        if root is not None:
            return None  # (text after the object)
        if m.lastindex == 2:  # a key
            if not stack or stack[-1].kind != "{" or key is not None:
                return None
            key = m.group(1)
            continue
        if m.lastindex == 6:  # a closing
            if not stack or key is not None or (stack[-1].kind == "{") != (m.group() == "}"):
                return None
            node = stack.pop()
            node.end = m.end()
            if not stack:
                root = node
            continue
        if m.lastindex == 1:
            node = _Node("s", m.start() + 1)
            node.end = m.end() - 1
        elif m.lastindex == 5:
            node = _Node(m.group(), m.start())
        else:
            node = _Node("i" if m.lastindex == 3 else "l", m.start())
            node.end = m.end()
        if stack:
            parent = stack[-1]
            if parent.kind == "{":
                if key is None:
                    return None
                parent.members.append((key, node))
                key = None
            else:
                parent.members.append((len(parent.members), node))
        elif node.kind != "{":
            return None
        if node.kind in "{[":
            stack.append(node)
        else:
            node.leaf = len(leaves)
            leaves.append(node)
    if root is None or last != len(s):
        return None
    return root, leaves


def _signature(s: str, p: int, leaves: List[_Node], end: Optional[int] = None) -> str:
    """The shape of s[p:end] (a line, or a value in it): its text with each of `leaves` (the
    scalars in it) replaced by a mark of its kind (a canonical line holds no NUL)."""
    parts: List[str] = []
    at = p
    for leaf in leaves:
        parts.append(s[at:leaf.start])
        parts.append("\x00" + leaf.kind)
        at = leaf.end
    parts.append(s[at:end])
    return "".join(parts)


def _leaves_in(node: _Node) -> List[_Node]:
    """The scalars in a container, in order."""
    out: List[_Node] = []
    for _, child in node.members:
        if child.kind in "{[":
            out.extend(_leaves_in(child))
        else:
            out.append(child)
    return out


def _holes_in(node: _Node) -> List[_Node]:
    return [leaf for leaf in _leaves_in(node) if leaf.holes]


def _count(node: _Node) -> int:
    """The YAML values the piece reader counts for a container's content (2 for each member of
    a mapping, 1 for each item of a list, and what is in them)."""
    per = 2 if node.kind == "{" else 1
    return sum(per + (_count(n) if n.kind in "{[" else 0) for _, n in node.members)


def _same_tree(node: _Node, val: Any, s: str) -> bool:
    """The parsed text is the value the reader gave (a guard: the template's values are the
    reader's)."""
    if node.kind == "{":
        return (type(val) is dict and len(val) == len(node.members)
                and all(k in val and _same_tree(n, val[k], s) for k, n in node.members))
    if node.kind == "[":
        return (type(val) is list and len(val) == len(node.members)
                and all(_same_tree(n, val[i], s) for i, n in node.members))
    text = s[node.start:node.end]
    if node.kind == "s":
        return type(val) is str and val == text
    if node.kind == "i":
        return type(val) is int and str(val) == text
    return val is _LITERALS[text] if text in _LITERALS else False


def _int_ok(text: str) -> bool:
    """An integer hole's text is an integer as canonical JSON writes it."""
    try:
        return str(int(text)) == text
    except ValueError:
        return False


def _strings_ok(texts: Tuple[str, ...]) -> bool:
    """Every string hole's text is a string canonical JSON writes without escapes (the slow
    check, for text that is not ASCII)."""
    return all(_STRING.fullmatch(t) is not None for t in texts)


class _Gen:
    """The source of one template's function, and the values it refers to (a class, not
    closures: a recursive closure is a reference cycle, which would keep the tables alive while
    the collector is paused)."""

    def __init__(self, s: str, hole_leaves: List[_Node], pieces: Dict[str, Dict[Any, Any]]) -> None:
        self.s = s
        self.hole_of = {id(leaf): k for k, leaf in enumerate(hole_leaves)}
        self.pieces = pieces
        self.src: List[str] = []
        self.consts: List[Any] = []
        self.indent = 1
        self.names = 0

    def const(self, value: Any) -> str:
        self.consts.append(value)
        return f"c{len(self.consts) - 1}"

    def var(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def emit(self, line: str) -> None:
        self.src.append("    " * self.indent + line)

    def value(self, node: _Node, val: Any, depth: int, built: bool) -> str:
        """An expression of the value of `node` in a matched line (statements emitted first);
        `built`: the node is in a value with holes being built (not looked up itself)."""
        if node.kind not in "{[":
            if not node.holes:
                return self.const(val)
            k = self.hole_of[id(node)]
            return f"known(h{k}, h{k})" if node.kind == "s" else f"int(h{k})" if node.kind == "i" else f"v{k}"
        private = depth == 0 or (depth == 1 and node.kind == "{")  # (the line's object and its parts)
        if not node.holes and not private:
            return self.const(val)
        out = self.var("x")
        looked_up = not private and not built  # a value with holes: looked up by its holes' text
        if looked_up:
            inside = [self.hole_of[id(leaf)] for leaf in _holes_in(node)]
            key = f"h{inside[0]}" if len(inside) == 1 else "(" + "".join(f"h{k}, " for k in inside) + ")"
            shape = _signature(self.s, node.start, _holes_in(node), node.end)
            table = self.const(self.pieces.setdefault(shape, {}))
            self.emit(f"{out} = {table}.get({key})")
            self.emit(f"if {out} is None:")
            self.indent += 1
        if node.kind == "{":
            self.emit(f"{out} = dict({self.const(dict(val))})")
            for k_, child in node.members:
                if child.holes or (depth == 0 and child.kind == "{"):
                    self.emit(f"{out}[{self.const(k_)}] = {self.value(child, val[k_], depth + 1, not private)}")
        else:
            items = [self.value(child, val[i], depth + 1, not private) for i, child in node.members]
            self.emit(f"{out} = [{', '.join(items)}]")
        if looked_up:
            self.emit(f"{table}[{key}] = {out}")
            self.indent -= 1
        return out


class Template:
    """One shape's template: `match(s, p)` is the object of s[p:] when the line matches it,
    else None; `count` the YAML values of such a line (PieceReader.count)."""

    __slots__ = ("match", "count")

    def __init__(self, match: Callable[[str, int], Any], count: int) -> None:
        self.match = match
        self.count = count


def _compile(s: str, p: int, root: _Node, leaves: List[_Node], holes: List[int], obj: Any,
             count: int, known: Callable[..., Any],
             pieces: Dict[str, Dict[Any, Any]]) -> Optional[Callable[[str, int], Any]]:
    """The function matching lines like s[p:] (whose value the reader read as `obj`) with the
    scalars `holes` (indexes in `leaves`) free; None when the line cannot have a template."""
    hole_leaves = [leaves[i] for i in holes]
    if not hole_leaves or not _same_tree(root, obj, s):
        return None
    if _count(root) + 1 != count:
        return None
    for leaf in hole_leaves:
        leaf.holes = True
    _mark_holes(root)
    # the literals between holes
    lits: List[str] = []
    at = p
    for leaf in hole_leaves:
        lits.append(s[at:leaf.start])
        at = leaf.end
    lits.append(s[at:])
    g = _Gen(s, hole_leaves, pieces)
    lit_names = [g.const(x) for x in lits]
    at_var = ["p"] + [f"b{k}" for k in range(len(hole_leaves))]  # where each literal starts

    # the literals, and where each hole ends
    for k, leaf in enumerate(hole_leaves):
        g.emit(f"if not s.startswith({lit_names[k]}, {at_var[k]}): return None")
        g.emit(f"a{k} = {at_var[k]} + {len(lits[k])}")
        stop = '"' if leaf.kind == "s" else lits[k + 1][0]  # (`,`, `}` or `]`)
        g.emit(f"b{k} = s.find({stop!r}, a{k})")
    n = len(hole_leaves)
    g.emit(f"if len(s) - b{n - 1} != {len(lits[n])} or not s.startswith({lit_names[n]}, b{n - 1}): return None")
    for k in range(n):
        g.emit(f"h{k} = s[a{k}:b{k}]")
    strings = ", ".join(f"h{k}" for k, leaf in enumerate(hole_leaves) if leaf.kind == "s")
    if strings:
        g.emit(f'j = "".join(({strings},))')
        g.emit(f'if not j.encode("utf-8", "surrogatepass").translate(ASCII_CHECK).isascii() '
               f'and (j.isascii() or not strings_ok(({strings},))): return None')
    for k, leaf in enumerate(hole_leaves):
        if leaf.kind == "i":
            g.emit(f'if not (h{k}.isdigit() and h{k}.isascii() and (h{k}[0] != "0" or h{k} == "0")) '
                   f"and not int_ok(h{k}): return None")
        elif leaf.kind == "l":
            g.emit(f"v{k} = LITERALS.get(h{k}, BAD)")
            g.emit(f"if v{k} is BAD: return None")
    g.emit(f"return {g.value(root, obj, 0, False)}")
    consts = ", ".join(f"c{i}" for i in range(len(g.consts)))
    source = "\n".join(["def _factory(C, known, strings_ok, int_ok, ASCII_CHECK, LITERALS, BAD):",
                        f"    {consts}, = C",
                        "    def match(s, p):",
                        "        try:"]
                       + ["        " + line for line in g.src]
                       # (an integer longer than int() converts: sys.get_int_max_str_digits)
                       + ["        except ValueError:", "            return None", "    return match"])
    space: Dict[str, Any] = {}
    exec(compile(source, "<json template>", "exec"), space)  # (the source holds no text of the line)
    factory = space.pop("_factory")  # (a function and its globals are a reference cycle)
    return factory(tuple(g.consts), known, _strings_ok, _int_ok, _ASCII_CHECK, _LITERALS, _BAD)


def _mark_holes(node: _Node) -> None:
    """Mark the containers that hold a hole."""
    for _, child in node.members:
        if child.kind in "{[":
            _mark_holes(child)
        if child.holes:
            node.holes = True


class _Shape:
    """A line shape met: the scalars of the first line of it read piece by piece, which of them
    vary (holes), its template and how often it was compiled."""

    __slots__ = ("scalars", "holes", "template", "compiled")

    def __init__(self, scalars: List[str]) -> None:
        self.scalars = scalars
        self.holes: frozenset = frozenset()
        self.template: Optional[Template] = None
        self.compiled = 0


class LineTemplates:
    """The templates of one load's lines (see the module's docstring). `known`: the value
    table's strings' get."""

    def __init__(self, known: Callable[..., Any]) -> None:
        self.known = known
        # the values with holes built: their shape (_signature) -> their holes' text -> the value
        self.pieces: Dict[str, Dict[Any, Any]] = {}
        self.shapes: Dict[str, _Shape] = {}
        self.by_length: Dict[int, List[Template]] = {}  # a line's length -> templates that matched one
        self.recent: List[Template] = []  # the templates, the last made or matched first
        self.hits = 0  # lines matched
        self.matched = 0  # their characters
        self.learnt = 0  # the characters of the lines parsed to learn from
        self.misses = 0  # lines in a row that no template matched

    def read(self, s: str, p: int) -> Optional[Tuple[Any, int]]:
        """The object of s[p:] and its YAML values when a template matches it, else None."""
        tried = self.by_length.get(len(s))
        if tried is not None:
            for i, t in enumerate(tried):
                got = t.match(s, p)
                if got is not None:
                    if i:
                        tried.insert(0, tried.pop(i))
                    self.hits += 1
                    self.matched += len(s)
                    self.misses = 0
                    return got, t.count
        misses = self.misses
        if misses < 32 or not misses % 16:  # (lines of other shapes in a row: 1 in 16 tries them)
            for t in self.recent[:TRY_RECENT]:
                if tried is not None and t in tried:
                    continue
                got = t.match(s, p)
                if got is not None:
                    self._index(len(s), t)
                    self.hits += 1
                    self.matched += len(s)
                    self.misses = 0
                    return got, t.count
        self.misses = misses + 1
        return None

    def _index(self, length: int, t: Template) -> None:
        if len(self.by_length) >= MAX_LENGTHS:
            self.by_length.clear()
        self.by_length.setdefault(length, []).insert(0, t)
        if self.recent[0] is not t:
            self.recent.remove(t)
            self.recent.insert(0, t)

    def learn(self, s: str, p: int, obj: Any, count: int) -> None:
        """The line s[p:], which the piece reader read as `obj` (`count` values) and no template
        matched: its shape met again with other scalars makes or widens the shape's template.
        (Parsing a line to learn from costs ten times reading it: the lines parsed so are at
        most LEARN_FREE characters and an eighth of those matched.)"""
        if self.learnt > LEARN_FREE + self.matched // 8:
            return
        self.learnt += len(s)
        parsed = _parse(s, p)
        if parsed is None:
            return
        root, leaves = parsed
        key = _signature(s, p, leaves)
        scalars = [s[leaf.start:leaf.end] for leaf in leaves]
        shape = self.shapes.get(key)
        if shape is None:
            if len(self.shapes) < MAX_SHAPES:
                self.shapes[key] = _Shape(scalars)
            return
        holes = shape.holes.union(i for i, (a, b) in enumerate(zip(shape.scalars, scalars)) if a != b)
        if holes == shape.holes:
            if shape.template is not None and shape.template.match(s, p) is not None:
                self._index(len(s), shape.template)  # (a length its lines had not had)
            return
        if shape.compiled >= MAX_COMPILES or len(holes) > MAX_HOLES:
            return  # (a shape whose scalars keep varying: its lines are read piece by piece)
        shape.compiled += 1
        match = _compile(s, p, root, leaves, sorted(holes), obj, count, self.known, self.pieces)
        if match is None:
            return
        shape.holes = frozenset(holes)
        if shape.template is None:
            shape.template = Template(match, count)
            self.recent.insert(0, shape.template)
        else:
            shape.template.match = match
        self._index(len(s), shape.template)

"""YAML as its authors mean it: YAML 1.2 core scalars, bounded nesting and bounded alias expansion.

PyYAML implements YAML 1.1, where ``010`` is 8, ``1:30`` is 90 and ``NO`` is ``false``; a
topology author writing those means a name or a decimal number, so scalars here resolve by
the YAML 1.2 core schema (``010`` is 10, ``1:30`` and ``NO`` are text, ``1e3`` is a number).
Nodes are composed from libyaml's event stream by a loop, not by recursion, so a file
nested thousands of levels deep is refused with one line instead of crashing the process,
and the number of values aliases may expand to is bounded by the caller (``Budget``), so a
"billion laughs" file of a few hundred bytes is refused in milliseconds.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

#: Deepest nesting of lists and mappings accepted; topologies and scenarios need fewer than ten levels.
MAX_DEPTH = 64
#: Longest integer accepted, in digits (2**64 has 20); longer ones are refused before Python converts them.
MAX_INTEGER_DIGITS = 64
#: Values aliases may expand a document to: this many, or four times the nodes written, whichever is more.
MIN_EXPANSION_BUDGET = 20_000

_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"

# The YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution); ``<<`` keeps merge keys working.
_NULL_RE = re.compile(r"~|null|Null|NULL|")
_BOOL_RE = re.compile(r"true|True|TRUE|false|False|FALSE")
_INT_RE = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT_RE = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")


class YamlError(Exception):
    """A problem that stops reading the file; ``line`` is 1-based when known."""

    def __init__(self, line: int | None, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


# mypy cannot follow a base class chosen at import time (libyaml's CSafeLoader when built, else SafeLoader).
class _Loader(_BASE_LOADER):  # type: ignore[misc,valid-type]
    """libyaml's parser with YAML 1.2 core tag resolution for plain scalars."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)
        if not implicit[0]:  # quoted: always text
            return _STR
        return _MERGE if value == "<<" else plain_tag(value)


def plain_tag(value: str) -> str:
    """The tag of an unquoted scalar under the YAML 1.2 core schema."""
    for pattern, tag in ((_NULL_RE, _NULL), (_BOOL_RE, _BOOL), (_INT_RE, _INT), (_FLOAT_RE, _FLOAT)):
        if pattern.fullmatch(value):
            return tag
    return _STR


def compose(text: str) -> yaml.Node | None:
    """The node graph of the single document in ``text`` (``None`` when empty), composed without recursion.

    Raises ``YamlError`` past ``MAX_DEPTH`` and for undefined or duplicate anchors, and
    ``yaml.YAMLError`` for syntax errors (with its ``problem_mark``).
    """
    loader = _Loader(text)
    try:
        loader.get_event()  # StreamStart
        if loader.check_event(yaml.StreamEndEvent):
            return None
        loader.get_event()  # DocumentStart
        anchors: dict[str, yaml.Node] = {}
        stack: list[tuple[yaml.Node, list[yaml.Node]]] = []  # an open collection and the nodes read into it
        root: yaml.Node | None = None

        def attach(node: yaml.Node) -> None:
            nonlocal root
            if stack:
                stack[-1][1].append(node)  # a mapping's keys and values alternate; paired when it ends
            else:
                root = node

        while not loader.check_event(yaml.DocumentEndEvent):
            event = loader.get_event()
            line = event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent):
                if event.anchor not in anchors:
                    raise YamlError(line, f"undefined alias *{event.anchor}")
                attach(anchors[event.anchor])
                continue
            if isinstance(event, yaml.ScalarEvent):
                tag = event.tag if event.tag not in (None, "!") else loader.resolve(
                    yaml.ScalarNode, event.value, event.implicit)
                # types-PyYAML: a Node takes either loader's Mark (the C one or the pure-Python one), same fields.
                start, end = event.start_mark, event.end_mark
                node: yaml.Node = yaml.ScalarNode(tag, event.value, start, end, event.style)  # type: ignore[arg-type]
            elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                if len(stack) >= MAX_DEPTH:
                    raise YamlError(line, f"nested more than {MAX_DEPTH} levels deep")
                sequence = isinstance(event, yaml.SequenceStartEvent)
                kind = yaml.SequenceNode if sequence else yaml.MappingNode
                tag = event.tag if event.tag not in (None, "!") else loader.resolve(kind, None, event.implicit)
                node = kind(tag, [], event.start_mark, None,  # type: ignore[arg-type]  # as ScalarNode above
                            flow_style=event.flow_style)
            else:  # SequenceEnd / MappingEnd
                finished, items = stack.pop()
                finished.value = (list(zip(items[::2], items[1::2], strict=True))
                                  if isinstance(finished, yaml.MappingNode) else items)
                finished.end_mark = event.end_mark
                continue
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                if anchor in anchors:
                    raise YamlError(line, f"duplicate anchor &{anchor} (first at line "
                                          f"{anchors[anchor].start_mark.line + 1})")
                anchors[anchor] = node
            attach(node)
            if not isinstance(node, yaml.ScalarNode):
                stack.append((node, []))
        loader.get_event()  # DocumentEnd
        if not loader.check_event(yaml.StreamEndEvent):
            event = loader.get_event()
            raise YamlError(event.start_mark.line + 1, "expected a single document, found another one")
        return root
    finally:
        loader.dispose()


class Budget:
    """How many values may still be built; aliases re-use nodes, so a small file can expand enormously."""

    def __init__(self, written_nodes: int):
        self.limit = max(MIN_EXPANSION_BUDGET, 4 * written_nodes)
        self.left = self.limit

    def spend(self, node: yaml.Node) -> None:
        self.left -= 1
        if self.left < 0:  # reported at the value where the budget ran out
            raise YamlError(node.start_mark.line + 1,
                            f"aliases expand the document to more than {self.limit:,} values "
                            "(an alias bomb?); refused")


def check_expansion(root: yaml.Node | None) -> None:
    """Raise ``YamlError`` if aliases expand ``root`` past the budget (for readers that build values themselves)."""
    budget = Budget(count_nodes(root))
    todo = [root] if root is not None else []
    while todo:
        node = todo.pop()
        budget.spend(node)
        if isinstance(node, yaml.SequenceNode):
            todo.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                todo.extend((key, value))


def count_nodes(root: yaml.Node | None) -> int:
    """Nodes as written (each anchored node once), without recursion."""
    seen: set[int] = set()
    todo = [root] if root is not None else []
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            todo.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                todo.extend((key, value))
    return len(seen)


_SAFE = yaml.SafeLoader("")


def scalar(node: yaml.ScalarNode) -> Any:
    """The value of a scalar node by the YAML 1.2 core schema; other tags as PyYAML's safe loader reads them.

    Raises ``YamlError`` for a value its tag does not allow, an integer longer than
    ``MAX_INTEGER_DIGITS`` and a number that is not finite (``.nan``, ``.inf``, ``1e999``).
    """
    tag, value = node.tag, node.value
    line = node.start_mark.line + 1
    if tag == _STR:
        return value
    if tag == _NULL:
        if not _NULL_RE.fullmatch(value):
            raise YamlError(line, f"{value!r} is not null")
        return None
    if tag == _BOOL:
        if not _BOOL_RE.fullmatch(value):
            raise YamlError(line, f"{value!r} is not true or false (YAML 1.2: yes/no/on/off are text)")
        return value.lower() == "true"
    if tag == _INT:
        if not _INT_RE.fullmatch(value):
            raise YamlError(line, f"{value!r} is not an integer")
        digits = value.lstrip("+-")
        if len(digits) > MAX_INTEGER_DIGITS:
            raise YamlError(line, f"integer of {len(digits):,} digits is too large (at most {MAX_INTEGER_DIGITS})")
        if digits.startswith(("0o", "0x")):
            return int(digits[2:], 8 if digits[1] == "o" else 16)
        return int(value)
    if tag == _FLOAT:
        if not _FLOAT_RE.fullmatch(value):
            raise YamlError(line, f"{value!r} is not a number")
        if value.lstrip("+-.").lower() in ("inf", "nan"):
            raise YamlError(line, f"{value} is not a finite number")
        number = float(value)
        if not math.isfinite(number):
            raise YamlError(line, f"{value} is not a finite number")
        return number
    try:
        return _SAFE.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, OverflowError) as error:
        raise YamlError(line, f"cannot read value: {getattr(error, 'problem', None) or error}") from None


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper, quoting text that a YAML 1.2 reader would take for a number, bool or null."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if plain_tag(value) != _STR:
        return dumper.represent_scalar(_STR, value, style="'")
    return dumper.represent_str(value)


_Dumper.add_representer(str, _represent_str)


def dump(data: Any, **options: Any) -> str:
    """YAML text that reads back as ``data`` under both YAML 1.1 (PyYAML) and YAML 1.2 (``compose``).

    ``options`` are ``yaml.dump``'s (default: keys in their order, Unicode written as itself).
    """
    return yaml.dump(data, Dumper=_Dumper, **{"sort_keys": False, "allow_unicode": True, **options})

"""Read a topology from YAML, JSON or a Python module, reporting every problem at once.

A problem is one line: ``FILE[:LINE]: OBJECT.PATH: what is wrong``. Loading fails
(``LoadError``) on anything that makes the file mean something other than what
its author wrote: syntax, unknown keys, wrong types, duplicate names, and
references to things that do not exist. AWS limits are checked later, as rules.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from policy_engine import model
from policy_engine.model import Topology

Path_ = tuple[str | int, ...]

#: libyaml's parser when PyYAML was built with it (about 5x faster on large topologies).
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: Model classes by name, to suggest field names in errors raised while building them in Python.
_MODELS: dict[str, type[BaseModel]] = {
    name: value for name, value in vars(model).items() if isinstance(value, type) and issubclass(value, BaseModel)
}


class LoadError(Exception):
    """The input cannot be turned into a topology; ``problems`` has one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


# --- reading files -----------------------------------------------------------


class _Lines(dict):
    """``path -> line number`` recorded while reading YAML, for error messages."""


_SCALAR_KEY = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class _Problem:
    """A problem found while reading, rendered once the whole file is read (to name objects, sort by line)."""

    line: int | None
    loc: Path_
    message: str


def _yaml_to_data(text: str, source: str) -> tuple[Any, _Lines, list[_Problem]]:
    """Parse YAML keeping line numbers; duplicate keys (PyYAML would keep the last) are problems.

    Merge keys (``<<: *base``) work as in YAML: explicit keys override merged ones. Unknown
    tags, non-scalar keys and recursive aliases are problems too. Problems are returned, not
    raised, so the rest of the file is still checked; the first of two duplicate keys is kept.
    """
    try:
        root = yaml.compose(text, Loader=_FAST_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = getattr(error, "problem", None) or str(error)
        raise LoadError([f"{where}: YAML syntax error: {problem}"]) from None
    lines = _Lines()
    problems: list[_Problem] = []
    constructor = yaml.SafeLoader("")

    def problem(node: yaml.Node, path: Path_, text: str) -> None:
        problems.append(_Problem(node.start_mark.line + 1, path, text))

    def scalar(node: yaml.Node, path: Path_) -> Any:
        try:
            return constructor.construct_object(node, deep=True)
        except yaml.YAMLError as error:
            problem(node, path, f"cannot read value: {getattr(error, 'problem', None) or error}")
            return None

    def convert(node: yaml.Node, path: Path_, active: frozenset[int]) -> Any:
        if id(node) in active:
            problem(node, path, "recursive alias (an anchor that contains itself)")
            return None
        lines[path] = node.start_mark.line + 1
        inside = active | {id(node)}
        if isinstance(node, yaml.MappingNode):
            explicit = {id(key_node) for key_node, _ in node.value}
            try:
                constructor.flatten_mapping(node)
            except yaml.YAMLError as error:
                problem(node, path, f"bad merge key: {getattr(error, 'problem', None) or error}")
            result: dict[Any, Any] = {}
            merged: set[Any] = set()
            for key_node, value_node in node.value:
                key = scalar(key_node, path)
                if not isinstance(key, _SCALAR_KEY):
                    problem(key_node, path, f"a mapping key must be a plain value, got a {type(key).__name__}")
                    continue
                from_merge = id(key_node) not in explicit
                if key in result and not (key in merged and not from_merge):
                    if not from_merge:
                        problem(key_node, path, f"duplicate key {key!r}")
                    continue
                merged.discard(key)
                if from_merge:
                    merged.add(key)
                result[key] = convert(value_node, (*path, key), inside)
            return result
        if isinstance(node, yaml.SequenceNode):
            return [convert(item, (*path, index), inside) for index, item in enumerate(node.value)]
        return scalar(node, path)

    data = convert(root, (), frozenset()) if root is not None else None
    return data, lines, problems


def _json_to_data(text: str, source: str) -> tuple[Any, Mapping[Path_, int], list[_Problem]]:
    """Parse JSON strictly; lines, object paths and duplicate keys come from YAML (a superset) when it agrees."""
    duplicates: list[_Problem] = []

    def first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                duplicates.append(_Problem(None, (), f"duplicate key {key!r}"))
            else:
                result[key] = value
        return result

    try:
        data = json.loads(text, object_pairs_hook=first_wins)
    except json.JSONDecodeError as error:
        raise LoadError([f"{source}:{error.lineno}: JSON syntax error: {error.msg}"]) from None
    try:
        same, lines, problems = _yaml_to_data(text, source)
    except LoadError:
        return data, {}, duplicates
    return (same, lines, problems) if same == data else (data, {}, duplicates)


def _read(path: Path) -> tuple[Any, Mapping[Path_, int], list[_Problem]]:
    """Parse a YAML or JSON file: data, the line of each path, and the problems found while reading."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise LoadError([f"{source}: cannot read file: {error.strerror or error}"]) from None
    if path.suffix.lower() == ".json":
        return _json_to_data(text, source)
    return _yaml_to_data(text, source)


def _lines_of(source: str, problems: list[_Problem], data: Any) -> list[str]:
    """Render problems as ``FILE:LINE: object.path: message`` lines, in file order."""
    ordered = sorted(problems, key=lambda p: (p.line is None, p.line or 0))
    return [f"{source}{f':{p.line}' if p.line else ''}: {_located(p.loc, p.message, data)}" for p in ordered]


def line_of(lines: Mapping[Path_, int], path: Path_) -> int | None:
    """The line of ``path`` in a file, or of its nearest ancestor that has one (``None`` without lines)."""
    return next((lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in lines), None)


def read_data(path: Path) -> tuple[Any, Mapping[Path_, int]]:
    """Parse a YAML or JSON file into plain data plus the line of each path; any reading problem raises."""
    data, lines, problems = _read(path)
    if problems:
        raise LoadError(_lines_of(str(path), problems, data))
    return data, lines


# --- turning data into a topology ---------------------------------------------


def _render(path: Iterable[str | int], data: Any) -> str:
    """``job_queues[training].shares[QS1].strategy``: list items by name where they have one."""
    out = ""
    node = data
    for part in path:
        if isinstance(part, int):
            item = node[part] if isinstance(node, list | tuple) and part < len(node) else None
            name = item.get("name") if isinstance(item, dict) else None
            out += f"[{name}]" if isinstance(name, str) and name else f"[{part}]"
            node = item
        else:
            out += f".{part}" if out else str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return out or "(top level)"


def _describe(error: Mapping[str, Any], model_fields: Iterable[str]) -> str:
    kind, value = error["type"], error.get("input")
    if kind == "extra_forbidden":
        key = error["loc"][-1]
        close = difflib.get_close_matches(str(key), list(model_fields), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown key {key!r}{hint}"
    if kind == "missing":
        return "missing required key"
    message = error["msg"].replace("valid tuple", "valid list")
    if value is None:
        hint = " (write [] or {}, or remove the key)" if kind in ("tuple_type", "list_type", "dict_type") else ""
        return f"{message[0].lower()}{message[1:]}, got an empty value{hint}"
    return f"{message[0].lower()}{message[1:]}, got {_shown(value)}"


def _shown(value: Any) -> str:
    """A value as the user wrote it in YAML/JSON: ``true``, ``null``, ``'text'``, ``3``, or its kind."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)


def _fields_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """Field names of the model that owns the last key of ``loc`` (for "did you mean")."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int) or not (isinstance(current, type) and issubclass(current, BaseModel)):
            continue
        field = current.model_fields.get(part)
        if field is None:
            return []
        annotation = field.annotation
        args = getattr(annotation, "__args__", ())
        current = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), annotation)
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []


def topology_from_data(
    data: Any,
    source: str = "<topology>",
    lines: Mapping[Path_, int] | None = None,
    read_problems: Iterable[_Problem] = (),
) -> Topology:
    """Validate plain data (from YAML/JSON or a dict) into a ``Topology`` or raise ``LoadError``.

    Reading, type and structural problems (duplicates, dangling references) are reported
    together, in file order, so one run shows everything that is wrong with a file.
    """
    lines = lines or {}
    problems: list[_Problem] = list(read_problems)
    if data is None:
        raise LoadError([*_lines_of(source, problems, data),
                         f"{source}: the file is empty; expected a mapping with service_environments and job_queues"])
    if not isinstance(data, dict):
        raise LoadError([*_lines_of(source, problems, data),
                         f"{source}: (top level): expected a mapping with service_environments and job_queues, "
                         f"got {_shown(data)}"])

    topology = None
    try:
        topology = Topology.model_validate(data)
    except ValidationError as error:
        errors = error.errors()
        suggested = {  # a typo already says "did you mean X": do not also report X as missing
            (*tuple(e["loc"])[:-1], match)
            for e in errors
            if e["type"] == "extra_forbidden"
            for match in difflib.get_close_matches(str(e["loc"][-1]), _fields_at(Topology, tuple(e["loc"])), n=1)
        }
        unreadable = {p.loc for p in problems}  # already reported: not also "wrong type"
        for item in errors:
            loc = tuple(item["loc"])
            if loc not in unreadable and not (item["type"] == "missing" and loc in suggested):
                problems.append(_Problem(line_of(lines, loc), loc, _describe(item, _fields_at(Topology, loc))))
    problems += [_Problem(line_of(lines, loc), loc, message) for loc, message in _structure_problems(data)]
    if problems:
        raise LoadError(_lines_of(source, problems, data))
    assert topology is not None
    return topology


def _items(data: Any, key: str) -> list[tuple[int, dict]]:
    """``(index, mapping)`` for each well-formed item of a list under ``key`` (others are type errors)."""
    value = data.get(key) if isinstance(data, dict) else None
    return [(i, item) for i, item in enumerate(value)] if isinstance(value, list | tuple) else []


def _structure_problems(data: dict) -> list[tuple[tuple[str | int, ...], str]]:
    """Duplicate names and dangling references in plain data: they make a topology ambiguous, not just unwise.

    Works on raw data, tolerating malformed parts, so it can run even when types are wrong.
    """
    problems: list[tuple[tuple[str | int, ...], str]] = []

    def names(path: tuple[str | int, ...], items: list[tuple[int, dict]]) -> dict[str, int]:
        seen: dict[str, int] = {}
        for index, item in items:
            name = item.get("name") if isinstance(item, dict) else None
            if not isinstance(name, str):
                continue
            if name in seen:
                # named by index: by name, both items would read the same
                problems.append(((*path, index), f"[{index}]: duplicate name {name!r} (first at [{seen[name]}])"))
            else:
                seen[name] = index
        return seen

    environments = names(("service_environments",), _items(data, "service_environments"))
    queues = names(("job_queues",), _items(data, "job_queues"))
    shares_by_queue: dict[str, set[str]] = {}
    for index, queue in _items(data, "job_queues"):
        if not isinstance(queue, dict):
            continue
        shares = names(("job_queues", index, "shares"), _items(queue, "shares"))
        if isinstance(queue.get("name"), str):
            shares_by_queue.setdefault(queue["name"], set()).update(shares)
        environment = queue.get("service_environment")
        if isinstance(environment, str) and environment not in environments:
            known = ", ".join(environments) or "none defined"
            problems.append(((("job_queues", index, "service_environment")),
                             f"no service environment named {environment!r} (known: {known})"))
    for index, guarantee in _items(data, "guarantees"):
        ref = guarantee.get("share") if isinstance(guarantee, dict) else None
        if not isinstance(ref, str):
            continue
        if "/" in ref:
            queue_name, _, share_name = ref.partition("/")
            matches = [queue_name] if share_name in shares_by_queue.get(queue_name, set()) else []
        else:
            matches = [queue_name for queue_name in queues if ref in shares_by_queue.get(queue_name, set())]
        if not matches:
            problems.append((("guarantees", index, "share"),
                             f"no quota share {ref!r} (write QUEUE/SHARE or a unique SHARE name)"))
        elif len(matches) > 1:
            listed = ", ".join(f"{queue_name}/{ref}" for queue_name in matches)
            problems.append((("guarantees", index, "share"), f"{ref!r} is ambiguous ({listed}); write QUEUE/SHARE"))
    return problems


def _located(loc: tuple[str | int, ...], message: str, data: Any) -> str:
    """``object.path: message``; a message starting ``[i]`` names the last list item by index."""
    if message.startswith("["):
        return f"{_render(loc[:-1], data)}{message}"
    return f"{_render(loc, data)}: {message}"


def structure_problems(topology: Topology) -> list[str]:
    """The loader's structural problems for a topology built in Python, one line each."""
    data = topology.model_dump()
    return [_located(loc, message, data) for loc, message in _structure_problems(data)]


def validate_topology(topology: Topology, source: str = "<python>") -> Topology:
    """Apply the loader's structural checks to a topology built in Python."""
    problems = [f"{source}: {problem}" for problem in structure_problems(topology)]
    if problems:
        raise LoadError(problems)
    return topology


def _python_error_lines(source: str, error: Exception, doing: str) -> list[str]:
    """One line per problem of an exception raised by a user's topology module, at its line in that file."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename) == Path(source)]
    where = f"{source}:{frames[-1].lineno}" if frames else source
    if isinstance(error, ValidationError):
        return [
            f"{where}: {error.title}{''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in item['loc'])}: "
            f"{_describe(item, _fields_at(_MODELS.get(error.title, Topology), tuple(item['loc'])))}"
            for item in error.errors()
        ]
    return [f"{where}: {doing} failed: {type(error).__name__}: {error}"]


def _from_python_module(path: Path) -> Topology:
    """Import ``path`` and take its ``TOPOLOGY`` (or ``topology``; a callable is called)."""
    source = str(path)
    spec = importlib.util.spec_from_file_location(f"_batch_quota_topology_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise LoadError([f"{source}: cannot import as a Python module"])
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except LoadError as error:
        raise LoadError([f"{source}: {problem}" for problem in error.problems]) from None
    except Exception as error:  # a user's module: report, never a traceback
        raise LoadError(_python_error_lines(source, error, "importing the module")) from None
    value = getattr(module, "TOPOLOGY", None) or getattr(module, "topology", None)
    if callable(value) and not isinstance(value, Topology):
        try:
            value = value()
        except Exception as error:  # a user's code: report, never a traceback
            raise LoadError(_python_error_lines(source, error, "calling TOPOLOGY()")) from None
    if not isinstance(value, Topology):
        raise LoadError([f"{source}: the module must define TOPOLOGY (or topology) as a policy_engine Topology"])
    return validate_topology(value, source)


def load_topology(path: str | Path) -> Topology:
    """Load a topology from a ``.yaml``/``.yml``, ``.json`` or ``.py`` file."""
    path = Path(path)
    if path.suffix.lower() == ".py":
        return _from_python_module(path)
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise LoadError([f"{path}: unsupported file type {path.suffix or '(none)'!r}; use .yaml, .yml, .json or .py"])
    data, lines, problems = _read(path)
    from policy_engine.aws.template import is_template, load_template

    if is_template(data):  # a CloudFormation template (cdk.out, SAM, hand-written): its quota resources
        return load_template(path)
    return topology_from_data(data, str(path), lines, problems)


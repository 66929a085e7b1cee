"""Reading YAML and JSON into plain data, with the line of every data path and every problem found on the way.

Reading never stops at the first problem it can step over (a duplicate key, a value a tag does not allow):
those come back as problems, so one run shows everything wrong with a file. What makes the rest unreadable
(syntax, nesting, an alias bomb) raises ``LoadError`` at once. Problems carry the raw data path while the
file is read and get the names of list items (``job_queues[training]``) once the whole file is known.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from policy_engine.foundation.diagnostics import TOP_LEVEL, DataPath, LoadError, Named, Problem
from policy_engine.inputs import input_files, safe_yaml

#: Keys as the file has them (a YAML key may be any plain value), list items by index.
RawPath = tuple[Any, ...]
#: ``path -> line number`` of a file read (empty for JSON that YAML reads differently).
Lines = Mapping[RawPath, int]

_SCALAR_KEY = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class RawProblem:
    """A problem found while reading, at a raw path: named (``to_problems``) once the whole file is read."""

    line: int | None
    loc: RawPath
    message: str


def named_path(loc: Iterable[str | int], data: Any) -> DataPath:
    """``loc`` with each list item that has a non-empty ``name`` shown by it (``TOP_LEVEL`` for the root)."""
    out: list[str | int | Named] = []
    node = data
    for part in loc:
        if isinstance(part, int):
            item = node[part] if isinstance(node, list | tuple) and part < len(node) else None
            name = item.get("name") if isinstance(item, dict) else None
            out.append(Named(part, name) if isinstance(name, str) and name else part)
            node = item
        else:
            out.append(part)
            node = node.get(part) if isinstance(node, dict) else None
    return tuple(out) or (TOP_LEVEL,)


def to_problems(source: str, found: Iterable[RawProblem], data: Any) -> list[Problem]:
    """Problems with named paths, in file order (those without a line last)."""
    ordered = sorted(found, key=lambda p: (p.line is None, p.line or 0))
    return [Problem(source, p.line, named_path(p.loc, data), p.message) for p in ordered]


def yaml_to_data(text: str, source: str) -> tuple[Any, Lines, list[RawProblem]]:
    """Parse YAML (1.2 core schema, see ``safe_yaml``) keeping line numbers; duplicate keys are problems.

    Merge keys (``<<: *base``) work as in YAML: explicit keys override merged ones. Unknown
    tags, non-scalar keys, recursive aliases and values a tag does not allow are problems too.
    Problems are returned, not raised, so the rest of the file is still checked; the first of
    two duplicate keys is kept. What stops reading (syntax, nesting, an alias bomb) raises.
    """
    try:
        root = safe_yaml.compose(text)
    except safe_yaml.YamlError as error:
        raise LoadError([Problem(source, error.line or None, (), error.message)]) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        reason = getattr(error, "problem", None) or str(error)
        raise LoadError([Problem(source, mark.line + 1 if mark else None, (), f"YAML syntax error: {reason}")]) \
            from None
    lines: dict[RawPath, int] = {}
    problems: list[RawProblem] = []
    constructor = yaml.SafeLoader("")
    budget = safe_yaml.Budget(safe_yaml.count_nodes(root))

    def problem(node: yaml.Node, path: RawPath, text: str) -> None:
        problems.append(RawProblem(node.start_mark.line + 1, path, text))

    def scalar(node: yaml.Node, path: RawPath) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            return convert(node, path, frozenset())
        try:
            return safe_yaml.scalar(node)
        except safe_yaml.YamlError as error:
            problem(node, path, error.message)
            return None

    def convert(node: yaml.Node, path: RawPath, active: frozenset[int]) -> Any:
        budget.spend(node)
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode):
            return scalar(node, path)
        if id(node) in active:
            problem(node, path, "recursive alias (an anchor that contains itself)")
            return None
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
                budget.spend(key_node)  # keys are built too: a merge chain repeats them
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
        return [convert(item, (*path, index), inside) for index, item in enumerate(node.value)]

    try:
        data = convert(root, (), frozenset()) if root is not None else None
    except safe_yaml.YamlError as error:
        raise LoadError([Problem(source, error.line, (), error.message)]) from None
    except RecursionError:  # e.g. a long chain of merge keys; nesting itself is bounded while composing
        raise LoadError([Problem(source, None, (), "nested too deeply to read")]) from None
    return data, lines, problems


def _json_number_hooks(source: str, text: str) -> dict[str, Any]:
    """``json.loads`` hooks that refuse what JSON numbers must not become: NaN, infinity, huge integers."""

    def problem(token: str, message: str) -> Problem:
        at = text.find(token)
        return Problem(source, text.count("\n", 0, at) + 1 if at >= 0 else None, (), message)

    def constant(token: str) -> Any:
        raise LoadError([problem(token, f"{token} is not a number JSON allows (only finite numbers)")])

    def floating(token: str) -> float:
        value = float(token)
        if not math.isfinite(value):
            raise LoadError([problem(token, f"{token} is not a finite number (it overflows to infinity)")])
        return value

    def integer(token: str) -> int:
        digits = token.lstrip("-")
        if len(digits) > safe_yaml.MAX_INTEGER_DIGITS:
            raise LoadError([problem(token, f"integer of {len(digits):,} digits is too large "
                                            f"(at most {safe_yaml.MAX_INTEGER_DIGITS})")])
        return int(token)

    return {"parse_constant": constant, "parse_float": floating, "parse_int": integer}


def find_lone_surrogate(data: Any) -> RawPath | None:
    """The path of the first key or string holding a lone surrogate (JSON can write one: ``"\\ud800"``)."""
    todo: list[tuple[RawPath, Any]] = [((), data)]
    while todo:
        path, value = todo.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return path
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return path
                todo.append(((*path, key), item))
        elif isinstance(value, list | tuple):
            todo.extend(((*path, index), item) for index, item in enumerate(value))
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_to_data(text: str, source: str) -> tuple[Any, Mapping[RawPath, int], list[RawProblem]]:
    """Parse JSON strictly; lines, object paths and duplicate keys come from YAML (a superset) when it agrees."""
    duplicates: list[RawProblem] = []

    def first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                duplicates.append(RawProblem(None, (), f"duplicate key {key!r}"))
            else:
                result[key] = value
        return result

    try:
        data = json.loads(text, object_pairs_hook=first_wins, **_json_number_hooks(source, text))
    except json.JSONDecodeError as error:
        raise LoadError([Problem(source, error.lineno, (), f"JSON syntax error: {error.msg}")]) from None
    except RecursionError:
        raise LoadError([Problem(source, None, (), f"nested more than {safe_yaml.MAX_DEPTH} levels deep")]) from None
    surrogate = find_lone_surrogate(data)
    if surrogate is not None:
        raise LoadError([Problem(source, None, named_path(surrogate, data), "text holds a lone UTF-16 surrogate "
                                 "escape (\\ud800-\\udfff), which is no character")])
    try:
        same, lines, problems = yaml_to_data(text, source)
    except LoadError as error:
        if any("levels deep" in problem for problem in error.problems):
            raise
        return data, {}, duplicates
    return (same, lines, problems) if same == data else (data, {}, duplicates)


def read(path: Path, kind: input_files.FileKind | None = None) -> tuple[Any, Mapping[RawPath, int], list[RawProblem]]:
    """Parse a YAML or JSON file (a topology unless ``kind`` says otherwise): data, the line of each path, and
    the problems found while reading."""
    source = str(path)
    try:
        text = input_files.read_text(path, kind or input_files.TOPOLOGY)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    if path.suffix.lower() == ".json":
        return json_to_data(text, source)
    return yaml_to_data(text, source)


def read_document(path: str | Path, kind: input_files.FileKind,
                  what: str) -> tuple[Path, Any, Mapping[RawPath, int], list[RawProblem]]:
    """``read`` for a file a user names on the command line (``what``: "a prices file"): the path checked
    and a YAML or JSON suffix required, each refusal one located problem (``LoadError``)."""
    try:
        path = input_files.as_path(path)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise LoadError([Problem(str(path), None, (), f"unsupported file type {path.suffix or '(none)'!r}; "
                                 f"{what} is .yaml, .yml or .json")])
    return (path, *read(path, kind))


def read_data(path: Path, kind: input_files.FileKind | None = None) -> tuple[Any, Mapping[RawPath, int]]:
    """Parse a YAML or JSON file into plain data plus the line of each path; any reading problem raises."""
    data, lines, problems = read(path, kind)
    if problems:
        raise LoadError(to_problems(str(path), problems, data))
    return data, lines



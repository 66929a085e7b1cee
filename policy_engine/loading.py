"""Read a topology from YAML, JSON or a Python module, reporting every problem at once.

A problem is one line: ``FILE[:LINE]: OBJECT.PATH: what is wrong``. Loading fails
(``LoadError``) on anything that makes the file mean something other than what
its author wrote: syntax, unknown keys, wrong types, duplicate names, and
references to things that do not exist. AWS limits are checked later, as rules.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import json
import math
import os
import re
import sys
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import yaml
from pydantic import BaseModel, ValidationError

from policy_engine import input_files, model, safe_yaml
from policy_engine.model import Topology

Path_ = tuple[str | int, ...]

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
    """Parse YAML (1.2 core schema, see ``safe_yaml``) keeping line numbers; duplicate keys are problems.

    Merge keys (``<<: *base``) work as in YAML: explicit keys override merged ones. Unknown
    tags, non-scalar keys, recursive aliases and values a tag does not allow are problems too.
    Problems are returned, not raised, so the rest of the file is still checked; the first of
    two duplicate keys is kept. What stops reading (syntax, nesting, an alias bomb) raises.
    """
    try:
        root = safe_yaml.compose(text)
    except safe_yaml.YamlError as error:
        raise LoadError([f"{source}{f':{error.line}' if error.line else ''}: {error.message}"]) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = getattr(error, "problem", None) or str(error)
        raise LoadError([f"{where}: YAML syntax error: {problem}"]) from None
    lines = _Lines()
    problems: list[_Problem] = []
    constructor = yaml.SafeLoader("")
    budget = safe_yaml.Budget(safe_yaml.count_nodes(root))

    def problem(node: yaml.Node, path: Path_, text: str) -> None:
        problems.append(_Problem(node.start_mark.line + 1, path, text))

    def scalar(node: yaml.Node, path: Path_) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            return convert(node, path, frozenset())
        try:
            return safe_yaml.scalar(node)
        except safe_yaml.YamlError as error:
            problem(node, path, error.message)
            return None

    def convert(node: yaml.Node, path: Path_, active: frozenset[int]) -> Any:
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
        raise LoadError([f"{source}:{error.line}: {error.message}"]) from None
    except RecursionError:  # e.g. a long chain of merge keys; nesting itself is bounded while composing
        raise LoadError([f"{source}: nested too deeply to read"]) from None
    return data, lines, problems


def _json_number_hooks(source: str, text: str) -> dict[str, Any]:
    """``json.loads`` hooks that refuse what JSON numbers must not become: NaN, infinity, huge integers."""

    def where(token: str) -> str:
        at = text.find(token)
        return f"{source}:{text.count(chr(10), 0, at) + 1}" if at >= 0 else source

    def constant(token: str) -> Any:
        raise LoadError([f"{where(token)}: {token} is not a number JSON allows (only finite numbers)"])

    def floating(token: str) -> float:
        value = float(token)
        if not math.isfinite(value):
            raise LoadError([f"{where(token)}: {token} is not a finite number (it overflows to infinity)"])
        return value

    def integer(token: str) -> int:
        digits = token.lstrip("-")
        if len(digits) > safe_yaml.MAX_INTEGER_DIGITS:
            raise LoadError([f"{where(token)}: integer of {len(digits):,} digits is too large "
                             f"(at most {safe_yaml.MAX_INTEGER_DIGITS})"])
        return int(token)

    return {"parse_constant": constant, "parse_float": floating, "parse_int": integer}


def find_lone_surrogate(data: Any) -> Path_ | None:
    """The path of the first key or string holding a lone surrogate (JSON can write one: ``"\\ud800"``)."""
    todo: list[tuple[Path_, Any]] = [((), data)]
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
        data = json.loads(text, object_pairs_hook=first_wins, **_json_number_hooks(source, text))
    except json.JSONDecodeError as error:
        raise LoadError([f"{source}:{error.lineno}: JSON syntax error: {error.msg}"]) from None
    except RecursionError:
        raise LoadError([f"{source}: nested more than {safe_yaml.MAX_DEPTH} levels deep"]) from None
    surrogate = find_lone_surrogate(data)
    if surrogate is not None:
        raise LoadError([f"{source}: {_render(surrogate, data)}: text holds a lone UTF-16 surrogate escape "
                         "(\\ud800-\\udfff), which is no character"])
    try:
        same, lines, problems = _yaml_to_data(text, source)
    except LoadError as error:
        if any("levels deep" in problem for problem in error.problems):
            raise
        return data, {}, duplicates
    return (same, lines, problems) if same == data else (data, {}, duplicates)


def _read(path: Path, kind: input_files.FileKind | None = None) -> tuple[Any, Mapping[Path_, int], list[_Problem]]:
    """Parse a YAML or JSON file (a topology unless ``kind`` says otherwise): data, the line of each path, and
    the problems found while reading."""
    source = str(path)
    try:
        text = input_files.read_text(path, kind or input_files.TOPOLOGY)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
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


def read_data(path: Path, kind: input_files.FileKind | None = None) -> tuple[Any, Mapping[Path_, int]]:
    """Parse a YAML or JSON file into plain data plus the line of each path; any reading problem raises."""
    data, lines, problems = _read(path, kind)
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

    if {"topology", "jobs"} & set(data) and not {"service_environments", "job_queues"} & set(data):
        raise LoadError([f"{source}: this is a scenario (topology:, jobs:), not a topology; "
                         "replay it with batch-quota simulate"])
    too_large = [_Problem(line_of(lines, loc), loc, message) for loc, message in _scale_problems(data)]
    if too_large:
        raise LoadError(_lines_of(source, [*problems, *too_large], data))
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


#: The largest topology the checks analyse, a few times AWS's own limits (50 queues, 20 shares a queue,
#: 1,000 shares, 5 instance types): the borrow graph grows with the square of the shares in a queue, so a
#: file far past AWS's limits (which could never be deployed) is refused at once instead of running for minutes.
MAX_QUEUES = 200
MAX_SHARES_PER_QUEUE = 100
MAX_SHARES = 2_000
MAX_INSTANCE_TYPES = 10


def _scale_problems(data: dict) -> list[tuple[tuple[str | int, ...], str]]:
    """Counts past what the checks analyse: one problem each, before any analysis runs."""
    beyond = "far beyond AWS's limits; the checks analyse at most"
    problems: list[tuple[tuple[str | int, ...], str]] = []
    queues = _items(data, "job_queues")
    for key, count in (("service_environments", len(_items(data, "service_environments"))),
                       ("job_queues", len(queues))):
        if count > MAX_QUEUES:
            problems.append(((key,), f"{count:,} items, {beyond} {MAX_QUEUES}"))
    total = 0
    for index, queue in queues:
        shares = _items(queue, "shares") if isinstance(queue, dict) else []
        total += len(shares)
        if len(shares) > MAX_SHARES_PER_QUEUE:
            problems.append((("job_queues", index, "shares"), f"{len(shares):,} quota shares in one job queue, "
                                                             f"{beyond} {MAX_SHARES_PER_QUEUE}"))
        for share_index, share in shares:
            capacity = share.get("capacity") if isinstance(share, dict) else None
            if isinstance(capacity, dict) and len(capacity) > MAX_INSTANCE_TYPES:
                problems.append((("job_queues", index, "shares", share_index, "capacity"),
                                 f"{len(capacity)} instance types, {beyond} {MAX_INSTANCE_TYPES}"))
    if total > MAX_SHARES:
        problems.append((("job_queues",), f"{total:,} quota shares in all, {beyond} {MAX_SHARES:,}"))
    for index, environment in _items(data, "service_environments"):
        capacity = environment.get("capacity") if isinstance(environment, dict) else None
        if isinstance(capacity, dict) and len(capacity) > MAX_INSTANCE_TYPES:
            problems.append((("service_environments", index, "capacity"),
                             f"{len(capacity)} instance types, {beyond} {MAX_INSTANCE_TYPES}"))
    return problems


def _structure_problems(data: dict) -> list[tuple[tuple[str | int, ...], str]]:
    """Duplicate names and dangling references in plain data: they make a topology ambiguous, not just unwise.
    A topology too large to analyse is refused here too, before its references are even looked at.

    Works on raw data, tolerating malformed parts, so it can run even when types are wrong.
    """
    problems = _scale_problems(data)
    if problems:
        return problems

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
    data = topology.model_dump()
    if (surrogate := find_lone_surrogate(data)) is not None:
        problems.append(f"{source}: {_render(surrogate, data)}: text holds a lone surrogate, which is no character")
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


class _ModuleExited(BaseException):
    """Raised instead of ``os._exit`` while a topology module runs, so the process survives to report it."""

    def __init__(self, code: Any):
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def _stdout_descriptor_to_stderr():
    """In a real process, also point file descriptor 1 at stderr: ``os.write(1, ...)`` and child processes."""
    if sys.stdout is not sys.__stdout__ or sys.stdout is None or sys.stderr is None:
        yield  # in-process (tests): sys.stdout is already someone else's buffer
        return
    try:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(sys.stderr.fileno(), 1)
    except (OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def _running_user_code(source: str, doing: str):
    """Run a topology module's code: its prints go to stderr (stdout may carry ``--format json``), and
    ``sys.exit``/``os._exit`` become a problem instead of ending the command with a status CI would trust."""

    def refuse_exit(code: int = 0) -> None:
        raise _ModuleExited(code)

    real_exit = os._exit
    os._exit = refuse_exit  # type: ignore[assignment]
    try:
        with _stdout_descriptor_to_stderr(), contextlib.redirect_stdout(sys.stderr):
            yield
    except (SystemExit, _ModuleExited) as exited:
        how = "os._exit" if isinstance(exited, _ModuleExited) else "sys.exit"
        raise LoadError([f"{source}: topology module exited while {doing} ({how}({exited.code!r})); "
                         "a topology module must define TOPOLOGY, not end the process"]) from None
    finally:
        os._exit = real_exit  # type: ignore[assignment]


#: What a user's module may raise that is not its own failure: an exit (reported by ``_running_user_code``), Ctrl-C.
_LEAVING = (SystemExit, KeyboardInterrupt, _ModuleExited)


def _from_python_module(path: Path) -> Topology:
    """Run ``path`` (a regular, UTF-8 file) and take its ``TOPOLOGY`` (or ``topology``; a callable is called).

    Loading a module runs its code, as ``cdk synth`` runs a CDK app: only load modules you trust.
    """
    source = str(path)
    try:
        text = input_files.read_text(path, input_files.MODULE)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    spec = importlib.util.spec_from_file_location(f"_batch_quota_topology_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise LoadError([f"{source}: cannot import as a Python module"])
    module = importlib.util.module_from_spec(spec)
    with _running_user_code(source, "importing the module"):
        try:
            exec(compile(text, source, "exec"), module.__dict__)
        except LoadError as error:
            raise LoadError([f"{source}: {problem}" for problem in error.problems]) from None
        except SyntaxError as error:
            raise LoadError([f"{source}:{error.lineno}: importing the module failed: SyntaxError: {error.msg}"]) \
                from None
        except _LEAVING:
            raise
        except BaseException as error:  # a user's module: report, never a traceback
            raise LoadError(_python_error_lines(source, error, "importing the module")) from None
    value = module.__dict__.get("TOPOLOGY")
    value = module.__dict__.get("topology") if value is None else value
    if callable(value) and not isinstance(value, Topology):
        with _running_user_code(source, "calling TOPOLOGY()"):
            try:
                value = value()
            except _LEAVING:
                raise
            except BaseException as error:  # a user's code: report, never a traceback
                raise LoadError(_python_error_lines(source, error, "calling TOPOLOGY()")) from None
    if not isinstance(value, Topology):
        raise LoadError([f"{source}: the module must define TOPOLOGY (or topology) as a policy_engine Topology"])
    return validate_topology(value, source)


def load_topology(path: str | Path, allow_python: bool = True) -> Topology:
    """Load a topology from a ``.yaml``/``.yml``, ``.json`` or ``.py`` file, or YAML/JSON on stdin for ``-``.

    ``allow_python=False`` refuses a ``.py`` module (running it would run code), for a
    topology named inside another file such as a scenario.
    """
    if str(path) == "-":
        if sys.stdin is None:
            raise LoadError(["<stdin>: standard input is closed; pipe the topology in or name a file"])
        return load_topology_stream(sys.stdin.buffer)
    try:
        path = input_files.as_path(path)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    if path.suffix.lower() == ".py":
        if not allow_python:
            raise LoadError([f"{path}: a Python topology module runs code when loaded; pass --allow-python "
                             "to load it from a scenario"])
        return _from_python_module(path)
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise LoadError([f"{path}: unsupported file type {path.suffix or '(none)'!r}; use .yaml, .yml, .json or .py"])
    data, lines, problems = _read(path)
    from policy_engine.aws.template import is_template, load_template

    if is_template(data):  # a CloudFormation template (cdk.out, SAM, hand-written): its quota resources
        return load_template(path)
    return topology_from_data(data, str(path), lines, problems)


def load_topology_stream(stream: BinaryIO, source: str = "<stdin>") -> Topology:
    """Load a YAML or JSON topology (JSON when it starts with ``{``) from a binary stream, e.g. stdin."""
    cap = input_files.TOPOLOGY
    data = stream.read(cap.max_bytes + 1)
    if len(data) > cap.max_bytes:
        raise LoadError([f"{source}: too large; {cap.describe_cap()}"])
    try:
        text = input_files.decode_utf8(data, source)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    parsed, lines, problems = (_json_to_data if text.lstrip().startswith("{") else _yaml_to_data)(text, source)
    return topology_from_data(parsed, source, lines, problems)

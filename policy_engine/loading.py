"""Read a topology from YAML, JSON or a Python module, reporting every problem at once.

A problem is one line: ``FILE[:LINE]: OBJECT.PATH: what is wrong``. Loading fails
(``LoadError``) on anything that makes the file mean something other than what
its author wrote: syntax, unknown keys, wrong types, duplicate names, and
references to things that do not exist. AWS limits are checked later, as rules.

The steps live in their own modules: ``reading`` (YAML/JSON with the line of every path),
``schema_errors`` (pydantic's errors in the author's words), ``structure_checks`` (sizes, duplicate
names, dangling references) and ``python_modules`` (running a ``.py`` topology).
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from policy_engine import input_files
from policy_engine.diagnostics import TOP_LEVEL, LoadError, Problem, line_of
from policy_engine.model import Topology
from policy_engine.python_modules import load_module
from policy_engine.reading import (
    RawProblem,
    find_lone_surrogate,
    json_to_data,
    read,
    read_data,
    to_problems,
    yaml_to_data,
)
from policy_engine.schema_errors import describe, fields_at, shown
from policy_engine.structure_checks import (
    MAX_INSTANCE_TYPES,
    MAX_QUEUES,
    MAX_SHARES,
    MAX_SHARES_PER_QUEUE,
    scale_problems,
    structure_problems,
    validate_topology,
)

__all__ = [
    "MAX_INSTANCE_TYPES", "MAX_QUEUES", "MAX_SHARES", "MAX_SHARES_PER_QUEUE", "LoadError", "find_lone_surrogate",
    "line_of", "load_topology", "load_topology_stream", "read_data", "topology_from_data", "validate_topology",
]

_EXPECTED = "expected a mapping with service_environments and job_queues"


def topology_from_data(
    data: Any,
    source: str = "<topology>",
    lines: Mapping[tuple[str | int, ...], int] | None = None,
    read_problems: Iterable[RawProblem] = (),
) -> Topology:
    """Validate plain data (from YAML/JSON or a dict) into a ``Topology`` or raise ``LoadError``.

    Reading, type and structural problems (duplicates, dangling references) are reported
    together, in file order, so one run shows everything that is wrong with a file.
    """
    lines = lines or {}
    found: list[RawProblem] = list(read_problems)
    if data is None:
        raise LoadError([*to_problems(source, found, data),
                         Problem(source, None, (), f"the file is empty; {_EXPECTED}")])
    if not isinstance(data, dict):
        raise LoadError([*to_problems(source, found, data),
                         Problem(source, None, (TOP_LEVEL,), f"{_EXPECTED}, got {shown(data)}")])
    if {"topology", "jobs"} & set(data) and not {"service_environments", "job_queues"} & set(data):
        raise LoadError([Problem(source, None, (), "this is a scenario (topology:, jobs:), not a topology; "
                                 "replay it with batch-quota simulate")])
    too_large = [Problem(source, line_of(lines, p.path), p.path, p.message) for p in scale_problems(data)]
    if too_large:
        raise LoadError(_in_file_order([*to_problems(source, found, data), *too_large]))
    topology = None
    try:
        topology = Topology.model_validate(data)
    except ValidationError as error:
        found += _schema_problems(error, lines, unreadable={p.loc for p in found})
    problems = [*to_problems(source, found, data),
                *(Problem(source, line_of(lines, p.path), p.path, p.message) for p in structure_problems(data))]
    if problems:
        raise LoadError(_in_file_order(problems))
    assert topology is not None
    return topology


def _schema_problems(error: ValidationError, lines: Mapping[tuple[str | int, ...], int],
                     unreadable: set[tuple[str | int, ...]]) -> list[RawProblem]:
    """Pydantic's errors, except where reading already found a problem (not also "wrong type")."""
    errors = error.errors()
    suggested = {  # a typo already says "did you mean X": do not also report X as missing
        (*tuple(e["loc"])[:-1], match)
        for e in errors
        if e["type"] == "extra_forbidden"
        for match in difflib.get_close_matches(str(e["loc"][-1]), fields_at(Topology, tuple(e["loc"])), n=1)
    }
    out = []
    for item in errors:
        loc = tuple(item["loc"])
        if loc not in unreadable and not (item["type"] == "missing" and loc in suggested):
            out.append(RawProblem(line_of(lines, loc), loc, describe(item, fields_at(Topology, loc))))
    return out


def _in_file_order(problems: list[Problem]) -> list[Problem]:
    """Problems by line, those without one last (a stable sort: equal lines keep their order)."""
    return sorted(problems, key=lambda p: (p.line is None, p.line or 0))


def load_topology(path: str | Path, allow_python: bool = True) -> Topology:
    """Load a topology from a ``.yaml``/``.yml``, ``.json`` or ``.py`` file, or YAML/JSON on stdin for ``-``.

    ``allow_python=False`` refuses a ``.py`` module (running it would run code), for a
    topology named inside another file such as a scenario.
    """
    if str(path) == "-":
        if sys.stdin is None:
            raise LoadError([Problem("<stdin>", None, (),
                                     "standard input is closed; pipe the topology in or name a file")])
        return load_topology_stream(sys.stdin.buffer)
    try:
        path = input_files.as_path(path)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    if path.suffix.lower() == ".py":
        if not allow_python:
            raise LoadError([Problem(str(path), None, (), "a Python topology module runs code when loaded; pass "
                                     "--allow-python to load it from a scenario")])
        return load_module(path)
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise LoadError([Problem(str(path), None, (), f"unsupported file type {path.suffix or '(none)'!r}; "
                                 "use .yaml, .yml, .json or .py")])
    data, lines, problems = read(path)
    from policy_engine.aws.template import is_template, load_template

    if is_template(data):  # a CloudFormation template (cdk.out, SAM, hand-written): its quota resources
        return load_template(path)
    return topology_from_data(data, str(path), lines, problems)


def load_topology_stream(stream: BinaryIO, source: str = "<stdin>") -> Topology:
    """Load a YAML or JSON topology (JSON when it starts with ``{``) from a binary stream, e.g. stdin."""
    cap = input_files.TOPOLOGY
    data = stream.read(cap.max_bytes + 1)
    if len(data) > cap.max_bytes:
        raise LoadError([Problem(source, None, (), f"too large; {cap.describe_cap()}")])
    try:
        text = input_files.decode_utf8(data, source)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    parsed, lines, problems = (json_to_data if text.lstrip().startswith("{") else yaml_to_data)(text, source)
    return topology_from_data(parsed, source, lines, problems)

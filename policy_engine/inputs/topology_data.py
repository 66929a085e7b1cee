"""Plain data (parsed YAML/JSON, an account read, a template's resources) to a ``Topology``, or every problem.

Every reader of topologies ends here: files (``loading``), CloudFormation templates (``inputs.template``),
the account import and the local endpoint; so it depends on none of them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from policy_engine.foundation.diagnostics import TOP_LEVEL, LoadError, Problem, line_of
from policy_engine.foundation.model import Topology
from policy_engine.inputs.reading import RawProblem, find_lone_surrogate, named_path, to_problems
from policy_engine.inputs.schema_errors import describe, fields_at, shown
from policy_engine.inputs.structure_checks import scale_problems, structure_problems

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
    unreadable = {p.loc for p in found}  # values reading refused (before the schema's problems join them)
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
        found += _schema_problems(error, lines, unreadable=unreadable)
    problems = [*to_problems(source, found, data),
                *(Problem(source, line_of(lines, p.path), p.path, p.message)
                  for p in structure_problems(data, unreadable))]
    if problems:
        raise LoadError(_in_file_order(problems))
    assert topology is not None
    return topology


def topology_from_objects(value: Topology, source: str) -> Topology:
    """A ``Topology`` built in Python (a topology module), validated like a file: its objects taken back to
    plain data, field by field as they were set, then ``topology_from_data``. Objects built with pydantic's
    ``model_construct`` skip validation; here their wrong types are one problem each, not a ``TypeError``
    deep inside a rule."""
    data = _plain(value, source, set())
    if (surrogate := find_lone_surrogate(data)) is not None:
        raise LoadError([Problem(source, None, named_path(surrogate, data),
                                 "text holds a lone surrogate, which is no character")])
    return topology_from_data(data, source)


def _plain(value: Any, source: str, inside: set[int]) -> Any:
    """Models to mappings of their set fields, tuples to lists; anything else as it is (the schema judges it)."""
    if not isinstance(value, BaseModel | Mapping | list | tuple):
        return value
    if id(value) in inside:
        raise LoadError([Problem(source, None, (), f"the topology contains itself (a {type(value).__name__} "
                                 "inside its own fields)")])
    inside.add(id(value))
    try:
        if isinstance(value, BaseModel):
            return {name: _plain(item, source, inside) for name, item in vars(value).items()}
        if isinstance(value, Mapping):
            return {key: _plain(item, source, inside) for key, item in value.items()}
        return [_plain(item, source, inside) for item in value]
    finally:
        inside.discard(id(value))


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

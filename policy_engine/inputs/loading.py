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

import sys
from pathlib import Path
from typing import BinaryIO

from policy_engine.foundation.diagnostics import LoadError, Problem, line_of
from policy_engine.foundation.model import Topology
from policy_engine.inputs import input_files
from policy_engine.inputs.python_modules import load_module
from policy_engine.inputs.reading import (
    find_lone_surrogate,
    json_to_data,
    read,
    read_data,
    yaml_to_data,
)
from policy_engine.inputs.structure_checks import (
    MAX_INSTANCE_TYPES,
    MAX_QUEUES,
    MAX_SHARES,
    MAX_SHARES_PER_QUEUE,
    validate_topology,
)
from policy_engine.inputs.topology_data import topology_from_data

__all__ = [
    "MAX_INSTANCE_TYPES", "MAX_QUEUES", "MAX_SHARES", "MAX_SHARES_PER_QUEUE", "LoadError", "find_lone_surrogate",
    "line_of", "load_topology", "load_topology_stream", "read_data", "topology_from_data", "validate_topology",
]


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
                                     "--allow-python to load one named here (see the command's --help)")])
        return load_module(path)
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise LoadError([Problem(str(path), None, (), f"unsupported file type {path.suffix or '(none)'!r}; "
                                 "use .yaml, .yml, .json or .py")])
    data, lines, problems = read(path)
    from policy_engine.inputs.template import is_template, load_template

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

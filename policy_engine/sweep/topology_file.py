"""The recommended topology as the author's own file, with only the changed values changed.

``tune -o`` edits the topology the scenario names rather than writing a new one: a YAML file (or the scenario's
inline ``topology:`` mapping) is read with ruamel.yaml's round-trip parser and only the values the recommendation
changes are set, so comments, key order, quoting and numbers (``604800`` stays ``604800``) are kept and a pull
request shows the changed values alone; a JSON file keeps its key order. A topology written as a Python module
has no file to edit: the recommendation is a fresh YAML file (defaults left out).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, MutableMapping, MutableSequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.util import load_yaml_guess_indent

from policy_engine.foundation.file_data import topology_file_data
from policy_engine.foundation.model import TARGET_DURATIONS, Topology
from policy_engine.foundation.units import duration_spec

#: The suffixes ``-o`` may name: the topology formats batch-quota reads that can be written as data.
YAML_SUFFIXES = (".yaml", ".yml")
WRITABLE_SUFFIXES = (*YAML_SUFFIXES, ".json")


def topology_data(topology: Topology) -> dict[str, Any]:
    """The topology in the file format ``check`` and ``cdk synth`` read (defaults left out but a queue's priority and
    a LEND_AND_BORROW share's borrow limit, ``file_data``; durations as ``12h``)."""
    data = topology_file_data(topology, exclude_none=True)
    for target in data.get("targets", []):
        target.update({key: duration_spec(target[key]) for key in TARGET_DURATIONS if key in target})
    return data


def _merge(node: Any, old: Any, new: Any) -> Any:
    """``node`` (the file's value for ``old``) changed to say ``new``: mappings and same-length lists are edited in
    place, key by key and item by item; anything else is replaced. Unchanged mappings and lists are visited too,
    so that a value every written file states (``file_data``: a queue's priority, a LEND_AND_BORROW share's borrow
    limit) is added where the author left it out."""
    if isinstance(old, dict) and isinstance(new, dict) and isinstance(node, MutableMapping):
        for key, value in new.items():
            if key not in node:
                node[key] = value
            elif old.get(key) != value or isinstance(value, (dict, list)):
                node[key] = _merge(node[key], old.get(key), value)
        for key in [key for key in old if key not in new and key in node]:
            del node[key]  # back to its default
        return node
    if (isinstance(old, list) and isinstance(new, list) and isinstance(node, MutableSequence)
            and len(old) == len(new) == len(node)):
        for index, (before, after) in enumerate(zip(old, new, strict=True)):
            if before != after or isinstance(after, (dict, list)):
                node[index] = _merge(node[index], before, after)
        return node
    return new


def _yaml() -> YAML:
    yaml = YAML()  # round-trip
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line the author wrote on one
    return yaml


def _edit_yaml(text: str, pick: Callable[[Any], Any], old: dict[str, Any], new: dict[str, Any]) -> str:
    yaml = _yaml()
    _, indent, offset = load_yaml_guess_indent(text)  # the author's indentation, not ruamel's default
    if indent is not None:
        offset = offset or 0  # ruamel's guess: a sequence's indent counts its dash's offset
        yaml.indent(mapping=max(indent - offset, 2), sequence=indent, offset=offset)
    document = yaml.load(text)
    _merge(pick(document), old, new)
    out = io.StringIO()
    yaml.dump(pick(document), out)
    return out.getvalue()


def recommended_text(scenario_file: Path, current: Topology, recommended: Topology, out_file: Path) -> str:
    """What ``-o out_file`` holds: the scenario's topology file (or inline mapping) with the recommendation's
    changes, in ``out_file``'s format (YAML unless it ends in ``.json``)."""
    old, new = topology_data(current), topology_data(recommended)
    scenario = _yaml().load(scenario_file.read_text(encoding="utf-8"))
    named = scenario.get("topology") if isinstance(scenario, MutableMapping) else None
    as_json = out_file.suffix.lower() == ".json"
    if isinstance(named, str):
        source = scenario_file.parent / named
        text = source.read_text(encoding="utf-8")
        if source.suffix.lower() == ".json":
            edited = _merge(json.loads(text), old, new)
            return json.dumps(edited, indent=2) + "\n" if as_json else _fresh_yaml(edited)
        if source.suffix.lower() in YAML_SUFFIXES and not as_json:
            return _edit_yaml(text, lambda document: document, old, new)
        if source.suffix.lower() in YAML_SUFFIXES:
            return json.dumps(_merge(_plain(_yaml().load(text)), old, new), indent=2) + "\n"
        return json.dumps(new, indent=2) + "\n" if as_json else _fresh_yaml(new)  # a Python module: nothing to edit
    if isinstance(named, MutableMapping) and not as_json:  # inline in the scenario: that mapping, edited
        return _edit_yaml(scenario_file.read_text(encoding="utf-8"), lambda document: document["topology"], old, new)
    return json.dumps(new, indent=2) + "\n" if as_json else _fresh_yaml(new)


def _plain(value: Any) -> Any:
    """ruamel's round-trip containers as plain dicts and lists (key order kept)."""
    if isinstance(value, MutableMapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, MutableSequence):
        return [_plain(item) for item in value]
    return value


def _fresh_yaml(data: Any) -> str:
    out = io.StringIO()
    _yaml().dump(data, out)
    return out.getvalue()

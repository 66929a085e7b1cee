"""A CloudFormation template file read safely: JSON or YAML with the short ``!Ref``/``!GetAtt`` forms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from policy_engine.foundation.diagnostics import LoadError
from policy_engine.inputs import input_files, safe_yaml


class _CfnLoader(yaml.SafeLoader):
    """YAML templates' short intrinsic forms (``!Ref X``, ``!GetAtt X.Y``) as their long mappings."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    elif isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    else:  # PyYAML's nodes are scalars, sequences or mappings
        raise TypeError(f"unexpected YAML node {node!r}")
    return {name: value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


def is_template(data: Any) -> bool:
    """Whether parsed data looks like a CloudFormation template rather than a topology file."""
    return isinstance(data, dict) and isinstance(data.get("Resources"), dict) and "job_queues" not in data


def read_template_file(path: str | Path) -> dict[str, Any]:
    """A template file read safely (a regular UTF-8 file within its cap; nesting and aliases bounded)."""
    try:
        text = input_files.read_text(path, input_files.TEMPLATE)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    path = Path(path)
    try:
        safe_yaml.check_expansion(safe_yaml.compose(text))  # refuses deep nesting and alias bombs first
        data = yaml.load(text, Loader=_CfnLoader)  # JSON is YAML
    except safe_yaml.YamlError as error:
        raise LoadError([f"{path}{f':{error.line}' if error.line else ''}: {error.message}"]) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise LoadError([f"{where}: template syntax error: {getattr(error, 'problem', None) or error}"]) from None
    except (ValueError, RecursionError) as error:  # a value PyYAML cannot convert (a huge integer, a bad date)
        raise LoadError([f"{path}: template value cannot be read: {error}"]) from None
    if not is_template(data):
        raise LoadError([f"{path}: not a CloudFormation template (no Resources mapping)"])
    return data

"""The SageMaker instance types, read from the installed botocore's SageMaker service model.

AWS adds instance types often; the ``TrainingInstanceType`` enum of the model botocore ships is
the list ``CreateTrainingJob`` accepts, and ``ReservedCapacityInstanceType`` the list a training
plan can reserve, so upgrading botocore is how a new type becomes valid. Only those shapes are
decoded (the whole model is megabytes of JSON; parsing it costs about a second per ``check``), and
botocore itself is not imported, just located.
"""

from __future__ import annotations

import difflib
import gzip
import importlib.util
import json
from functools import cache
from pathlib import Path

SHAPE = "TrainingInstanceType"
SOURCE = f"botocore's SageMaker service model, shape {SHAPE}"
#: The instance types a training plan reserves (``ReservedCapacitySummary.InstanceType``).
RESERVED_SHAPE = "ReservedCapacityInstanceType"
RESERVED_SOURCE = f"botocore's SageMaker service model, shape {RESERVED_SHAPE}"


class InstanceTypesUnavailable(RuntimeError):
    """The installed botocore has no readable SageMaker model (or no such shape)."""


def _model_file() -> Path:
    spec = importlib.util.find_spec("botocore")
    if spec is None or spec.origin is None:
        raise InstanceTypesUnavailable("botocore is not installed (pip install botocore)")
    service = Path(spec.origin).parent / "data" / "sagemaker"
    versions = sorted(p for p in service.iterdir() if p.is_dir()) if service.is_dir() else []
    for version in reversed(versions):
        for name in ("service-2.json.gz", "service-2.json"):
            if (version / name).is_file():
                return version / name
    raise InstanceTypesUnavailable(f"botocore has no SageMaker service model under {service}")


def _shape_enum(raw: bytes, name: str = SHAPE) -> tuple[str, ...]:
    """The enum of shape ``name``: decode that object only, else fall back to the whole model."""
    text = raw.decode("utf-8")
    marker = f'"{name}":'
    start = text.find(marker + "{")
    if start >= 0:
        try:
            shape, _ = json.JSONDecoder().raw_decode(text, start + len(marker))
            if isinstance(shape, dict) and isinstance(shape.get("enum"), list):
                return tuple(shape["enum"])
        except ValueError:
            pass
    shape = json.loads(text).get("shapes", {}).get(name, {})
    if not isinstance(shape.get("enum"), list):
        raise InstanceTypesUnavailable(f"botocore's SageMaker model has no {name} enum")
    return tuple(shape["enum"])


def _model_text() -> bytes:
    """The model's bytes, read per shape asked for (each answer is cached; the megabytes are not kept)."""
    path = _model_file()
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


@cache
def training_instance_types() -> frozenset[str]:
    """Every instance type SageMaker training accepts, per the installed botocore."""
    return frozenset(_shape_enum(_model_text(), SHAPE))


@cache
def reservable_instance_types() -> frozenset[str]:
    """Every instance type a SageMaker training plan can reserve, per the installed botocore."""
    return frozenset(_shape_enum(_model_text(), RESERVED_SHAPE))


def _closest(name: str, known: frozenset[str]) -> str | None:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    if not close and not name.startswith("ml."):
        close = difflib.get_close_matches(f"ml.{name}", sorted(known), n=1, cutoff=0.75)
    return close[0] if close else None


def suggestion(name: str) -> str | None:
    """The closest known instance type to a misspelled one (``ml.g5.xlrage`` -> ``ml.g5.xlarge``), if any."""
    return _closest(name, training_instance_types())


def reservable_suggestion(name: str) -> str | None:
    """The closest reservable instance type to one a plan names (``ml.p5.48xlarg`` -> ``ml.p5.48xlarge``); none
    for a real training type no plan reserves (``ml.g5.xlarge`` is not a misspelled ``ml.p5.4xlarge``)."""
    if name in training_instance_types():
        return None
    return _closest(name, reservable_instance_types())

"""The ``--vary PATH=VALUES`` grammar: which field of a scenario a sweep changes, and to what.

Paths:
  ``QUEUE/SHARE.borrow_limit`` | ``.strategy`` | ``.in_share_preemption`` | ``.state`` | ``.capacity.TYPE``
  (``SHARE.…`` when the share name is unique), ``ENVIRONMENT.capacity.TYPE``,
  ``settings.backfill`` | ``.victim_policy`` | ``.startup_delay`` | ``.preemption_delay`` | ``.min_runtime`` |
  ``.plan_dispatch``,
  ``workload.scale`` (submission times divided by the factor) | ``workload.duration_scale``,
  ``profile.QUEUE/SHARE.scale`` (that team's arrival rate, for a scenario whose workload is a profile),
  ``transfer(A,B).capacity.TYPE``: a coupled pair, moving that many instances of TYPE from A's limit to B's
  (negative: from B to A), so the sum of the two limits, and the environment's total, stay fixed.
  Everything after ``capacity.`` is the instance type (instance types contain dots).
Settings, workload and profile paths are simulator assumptions, not topology: ``tune`` refuses them as axes
(``ASSUMPTION_KINDS``) and takes them as ``--assume`` instead.
Values: a comma-separated list; ``A..B`` is an inclusive integer range, ``A..B:STEP`` a stepped one
(decimals need the step). Every problem is one line naming the ``--vary`` argument; all are reported at once.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from policy_engine.foundation import bounds
from policy_engine.foundation.diagnostics import ShareMatch
from policy_engine.foundation.limits import INTEGER_MAX
from policy_engine.foundation.model import UNLIMITED_BORROW, QuotaShare, Topology, share_id
from policy_engine.simulation.core.engine import SimulationSettings
from policy_engine.simulation.core.preemption import POLICIES
from policy_engine.simulation.settings import PlanDispatch

STRATEGIES = ("RESERVE", "LEND", "LEND_AND_BORROW")
STATES = ("ENABLED", "DISABLED")
SHARE_FIELDS = ("borrow_limit", "strategy", "in_share_preemption", "state", "capacity.<instance type>")
ENVIRONMENT_FIELDS = ("capacity.<instance type>",)
SETTINGS_FIELDS = ("backfill", "victim_policy", "startup_delay", "preemption_delay", "min_runtime", "plan_dispatch")
WORKLOAD_FIELDS = ("scale", "duration_scale")
PROFILE_FIELDS = ("scale",)
#: A range may not expand to more values than this (a typo such as 0..100000 is caught, not run).
MAX_RANGE = 10_000


class VaryError(ValueError):
    """One line per problem in the ``--vary`` arguments."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Axis:
    """One varied field: where it lives and the values it takes (typed, in the order written)."""

    path: str
    kind: str  # share | environment | transfer | settings | workload | profile
    target: str  # QUEUE/SHARE (share, profile, the giver of a transfer), environment name, or "" for settings
    field: str  # borrow_limit, strategy, ..., capacity, backfill, scale, ...
    instance_type: str | None
    values: tuple[Any, ...]
    #: The receiving share of a ``transfer`` (QUEUE/SHARE).
    partner: str | None = None

    @property
    def assumption(self) -> bool:
        """A simulator assumption (settings, workload), not a knob AWS has."""
        return self.kind in ASSUMPTION_KINDS


#: Axis kinds that describe the simulator or the workload, not the topology AWS deploys.
ASSUMPTION_KINDS = ("settings", "workload", "profile")


# --- value kinds ----------------------------------------------------------------------------------------------

_INT = re.compile(r"[+-]?\d+")
#: The longest integer a value may be written with (a 400-digit range end is a typo, never a limit).
_MAX_DIGITS = 20
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class _Kind:
    """How one field's values are written and which are allowed."""

    description: str
    parse: Callable[[str], Any]  # raises ValueError with a message
    numeric: str | None = None  # "int" | "float": ranges allowed


def _integer(low: int, high: int = INTEGER_MAX) -> _Kind:
    def parse(text: str) -> int:
        if not _INT.fullmatch(text) or len(text) > _MAX_DIGITS:
            raise ValueError(f"{text if len(text) <= 40 else text[:40] + '...'!r} is not an integer of at most "
                             f"{_MAX_DIGITS} digits")
        value = int(text)
        if value < low:
            raise ValueError(f"{value} is below the minimum {low}")
        if value > high:
            raise ValueError(f"{value} is above the maximum {high}")
        return value

    return _Kind(f"an integer {low} to {high}", parse, "int")


def _decimal(low: float, strict: bool, high: float) -> _Kind:
    bound = f"{'>' if strict else '>='} {low:g} and <= {high:g}"

    def parse(text: str) -> float:
        if not _DECIMAL.fullmatch(text) or len(text) > 2 * _MAX_DIGITS:
            raise ValueError(f"{text if len(text) <= 40 else text[:40] + '...'!r} is not a number")
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"{text} is too large to be a number")
        if value < low or (strict and value == low) or value > high:
            raise ValueError(f"{text} must be {bound}")
        return value

    return _Kind(f"a number {bound}", parse, "float")


def _choice(options: Sequence[str]) -> _Kind:
    def parse(text: str) -> str:
        if text not in options:
            same_but_case = [option for option in options if option.lower() == text.lower()]
            close = same_but_case or difflib.get_close_matches(text, options, n=1)
            raise ValueError(f"{text!r} is not one of {', '.join(options)}" + (f" (did you mean {close[0]!r}?)"
                                                                              if close else ""))
        return text

    return _Kind(f"one of {', '.join(options)}", parse)


def _boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"{text!r} is not true or false")
    return lowered == "true"


def _signed(text: str) -> int:
    if not _INT.fullmatch(text) or len(text) > _MAX_DIGITS:
        raise ValueError(f"{text if len(text) <= 40 else text[:40] + '...'!r} is not an integer of at most "
                         f"{_MAX_DIGITS} digits")
    value = int(text)
    if abs(value) > INTEGER_MAX:
        raise ValueError(f"{value} is beyond +-{INTEGER_MAX}")
    return value


_KINDS: dict[str, _Kind] = {
    "borrow_limit": _integer(UNLIMITED_BORROW),
    "strategy": _choice(STRATEGIES),
    "in_share_preemption": _Kind("true or false", _boolean),
    "state": _choice(STATES),
    "capacity": _integer(0),
    "transfer": _Kind("an integer (negative: from the second share to the first)", _signed, "int"),
    "backfill": _Kind("true or false", _boolean),
    "victim_policy": _choice(sorted(POLICIES)),
    "startup_delay": _decimal(0, strict=False, high=bounds.MAX_SECONDS),
    "preemption_delay": _decimal(0, strict=False, high=bounds.MAX_SECONDS),
    "min_runtime": _decimal(0, strict=False, high=bounds.MAX_SECONDS),
    "plan_dispatch": _choice(tuple(choice.value for choice in PlanDispatch)),
    "scale": _decimal(bounds.MIN_SCALE, strict=False, high=bounds.MAX_SCALE),
    "duration_scale": _decimal(bounds.MIN_SCALE, strict=False, high=bounds.MAX_SCALE),
}


# --- paths ----------------------------------------------------------------------------------------------------


def find_share(topology: Topology, ref: str) -> ShareMatch:
    """``ref`` (``QUEUE/SHARE`` or a unique ``SHARE``) through the project's one share resolver."""
    return topology.find_share(ref)


def share_of(topology: Topology, ref: str) -> QuotaShare:
    """The share a resolved reference (an axis target, a ``QUEUE/SHARE``) names."""
    match = find_share(topology, ref)
    queue = topology.queue(match.queue or "")
    share = queue.share(match.share or "") if queue is not None else None
    if share is None:
        raise KeyError(f"no quota share {ref!r}: {match.error}")
    return share


def _unknown_field(field: str, allowed: Sequence[str], owner: str) -> str:
    close = difflib.get_close_matches(field, allowed, n=1)
    return (f"{owner} has no field {field!r} to vary (fields: {', '.join(allowed)})"
            + (f"; did you mean {close[0]!r}?" if close else ""))


_TRANSFER = re.compile(r"transfer\(\s*([^,()\s]+)\s*,\s*([^,()\s]+)\s*\)\.capacity\.(.+)")


def _resolve_transfer(path: str, topology: Topology) -> tuple[str, str, str, str | None, str, str] | str:
    """``transfer(A,B).capacity.TYPE``: both shares in one queue (a limit moves within an environment)."""
    match = _TRANSFER.fullmatch(path)
    if match is None:
        return "expected transfer(QUEUE/A,QUEUE/B).capacity.TYPE, e.g. transfer(q/A,q/B).capacity.ml.p4d.24xlarge"
    giver_ref, taker_ref, instance_type = match.groups()
    found = []
    for ref in (giver_ref, taker_ref):
        share = find_share(topology, ref)
        if share.share_id is None:
            return f"{ref!r}: {share.error}"
        found.append(share)
    giver, taker = found
    if giver.share_id == taker.share_id:
        return f"transfer needs two different shares, got {giver.share_id} twice"
    if giver.queue != taker.queue:
        return (f"{giver.share_id} and {taker.share_id} are in different job queues; a transfer moves a limit "
                f"within one queue (its environment's total stays fixed)")
    shares = [share_of(topology, str(s.share_id)) for s in found]
    if not any(instance_type in s.capacity for s in shares):
        return f"neither {giver.share_id} nor {taker.share_id} has a limit for {instance_type}"
    canonical = f"transfer({giver.share_id},{taker.share_id}).capacity.{instance_type}"
    return "transfer", str(giver.share_id), "transfer", instance_type, canonical, str(taker.share_id)


def _resolve_path(path: str, topology: Topology) -> tuple[str, str, str, str | None, str] | str:
    """``(kind, target, field, instance type, canonical path)`` or an error message."""
    owner, dot, rest = path.partition(".")
    if not dot or not owner or not rest:
        return ("expected OWNER.FIELD: QUEUE/SHARE.FIELD, ENVIRONMENT.capacity.TYPE, settings.FIELD or "
                "workload.FIELD")
    if owner == "settings":
        if rest not in SETTINGS_FIELDS:
            return _unknown_field(rest, SETTINGS_FIELDS, "settings")
        return "settings", "", rest, None, path
    if owner == "workload":
        if rest not in WORKLOAD_FIELDS:
            return _unknown_field(rest, WORKLOAD_FIELDS, "workload")
        return "workload", "", rest, None, path
    if owner == "profile":  # profile.QUEUE/SHARE.scale: share and queue names hold no dot
        ref, dot, field = rest.rpartition(".")
        if not dot or not ref:
            return "expected profile.QUEUE/SHARE.scale, e.g. profile.training/vision.scale=0.8..1.2:0.1"
        if field not in PROFILE_FIELDS:
            return _unknown_field(field, PROFILE_FIELDS, f"profile of {ref}")
        match = find_share(topology, ref)
        if match.share_id is None:
            return str(match.error)
        return "profile", match.share_id, field, None, f"profile.{match.share_id}.{field}"
    match = find_share(topology, owner)
    environment = topology.environment(owner) if "/" not in owner else None
    if match.candidates:  # ambiguous: the resolver's message lists them
        return str(match.error)
    if match.share_id is not None and environment is not None:
        return f"{owner!r} names both a quota share and a service environment; write QUEUE/SHARE for the share"
    field, instance_type = rest, None
    if rest.startswith("capacity."):
        field, instance_type = "capacity", rest[len("capacity."):]
    elif rest == "capacity":
        return "capacity needs the instance type: capacity.<instance type>, e.g. capacity.ml.g5.xlarge"
    if field == "capacity" and not (instance_type or "").strip():
        return "capacity needs the instance type after 'capacity.', e.g. capacity.ml.g5.xlarge"
    if field == "capacity" and instance_type is not None:
        unknown = _unknown_instance_type(instance_type, topology)
        if unknown:
            return unknown
    if match.share_id is not None:
        canonical = match.share_id
        if field not in _KINDS or field not in ("borrow_limit", "strategy", "in_share_preemption", "state",
                                                "capacity"):
            return _unknown_field(rest, SHARE_FIELDS, f"quota share {canonical}")
        return "share", canonical, field, instance_type, f"{canonical}.{rest}"
    if environment is not None:
        if field != "capacity":
            return _unknown_field(rest, ENVIRONMENT_FIELDS, f"service environment {owner}")
        return "environment", owner, field, instance_type, path
    every = [share_id(q, s) for q, s in topology.shares()]
    known = ", ".join(every[:10]) + (f", ... ({len(every)} in all)" if len(every) > 10 else "")
    envs = ", ".join(e.name for e in topology.service_environments)
    close = difflib.get_close_matches(owner, [*every, *(e.name for e in topology.service_environments)], n=1)
    return (f"no quota share or service environment {owner!r} in the topology (shares: {known or 'none'}; "
            f"environments: {envs or 'none'})" + (f"; did you mean {close[0]!r}?" if close else ""))


# --- values ---------------------------------------------------------------------------------------------------


def _expand_range(item: str, kind: _Kind) -> list[Any]:
    low_text, _, rest = item.partition("..")
    high_text, colon, step_text = rest.partition(":")
    if kind.numeric is None:
        raise ValueError(f"range {item!r} on a field that takes {kind.description}")
    if not low_text.strip() or not high_text.strip():
        raise ValueError(f"range {item!r} needs both ends: LOW..HIGH")
    low, high = kind.parse(low_text.strip()), kind.parse(high_text.strip())
    if kind.numeric == "float" and not colon:
        raise ValueError(f"a range of decimals needs a step: {low_text}..{high_text}:STEP")
    step: float = 1
    if colon:
        pattern = _INT if kind.numeric == "int" else _DECIMAL
        if not pattern.fullmatch(step_text.strip()) or float(step_text) <= 0:
            raise ValueError(f"range step {step_text!r} must be a positive "
                             f"{'integer' if kind.numeric == 'int' else 'number'}")
        step = int(step_text) if kind.numeric == "int" else float(step_text)
    if high < low:
        raise ValueError(f"range {item!r} is empty: {high} is below {low}")
    # integers exactly; decimals as floats, where a tiny step makes the quotient infinite: counted, never converted
    span = (high - low) // int(step) if kind.numeric == "int" else (high - low) / step
    if not span <= MAX_RANGE:  # also when the quotient is infinite
        raise ValueError(f"range {item!r} has more than {MAX_RANGE:,} values")
    count = int(span) + 1 if kind.numeric == "int" else math.floor(span + 1e-9) + 1
    if kind.numeric == "int":
        return list(range(low, high + 1, int(step)))
    return [round(low + index * step, 12) for index in range(count)]


def _parse_values(text: str, kind: _Kind) -> tuple[list[Any], list[str]]:
    values: list[Any] = []
    problems: list[str] = []
    if not text.strip():
        return [], [f"no values (expected {kind.description}, comma-separated)"]
    for item in (part.strip() for part in text.split(",")):
        try:
            if not item:
                raise ValueError("empty value between commas")
            values.extend(_expand_range(item, kind) if ".." in item else [kind.parse(item)])
        except ValueError as error:
            problems.append(f"{error} (expected {kind.description})")
    if len(values) > bounds.MAX_AXIS_VALUES:
        return values, [f"{len(values):,} values (at most {bounds.MAX_AXIS_VALUES:,} on one axis)"]
    seen: set[Any] = set()  # a set: a list made this check quadratic (30 ranges of 10,000 took minutes)
    for value in values:
        if value in seen and not problems:
            problems.append(f"value {value!r} is listed twice")
        seen.add(value)
    return values, problems


def parse_vary(arguments: Sequence[str], topology: Topology) -> list[Axis]:
    """Every ``--vary`` argument as an ``Axis``; ``VaryError`` lists every problem."""
    axes: list[Axis] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    touched: dict[tuple[str, str], str] = {}  # (share, instance type) -> the --vary moving that limit
    for argument in arguments:
        where = f"--vary {argument!r}"
        path, equals, values_text = argument.partition("=")
        path = path.strip()
        if not equals or not path:
            problems.append(f"{where}: expected PATH=VALUES, e.g. training/QS1.borrow_limit=0,100,200")
            continue
        partner = None
        if path.startswith("transfer("):
            transfer = _resolve_transfer(path, topology)
            if isinstance(transfer, str):
                problems.append(f"{where}: {path}: {transfer}")
                continue
            kind_name, target, field, instance_type, canonical, partner = transfer
        else:
            resolved = _resolve_path(path, topology)
            if isinstance(resolved, str):
                problems.append(f"{where}: {path}: {resolved}")
                continue
            kind_name, target, field, instance_type, canonical = resolved
        kind = _KINDS[field]
        values, value_problems = _parse_values(values_text, kind)
        problems.extend(f"{where}: {canonical}: {problem}" for problem in value_problems)
        if canonical in seen:
            problems.append(f"{where}: {canonical} is varied twice (also by --vary {seen[canonical]!r}); "
                            "list all its values in one --vary")
            continue
        limits = _limits_moved(kind_name, target, partner, field, instance_type)
        clash = next((other for other in limits if other in touched), None)
        if clash is not None:
            problems.append(f"{where}: {canonical} moves the limit {clash[0]}.capacity.{clash[1]}, which --vary "
                            f"{touched[clash]!r} varies too; vary each share's limit of a type once")
            continue
        touched.update(dict.fromkeys(limits, argument))
        seen[canonical] = argument
        if not value_problems:
            axes.append(Axis(canonical, kind_name, target, field, instance_type, tuple(values), partner))
    if not arguments:
        problems.append("--vary: at least one PATH=VALUES is needed, e.g. --vary training/QS1.borrow_limit=0,100")
    if problems:
        raise VaryError(problems)
    return axes


def _limits_moved(kind: str, target: str, partner: str | None, field: str,
                  instance_type: str | None) -> list[tuple[str, str]]:
    """The share limits an axis sets: a capacity axis one, a transfer two."""
    if field == "capacity" and kind == "share":
        return [(target, instance_type or "")]
    if kind == "transfer":
        return [(target, instance_type or ""), (partner or "", instance_type or "")]
    return []


def _unknown_instance_type(name: str, topology: Topology) -> str | None:
    """A type neither the topology nor SageMaker training has (a typo: every candidate would be invalid)."""
    from policy_engine.foundation import instance_types

    if any(name in env.capacity for env in topology.service_environments) or any(
            name in share.capacity for _, share in topology.shares()):
        return None
    try:
        known = instance_types.training_instance_types()
    except (OSError, ValueError):  # botocore's list unreadable: the candidates' check still judges the type
        return None
    if name in known:
        return None
    close = instance_types.suggestion(name)
    return f"{name} is not a SageMaker training instance type" + (f"; did you mean {close!r}?" if close else "")


def vary_text(value: Any) -> str:
    """A value as ``--vary`` takes it (``LEND``, ``true``, ``200``): what reports print, so it can be pasted back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        from policy_engine.foundation.units import number_text

        return number_text(value)
    return str(value)


def values_text(values: dict[str, Any]) -> str:
    """``training/ads.strategy=LEND, training/vision.borrow_limit=-1``: a candidate as ``--vary`` writes it."""
    return ", ".join(f"{path}={vary_text(value)}" for path, value in values.items())


def base_value(axis: Axis, topology: Topology, settings: SimulationSettings) -> Any:
    """The scenario's own value of an axis (the current topology): ``None`` when the field is not set."""
    if axis.kind == "settings":
        return getattr(settings, axis.field)
    if axis.kind in ("workload", "profile"):
        return 1.0  # a factor on the scenario's own workload
    if axis.kind == "transfer":
        return 0
    if axis.kind == "environment":
        environment = topology.environment(axis.target)
        return environment.capacity.get(axis.instance_type or "", 0) if environment else None
    share = share_of(topology, axis.target)
    if axis.field == "capacity":
        return share.capacity.get(axis.instance_type or "", 0)
    return getattr(share, axis.field)

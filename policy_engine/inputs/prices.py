"""The team's own prices (``--prices prices.yaml``): a rate per instance-hour for each instance type.

No prices are shipped: list prices change and every team's discounts differ. The file is checked as
every input is (one line per problem naming the file, the key and the rule, exit 2), and against the
topologies it prices: a type used without a price is refused, so a cost is never silently zero, and so is a priced
name that is no SageMaker instance type (a typo); every training plan needs an upfront fee (here under
``training_plans``, or on the plan in the topology). A team keeps one
rate card for all its topologies: a real type the topologies do not use is accepted and ignored for the run
(``Prices.unused`` names them, for the command's note). A rate of 0 is a rate (capacity already paid for,
free credits); a negative or non-finite one is refused.

    currency: USD
    per_instance_hour: {ml.p4d.24xlarge: 37.69, ml.g5.12xlarge: 7.09}
    training_plans: {p5-plan: {upfront_fee: 164505.60}}
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from policy_engine.foundation import bounds, instance_types
from policy_engine.foundation.diagnostics import LoadError, Problem, line_of
from policy_engine.foundation.model import Topology, TrainingPlan
from policy_engine.inputs import input_files
from policy_engine.inputs.reading import RawProblem, read_document, to_problems
from policy_engine.inputs.schema_errors import describe

#: A rate: a finite number, 0 or more (an integer or a decimal; ``true`` or ``"7.09"`` are refused). 0 is a
#: legitimate rate: capacity already paid for, free credits. At most ``bounds.MAX_RATE``, so every cost stays finite.
Rate = Annotated[float, Field(strict=True, ge=0, le=bounds.MAX_RATE, allow_inf_nan=False)]


class PlanPrice(BaseModel):
    """What one training plan cost: its upfront fee, paid once (wins over the topology's ``upfront_fee``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    upfront_fee: Rate


class PricesFile(BaseModel):
    """The file's schema (pydantic: unknown keys, wrong types and missing keys are each one problem)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: Annotated[str, Field(strict=True, pattern=r"^[A-Z]{3}$")]
    per_instance_hour: dict[Annotated[str, Field(strict=True, min_length=1)], Rate]
    training_plans: dict[Annotated[str, Field(strict=True, min_length=1)], PlanPrice] = {}


@dataclass(frozen=True)
class Prices:
    """Rates per instance-hour in ``currency``, by instance type; ``source`` names the file. ``unused``: the
    instance types priced that none of the topologies checked against uses (ignored for the run: no figure
    reads their rate), in the file's order."""

    currency: str
    per_instance_hour: Mapping[str, float]
    source: str = "<prices>"
    unused: tuple[str, ...] = ()
    #: training plan name -> its upfront fee in ``currency`` (the rate card's ``training_plans``)
    plan_fees: Mapping[str, float] = field(default_factory=dict)

    def of(self, instance_type: str) -> float:
        return self.per_instance_hour[instance_type]

    def plan_fee(self, plan: TrainingPlan) -> float:
        """The plan's upfront fee: the rate card's, else the topology's (``load_prices`` made sure one exists and
        that a topology's fee is in the rate card's currency)."""
        fee = self.plan_fees.get(plan.name, plan.upfront_fee)
        if fee is None:
            raise ValueError(f"no upfront fee for training plan {plan.name} (checked when the prices were loaded)")
        return fee


def used_types(topology: Topology) -> set[str]:
    """Instance types on-demand jobs may run on: the environments' capacity and the shares' limits. A training plan
    is priced by its upfront fee, never per instance-hour (its jobs are not billed again), so its type alone
    needs no rate."""
    types = {t for environment in topology.service_environments for t in environment.capacity}
    return types | {t for queue in topology.job_queues for share in queue.shares for t in share.capacity}


def plan_types(topologies: Iterable[Topology]) -> dict[str, list[str]]:
    """Training plans' instance types -> the plans of that type, to name them when a price is missing."""
    out: dict[str, list[str]] = {}
    for topology in topologies:
        for plan in topology.training_plans:
            out.setdefault(plan.instance_type, []).append(plan.name)
    return out


def load_prices(path: str | Path, topologies: Iterable[Topology], varied: Mapping[str, str] | None = None) -> Prices:
    """Read and check ``path`` against the topologies it prices; ``LoadError`` lists every problem. ``varied``: the
    instance types a sweep's candidates add (type -> the ``--vary`` that adds it), which need a price too."""
    path, data, lines, found = read_document(path, input_files.PRICES, "a prices file")
    return prices_from_data(data, str(path), lines, found, list(topologies), varied or {})


def prices_from_data(data: Any, source: str, lines: Mapping[tuple[Any, ...], int], found: list[RawProblem],
                     topologies: list[Topology], varied: Mapping[str, str] | None = None) -> Prices:
    varied = varied or {}
    problems: list[RawProblem] = list(found)
    if not isinstance(data, dict):
        raise LoadError([*to_problems(source, problems, data),
                         Problem(source, None, (), "expected a mapping with currency: and per_instance_hour: "
                                 "(see docs/costs.md)")])
    parsed = None
    try:
        parsed = PricesFile.model_validate(data)
    except ValidationError as error:
        unreadable = {p.loc for p in problems}
        typos = {match for item in error.errors() if item["type"] == "extra_forbidden" and len(item["loc"]) == 1
                 for match in difflib.get_close_matches(str(item["loc"][0]), list(PricesFile.model_fields), n=1)}
        for item in error.errors():
            loc = tuple(part for part in item["loc"] if part != "[key]")
            if loc in unreadable or (item["type"] == "missing" and loc[0] in typos):
                continue  # said already: unreadable, or the typo's "did you mean" names it
            if item["type"] == "string_pattern_mismatch":
                message = f"expected a three-letter currency code such as USD or EUR, got {item['input']!r}"
            elif item["type"] == "greater_than_equal":
                message = f"a price per instance-hour must be 0 or more, got {item['input']!r}"
            elif item["type"] == "finite_number":
                message = "a price per instance-hour must be a finite number"
            else:
                message = describe(item, PricesFile.model_fields if len(loc) == 1 else ())
            problems.append(RawProblem(line_of(lines, loc), loc, message))
    given = data.get("per_instance_hour")
    if isinstance(given, dict):  # also when a rate is wrong: a typo in a type name is found in the same run
        wrong = {p.loc[1] for p in problems if p.loc[:1] == ("per_instance_hour",) and len(p.loc) == 2}
        problems += _against_topologies([key for key in given if isinstance(key, str)], wrong, topologies, lines,
                                        varied)
    problems += _plan_fees(data.get("training_plans"), parsed.currency if parsed else None, topologies, lines)
    if problems:
        raise LoadError(to_problems(source, problems, data))
    assert parsed is not None
    used = _used(topologies) | set(varied)
    return Prices(parsed.currency, dict(parsed.per_instance_hour), source,
                  tuple(t for t in parsed.per_instance_hour if t not in used),
                  {name: price.upfront_fee for name, price in parsed.training_plans.items()})


def _used(topologies: list[Topology]) -> set[str]:
    return set().union(*(used_types(t) for t in topologies)) if topologies else set()


def known_types() -> frozenset[str] | None:
    """Every instance type a price may name: SageMaker's training types and the types a training plan reserves
    (the installed botocore's lists); ``None`` when botocore's model cannot be read."""
    try:
        return instance_types.training_instance_types() | instance_types.reservable_instance_types()
    except instance_types.InstanceTypesUnavailable:
        return None


def _against_topologies(priced: list[str], wrong: set[Any], topologies: list[Topology],
                        lines: Mapping[tuple[Any, ...], int], varied: Mapping[str, str]) -> list[RawProblem]:
    """A priced name that is no SageMaker instance type (a typo), and a type a topology (or a sweep's candidate)
    uses without a price: never a silent zero. A real type no topology uses is fine (one rate card for all)."""
    in_topologies = _used(topologies)
    used = in_topologies | set(varied)
    outside = [t for t in priced if t not in used and t not in wrong]
    known = known_types() if outside else frozenset()  # botocore's model is read only when a name needs it
    out = []
    for instance_type in outside:
        if known is not None and instance_type in known:
            continue
        at: tuple[str, ...] = ("per_instance_hour", instance_type)
        close = difflib.get_close_matches(instance_type, sorted(used), n=1, cutoff=0.85)
        if known is None:  # botocore's list unreadable: a name the topologies lack cannot be told from a typo
            hint = f" (did you mean {close[0]!r}?)" if close else f" (its types: {', '.join(sorted(used)) or 'none'})"
            out.append(RawProblem(line_of(lines, at), at, f"the topology has no {instance_type} and SageMaker's "
                                  f"instance types cannot be read to tell it from a typo{hint}"))
            continue
        guess = close[0] if close else instance_types.suggestion(instance_type)
        hint = f" (did you mean {guess!r}?)" if guess else f" ({instance_types.SOURCE} lists the valid ones)"
        out.append(RawProblem(line_of(lines, at), at, f"the topology has no {instance_type}, and it is no SageMaker "
                              f"instance type: a price for it would never apply{hint}"))
    plans = plan_types(topologies)
    for instance_type in sorted(used - set(priced)):
        loc = ("per_instance_hour",)
        named = sorted(set(plans.get(instance_type, ())))
        user = f"the topology{' (training plan ' + ', '.join(named) + ')' if named else ''}"
        if instance_type not in in_topologies:
            user = f"--vary {varied[instance_type]}"
        out.append(RawProblem(line_of(lines, loc), loc, f"no price for {instance_type}, which {user} uses: "
                              "add it (a cost is never taken as zero)"))
    return out


def _plan_fees(given: Any, currency: str | None, topologies: list[Topology],
               lines: Mapping[tuple[Any, ...], int]) -> list[RawProblem]:
    """Every training plan of the topologies has an upfront fee (a cost is never taken as zero): the rate card's
    ``training_plans.NAME.upfront_fee`` or the plan's own ``upfront_fee``, which must then be in the rate card's
    currency; a fee for a plan no topology has is a typo."""
    priced = {name for name in given if isinstance(name, str)} if isinstance(given, dict) else set()
    plans = {plan.name: plan for topology in topologies for plan in topology.training_plans}
    out = []
    for name in sorted(priced - plans.keys()):
        at: tuple[str, ...] = ("training_plans", name)
        close = difflib.get_close_matches(name, sorted(plans), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (its plans: {', '.join(sorted(plans)) or 'none'})"
        out.append(RawProblem(line_of(lines, at), at, f"the topology has no training plan {name!r}: its fee would "
                              f"never apply{hint}"))
    for topology in topologies:
        for plan in topology.training_plans:
            if plan.name in priced:
                continue
            loc: tuple[str, ...] = ("training_plans",) if isinstance(given, dict) else ()
            if plan.upfront_fee is None:
                out.append(RawProblem(line_of(lines, loc), loc, f"no upfront fee for training plan {plan.name}: give "
                                      f"training_plans.{plan.name}.upfront_fee here or upfront_fee on the plan in "
                                      "the topology (a cost is never taken as zero)"))
            elif currency is not None and plan.currency is not None and plan.currency != currency:
                out.append(RawProblem(line_of(lines, loc), loc, f"training plan {plan.name}'s upfront_fee is in "
                                      f"{plan.currency}, this rate card in {currency}: give "
                                      f"training_plans.{plan.name}.upfront_fee here in {currency} (amounts in two "
                                      "currencies are never added up)"))
    return list({(p.line, p.loc, p.message): p for p in out}.values())

"""The operation registry and what every handler shares: names, pages, tags, paged ``Describe*``.

Handlers take the input members as botocore sends them and return the output members; the app
serialises them as JSON. Both are plain mappings at this edge: the botocore model (``protocol``)
has already checked them against the operation's shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from policy_engine.adapters.endpoint.base.errors import ApiError, client_error
from policy_engine.foundation import limits
from policy_engine.foundation.aws_rules import TagRule, tag_problems

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.base.account import Resources
    from policy_engine.adapters.endpoint.handlers.context import Endpoint

#: An operation's input or output members, or a resource record in the API's shape.
Params = dict[str, Any]
Output = dict[str, Any]
Handler = Callable[["Endpoint", Params], Output]
HANDLERS: dict[str, Handler] = {}
#: Operations that change state: logged to the ``--state`` store and replayed on restart.
MUTATING: set[str] = set()

#: AWS's largest page (``maxResults``) and the default one.
PAGE = limits.PAGE_SIZE.at_most
T = TypeVar("T")


def operation(name: str, mutating: bool = False) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of operation ``name``; a second handler is refused."""

    def register(function: Handler) -> Handler:
        if name in HANDLERS:
            raise ValueError(f"operation {name} registered twice ({HANDLERS[name].__qualname__} and "
                             f"{function.__qualname__})")
        HANDLERS[name] = function
        if mutating:
            MUTATING.add(name)
        return function

    return register


def check_name(value: str, what: str) -> None:
    """AWS's naming rule (``limits.NAME_LENGTH`` and ``NAME_CHARACTERS``), as the rule BQ101 checks it."""
    if not (limits.NAME_LENGTH.allows(len(value)) and limits.NAME_CHARACTERS.fullmatch(value)):
        raise client_error(f"{what} {value!r} must be {limits.NAME_LENGTH.range_text()} letters, digits, hyphens (-) "
                           "or underscores (_)")


def check_priority(priority: int) -> None:
    if not limits.JOB_PRIORITY.allows(priority):
        raise client_error(f"schedulingPriority must be {limits.JOB_PRIORITY.range_text()}, got {priority}")


def paginate(items: Sequence[T], params: Params, what: str) -> tuple[Sequence[T], str | None]:
    size = params.get("maxResults") or PAGE
    if not limits.PAGE_SIZE.allows(size):
        raise client_error(f"maxResults must be between {limits.PAGE_SIZE.minimum} and {PAGE}")
    start = 0
    token = params.get("nextToken")
    if token:
        try:
            start = int(token)
        except ValueError:
            start = -1
        if start < 0:
            raise client_error(f"Invalid nextToken for {what}")
    page = items[start:start + size]
    return page, str(start + size) if start + size < len(items) else None


def listed(params: Params, operation_name: str, key: str, records: Sequence[Params],
           shown: Callable[[Params], Output]) -> Output:
    """One page of ``records`` as ``{key: [shown(record)...]}``, with ``nextToken`` when more remain."""
    page, token = paginate(records, params, operation_name)
    out: Output = {key: [shown(record) for record in page]}
    if token:
        out["nextToken"] = token
    return out


def copy_members(target: Params, params: Params, names: Iterable[str]) -> None:
    """Set each of ``names`` that the request gives (an update changes only what it names)."""
    for name in names:
        if name in params:
            target[name] = params[name]


def with_tags(service: Endpoint, record: Params, arn: str) -> Output:
    tags = service.account.tags.get(arn)
    return {**record, "tags": dict(tags)} if tags else dict(record)


def commit(service: Endpoint, change: Callable[[Resources], object], arn: str | None = None,
           tags: dict[str, str] | None = None) -> None:
    """Keep a change the AWS rules accept (``Account.apply``), tag the resource it created, and run the
    scheduler on the topology it makes."""
    service.account.apply(change)
    if arn is not None:
        set_tags(service, arn, tags)
    service.topology_changed()


def set_tags(service: Endpoint, arn: str, tags: dict[str, str] | None) -> None:
    if tags:
        check_tags(tags)
        service.account.tags.setdefault(arn, {}).update(tags)


def check_tags(tags: dict[str, str]) -> None:
    """Refuse the first of AWS's tagging rules (``aws_rules.tag_problems``) that ``tags`` breaks, as AWS words it."""
    for problem in tag_problems(tags):
        key = problem.key
        if problem.rule is TagRule.COUNT:
            raise client_error(f"Tags: at most {limits.TAG_COUNT.maximum} per resource, got {problem.figure}")
        if problem.rule is TagRule.KEY_LENGTH:
            raise client_error(f"Tag key {key!r} must be {limits.TAG_KEY_LENGTH.range_text()} characters")
        if problem.rule is TagRule.VALUE_LENGTH:
            raise client_error(f"Tag value of {key!r} must be at most {limits.TAG_VALUE_LENGTH.maximum} characters")
        raise client_error(f"Tag key {key!r}: the {limits.SYSTEM_TAG_PREFIX} prefix is reserved")


def describe(service: Endpoint, params: Params, operation_name: str, key: str, arn_key: str,
             lookup: Callable[[str], Params], everything: Iterable[Params]) -> Output:
    """A paged ``Describe*`` of the records ``params[key]`` names (AWS leaves out what does not exist), or all."""
    wanted = params.get(key)
    if wanted:
        records = []
        for ref in wanted:
            try:
                records.append(lookup(ref))
            except ApiError:
                continue
    else:
        records = list(everything)
    return listed(params, operation_name, key, records, lambda r: with_tags(service, r, r[arn_key]))

"""Tags on resources and service jobs: ``TagResource``, ``UntagResource``, ``ListTagsForResource``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from policy_engine.adapters.endpoint.base.errors import client_error
from policy_engine.adapters.endpoint.handlers.registry import Output, Params, check_tags, operation
from policy_engine.adapters.endpoint.handlers.service_jobs import find_job
from policy_engine.foundation import limits

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.handlers.context import Endpoint


def _tag_target(service: Endpoint, arn: str) -> dict[str, str]:
    """The tag dictionary of a resource or job ARN (created for a resource without tags yet)."""
    if ":service-job/" in arn:
        return find_job(service, arn.rsplit("/", 1)[-1]).tags
    account = service.account
    if "/quota-share/" in arn:
        account.share(arn)
    elif ":job-queue/" in arn:
        account.queue(arn)
    elif ":service-environment/" in arn:
        account.environment(arn)
    elif ":scheduling-policy/" in arn:
        account.policy(arn)
    else:
        raise client_error(f"Resource {arn} is not a resource batch-quota serve knows")
    return account.tags.setdefault(arn, {})


@operation("TagResource", mutating=True)
def tag_resource(service: Endpoint, params: Params) -> Output:
    tags = _tag_target(service, params["resourceArn"])
    check_tags(params["tags"])
    if not limits.TAG_COUNT.allows(len({**tags, **params["tags"]})):
        raise client_error(f"A resource has at most {limits.TAG_COUNT.maximum} tags")
    tags.update(params["tags"])
    return {}


@operation("UntagResource", mutating=True)
def untag_resource(service: Endpoint, params: Params) -> Output:
    tags = _tag_target(service, params["resourceArn"])
    for key in params["tagKeys"]:
        if not limits.TAG_KEY_LENGTH.allows(len(key)):
            raise client_error(f"Tag key {key!r} must be {limits.TAG_KEY_LENGTH.range_text()} characters")
    for key in params["tagKeys"]:
        tags.pop(key, None)
    return {}


@operation("ListTagsForResource")
def list_tags_for_resource(service: Endpoint, params: Params) -> Output:
    return {"tags": dict(_tag_target(service, params["resourceArn"]))}

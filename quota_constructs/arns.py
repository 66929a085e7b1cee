"""Take AWS Batch ARNs apart, for the ``from_*_arn`` importers.

Batch ARNs put the name after a fixed marker (``job-queue/NAME``,
``job-queue/QUEUE/quota-share/SHARE``), so one split gives it. Concrete strings are
parsed in Python with a clear error; tokens (e.g. ``Fn.import_value``) become
``Fn::Select``/``Fn::Split`` so importing a share from another stack still works.
"""

from __future__ import annotations

import re

from aws_cdk import Fn, Token

from quota_constructs.errors import QuotaConstructError

_ARN = re.compile(r"arn:[a-z0-9-]+:batch:[a-z0-9-]*:[0-9]*:(?P<resource>.+)")


def name_after(arn: str, marker: str, construct: str, path: str) -> str:
    """The part of ``arn`` after ``marker`` (e.g. ``"service-environment/"``); ``path``: the importing construct's."""
    if Token.is_unresolved(arn):
        return Fn.select(1, Fn.split(marker, arn))
    match = _ARN.fullmatch(arn)
    resource = match.group("resource") if match else ""
    if not resource.startswith(marker) or "/" in resource[len(marker):] or len(resource) == len(marker):
        raise QuotaConstructError(f"{construct}: {arn!r} is not an AWS Batch ARN of the form "
                                  f"arn:PARTITION:batch:REGION:ACCOUNT:{marker}NAME", path=path, field="arn", value=arn)
    return resource[len(marker):]


def split_quota_share_arn(arn: str, path: str) -> tuple[str, str, str]:
    """``arn:...:job-queue/Q/quota-share/S`` -> ``(queue ARN, queue name, share name)``; ``path``: the importer's."""
    if Token.is_unresolved(arn):
        queue_arn = Fn.select(0, Fn.split("/quota-share/", arn))
        return queue_arn, Fn.select(1, Fn.split("job-queue/", queue_arn)), Fn.select(1, Fn.split("/quota-share/", arn))
    match = _ARN.fullmatch(arn)
    parts = match.group("resource").split("/") if match else []
    if len(parts) != 4 or parts[0] != "job-queue" or parts[2] != "quota-share" or not parts[1] or not parts[3]:
        raise QuotaConstructError(f"QuotaShare: {arn!r} is not a quota share ARN of the form "
                                  "arn:PARTITION:batch:REGION:ACCOUNT:job-queue/QUEUE/quota-share/SHARE",
                                  path=path, field="arn", value=arn)
    queue_arn = arn[: arn.index("/quota-share/")]
    return queue_arn, parts[1], parts[3]

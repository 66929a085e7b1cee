"""AWS Region names: what a ``--region`` may be, from botocore's partitions (``partitions.json``).

A Region goes into every ARN, CloudTrail event and EventBridge event the project writes, so a value that is
not a Region name (``../../x``, ``''``, a terminal escape) would be written into all of them. AWS's own
pattern per partition (``regionRegex``: ``us-east-1``, ``cn-north-1``, ``us-gov-west-1``, ...) is the rule,
so a Region AWS adds later is accepted without a change here.
"""

from __future__ import annotations

import re
from functools import cache


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    from botocore.loaders import create_loader

    partitions = create_loader().load_data("partitions")["partitions"]
    # ASCII: AWS's ``\\w`` means letters, digits and underscore, never another script's letters
    return tuple((p["id"], re.compile(p["regionRegex"], re.ASCII)) for p in partitions)


def partition_of(region: str) -> str | None:
    """The partition (``aws``, ``aws-cn``, ...) whose Region pattern ``region`` matches, or ``None``."""
    for partition, pattern in _patterns():
        if pattern.fullmatch(region) and region.isascii():
            return partition
    return None


def region_problem(region: str) -> str | None:
    """Why ``region`` is not an AWS Region name, in words, or ``None``."""
    if partition_of(region) is not None:
        return None
    return (f"{region!r} is not an AWS Region name (lower-case words and a number joined by hyphens, as "
            "us-east-1, in one of AWS's partitions)")

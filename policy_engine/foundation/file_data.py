"""A topology as the mapping its file holds: defaults left out, except what no reader may fall back on.

Every job queue's ``priority`` (0 included) and every LEND_AND_BORROW share's ``borrow_limit`` (unset as -1,
unlimited) are written explicitly: a client that drops a zero or an unset value (the SageMaker SDK drops priority
0, its notebook helper ``borrowLimit: 0``) then applies AWS's default, not the author's value. ``import`` and
``tune -o`` write through here; the constructs and the endpoint ask ``aws_rules.written_borrow_limit`` too.
"""

from __future__ import annotations

from typing import Any

from policy_engine.foundation.aws_rules import written_borrow_limit
from policy_engine.foundation.model import Topology


def topology_file_data(topology: Topology, exclude_none: bool = False) -> dict[str, Any]:
    """The mapping a topology file holds (``model_dump`` without defaults), with the explicit values above."""
    data = topology.model_dump(mode="json", exclude_defaults=True, exclude_none=exclude_none)
    for queue, written in zip(topology.job_queues, data.get("job_queues", []), strict=True):
        written["priority"] = queue.priority
        for share, share_data in zip(queue.shares, written.get("shares", []), strict=True):
            borrow = written_borrow_limit(share.strategy, share.borrow_limit)
            if borrow is not None:
                share_data["borrow_limit"] = borrow
    return data

"""The most instances one share can ever hold of one instance type: one formula for checks and simulation.

``BorrowGraph.max_burst`` (what ``check`` proves guarantees with) and ``placement.reach`` (which
jobs the simulator calls misconfigured) both call it, so the two can never disagree.
"""

from __future__ import annotations


def burst_limit(limit: int, lendable: int, ceiling: int | None, environment: int) -> int:
    """Its own ``limit`` plus what its lenders can lend it, never above its ``ceiling`` (``None``: no
    ceiling; a share that cannot borrow has ``lendable`` 0) nor what the ``environment`` has."""
    most = limit + lendable
    if ceiling is not None and ceiling < most:
        most = ceiling
    return min(most, environment)

"""Promise changes: a declared guarantee is a promise to a team, so weakening or dropping one needs review.

These rules judge a change (BASE -> HEAD), not one topology: ``batch-quota diff`` (and
``assert_no_regression``) evaluate them from the two sides' guarantee declarations
(``policy_engine.analysis.promise_changes``); ``check`` never reports them. A reviewed change is accepted
by a suppression in HEAD (``suppress: [{rule: BQ501, object: QUEUE/SHARE, reason: ...}]``), which
``check``'s BQ003 never calls stale.
"""

from __future__ import annotations

from collections.abc import Iterator

from policy_engine.analysis.rules.base import Context, RawFinding, rule
from policy_engine.foundation.findings import Severity


@rule("BQ501", Severity.ERROR, "A declared guarantee is not weakened without review", suppressible_errors=True,
      diff_only=True)
def guarantee_weakened(context: Context) -> Iterator[RawFinding]:
    """Evaluated by ``batch-quota diff`` only. A share's declared ``min_capacity`` or ``burst_capacity`` for an
    instance type is lower in HEAD than in BASE: the team is promised less than before. `diff --fail-on
    guarantee-weakened` (in the default) fails until the change is accepted by a suppression of BQ501 on the
    share in HEAD, or the check is left out of `--fail-on`."""
    return iter(())


@rule("BQ502", Severity.ERROR, "A declared guarantee is not dropped without review", suppressible_errors=True,
      diff_only=True)
def guarantee_dropped(context: Context) -> Iterator[RawFinding]:
    """Evaluated by ``batch-quota diff`` only. A promise BASE declares is gone from HEAD: a ``min_capacity`` or
    ``burst_capacity`` entry removed, ``never_preempted`` removed, or the share's guarantee (or the share) deleted.
    `diff --fail-on guarantee-dropped` (in the default) fails until the change is accepted by a suppression of
    BQ502 on the share (QUEUE/SHARE as BASE names it, after declared renames) in HEAD."""
    return iter(())

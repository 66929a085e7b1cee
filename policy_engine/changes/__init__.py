"""What a topology change does: per-share deltas, guarantees won and lost, CloudFormation replacements.

``compare(base, head)`` returns a ``ChangeReport``; ``batch-quota diff`` renders it for a pull request.
"""

from policy_engine.changes.compare import compare
from policy_engine.changes.report import ChangeReport

__all__ = ["ChangeReport", "compare"]

"""The command line: the ``batch-quota`` click group (``app``), one module per sub-command (``commands/``),
and the pre-commit hook (``precommit``).

``policy_engine.cli.app`` is the documented import path of the group: ``main`` and the ``COMMANDS`` table.
"""

from __future__ import annotations

from policy_engine.cli.app import COMMANDS, command_table, main

__all__ = ["COMMANDS", "command_table", "main"]

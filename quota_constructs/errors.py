"""The one error type the constructs raise: it carries where the mistake is, not only what it is.

Like aws-cdk's ``ValidationError(msg, scope)``: ``path`` is the construct path of the object the
error is about (``scope.node.path + "/" + id``: props are validated before ``super().__init__``,
so the construct's own node does not exist yet), ``field`` the prop, ``value`` what was given.
It is a ``ValueError``, so code that catches ``ValueError`` keeps working.
"""

from __future__ import annotations

from typing import Any


class QuotaConstructError(ValueError):
    """A construct refused its props: ``str(error)`` is the one line a user reads."""

    def __init__(self, message: str, *, path: str | None = None, field: str | None = None,
                 value: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.field = field
        self.value = value

"""Errors as AWS Batch returns them: a code botocore reads, an HTTP status, and a message."""

from __future__ import annotations

#: Characters of a message kept from its start and from its end when it is longer than twice this: a message
#: quotes the value it refuses, and a name of megabytes is not sent back (the rule, at the end, is kept).
MESSAGE_KEPT = 500


def shortened(message: str) -> str:
    if len(message) <= 2 * MESSAGE_KEPT + 40:
        return message
    cut = len(message) - 2 * MESSAGE_KEPT
    return f"{message[:MESSAGE_KEPT]}...({cut} characters)...{message[-MESSAGE_KEPT:]}"


class ApiError(Exception):
    """An error response: ``ClientException`` (400), ``ServerException`` (500) or a throttle (429)."""

    def __init__(self, message: str, code: str = "ClientException", status: int = 400):
        message = shortened(message)
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


def client_error(message: str) -> ApiError:
    return ApiError(message)


def throttled(message: str) -> ApiError:
    return ApiError(message, "TooManyRequestsException", 429)

"""Errors as AWS Batch returns them: a code botocore reads, an HTTP status, and a message."""

from __future__ import annotations


class ApiError(Exception):
    """An error response: ``ClientException`` (400), ``ServerException`` (500) or a throttle (429)."""

    def __init__(self, message: str, code: str = "ClientException", status: int = 400):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


def client_error(message: str) -> ApiError:
    return ApiError(message)


def throttled(message: str) -> ApiError:
    return ApiError(message, "TooManyRequestsException", 429)

"""The boto3 clients every connector uses (Batch; CloudTrail for ``history``), and the one wrapper all
their calls go through.

``Api.call`` and ``Api.pages`` turn every botocore failure (no credentials, no region,
AccessDenied, throttling that outlived the retries, an unreachable endpoint) into an
``AwsError`` naming the call and the object, and count calls per operation so that
benchmarks and users can see what an import costs. Retries are botocore's own
(``standard`` or ``adaptive``), so a throttled page is retried, never skipped.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: botocore's retry modes a user may choose (``legacy`` is not offered: it ignores modern throttling codes).
#: A request or response of an AWS API as botocore parses it: the operation's shape in its service model, as
#: plain data. ``Any``: a shape's members are strings, numbers, timestamps and nested shapes; the service model,
#: not this annotation, says which (the API's own shapes are read at the edge, ``inputs.api_shapes``).
Shape = dict[str, Any]

RETRY_MODES = ("standard", "adaptive")
DEFAULT_RETRY_MODE = "adaptive"
DEFAULT_MAX_ATTEMPTS = 10
#: Seconds to wait for a TCP connection: an endpoint that does not answer is an error after this long.
CONNECT_TIMEOUT = 5


class AwsError(Exception):
    """A call that failed: ``call`` (operation), ``subject`` (the object it was about, as a user reads it) and why.

    ``about`` names the job queues, service environments and shares (``QUEUE/SHARE``) the call was about,
    as values for code to compare (``drift`` asks whether a missing object was merely unread); empty
    when it names none (a call about every queue, a configuration error).
    """

    def __init__(self, call: str, subject: str, reason: str, code: str = "", about: tuple[str, ...] = ()):
        super().__init__(f"{call} ({subject}): {reason}")
        self.call = call
        self.subject = subject
        self.reason = reason
        self.code = code
        self.about = about

    @property
    def line(self) -> str:
        return str(self)


class AwsErrors(Exception):
    """Several failed calls reported together, one line each (never joined into one line)."""

    def __init__(self, errors: list[AwsError]):
        super().__init__("; ".join(error.line for error in errors))
        self.errors = errors


@dataclass(frozen=True)
class ClientOptions:
    """Where and how to connect; ``None`` means boto3's standard configuration chain decides."""

    region: str | None = None
    profile: str | None = None
    retry_mode: str = DEFAULT_RETRY_MODE
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    endpoint_url: str | None = None
    #: Concurrent DescribeServiceJob calls (history, snapshot); also the HTTP connection pool size.
    workers: int = 8


def make_client(options: ClientOptions, service: str = "batch") -> Any:
    """A client of ``service`` (``batch``, ``cloudtrail``) with the chosen retry mode; configuration errors
    become ``AwsError``. ``AWS_ENDPOINT_URL_BATCH`` / ``AWS_ENDPOINT_URL_CLOUDTRAIL`` are botocore's own."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ProfileNotFound

    if options.retry_mode not in RETRY_MODES:
        raise AwsError("configuration", "retry mode", f"unknown retry mode {options.retry_mode!r} "
                       f"(known: {', '.join(RETRY_MODES)})")
    if options.max_attempts < 1:
        raise AwsError("configuration", "max attempts", f"must be >= 1, got {options.max_attempts}")
    try:
        session = boto3.Session(profile_name=options.profile, region_name=options.region)
    except ProfileNotFound:
        raise AwsError("configuration", f"profile {options.profile!r}",
                       "no such profile in the AWS config or credentials file") from None
    config = Config(
        # total_max_attempts counts the first attempt (botocore's max_attempts would not)
        retries={"mode": options.retry_mode, "total_max_attempts": options.max_attempts},
        max_pool_connections=max(10, options.workers),
        user_agent_extra="batch-quota",
        connect_timeout=CONNECT_TIMEOUT,
    )
    try:
        client = session.client(service, config=config, endpoint_url=options.endpoint_url)
    except BotoCoreError as error:
        raise AwsError("configuration", f"{service} client", _botocore_reason(error)) from None
    service_id = client.meta.service_model.service_id.hyphenize()
    client.meta.events.register_first(f"needs-retry.{service_id}", _unreachable_is_final)  # before the retry handler
    return client


def _unreachable_is_final(caught_exception: Exception | None = None, **_: Any) -> None:
    """An endpoint that refuses the connection (or does not accept it within ``CONNECT_TIMEOUT``) is not
    retried as a throttled call is: botocore's retry modes would back off for about 13 s over 10 attempts
    before saying so. Raised here, before the retry handler decides, the call fails at once with one line.
    A connection that breaks after it was made (reset, read timeout) is still retried."""
    from botocore.exceptions import EndpointConnectionError

    if isinstance(caught_exception, EndpointConnectionError):
        raise caught_exception


def _botocore_reason(error: Exception) -> str:
    from botocore.exceptions import NoCredentialsError, NoRegionError

    if isinstance(error, NoRegionError):
        return "no region: pass --region, set AWS_DEFAULT_REGION or a profile's region"
    if isinstance(error, NoCredentialsError):
        return "no credentials: configure a profile (--profile), environment variables or an instance role"
    return str(error)


class Api:
    """A Batch client with call counting and one-line errors."""

    def __init__(self, client: Any):
        self.client = client
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    @property
    def region(self) -> str:
        return self.client.meta.region_name or "(no region)"

    def _count(self, operation: str) -> None:
        with self._lock:
            self.calls[operation] += 1

    def call(self, operation: str, subject: str, about: tuple[str, ...] = (), **params: Any) -> Shape:
        """One call of ``operation`` (e.g. ``"DescribeQuotaShare"``) about ``subject`` (the objects ``about``)."""
        method = getattr(self.client, _snake(operation))
        self._count(operation)
        try:
            return method(**params)
        except Exception as error:
            raise _translate(operation, subject, error, about) from None

    def pages(self, operation: str, subject: str, about: tuple[str, ...] = (), **params: Any) -> Iterator[Shape]:
        """Every page of a List/Describe call: botocore's paginator where one exists, else a ``nextToken`` loop."""
        name = _snake(operation)
        try:
            if self.client.can_paginate(name):
                iterator = iter(self.client.get_paginator(name).paginate(**params))
                while True:
                    self._count(operation)
                    try:
                        page = next(iterator)
                    except StopIteration:
                        self.calls[operation] -= 1  # the paginator made no call to learn it had finished
                        return
                    yield page
            else:
                token = None
                while True:
                    page = self.call(operation, subject, about, **params, **({"nextToken": token} if token else {}))
                    yield page
                    token = page.get("nextToken")
                    if not token:
                        return
        except AwsError:
            raise
        except Exception as error:
            raise _translate(operation, subject, error, about) from None


def _snake(operation: str) -> str:
    out = []
    for index, char in enumerate(operation):
        if char.isupper() and index:
            out.append("_")
        out.append(char.lower())
    return "".join(out)


def _translate(operation: str, subject: str, error: Exception, about: tuple[str, ...] = ()) -> Exception:
    """botocore's exception -> ``AwsError``; anything else (a bug, Ctrl-C) passes through unchanged."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(error, ClientError):
        info = error.response.get("Error", {})
        code = info.get("Code") or "Error"
        message = info.get("Message") or str(error)
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in ("AccessDeniedException", "AccessDenied", "UnauthorizedOperation") or status == 403:
            reason = f"access denied ({code}): {message} (see `batch-quota iam-policy`)"
        elif code in ("TooManyRequestsException", "ThrottlingException", "Throttling") or status == 429:
            attempts = error.response.get("ResponseMetadata", {}).get("RetryAttempts", 0)
            reason = f"throttled after {attempts + 1} attempt(s) ({code}): {message}; raise --max-attempts"
        else:
            reason = f"{code}: {message}"
        return AwsError(operation, subject, reason, code, about)
    if isinstance(error, BotoCoreError):
        return AwsError(operation, subject, _botocore_reason(error), type(error).__name__, about)
    return error

"""The request guard: what every request must show before any route sees it (docs/endpoint.md, "A local tool
is not a door").

A web page the developer opens while ``serve`` runs can send requests to it: "simple" cross-origin requests
(a form post, ``fetch`` with ``text/plain``) need no preflight, and DNS rebinding turns the attacker's own
name into the loopback address so the page can also read the answers. The guard refuses both before any
handler runs:

- an ``Origin`` header that is not a loopback origin (browsers send it on every cross-origin request);
- a ``Host`` that is not a name of this server (a rebinding request carries the attacker's name): on a
  loopback bind the loopback names and the bound address, otherwise the bound address, and on a wildcard
  bind any IP address; names given with ``--allow-host`` in every case;
- an AWS API call without an ``Authorization`` header (signatures are not verified, but a browser cannot
  send the header cross-origin without a preflight, which is refused);
- a control API call that changes something without a JSON (or YAML) ``Content-Type`` (a type a form or a
  simple request cannot send), and, with ``--token``, without ``Authorization: Bearer TOKEN`` (401).

Which route a request is for is decided by ``route_of``, the one function the dispatch reads too, so a
route added later is guarded as an AWS API route unless it lives under the control prefix.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from urllib.parse import urlsplit

from policy_engine.adapters.endpoint import cloudtrail
from policy_engine.adapters.endpoint.base import sagemaker
from policy_engine.adapters.endpoint.rehearsal.cloud import SERVICES as REHEARSED
from policy_engine.adapters.endpoint.rehearsal.cloud import scope_service

#: Where the control API lives; everything else on the port is an AWS API.
CONTROL_PREFIX = "/_batch-quota/"
#: Where botocore names the operation of a JSON 1.1 service (CloudTrail, SageMaker).
TARGET_HEADER = b"x-amz-target"
#: Environment variable read as ``serve --token``.
TOKEN_VARIABLE = "BATCH_QUOTA_SERVE_TOKEN"
#: Content types a control API call that changes something may carry: neither is one a browser sends
#: cross-origin without a preflight (the CORS-safelisted ones are form, multipart and text/plain).
CONTROL_CONTENT_TYPES = frozenset({"application/json", "application/yaml"})
#: Methods that only read: the control API's reads need no content type (there is no body).
READ_METHODS = frozenset({"GET", "HEAD"})
#: Names that always resolve to the loopback interface (RFC 6761: ``localhost`` and its subdomains).
LOOPBACK_NAME = "localhost"


class RouteKind(Enum):
    """Which API a request is for: what the guard asks of it and where the dispatch sends it."""

    CONTROL = "control"
    CLOUDTRAIL = "cloudtrail"
    SAGEMAKER = "sagemaker"
    #: STS, SSM, S3, CloudFormation, CloudWatch Logs: what ``cdk deploy`` drives (the deploy rehearsal)
    REHEARSAL = "rehearsal"
    BATCH = "batch"

    @property
    def is_aws(self) -> bool:
        return self is not RouteKind.CONTROL


def route_of(path: str, target: str, authorization: str = "") -> RouteKind:
    """The API a request is for: a JSON 1.1 service by its ``X-Amz-Target``, the control API by its path, a
    service of the deploy rehearsal by its SigV4 credential scope, else AWS Batch (REST-JSON). The dispatch
    and the guard both call this."""
    if target.startswith(cloudtrail.TARGET_PREFIX):
        return RouteKind.CLOUDTRAIL
    if target.startswith(sagemaker.TARGET_PREFIX):
        return RouteKind.SAGEMAKER
    if path.startswith(CONTROL_PREFIX):
        return RouteKind.CONTROL
    if authorization and scope_service(authorization) in REHEARSED:
        return RouteKind.REHEARSAL
    return RouteKind.BATCH


class RefusalKind(Enum):
    """Why a request was refused: its HTTP status and the error code of the body."""

    FOREIGN_ORIGIN = (403, "AccessDeniedException")
    FOREIGN_HOST = (403, "AccessDeniedException")
    NO_AUTHORIZATION = (403, "MissingAuthenticationTokenException")
    CONTENT_TYPE = (403, "AccessDeniedException")
    TOKEN = (401, "UnauthorizedException")

    @property
    def status(self) -> int:
        return self.value[0]

    @property
    def code(self) -> str:
        return self.value[1]


@dataclass(frozen=True)
class Refusal:
    kind: RefusalKind
    message: str


@dataclass(frozen=True)
class RequestHead:
    """What the guard reads of a request: its method, raw path and headers (names in lower case)."""

    method: str
    path: str
    headers: tuple[tuple[bytes, bytes], ...]

    def header(self, name: bytes) -> str | None:
        """The first value of header ``name`` (lower case), or ``None``."""
        for key, value in self.headers:
            if key.lower() == name:
                return value.decode("latin-1")
        return None

    @property
    def route(self) -> RouteKind:
        return route_of(self.path, self.header(TARGET_HEADER) or "", self.header(b"authorization") or "")


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Whether a host name or address (IPv6 in brackets or not) names this machine's loopback interface."""
    address = _ip(host)
    if address is not None:
        return address.is_loopback
    name = host.lower().rstrip(".")
    return name == LOOPBACK_NAME or name.endswith("." + LOOPBACK_NAME)


def host_of(value: str) -> str | None:
    """The host of a ``Host`` header (``name``, ``name:port``, ``[v6]:port``), lower case; ``None`` if malformed."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or (value[end + 1:] and not (value[end + 1] == ":" and value[end + 2:].isdigit())):
            return None
        return value[:end + 1].lower()
    host, _, port = value.partition(":")
    if not host or (port and not port.isdigit()):
        return None
    return host.lower()


def _bare(host: str) -> str:
    """An address without IPv6 brackets, or a name without its trailing dot, for comparing."""
    address = _ip(host)
    return str(address) if address is not None else host.lower().rstrip(".")


@dataclass(frozen=True)
class GuardPolicy:
    """What the guard accepts: the address the server is bound to (and the name it was given, ``--host``), the
    extra ``Host`` names of ``--allow-host``, and the control API's bearer token (``--token``; None: none)."""

    bound: str = "127.0.0.1"
    given: str = "127.0.0.1"
    allowed_hosts: frozenset[str] = frozenset()
    token: str | None = None

    @classmethod
    def of(cls, bound: str, given: str, allowed_hosts: Iterable[str] = (), token: str | None = None) -> GuardPolicy:
        return cls(_bare(bound), _bare(given), frozenset(_bare(name) for name in allowed_hosts), token or None)

    @property
    def loopback_bind(self) -> bool:
        return is_loopback(self.bound)

    @property
    def wildcard_bind(self) -> bool:
        address = _ip(self.bound)
        return address is not None and address.is_unspecified

    def host_allowed(self, host: str) -> bool:
        bare = _bare(host)
        if bare in self.allowed_hosts or bare in (self.bound, self.given):
            return True
        if is_loopback(bare):  # this machine's own clients, whatever the bind (a loopback name never rebinds)
            return True
        # a rebinding request always carries a DNS name: on a wildcard bind any address literal is this machine
        return self.wildcard_bind and _ip(bare) is not None

    def refusal(self, request: RequestHead) -> Refusal | None:
        """Why ``request`` is refused, or ``None`` when it may reach its route."""
        origin = request.header(b"origin")
        if origin is not None and not _loopback_origin(origin):
            return Refusal(RefusalKind.FOREIGN_ORIGIN,
                           f"Origin {origin!r} is refused: batch-quota serve answers only requests from this "
                           "machine's own pages (a loopback Origin) or from clients that send no Origin")
        raw_host = request.header(b"host")
        if raw_host is None or not _host_answered(self, raw_host):
            shown = "no Host header" if raw_host is None else f"Host {raw_host!r}"
            return Refusal(RefusalKind.FOREIGN_HOST,
                           f"{shown} is refused: batch-quota serve answers to its own address ({self.given}), "
                           "loopback names and the names given with --allow-host")
        route = request.route
        if route.is_aws:
            if not (request.header(b"authorization") or "").strip():
                return Refusal(RefusalKind.NO_AUTHORIZATION,
                               "Missing Authentication Token: an AWS API call needs an Authorization header "
                               "(any credentials: signatures are not verified)")
            return None
        if self.token is not None and not _bearer_matches(request.header(b"authorization"), self.token):
            return Refusal(RefusalKind.TOKEN, "The control API needs Authorization: Bearer TOKEN "
                                              f"(serve --token or {TOKEN_VARIABLE})")
        if request.method not in READ_METHODS:
            content_type = (request.header(b"content-type") or "").split(";", 1)[0].strip().lower()
            if content_type not in CONTROL_CONTENT_TYPES:
                shown_type = f"Content-Type {content_type!r}" if content_type else "no Content-Type"
                return Refusal(RefusalKind.CONTENT_TYPE,
                               f"{request.method} {CONTROL_PREFIX}... with {shown_type} is refused: the control "
                               f"API takes {' or '.join(sorted(CONTROL_CONTENT_TYPES))}")
        return None


@lru_cache(maxsize=256)  # a client sends the same Host on every call; bounded, whatever a client sends
def _host_answered(policy: GuardPolicy, raw_host: str) -> bool:
    host = host_of(raw_host)
    return host is not None and policy.host_allowed(host)


def _loopback_origin(origin: str) -> bool:
    """``http(s)://`` a loopback host (any port); ``null`` (a sandboxed or ``file:`` page) is not one."""
    try:
        parts = urlsplit(origin.strip())
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and host is not None and is_loopback(host)


def _bearer_matches(header: str | None, token: str) -> bool:
    if header is None:
        return False
    scheme, _, given = header.strip().partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())

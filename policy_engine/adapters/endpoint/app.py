"""The ASGI application: one plain function from request to response, no framework in between.

Requests are handled one at a time on the server's event loop (handlers never wait), so
the account and the simulator need no locks and every call sees a consistent state.
Every request passes the request guard (``guard.GuardPolicy.refusal``: origin, host, authorization,
content type) before any route; signatures (SigV4) are required but not verified: any credentials work.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from policy_engine.adapters.aws.queue_figures import CLOCK_HEADER, SIMULATED
from policy_engine.adapters.endpoint import cloudtrail, control
from policy_engine.adapters.endpoint.base import sagemaker
from policy_engine.adapters.endpoint.base.errors import ApiError, client_error
from policy_engine.adapters.endpoint.base.protocol import Router, parse_request
from policy_engine.adapters.endpoint.guard import GuardPolicy, Refusal, RefusalKind, RequestHead, RouteKind, route_of
from policy_engine.adapters.endpoint.handlers.registry import Output
from policy_engine.adapters.endpoint.operations import HANDLERS
from policy_engine.adapters.endpoint.rehearsal.cloud import scope_service
from policy_engine.adapters.endpoint.service import Service
from policy_engine.foundation import limits
from policy_engine.inputs import input_files

#: ASGI's message and callables, as the server hands them over.
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

log = logging.getLogger("batch_quota.serve")
_JSON = (b"content-type", b"application/json")
#: The store's clock is saved this often (real seconds) while time passes without calls.
CLOCK_SAVE_SECONDS = 1.0
#: Response header: microseconds the server spent on the request (after reading its body, before writing the
#: answer), so a client can tell the server's time from its own and the network's.
HANDLING_HEADER = b"x-batch-quota-handling-us"
_CLOCK = (CLOCK_HEADER.encode(), SIMULATED.encode())
#: Every this many requests, young garbage is collected and what survives is frozen (see ``_age_heap``).
FREEZE_EVERY = 1000
#: Largest request body read: a topology file's cap, the largest legitimate body (the control API's topology;
#: AWS documents only SubmitServiceJob's 30 KiB). A larger one is answered 413 ``ClientException`` unparsed.
MAX_BODY_BYTES = input_files.TOPOLOGY.max_bytes


class EndpointApp:
    def __init__(self, service: Service, guard: GuardPolicy | None = None) -> None:
        self.service = service
        #: what every request must show before it reaches a route (default: a loopback bind, no token)
        self.guard = guard or GuardPolicy()
        self.router = Router()
        self._requests = 0
        self._boot = uuid.uuid4().hex[:16]

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            chunks: list[bytes] = []
            size = 0
            more = True
            while more:
                message = await receive()
                chunk = message.get("body", b"")
                size += len(chunk)
                if size <= MAX_BODY_BYTES:  # past it the rest is read and dropped: the answer is the 413
                    chunks.append(chunk)
                more = message.get("more_body", False)
            raw_path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
            head = RequestHead(scope["method"], raw_path, tuple(scope.get("headers") or ()))
            began = time.perf_counter()
            refusal = self.guard.refusal(head)  # every route, before anything reads the request
            if refusal is not None:
                status, payload, headers = refused(refusal, head.route)
            elif size > MAX_BODY_BYTES:
                status, payload, headers = self.too_large(size)
            else:
                status, payload, headers = self.respond(scope["method"], raw_path, scope.get("query_string", b""),
                                                        b"".join(chunks), head.header(b"x-amz-target") or "",
                                                        head.header(b"authorization") or "",
                                                        head.header(b"host") or "")
            headers.append((b"content-length", str(len(payload)).encode()))
            headers.append((HANDLING_HEADER, str(round((time.perf_counter() - began) * 1e6)).encode()))
            headers.append(_CLOCK)  # every time it answers is its simulated clock's (``top`` labels it so)
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        saver: asyncio.Task[None] | None = None
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                gc.collect()
                gc.freeze()  # the botocore model, the libraries and the topology live as long as the server
                if self.service.store is not None:
                    saver = asyncio.get_running_loop().create_task(self._save_clock())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if saver is not None:
                    saver.cancel()
                self.service.checkpoint()  # a clean restart replays nothing
                self.service.save_clock()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _save_clock(self) -> None:
        while True:
            await asyncio.sleep(CLOCK_SAVE_SECONDS)
            self.service.save_clock()

    def respond(self, method: str, path: str, query: bytes, body: bytes, target: str = "", authorization: str = "",
                host: str = "") -> tuple[int, bytes, Headers]:
        """One request: AWS Batch (REST-JSON), the control API, CloudTrail or SageMaker (JSON 1.1, by
        ``X-Amz-Target``), or a service of the deploy rehearsal (by the credential scope of ``authorization``)."""
        self._requests += 1
        if not self._requests % FREEZE_EVERY:
            _age_heap()
        request_id = f"{self._boot}-{self._requests:016x}".encode()  # unique per server run, cheaper than uuid4
        route = route_of(path, target, authorization)
        if route is RouteKind.REHEARSAL:
            return self._rehearsal(method, path, query, body, target, authorization, host, request_id)
        if route is RouteKind.CLOUDTRAIL:
            return self._json_11("CloudTrail", cloudtrail.CONTENT_TYPE, target, request_id,
                                 lambda: cloudtrail.handle(self.service.trail, target, body))
        if route is RouteKind.SAGEMAKER:
            return self._json_11("SageMaker", sagemaker.CONTENT_TYPE, target, request_id,
                                 lambda: sagemaker.handle(self.service, target, body))
        try:
            if route is RouteKind.CONTROL:
                result = control.handle(self.service, method, path, query, body)
            else:
                result = self._operation(method, path, query, body)
            return 200, json.dumps(result, separators=(",", ":")).encode(), [_JSON, (b"x-amzn-requestid", request_id)]
        except ApiError as error:
            return error.status, _error_body(error), [_JSON, (b"x-amzn-requestid", request_id),
                                                      (b"x-amzn-errortype", error.code.encode())]
        except Exception as error:  # a bug: answered as AWS does (ServerException), logged with its traceback
            log.exception("internal error on %s %s", method, path)
            failure = ApiError(f"Internal error in batch-quota serve: {type(error).__name__}: {error}",
                               "ServerException", 500)
            return 500, _error_body(failure), [_JSON, (b"x-amzn-requestid", request_id),
                                               (b"x-amzn-errortype", b"ServerException")]

    def _rehearsal(self, method: str, path: str, query: bytes, body: bytes, target: str, authorization: str,
                   host: str, request_id: bytes) -> tuple[int, bytes, Headers]:
        """STS, SSM, S3, CloudFormation or CloudWatch Logs (``rehearsal.cloud``), after the simulator caught up;
        a bug is answered 500 in the service's error shape and logged with its traceback."""
        service = scope_service(authorization)
        try:
            self.service.catch_up()
            answer = self.service.rehearsal.handle(service, method, path.split("?", 1)[0], query, body, host, target)
            return answer.status, answer.body, answer.headers
        except Exception as error:  # a bug
            log.exception("internal error on %s %s %s", service, method, path)
            failure = ApiError(f"Internal error in batch-quota serve: {type(error).__name__}: {error}",
                               "InternalFailure", 500)
            return 500, _error_body(failure), [_JSON, (b"x-amzn-requestid", request_id)]

    def _json_11(self, service: str, content_type: bytes, target: str, request_id: bytes,
                 handle: Callable[[], Output]) -> tuple[int, bytes, Headers]:
        """A JSON 1.1 request of another service (CloudTrail, SageMaker) after the simulator caught up; its errors
        in that service's shape, a bug as its ``InternalFailure``."""
        kind = (b"content-type", content_type)
        try:
            self.service.catch_up()
            result = handle()
            return 200, json.dumps(result, separators=(",", ":")).encode(), [kind, (b"x-amzn-requestid", request_id)]
        except ApiError as error:
            return error.status, _error_body(error), [kind, (b"x-amzn-requestid", request_id)]
        except Exception as error:  # a bug: answered as the service does, logged with its traceback
            log.exception("internal error on %s %s", service, target)
            failure = ApiError(f"Internal error in batch-quota serve: {type(error).__name__}: {error}",
                               "InternalFailure", 500)
            return 500, _error_body(failure), [kind, (b"x-amzn-requestid", request_id)]

    def too_large(self, size: int) -> tuple[int, bytes, Headers]:
        error = ApiError(f"The request body is {size} bytes: batch-quota serve reads at most {MAX_BODY_BYTES}",
                         "ClientException", 413)
        return error.status, _error_body(error), [_JSON, (b"x-amzn-errortype", error.code.encode())]

    def _operation(self, method: str, path: str, query: bytes, body: bytes) -> Output:
        found = self.router.match(method, path)
        if found is None:
            if self.router.known_path(path):
                raise client_error(f"{method} is not allowed on {path}")
            raise client_error(f"No AWS Batch operation at {method} {path}")
        operation, labels = found
        if operation.name not in HANDLERS:
            raise client_error(f"Operation {operation.name} is not supported by batch-quota serve "
                               "(it serves service environments, quota shares and service jobs)")
        if operation.name == "SubmitServiceJob" and limits.SUBMIT_REQUEST_BYTES.above(len(body)):
            raise client_error(f"The SubmitServiceJob request is {len(body)} bytes: AWS accepts at most "
                               f"{limits.SUBMIT_REQUEST_BYTES.maximum}")
        params = parse_request(operation, labels, query, body)
        return self.service.call(operation.name, params)


def _age_heap() -> None:
    """Keep the cyclic garbage collector's full passes short: they scan every tracked object, and job
    records live as long as the server (100,000 jobs made a full pass take hundreds of milliseconds, the
    p99 of every request around it). Young cycles are collected, then the survivors are frozen: later
    passes scan only what came since. Cost: a cycle that outlives a young collection is kept."""
    gc.collect(1)
    gc.freeze()


def refused(refusal: Refusal, route: RouteKind) -> tuple[int, bytes, Headers]:
    """The guard's answer: 403 (401 for a missing or wrong control token) in the shape of the route's API."""
    kind = refusal.kind
    error = ApiError(refusal.message, kind.code, kind.status)
    content_type = (b"content-type", cloudtrail.CONTENT_TYPE) if route in (RouteKind.CLOUDTRAIL,
                                                                          RouteKind.SAGEMAKER) else _JSON
    headers = [content_type, (b"x-amzn-errortype", kind.code.encode())]
    if kind is RefusalKind.TOKEN:
        headers.append((b"www-authenticate", b'Bearer realm="batch-quota serve"'))
    return error.status, _error_body(error), headers


def _error_body(error: ApiError) -> bytes:
    return json.dumps({"__type": error.code, "message": error.message}).encode()

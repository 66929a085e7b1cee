"""A small AWS Batch endpoint on 127.0.0.1 that throttles on demand, for retry tests over real HTTP.

The Stubber answers before botocore's retry logic runs, so throttling is tested here:
requests go through botocore's HTTP stack, retry handler and parsers. Routes and
methods come from the botocore model (``http.requestUri``); errors are rest-json
(``x-amzn-ErrorType`` header and ``__type`` body), as AWS sends them.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import botocore.session

MODEL = botocore.session.get_session().get_service_model("batch")
#: ``(method, path) -> operation`` for the POST operations (the tag operations take the ARN in the path).
ROUTES = {(MODEL.operation_model(name).http["method"], MODEL.operation_model(name).http["requestUri"]): name
          for name in MODEL.operation_names if "{" not in MODEL.operation_model(name).http["requestUri"]}

Handler = Callable[[dict], dict]


class LoopbackBatch:
    """``with LoopbackBatch(handlers) as server:`` then point a client at ``server.url``.

    ``handlers`` maps an operation name to a function of the request body returning the response;
    ``throttle(operation, times, when=...)`` makes the next matching requests answer 429 first.
    """

    def __init__(self, handlers: dict[str, Handler]):
        self.handlers = handlers
        self.requests: Counter[str] = Counter()
        self.throttled: Counter[str] = Counter()
        self._throttles: list[list[Any]] = []
        self._lock = threading.Lock()
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                operation = ROUTES.get(("POST", self.path.split("?")[0]))
                length = int(self.headers.get("Content-Length") or 0)
                self._send(*outer._answer(operation, json.loads(self.rfile.read(length) or b"{}")))

            def do_GET(self) -> None:  # ListTagsForResource: GET /v1/tags/{resourceArn}
                path = self.path.split("?")[0]
                operation = "ListTagsForResource" if path.startswith("/v1/tags/") else None
                self._send(*outer._answer(operation, {"resourceArn": unquote(path[len("/v1/tags/"):])}))

            def _send(self, status: int, payload: dict, headers: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def throttle(self, operation: str, times: int, when: Callable[[dict], bool] = lambda body: True) -> None:
        self._throttles.append([operation, times, when])

    def _answer(self, operation: str | None, body: dict) -> tuple[int, dict, dict]:
        with self._lock:
            self.requests[operation or "?"] += 1
            for rule in self._throttles:
                if rule[0] == operation and rule[1] > 0 and rule[2](body):
                    rule[1] -= 1
                    self.throttled[operation] += 1
                    return 429, {"__type": "TooManyRequestsException", "message": "Too Many Requests"}, {
                        "x-amzn-ErrorType": "TooManyRequestsException"}
        handler = self.handlers.get(operation or "")
        if handler is None:
            return 400, {"__type": "ClientException", "message": f"unsupported: {operation}"}, {
                "x-amzn-ErrorType": "ClientException"}
        return 200, handler(body), {}

    def __enter__(self) -> LoopbackBatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

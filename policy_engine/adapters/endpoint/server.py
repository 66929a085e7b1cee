"""Running the endpoint with uvicorn (httptools parser, uvloop where available): in the foreground for
``batch-quota serve``, or in a background thread for tests and the ``batch_endpoint`` fixture."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from policy_engine.adapters.endpoint.app import EndpointApp
from policy_engine.adapters.endpoint.guard import GuardPolicy
from policy_engine.adapters.endpoint.http_head import BoundedHttpToolsProtocol
from policy_engine.adapters.endpoint.service import Service


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (``port`` 0: a free one), bound before uvicorn starts so the URL is known."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _loop() -> str:
    try:
        import uvloop  # noqa: F401
    except ImportError:  # pragma: no cover - Windows
        return "asyncio"
    return "uvloop"


def guard_for(sock: socket.socket, host: str, allowed_hosts: tuple[str, ...] = (),
              token: str | None = None) -> GuardPolicy:
    """The request guard of a server listening on ``sock`` (asked for as ``host``)."""
    return GuardPolicy.of(sock.getsockname()[0], host, allowed_hosts, token)


def config(service: Service, guard: GuardPolicy, log_level: str = "warning") -> uvicorn.Config:
    return uvicorn.Config(EndpointApp(service, guard), loop=_loop(), http=BoundedHttpToolsProtocol, lifespan="on",
                          access_log=False, log_level=log_level, timeout_graceful_shutdown=2)


@dataclass
class RunningEndpoint:
    """An endpoint serving from a background thread; ``stop()`` shuts it down and frees the port."""

    url: str
    service: Service
    server: uvicorn.Server
    thread: threading.Thread
    sock: socket.socket
    #: the control API's bearer token, when the server requires one (``--token``)
    token: str | None = None

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        if self.service.store is not None:
            self.service.store.close()

    # --- the control API, for tests ---------------------------------------------------------

    def control(self, method: str, path: str, body: bytes = b"",
                content_type: str = "application/json") -> dict[str, Any]:
        """One control API call, with what the request guard asks of it (a JSON or YAML content type, the token)."""
        headers = {"Content-Type": content_type}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(f"{self.url}/_batch-quota/{path}", data=body or None, method=method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise ValueError(json.loads(error.read()).get("message", str(error))) from None

    def advance(self, seconds: float) -> float:
        """Move the simulated clock ``seconds`` ahead (jobs finish, waiting jobs start); returns the clock."""
        return self.control("POST", f"clock/advance?seconds={seconds}")["seconds"]

    def clock(self) -> float:
        return self.control("GET", "clock")["seconds"]

    def reset(self) -> None:
        """Start over: the startup topology, no jobs, clock 0."""
        self.control("POST", "reset")

    def load_topology(self, topology: str | Path | dict[str, Any]) -> None:
        """Start over with a topology: a file path, or its data as a dict."""
        if isinstance(topology, dict):
            self.control("POST", "topology", json.dumps(topology).encode())
        else:
            self.control("POST", "topology", Path(topology).read_bytes(), "application/yaml")

    def export(self) -> dict[str, Any]:
        return self.control("GET", "export")

    def __enter__(self) -> RunningEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_in_thread(service: Service, host: str = "127.0.0.1", port: int = 0, allowed_hosts: tuple[str, ...] = (),
                    token: str | None = None) -> RunningEndpoint:
    sock = bind(host, port)
    server = uvicorn.Server(config(service, guard_for(sock, host, allowed_hosts, token)))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="batch-quota-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("batch-quota serve did not start")
        time.sleep(0.005)
    return RunningEndpoint(url_of(sock), service, server, thread, sock, token)

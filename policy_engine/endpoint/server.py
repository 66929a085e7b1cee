"""Running the endpoint with uvicorn (httptools parser, uvloop where available): in the foreground for
``batch-quota serve``, or in a background thread for tests and the ``batch_endpoint`` fixture."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn

from policy_engine.endpoint.app import EndpointApp
from policy_engine.endpoint.service import Service


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


def config(service: Service, log_level: str = "warning") -> uvicorn.Config:
    return uvicorn.Config(EndpointApp(service), loop=_loop(), http="httptools", lifespan="on", access_log=False,
                          log_level=log_level, timeout_graceful_shutdown=2)


@dataclass
class RunningEndpoint:
    """An endpoint serving from a background thread; ``stop()`` shuts it down and frees the port."""

    url: str
    service: Service
    server: uvicorn.Server
    thread: threading.Thread
    sock: socket.socket

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        if self.service.store is not None:
            self.service.store.close()

    def __enter__(self) -> RunningEndpoint:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_in_thread(service: Service, host: str = "127.0.0.1", port: int = 0) -> RunningEndpoint:
    sock = bind(host, port)
    server = uvicorn.Server(config(service))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="batch-quota-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("batch-quota serve did not start")
        time.sleep(0.005)
    return RunningEndpoint(url_of(sock), service, server, thread, sock)

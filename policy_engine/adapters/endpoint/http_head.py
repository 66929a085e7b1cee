"""uvicorn's httptools protocol with a bound on the request head (request line and headers).

llhttp, the parser under httptools, bounds nothing: a header of hundreds of kilobytes (or of gigabytes,
arriving in pieces) was read whole and answered. Here the head's bytes are counted as they arrive and as the parser
hands the line and each header over; past ``MAX_HEAD_BYTES`` the request is answered HTTP 431 in AWS's error
shape and the connection closed, before any of it reaches the application.
"""

from __future__ import annotations

import json

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: The largest request line plus headers read, in bytes (docs/endpoint.md): about 80 KB, far above what boto3,
#: the AWS CLI or a browser send (a few KB), and the bound most HTTP servers keep to.
MAX_HEAD_BYTES = 80 * 1024
#: What a refused head is answered with.
HEAD_TOO_LARGE = 431


class HeadTooLarge(Exception):
    """Raised from a parser callback: httptools then stops parsing and the protocol sends the 431."""


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` that refuses a request whose head passes ``MAX_HEAD_BYTES``."""

    #: the head's bytes the parser handed over (the line and complete headers), and the bytes received while a
    #: head was still incomplete (what the parser holds before a callback sees it): each bounded on its own
    _parsed = 0
    _received = 0
    _in_head = False
    _head_refused = False

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._parsed = self._received = 0
        self._in_head = True

    def _count(self, size: int) -> None:
        self._parsed += size
        if self._parsed > MAX_HEAD_BYTES:
            self._head_refused = True
            raise HeadTooLarge

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)  # ": " and CRLF
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # a header still arriving is held by the parser before any callback sees it: count what came
        if self._in_head and not self._head_refused and not self.transport.is_closing():
            self._received += len(data)
            if self._received > MAX_HEAD_BYTES:
                self._head_refused = True
                self.send_400_response("")

    def send_400_response(self, msg: str) -> None:
        if not self._head_refused:
            super().send_400_response(msg)
            return
        body = json.dumps({"__type": "ClientException",
                           "message": f"The request line and headers pass {MAX_HEAD_BYTES} bytes, the most "
                                      "batch-quota serve reads"}).encode()
        self.transport.write(b"".join([
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
            b"content-type: application/json\r\n",
            b"x-amzn-errortype: ClientException\r\n",
            b"content-length: " + str(len(body)).encode() + b"\r\n",
            b"connection: close\r\n\r\n", body]))
        self.transport.close()

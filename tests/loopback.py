"""An HTTP server on a free loopback port, served from a daemon thread inside a ``with``."""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class JSONHandler(BaseHTTPRequestHandler):
    """A request handler that answers with JSON (or given bytes) in one call."""

    def _send(
        self,
        status: int,
        body: Any,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        # the client may have given up waiting (a timeout under test)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(payload)


class LoopbackServer:
    url_path = ""
    """What ``url`` appends to ``http://127.0.0.1:PORT``."""

    def _listen(
        self,
        handler: type[BaseHTTPRequestHandler],
        server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer,
    ) -> None:
        self.server = server_class(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.url_path}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

"""An HTTP server on a free loopback port, served from a daemon thread inside a ``with``."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


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

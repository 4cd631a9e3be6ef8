"""An HTTP server on a free loopback port, served from a daemon thread inside a ``with``."""

from __future__ import annotations

import contextlib
import importlib
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
        # Stopping waits for the loop's next look at its flag: every 10 ms, not the default 0.5 s.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.url_path}"

    def __enter__(self) -> Self:
        self._sdk_waits = _set_sdk_retry_waits(QUICK_RETRY_WAITS)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        _set_sdk_retry_waits(self._sdk_waits)


QUICK_RETRY_WAITS = {"INITIAL_RETRY_DELAY": 0.005, "MAX_RETRY_DELAY": 0.08}
"""The model SDKs wait 0.5 s, then twice as long, up to 8 s, between retries that no
``retry-after`` header times; while a loopback server runs, the SDKs in this process wait a
hundredth of that, so a test of retries that run out takes a second, not twenty. Headers are
honoured as they are, and a ``tsq`` in a process of its own waits as a user's does."""


def _set_sdk_retry_waits(waits: dict[str, float]) -> dict[str, float]:
    """Set the SDKs' retry waits (the same for both); return what they were."""
    before: dict[str, float] = {}
    for sdk in ("anthropic", "openai"):
        client = importlib.import_module(f"{sdk}._base_client")
        for name, seconds in waits.items():
            before[name] = getattr(client, name)
            setattr(client, name, seconds)
    return before

"""A real OTLP/HTTP traces receiver on loopback that decodes protobuf and can misbehave."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from loopback import LoopbackServer
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Behaviour:
    status: int = 200
    delay: float = 0.0
    rejected_spans: int = 0
    fail_after: int | None = None  # answer 503 from this request on
    error_body: bytes = b"receiver says no\n"
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (timeout tests) is expected; anything else is raised."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Receiver(LoopbackServer):
    url_path = "/v1/traces"

    def __init__(self) -> None:
        self.behaviour = Behaviour()
        behaviour = self.behaviour

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if behaviour.delay:
                    time.sleep(behaviour.delay)
                status = behaviour.status
                if (
                    behaviour.fail_after is not None
                    and len(behaviour.requests) >= behaviour.fail_after
                ):
                    status = 503
                if status != 200:
                    self.send_response(status)
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()
                    self.wfile.write(behaviour.error_body)
                    return
                behaviour.requests.append(ExportTraceServiceRequest.FromString(body))
                behaviour.headers.append(dict(self.headers))
                response = ExportTraceServiceResponse()
                if behaviour.rejected_spans:
                    response.partial_success.rejected_spans = behaviour.rejected_spans
                payload = response.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self._listen(Handler, _QuietServer)

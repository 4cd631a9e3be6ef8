"""Opt-in sending: sanitize, preview, then POST OTLP/HTTP protobuf, one request per session.

Nothing is sent unless a person asks (the CLI asks before sending). One request per session
means a failure part-way reports exactly what the endpoint accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import httpx
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from pydantic import BaseModel, Field

from analysis.export._otlp import export_counts, export_request, request_to_otlp_json
from analysis.export._sanitize import DEFAULT_MAX_CHARS, Sanitizer
from analysis.models import Judgment, Session, ToolCatalog

PROTOBUF = "application/x-protobuf"


class PreparedSession(BaseModel):
    session_id: str
    traces: int
    spans: int
    steps: int
    evaluations: int
    payload: bytes


class SendPreview(BaseModel):
    sessions: int
    turns: int
    spans: int
    steps: int
    evaluations: int
    bytes: int
    redactions: dict[str, int]


class SendOutcome(BaseModel):
    sessions_accepted: int = 0
    traces_accepted: int = 0
    spans_rejected: int = 0
    error: str | None = None
    messages: list[str] = Field(default_factory=list)


def _redacted(judgments: Iterable[Judgment], sanitizer: Sanitizer) -> list[Judgment]:
    """The ``full`` judgments (the only ones exported), their reasoning redacted: a judge
    quotes the transcript it read."""
    return [
        judgment.model_copy(
            update={
                "votes": [
                    vote.model_copy(update={"reasoning": sanitizer.text(vote.reasoning)})
                    for vote in judgment.votes
                ]
            }
        )
        for judgment in judgments
        if judgment.condition == "full"
    ]


def prepare(
    sessions: Sequence[Session],
    live: ToolCatalog | None = None,
    max_chars: int | None = DEFAULT_MAX_CHARS,
    judgments: Sequence[Judgment] = (),
) -> tuple[list[PreparedSession], SendPreview]:
    """Sanitize and encode every session, with its judgments attached; nothing is sent here."""
    sanitizer = Sanitizer(max_chars)
    prepared = []
    for session in sessions:
        own = (j for j in judgments if j.session_id == session.session_id)
        request = export_request(
            [sanitizer.session(session)], live, judgments=_redacted(own, sanitizer)
        )
        counts = export_counts(request_to_otlp_json(request))
        prepared.append(
            PreparedSession(
                session_id=session.session_id,
                traces=len(session.turns),
                spans=counts.spans,
                steps=counts.steps,
                evaluations=counts.evaluations,
                payload=request.SerializeToString(deterministic=True),
            )
        )
    preview = SendPreview(
        sessions=len(prepared),
        turns=sum(p.traces for p in prepared),
        spans=sum(p.spans for p in prepared),
        steps=sum(p.steps for p in prepared),
        evaluations=sum(p.evaluations for p in prepared),
        bytes=sum(len(p.payload) for p in prepared),
        redactions=sanitizer.summary(),
    )
    return prepared, preview


def endpoint_problem(endpoint: str) -> str | None:
    """Why ``endpoint`` cannot be sent to, in one sentence, or None when it can."""
    try:
        url = httpx.URL(endpoint)
    except httpx.InvalidURL as error:
        return f"{endpoint!r} is not a valid endpoint URL ({error})"
    if url.scheme not in ("http", "https") or not url.host:
        return f"{endpoint!r} is not an http:// or https:// endpoint URL"
    return None


def _printable(text: str, limit: int = 200) -> str:
    """The first line of a server's answer, control characters blanked, at most ``limit``."""
    lines = text.strip().splitlines()
    first = "".join(ch if ch.isprintable() else " " for ch in lines[0]) if lines else ""
    return first[:limit] + ("…" if len(first) > limit else "")


def _failure(error: Exception | httpx.Response, endpoint: str) -> str:
    if isinstance(error, httpx.Response):
        detail = _printable(error.text)
        kind = "rejected the request" if error.status_code < 500 else "failed"
        return f"{endpoint} {kind} with HTTP {error.status_code}" + (
            f": {detail}" if detail else ""
        )
    if isinstance(error, httpx.TimeoutException):
        return f"{endpoint} did not answer in time"
    if isinstance(error, httpx.ConnectError):
        return f"could not connect to {endpoint} (connection refused or host unreachable)"
    return f"sending to {endpoint} failed ({type(error).__name__}: {_printable(str(error))})"


def send(
    prepared: Sequence[PreparedSession],
    endpoint: str,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> SendOutcome:
    """POST each session's traces; stop at the first failure and say what was accepted."""
    outcome = SendOutcome()
    problem = endpoint_problem(endpoint)
    if problem is not None:
        outcome.error = problem
        return outcome
    request_headers = {"Content-Type": PROTOBUF, **(headers or {})}
    with httpx.Client(timeout=timeout) as client:
        for item in prepared:
            try:
                response = client.post(endpoint, content=item.payload, headers=request_headers)
            except httpx.HTTPError as error:
                outcome.error = _failure(error, endpoint)
                return outcome
            if not response.is_success:
                outcome.error = _failure(response, endpoint)
                return outcome
            rejected = _rejected_spans(response)
            outcome.spans_rejected += rejected
            outcome.sessions_accepted += 1
            outcome.traces_accepted += item.traces if rejected == 0 else 0
            if rejected:
                outcome.messages.append(
                    f"{item.session_id}: {rejected} spans rejected by the endpoint"
                )
    return outcome


def _rejected_spans(response: httpx.Response) -> int:
    """OTLP partial success: the endpoint may accept the request but reject some spans."""
    if PROTOBUF not in response.headers.get("content-type", "") or not response.content:
        return 0
    try:
        parsed = ExportTraceServiceResponse.FromString(response.content)
    except DecodeError:  # a body that is not the OTLP response says nothing about rejections
        return 0
    return int(parsed.partial_success.rejected_spans)

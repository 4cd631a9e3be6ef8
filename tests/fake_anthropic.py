"""A local server that speaks the Anthropic Messages, Models and Batches APIs, and misbehaves.

The real SDK talks to it over loopback. Its "judgement" is a fixed rule on the prompt, so a
test knows what each vote will be without asking the code under test.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from loopback import JSONHandler, LoopbackServer

API_KEY = "test-key"
MODELS = [
    {
        "type": "model",
        "id": "claude-judge-4-5",
        "display_name": "Claude Judge 4.5",
        "created_at": "2026-01-01T00:00:00Z",
    },
    {
        "type": "model",
        "id": "claude-haiku-judge-3",
        "display_name": "Claude Haiku Judge 3",
        "created_at": "2026-01-01T00:00:00Z",
    },
]
NOT_JSON_FAULTS = ("html_body", "truncated_json", "foreign_json")
"""Answers HTTP 200 whose body is not the API's JSON, as a proxy or a cut connection gives them."""
LOGIN_PAGE = b"<html>login</html>"


def not_json(fault: str, answer: Any) -> tuple[bytes, str]:
    """The body and content type an endpoint sends with HTTP 200 for ``fault``: a proxy's
    login page (``html_body``, text/html), the API's ``answer`` cut off halfway
    (``truncated_json``), or JSON of something else (``foreign_json``: a proxy's own)."""
    if fault == "html_body":
        return LOGIN_PAGE, "text/html; charset=utf-8"
    if fault == "truncated_json":
        whole = json.dumps(answer).encode()
        return whole[: len(whole) // 2], "application/json"
    return json.dumps({"status": "login required"}).encode(), "application/json"


RIGHT_TOOL = {
    "contents of": "Read",
    "git branch": "Bash",
    "Delete this stale lock": "Bash",
    "How many Python files": "Glob",
}


def rule_verdict(prompt: str) -> str:
    """Menu of one → correct; no call in the output → incorrect; else the table decides."""
    tools = int(re.search(r"## Available tools \((\d+)\)", prompt).group(1))
    output = prompt.split("## Model output", 1)[1]
    called = re.findall(r"^(\w+)\(", output, re.M)
    if not called:
        return "incorrect"
    if tools == 1:
        return "correct"
    ask = prompt.split("## Current user request", 1)[1].split("##", 1)[0]
    right = next((tool for key, tool in RIGHT_TOOL.items() if key in ask), None)
    return "correct" if right is None or right in called else "incorrect"


@dataclass
class Script:
    """Faults served in order, one per /v1/messages request, before normal answers resume."""

    faults: list[str] = field(default_factory=list)
    delay: float = 0.0
    split_ask: str | None = None  # this ask gets votes correct, incorrect, correct, ...
    retired: set[str] = field(default_factory=set)  # listed, but messages answer 404
    messages: list[dict[str, Any]] = field(default_factory=list)
    request_times: list[float] = field(default_factory=list)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    polls: int = 0
    _split_counter: int = 0
    contrary_field: str | None = None  # adjudications of this field go against the rule
    slow_seconds: float = 3.0  # how long a "slow" fault takes to answer
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool name -> its input
    policies: list[Policy] = field(default_factory=list)
    """Rules a judge's instructions may state: where the system prompt holds one, its verdict
    replaces the table's on the outputs it matches."""
    not_json_for: dict[str, str] = field(default_factory=dict)
    """Text of a prompt -> one of ``NOT_JSON_FAULTS``: every /v1/messages request whose prompt
    holds the text is answered so (HTTP 200), ``faults`` left for the others."""
    models_fault: str | None = None
    """One of ``NOT_JSON_FAULTS``: how /v1/models answers (None: as the API does)."""


@dataclass
class Policy:
    """\"If the rubric says ``marker``, a step whose output matches ``output`` is ``verdict``.\""""

    marker: str
    output: str
    verdict: str


def decision_rule(prompt: str, contrary_field: str | None) -> dict[str, str]:
    """Side with what the rule proposes (the human when it proposes nothing), cause as suggested;
    for ``contrary_field``, the other side."""
    field = re.search(r"^## Field: (\w+)", prompt, re.M).group(1)
    proposed = re.search(r"^Rule proposes: (\w+)", prompt, re.M).group(1)
    side = proposed if proposed in ("human", "council") else "human"
    if field == contrary_field:
        side = "council" if side == "human" else "human"
    cause = re.search(r"^Suggested cause: (\w+)", prompt, re.M).group(1)
    return {
        "side": side,
        "cause": cause if cause != "none" else "definition_mismatch",
        "note": f"rule proposed {proposed}",
    }


def prompt_of(body: dict[str, Any]) -> str:
    """The user message's text, whether sent as a string or as content blocks."""
    content = body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(block["text"] for block in content if block.get("type") == "text")


def _tool_of(body: dict[str, Any]) -> str:
    """The name of the tool a request forces (malformed answers still call it)."""
    return body.get("tools", [{}])[0].get("name", "record_verdict")


def _message(
    model: str,
    verdict_input: dict[str, Any] | None,
    tool: str = "record_verdict",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    content = (
        [{"type": "tool_use", "id": "toolu_v", "name": tool, "input": verdict_input}]
        if verdict_input is not None
        else [{"type": "text", "text": "I think it was fine."}]
    )
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 1000, "output_tokens": 100},
    }


class FakeAnthropic(LoopbackServer):
    url_path = ""

    def __init__(self) -> None:  # noqa: C901 (the request handler dispatches every route)
        self.script = Script()
        self.cached_prefixes: set[str] = set()
        self.requests_seen = 0
        self._cache_lock = threading.Lock()
        script = self.script
        outer = self

        class Handler(JSONHandler):
            def _error(
                self, status: int, kind: str, message: str, headers: dict[str, str] | None = None
            ) -> None:
                self._send(
                    status, {"type": "error", "error": {"type": kind, "message": message}}, headers
                )

            def _authorized(self) -> bool:
                bearer = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if API_KEY not in (self.headers.get("x-api-key"), bearer):
                    self._error(401, "authentication_error", "invalid x-api-key")
                    return False
                return True

            def do_GET(self) -> None:
                outer.requests_seen += 1
                if not self._authorized():
                    return
                if self.path.startswith("/v1/models"):
                    models = {
                        "data": MODELS,
                        "has_more": False,
                        "first_id": MODELS[0]["id"],
                        "last_id": MODELS[-1]["id"],
                    }
                    if script.models_fault:
                        payload, kind = not_json(script.models_fault, models)
                        self._send(200, payload, content_type=kind)
                    else:
                        self._send(200, models)
                elif match := re.match(r"^/v1/messages/batches/([\w-]+)/results", self.path):
                    batch = script.batches[match.group(1)]
                    lines = "\n".join(json.dumps(r) for r in batch["results"]) + "\n"
                    self.send_response(200)
                    self.send_header("Content-Type", "application/x-jsonl")
                    self.end_headers()
                    self.wfile.write(lines.encode())
                elif match := re.match(r"^/v1/messages/batches/([\w-]+)$", self.path):
                    script.polls += 1
                    batch = script.batches[match.group(1)]
                    batch["polls"] = batch.get("polls", 0) + 1  # in progress until polled once
                    self._send(200, outer._batch_body(batch, ended=True))
                else:
                    self._error(404, "not_found_error", f"no route {self.path}")

            def do_POST(self) -> None:  # noqa: C901 (one branch per scripted fault)
                outer.requests_seen += 1
                body = json.loads(
                    self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"
                )
                if not self._authorized():
                    return
                if self.path == "/v1/messages/batches":
                    self._send(200, outer._create_batch(body))
                    return
                if self.path != "/v1/messages":
                    self._error(404, "not_found_error", f"no route {self.path}")
                    return
                script.messages.append(body)
                script.request_times.append(time.monotonic())
                if body.get("model") in script.retired:
                    self._error(404, "not_found_error", f"model: {body['model']}")
                    return
                prompt = prompt_of(body)
                fault = next(
                    (f for text, f in script.not_json_for.items() if text in prompt), None
                ) or (script.faults.pop(0) if script.faults else None)
                if fault in NOT_JSON_FAULTS:
                    payload, kind = not_json(fault, outer._answer(body))
                    self._send(200, payload, content_type=kind)
                elif fault == "overloaded":
                    self._error(529, "overloaded_error", "Overloaded")
                elif fault == "rate_limited":
                    self._error(429, "rate_limit_error", "slow down", {"retry-after": "1"})
                elif fault == "server_error":
                    self._error(500, "api_error", "boom")
                elif fault == "slow":
                    time.sleep(script.slow_seconds)
                    self._send(200, outer._answer(body))
                elif fault == "no_verdict":
                    self._send(200, _message(body["model"], None))
                elif fault == "bad_verdict":
                    bad = {"reasoning": "hmm", "verdict": "maybe"}
                    self._send(200, _message(body["model"], bad, tool=_tool_of(body)))
                elif fault == "missing_fields":
                    self._send(
                        200, _message(body["model"], {"verdict": "correct"}, tool=_tool_of(body))
                    )
                else:
                    if script.delay:
                        time.sleep(script.delay)
                    self._send(200, outer._answer(body))

            def log_message(self, *args: object) -> None:
                pass

        self._listen(Handler)

    def _verdict(self, body: dict[str, Any]) -> str:
        prompt = prompt_of(body)
        system = body.get("system") or ""
        output = prompt.split("## Model output", 1)[-1]
        for policy in self.script.policies:
            if policy.marker in system and re.search(policy.output, output, re.M):
                return policy.verdict
        if (
            self.script.split_ask
            and self.script.split_ask in prompt
            and "## Available tools (1)" not in prompt
        ):
            self.script._split_counter += 1
            return "correct" if self.script._split_counter % 2 else "incorrect"
        return rule_verdict(prompt)

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        if (tool := _tool_of(body)) in self.script.answers:
            return _message(body["model"], self.script.answers[tool], tool=tool)
        if body.get("tools", [{}])[0].get("name") == "record_decision":
            prompt = prompt_of(body)
            decision = decision_rule(prompt, self.script.contrary_field)
            return _message(body["model"], decision, tool="record_decision")
        verdict = self._verdict(body)
        return _message(
            body["model"],
            {"reasoning": f"Step by step: the choice was {verdict}.", "verdict": verdict},
            usage=self._usage(body),
        )

    def _usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Token counts as the API reports them, prompt caching included: the prefix up to a
        ``cache_control`` block (tools, system, then message blocks) is written on its first
        request and read afterwards, when it is at least 1,024 tokens (4 characters each)."""
        blocks = body["messages"][0]["content"]
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        marked = [i for i, block in enumerate(blocks) if "cache_control" in block]
        head = json.dumps(body.get("tools")) + json.dumps(body.get("system"))
        cut = marked[-1] + 1 if marked else 0
        prefix = head + "".join(block["text"] for block in blocks[:cut])
        rest = "".join(block["text"] for block in blocks[cut:])
        usage = {"output_tokens": 100, "cache_creation_input_tokens": 0}
        usage["cache_read_input_tokens"] = 0
        if marked and len(prefix) // 4 >= 1024:
            with self._cache_lock:
                key = hashlib.sha256(prefix.encode()).hexdigest()
                kind = (
                    "cache_read_input_tokens"
                    if key in self.cached_prefixes
                    else ("cache_creation_input_tokens")
                )
                self.cached_prefixes.add(key)
            usage[kind] = len(prefix) // 4
            usage["input_tokens"] = len(rest) // 4
        else:
            usage["input_tokens"] = (len(prefix) + len(rest)) // 4
        return usage

    def _create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        batch_id = f"msgbatch_{len(self.script.batches) + 1}"
        results = []
        for request in body["requests"]:
            self.script.messages.append(request["params"])
            fault = self.script.faults.pop(0) if self.script.faults else None
            if fault in ("no_verdict", "bad_verdict"):
                message = _message(request["params"]["model"], None)
            else:
                message = self._answer(request["params"])
            results.append(
                {
                    "custom_id": request["custom_id"],
                    "result": {"type": "succeeded", "message": message},
                }
            )
        self.script.batches[batch_id] = {"id": batch_id, "results": results}
        return self._batch_body(self.script.batches[batch_id], ended=False)

    @staticmethod
    def _batch_body(batch: dict[str, Any], ended: bool) -> dict[str, Any]:
        count = len(batch["results"])
        return {
            "id": batch["id"],
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else count,
                "succeeded": count if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "ended_at": "2026-01-01T00:00:00Z" if ended else None,
            "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-02T00:00:00Z",
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"/v1/messages/batches/{batch['id']}/results" if ended else None,
        }

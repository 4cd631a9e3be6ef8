"""A local server that speaks OpenAI's Chat Completions and Models APIs, and misbehaves.

The real ``openai`` SDK talks to it over loopback, as it would to OpenAI, vLLM, Ollama or
llama.cpp's server. Its "judgement" is the same fixed rule on the prompt as the fake Anthropic
server's, so a test knows what each vote will be. Fault names match ``fake_anthropic``'s where
they mean the same thing, so one test can script both servers.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from fake_anthropic import NOT_JSON_FAULTS, decision_rule, not_json, rule_verdict
from loopback import JSONHandler, LoopbackServer

API_KEY = "test-key"
MODELS = ["gpt-4o-judge", "gpt-4o-mini-judge", "models/gemini-2.5-flash-judge"]
"""As a models list gives them (Gemini's OpenAI-compatible endpoint writes ``models/ID``)."""


@dataclass
class Script:
    """Faults served in order, one per /v1/chat/completions request, then normal answers.

    ``rate_limited`` (429, retry-after: 1), ``server_error`` (500), ``unavailable`` (503,
    retry-after: 0), ``slow`` (answers after ``slow_seconds``), ``no_verdict`` (text, no tool
    call), ``bad_arguments`` (the call's arguments are not JSON), ``bad_verdict`` (a verdict
    outside the schema), ``missing_fields``, ``wrong_tool`` (another function called).
    """

    faults: list[str] = field(default_factory=list)
    retired: set[str] = field(default_factory=set)  # listed, but completions answer 404
    require_key: bool = True  # False: a local server that takes any key, or none
    messages: list[dict[str, Any]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # the bearer token of every request
    request_times: list[float] = field(default_factory=list)
    slow_seconds: float = 3.0
    split_ask: str | None = None  # this ask gets votes correct, incorrect, correct, ...
    _split_counter: int = 0
    contrary_field: str | None = None  # adjudications of this field go against the rule
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool name -> arguments
    not_json_for: dict[str, str] = field(default_factory=dict)
    """Text of a prompt -> one of ``NOT_JSON_FAULTS``: every completion request whose prompt
    holds the text is answered so (HTTP 200), ``faults`` left for the others."""
    models_fault: str | None = None
    """One of ``NOT_JSON_FAULTS``: how /v1/models answers (None: as the API does)."""


def prompt_of(body: dict[str, Any]) -> str:
    """The user message's text, whether sent as a string or as content parts."""
    content = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


def system_of(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body["messages"] if m["role"] == "system"), "")


def tool_of(body: dict[str, Any]) -> str:
    """The function a request forces (malformed answers still call it)."""
    return body["tool_choice"]["function"]["name"]


def _completion(
    model: str, arguments: str | None, tool: str, usage: dict[str, Any]
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if arguments is None:
        message["content"] = "I think it was fine."
    else:
        message["tool_calls"] = [
            {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": arguments}}
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if arguments is not None else "stop",
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


class FakeOpenAI(LoopbackServer):
    url_path = "/v1"

    def __init__(self) -> None:
        self.script = Script()
        self.requests_seen = 0
        self.seen_systems: set[str] = set()
        self._lock = threading.Lock()
        outer = self

        class Handler(JSONHandler):
            def _error(
                self,
                status: int,
                message: str,
                kind: str,
                code: str | None = None,
                headers: dict[str, str] | None = None,
            ) -> None:
                error = {"message": message, "type": kind, "param": None, "code": code}
                self._send(status, {"error": error}, headers)

            def _authorized(self) -> bool:
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                outer.script.keys.append(key)
                if outer.script.require_key and key != API_KEY:
                    self._error(
                        401,
                        "Incorrect API key provided.",
                        "invalid_request_error",
                        "invalid_api_key",
                    )
                    return False
                return True

            def do_GET(self) -> None:
                outer.requests_seen += 1
                if not self._authorized() or outer._models_not_json(self):
                    return
                outer._get(self)

            def do_POST(self) -> None:
                outer.requests_seen += 1
                body = json.loads(
                    self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"
                )
                if not self._authorized():
                    return
                if self.path != "/v1/chat/completions":
                    self._error(404, f"no route {self.path}", "invalid_request_error")
                    return
                outer._complete(self, body)

            def log_message(self, *args: object) -> None:
                pass

        self._listen(Handler)

    def _models_not_json(self, handler: Any) -> bool:
        """Answer /v1/models with ``models_fault``'s body, if one is scripted."""
        fault = self.script.models_fault
        if not fault or handler.path.rstrip("/") != "/v1/models":
            return False
        models = {"object": "list", "data": [{"id": m} for m in MODELS]}
        payload, kind = not_json(fault, models)
        handler._send(200, payload, content_type=kind)
        return True

    @staticmethod
    def _get(handler: Any) -> None:
        if handler.path.rstrip("/") == "/v1/models":
            data = [
                {"id": model, "object": "model", "created": 0, "owned_by": "fake"}
                for model in MODELS
            ]
            handler._send(200, {"object": "list", "data": data})
        else:
            handler._error(404, f"no route {handler.path}", "invalid_request_error")

    def _complete(self, handler: Any, body: dict[str, Any]) -> None:
        """One /v1/chat/completions request: an unknown model is a 404, else the next fault."""
        self.script.messages.append(body)
        self.script.request_times.append(time.monotonic())
        model = body.get("model")
        known = {m.removeprefix("models/") for m in MODELS} - self.script.retired
        if model not in known:
            handler._error(
                404,
                f"The model `{model}` does not exist or you do not have access to it.",
                "invalid_request_error",
                "model_not_found",
            )
            return
        prompt = prompt_of(body)
        fault = next(
            (f for text, f in self.script.not_json_for.items() if text in prompt), None
        ) or (self.script.faults.pop(0) if self.script.faults else None)
        self._serve(handler, body, fault)

    def _serve(self, handler: Any, body: dict[str, Any], fault: str | None) -> None:
        model, tool = body["model"], tool_of(body)
        usage = self._usage(body)

        def answer(arguments: str | None, name: str = tool) -> None:
            handler._send(200, _completion(model, arguments, name, usage))

        if fault in NOT_JSON_FAULTS:
            good = _completion(model, json.dumps(self._answer(body)), tool, usage)
            payload, kind = not_json(fault, good)
            handler._send(200, payload, content_type=kind)
        elif fault == "rate_limited":
            handler._error(
                429, "Rate limit reached.", "requests", "rate_limit_exceeded", {"retry-after": "1"}
            )
        elif fault == "server_error":
            handler._error(500, "The server had an error.", "server_error")
        elif fault == "unavailable":
            handler._error(503, "Overloaded.", "server_error", None, {"retry-after": "0"})
        elif fault == "slow":
            time.sleep(self.script.slow_seconds)
            answer(json.dumps(self._answer(body)))
        elif fault == "no_verdict":
            answer(None)
        elif fault == "bad_arguments":
            answer('{"reasoning": "hmm", "verdict": "corr')
        elif fault == "bad_verdict":
            answer(json.dumps({"reasoning": "hmm", "verdict": "maybe"}))
        elif fault == "missing_fields":
            answer(json.dumps({"verdict": "correct"}))
        elif fault == "wrong_tool":
            answer(json.dumps(self._answer(body)), name="some_other_function")
        else:
            answer(json.dumps(self._answer(body)))

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        tool = tool_of(body)
        if tool in self.script.answers:
            return self.script.answers[tool]
        prompt = prompt_of(body)
        if tool == "record_decision":
            return decision_rule(prompt, self.script.contrary_field)
        verdict = self._verdict(prompt)
        return {"reasoning": f"Step by step: the choice was {verdict}.", "verdict": verdict}

    def _verdict(self, prompt: str) -> str:
        script = self.script
        if (
            script.split_ask
            and script.split_ask in prompt
            and "## Available tools (1)" not in prompt
        ):
            with self._lock:
                script._split_counter += 1
                return "correct" if script._split_counter % 2 else "incorrect"
        return rule_verdict(prompt)

    def _usage(self, body: dict[str, Any]) -> dict[str, Any]:
        """Tokens as Chat Completions reports them (4 characters each): prompt tokens include
        the cached ones; a system prompt seen before counts as cached (automatic caching)."""
        system = system_of(body)
        prompt_tokens = (len(system) + len(prompt_of(body))) // 4
        with self._lock:
            cached = len(system) // 4 if system in self.seen_systems else 0
            self.seen_systems.add(system)
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 100,
            "total_tokens": prompt_tokens + 100,
            "prompt_tokens_details": {"cached_tokens": cached},
        }

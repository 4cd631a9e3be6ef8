"""The model-call layer itself, with the real SDK against the local fake Anthropic server."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping

import pytest
from fake_anthropic import API_KEY, FakeAnthropic
from pydantic import BaseModel

from analysis.llm import (
    AnswerTokens,
    LLMClient,
    LLMConfig,
    LLMError,
    ModelInfo,
    Reply,
    RunStats,
    StructuredRequest,
    TextPart,
    tool_for,
)


class Number(BaseModel):
    value: int
    why: str


TOOL = tool_for(Number, "record_number", "Record the number and why.")
REQUEST = StructuredRequest(system="Pick a number.", prompt="Any number will do.", tool=TOOL)


@pytest.fixture
def fake():
    with FakeAnthropic() as server:
        server.script.answers = {"record_number": {"value": 7, "why": "lucky"}}
        yield server


def settings(fake, tmp_path, **overrides):
    values = {
        "model": "Claude Judge 4.5",
        "base_url": fake.url,
        "api_key": API_KEY,
        "max_retries": 3,
        "cache_dir": tmp_path / "cache",
    }
    return LLMConfig(**(values | overrides))


async def _ask(config, request=REQUEST, parse=Number, **kwargs):
    async with LLMClient(config) as client:
        await client.resolve_model()
        return await client.ask_structured(request, parse, **kwargs), client.stats


def ask(config, **kwargs):
    return asyncio.run(_ask(config, **kwargs))


def test_a_structured_answer_is_parsed_into_the_model(fake, tmp_path):
    answer, stats = ask(settings(fake, tmp_path))
    assert answer.value == Number(value=7, why="lucky")
    assert (answer.failure, answer.cached, answer.asked) == (None, False, 1)
    (body,) = fake.script.messages
    assert body["model"] == "claude-judge-4-5"  # the display name resolved to the id
    assert body["tool_choice"] == {"type": "tool", "name": "record_number"}
    assert body["tools"][0]["input_schema"]["required"] == ["value", "why"]
    assert body["messages"][0]["content"] == "Any number will do."
    assert stats.model == "claude-judge-4-5"
    assert (stats.votes_asked, stats.input_tokens, stats.output_tokens) == (1, 1000, 100)
    assert stats.http_requests == 2  # the models list, then the answer


def test_prompt_parts_mark_the_cacheable_prefix(fake, tmp_path):
    parts = (TextPart("menu " * 1200, cache=True), TextPart("the question"))
    request = StructuredRequest(system="s", prompt=parts, tool=TOOL)
    ask(settings(fake, tmp_path), request=request)
    first, second = fake.script.messages[0]["messages"][0]["content"]
    assert first["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in second


@pytest.mark.slow
def test_429_529_and_500_are_retried_honouring_retry_after(fake, tmp_path):
    fake.script.faults = ["rate_limited", "overloaded", "server_error"]
    answer, stats = ask(settings(fake, tmp_path))
    assert answer.value is not None
    assert answer.asked == 1  # transport retries are not re-asks
    assert len(fake.script.messages) == 4
    assert stats.http_requests == 1 + 4  # counted retries
    times = fake.script.request_times
    assert times[1] - times[0] >= 0.9  # retry-after: 1 after the 429


def test_a_status_left_after_retries_is_one_phrase(fake, tmp_path):
    fake.script.faults = ["server_error"] * 3
    answer, _ = ask(settings(fake, tmp_path, max_retries=2))
    assert answer.value is None
    assert answer.failure == "the API answered HTTP 500 after retries"
    assert len(fake.script.messages) == 3


def test_a_malformed_answer_is_asked_again_then_given_up(fake, tmp_path):
    fake.script.faults = ["no_verdict", "missing_fields"]
    answer, stats = ask(settings(fake, tmp_path))
    assert answer.value == Number(value=7, why="lucky")
    assert answer.asked == 3
    assert stats.votes_asked == 3

    fake.script.faults = ["no_verdict", "bad_verdict", "missing_fields"]
    answer, _ = ask(settings(fake, tmp_path, cache_dir=None), what="number")
    assert answer.value is None
    assert answer.failure == "no valid number in 3 attempts"
    assert len(fake.script.messages) == 3 + 3


def test_a_parse_function_can_reject_what_the_schema_allows(fake, tmp_path):
    def odd(data):
        return data["value"] if data["value"] % 2 else None

    answer, _ = ask(settings(fake, tmp_path, attempts=2), parse=odd)
    assert answer.value == 7
    fake.script.answers["record_number"] = {"value": 8, "why": "even"}
    answer, _ = ask(settings(fake, tmp_path, attempts=2, cache_dir=None), parse=odd)
    assert answer.failure == "no valid answer in 2 attempts"


def test_cached_answers_make_no_request_and_samples_are_kept_apart(fake, tmp_path):
    first, _ = ask(settings(fake, tmp_path))
    assert len(fake.script.messages) == 1
    again, stats = ask(settings(fake, tmp_path))
    assert again.value == first.value
    assert again.cached
    assert stats.cache_hits == 1
    assert stats.votes_asked == 0
    assert len(fake.script.messages) == 1  # zero requests
    other, _ = ask(settings(fake, tmp_path), sample=1)  # another independent answer
    assert not other.cached
    assert len(fake.script.messages) == 2
    changed = StructuredRequest(system="Pick another.", prompt="Any.", tool=TOOL)
    ask(settings(fake, tmp_path), request=changed)  # keyed by the request as sent
    assert len(fake.script.messages) == 3


def test_a_malformed_answer_is_never_cached(fake, tmp_path):
    fake.script.faults = ["no_verdict"]
    ask(settings(fake, tmp_path, attempts=1))
    answer, _ = ask(settings(fake, tmp_path, attempts=1))
    assert answer.value is not None
    assert not answer.cached
    assert len(fake.script.messages) == 2


def test_a_timeout_ends_in_one_sentence_saying_the_endpoint_timed_out(fake, tmp_path):
    fake.script.faults = ["slow", "slow"]
    fake.script.slow_seconds = 1.5
    answer, stats = ask(settings(fake, tmp_path, timeout=0.3, max_retries=1))
    assert answer.value is None
    assert answer.failure == f"the endpoint at {fake.url} timed out (2 tries of 0.3 s)"
    assert stats.http_requests == 1 + 2


def test_a_timed_out_or_unreachable_models_list_is_one_sentence(tmp_path):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = LLMConfig(model="m", base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=0)
    with pytest.raises(LLMError) as caught:
        ask(config)
    assert str(caught.value) == f"Could not reach the Anthropic API at http://127.0.0.1:{port}."


def test_model_names_and_keys_are_told_apart(fake, tmp_path, monkeypatch):
    with pytest.raises(LLMError, match=r"Unknown judge model 'claude-judge'.*claude-judge-4-5"):
        ask(settings(fake, tmp_path, model="claude-judge"))
    with pytest.raises(LLMError) as caught:
        ask(settings(fake, tmp_path, api_key="wrong"))
    assert str(caught.value) == "The API key was rejected (HTTP 401); check ANTHROPIC_API_KEY."
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LLMError, match="No Anthropic API key: set ANTHROPIC_API_KEY"):
        LLMClient(settings(fake, tmp_path, api_key=None))
    assert fake.script.messages == []


def test_an_anthropic_prefix_names_the_same_model_and_shares_its_cache(fake, tmp_path):
    first, _ = ask(settings(fake, tmp_path, model="anthropic:claude-judge-4-5"))
    assert fake.script.messages[0]["model"] == "claude-judge-4-5"  # the prefix is not sent
    again, _ = ask(settings(fake, tmp_path, model="claude-judge-4-5"))
    assert again.cached
    assert again.value == first.value
    assert len(fake.script.messages) == 1


class EchoProvider:
    """A second provider behind the same protocol, in memory: answers with the prompt's length."""

    name = "echo"
    label = "Echo"
    key_env = "ECHO_API_KEY"
    base_url = "memory://echo"

    def __init__(self) -> None:
        self.asked = 0

    async def list_models(self):
        return [ModelInfo("echo-1", "Echo One")]

    async def create(self, model, request, max_tokens):
        self.asked += 1
        value = {"value": len(str(request.prompt)), "why": model}
        return Reply([value], AnswerTokens(input_tokens=10, output_tokens=2))

    async def run_batch(self, model, requests: Mapping[str, StructuredRequest], max_tokens, poll):
        return {
            key: await self.create(model, request, max_tokens) for key, request in requests.items()
        }

    async def close(self):
        pass


def test_another_provider_fits_the_same_client(tmp_path):
    provider = EchoProvider()

    async def main():
        stats = RunStats()
        config = LLMConfig(model="Echo One", cache_dir=tmp_path)
        async with LLMClient(config, stats, provider=provider) as client:
            await client.resolve_model()
            direct = await client.ask_structured(REQUEST, Number)
            batch = await client.ask_structured_batch(
                {"a": (REQUEST, 0), "b": (REQUEST, 1)}, Number.model_validate
            )
        return direct, batch, stats

    direct, batch, stats = asyncio.run(main())
    assert direct.value == Number(value=len("Any number will do."), why="echo-1")
    assert batch["a"].cached  # the direct answer, sample 0
    assert batch["b"].value == direct.value
    assert provider.asked == 2
    assert (stats.input_tokens, stats.votes_asked, stats.cache_hits) == (20, 2, 1)

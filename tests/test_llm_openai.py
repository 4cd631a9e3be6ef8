"""The model-call layer's second provider: the real ``openai`` SDK against a local server that
speaks Chat Completions (as OpenAI, Gemini's OpenAI-compatible endpoint, vLLM, Ollama or
llama.cpp's server do), and both providers side by side through the judge."""

from __future__ import annotations

import asyncio
import json
import socket

import conftest
import fake_anthropic
import pytest
from conftest import BAD, assert_seed_ablation_contract
from fake_anthropic import FakeAnthropic
from fake_openai import API_KEY, FakeOpenAI
from pydantic import BaseModel

import analysis
from analysis.judge import JudgeConfig, estimate_run, judge_rendered
from analysis.llm import (
    PROVIDERS,
    LLMClient,
    LLMConfig,
    LLMError,
    RunStats,
    StructuredRequest,
    TextPart,
    dollars,
    parse_model_name,
    price_of,
    tool_for,
)
from analysis.render import render_turn

KEY_ENVS = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL")


class Number(BaseModel):
    value: int
    why: str


TOOL = tool_for(Number, "record_number", "Record the number and why.")
REQUEST = StructuredRequest(system="Pick a number.", prompt="Any number will do.", tool=TOOL)


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    """No key (nor endpoint) of the developer's reaches a test."""
    for env in KEY_ENVS:
        monkeypatch.delenv(env, raising=False)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        server.script.answers = {"record_number": {"value": 7, "why": "lucky"}}
        yield server


@pytest.fixture
def bad_choices():
    loaded = analysis.load([analysis.sample_data_dir() / "transcripts"])
    return next(s for s in loaded.sessions if s.session_id == BAD)


def settings(fake, tmp_path, **overrides):
    values = {
        "model": "openai:gpt-4o-judge",
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


# --- model names ---------------------------------------------------------------------------


def test_a_model_is_named_provider_colon_model_and_a_bare_name_is_anthropic():
    assert PROVIDERS == ("anthropic", "openai", "gemini")
    assert parse_model_name("openai:gpt-4o") == ("openai", "gpt-4o")
    assert parse_model_name("anthropic:claude-opus-4-1") == ("anthropic", "claude-opus-4-1")
    assert parse_model_name("gemini:gemini-2.5-pro") == ("gemini", "gemini-2.5-pro")
    assert parse_model_name("claude-opus-4-1") == ("anthropic", "claude-opus-4-1")
    assert parse_model_name("Claude Judge 4.5") == ("anthropic", "Claude Judge 4.5")
    # an Ollama tag keeps its colon
    assert parse_model_name("openai:llama3.1:8b") == ("openai", "llama3.1:8b")
    assert parse_model_name("llama3.1:8b", "openai") == ("openai", "llama3.1:8b")
    config = LLMConfig(model="openai:gpt-4o")
    assert (config.provider, config.model) == ("openai", "gpt-4o")
    assert LLMConfig(**config.model_dump()).model == "gpt-4o"  # a round trip keeps it
    assert LLMConfig(model="claude-x").provider == "anthropic"


def test_an_unknown_provider_prefix_is_one_sentence_listing_the_known_ones():
    with pytest.raises(LLMError) as caught:
        LLMConfig(model="mistral:large")
    message = str(caught.value)
    assert message == (
        "Unknown model provider 'mistral' in 'mistral:large': name a model as provider:model "
        "with anthropic, openai or gemini (a bare name is Anthropic's)."
    )
    with pytest.raises(LLMError, match=r"^No model id after 'openai' in 'openai:'"):
        parse_model_name("openai:")
    with pytest.raises(LLMError, match="names provider openai, not gemini"):
        parse_model_name("openai:gpt-4o", "gemini")


def test_the_judge_reads_the_provider_when_it_starts(fake, tmp_path):
    config = JudgeConfig(model="openai:gpt-4o-judge", base_url=fake.url)
    assert (config.llm_config().provider, config.llm_config().model) == ("openai", "gpt-4o-judge")
    wrong = JudgeConfig(model="mistral:large")  # built fine: the CLI reports it when it runs
    with pytest.raises(LLMError, match=r"^Unknown model provider 'mistral'"):
        asyncio.run(judge_rendered([], wrong))


# --- the layer through the openai SDK ----------------------------------------------------------


def test_a_structured_answer_is_a_forced_function_call(fake, tmp_path):
    answer, stats = ask(settings(fake, tmp_path))
    assert answer.value == Number(value=7, why="lucky")
    assert (answer.failure, answer.cached, answer.asked) == (None, False, 1)
    (body,) = fake.script.messages
    assert body["model"] == "gpt-4o-judge"  # the provider prefix is not sent
    assert body["tool_choice"] == {"type": "function", "function": {"name": "record_number"}}
    (tool,) = body["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "record_number"
    assert tool["function"]["parameters"]["required"] == ["value", "why"]
    assert body["messages"] == [
        {"role": "system", "content": "Pick a number."},
        {"role": "user", "content": "Any number will do."},
    ]
    assert body["max_tokens"] == 1024  # an OpenAI-compatible server's name for it
    assert stats.model == "gpt-4o-judge"
    assert (stats.votes_asked, stats.output_tokens) == (1, 100)
    assert stats.input_tokens == (len("Pick a number.") + len("Any number will do.")) // 4
    assert stats.http_requests == 2  # the models list, then the answer
    assert set(fake.script.keys) == {API_KEY}


def test_prompt_parts_are_sent_as_one_message_and_cached_tokens_are_counted(fake, tmp_path):
    system = "rubric " * 200
    parts = (TextPart("menu " * 300, cache=True), TextPart("the question"))
    request = StructuredRequest(system=system, prompt=parts, tool=TOOL)

    async def twice():
        async with LLMClient(settings(fake, tmp_path, cache_dir=None)) as client:
            await client.resolve_model()
            for sample in range(2):
                await client.ask_structured(request, Number, sample=sample)
            return client.stats

    stats = asyncio.run(twice())
    user = fake.script.messages[0]["messages"][1]["content"]
    assert user == "menu " * 300 + "\n\n" + "the question"
    # the second request's system prompt was cached: prompt tokens minus cached are uncached
    assert stats.cache_read_tokens == len(system) // 4
    assert stats.cache_write_tokens == 0
    total = 2 * ((len(system) + len(user)) // 4)
    assert stats.input_tokens + stats.cache_read_tokens == total


@pytest.mark.slow
def test_429_503_and_500_are_retried_honouring_retry_after(fake, tmp_path):
    fake.script.faults = ["rate_limited", "unavailable", "server_error"]
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


def test_a_model_the_endpoint_does_not_serve_is_not_retried(fake, tmp_path):
    fake.script.retired = {"gpt-4o-mini-judge"}  # listed, but completions answer 404
    answer, _ = ask(settings(fake, tmp_path, model="openai:gpt-4o-mini-judge"))
    assert answer.failure == "the API answered HTTP 404 after retries"
    assert len(fake.script.messages) == 1


def test_a_malformed_answer_is_asked_again_then_given_up(fake, tmp_path):
    fake.script.faults = ["no_verdict", "bad_arguments"]
    answer, stats = ask(settings(fake, tmp_path))
    assert answer.value == Number(value=7, why="lucky")
    assert answer.asked == 3
    assert stats.votes_asked == 3

    fake.script.faults = ["bad_arguments", "wrong_tool", "missing_fields"]
    answer, _ = ask(settings(fake, tmp_path, cache_dir=None), what="number")
    assert answer.value is None
    assert answer.failure == "no valid number in 3 attempts"
    assert len(fake.script.messages) == 3 + 3


def test_cached_answers_make_no_request_and_the_server_is_part_of_the_key(fake, tmp_path):
    first, _ = ask(settings(fake, tmp_path))
    again, stats = ask(settings(fake, tmp_path))
    assert again.value == first.value
    assert again.cached
    assert (stats.cache_hits, stats.votes_asked) == (1, 0)
    assert len(fake.script.messages) == 1  # zero requests
    with FakeOpenAI() as other:  # the same model id on another server is another model
        other.script.answers = fake.script.answers
        answer, _ = ask(settings(other, tmp_path))
        assert not answer.cached
        assert len(other.script.messages) == 1


def test_a_timeout_ends_in_one_sentence_saying_the_endpoint_timed_out(fake, tmp_path):
    fake.script.faults = ["slow", "slow"]
    fake.script.slow_seconds = 1.5
    answer, stats = ask(settings(fake, tmp_path, timeout=0.3, max_retries=1))
    assert answer.value is None
    assert answer.failure == f"the endpoint at {fake.url} timed out (2 tries of 0.3 s)"
    assert stats.http_requests == 1 + 2


def test_an_unreachable_endpoint_is_one_sentence(tmp_path):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    config = LLMConfig(model="openai:m", base_url=url, api_key="k", max_retries=0)
    with pytest.raises(LLMError) as caught:
        ask(config)
    assert str(caught.value) == f"Could not reach the OpenAI-compatible API at {url}."


def test_a_misnamed_model_names_the_closest_ids_and_never_the_key(fake, tmp_path):
    with pytest.raises(LLMError) as caught:
        ask(settings(fake, tmp_path, model="openai:gpt-4o-judg"))
    message = str(caught.value)
    assert message.startswith("Unknown judge model 'gpt-4o-judg' (not in the models list; closest:")
    assert "gpt-4o-judge" in message
    assert "key" not in message.lower()
    assert "401" not in message
    assert fake.script.messages == []


def test_a_rejected_key_says_so(fake, tmp_path):
    with pytest.raises(LLMError) as caught:
        ask(settings(fake, tmp_path, api_key="wrong"))
    assert str(caught.value) == "The API key was rejected (HTTP 401); check OPENAI_API_KEY."
    assert fake.script.messages == []


def test_keys_come_from_the_environment_and_a_local_server_needs_none(fake, tmp_path, monkeypatch):
    with pytest.raises(LLMError, match=r"^No OpenAI API key: set OPENAI_API_KEY"):
        LLMClient(LLMConfig(model="openai:gpt-4o"))  # OpenAI's own endpoint: a key is needed
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    answer, _ = ask(settings(fake, tmp_path, api_key=None))
    assert answer.value is not None
    assert set(fake.script.keys) == {API_KEY}

    monkeypatch.delenv("OPENAI_API_KEY")
    fake.script.keys.clear()
    with pytest.raises(LLMError, match=r"rejected \(HTTP 401\); check OPENAI_API_KEY"):
        ask(settings(fake, tmp_path, api_key=None))  # this server wants one
    fake.script.require_key = False  # like Ollama, vLLM or llama.cpp's server by default
    answer, _ = ask(settings(fake, tmp_path, api_key=None, cache_dir=None))
    assert answer.value is not None


def test_gemini_uses_its_own_key_and_model_ids(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "an-openai-key-gemini-must-not-see")
    monkeypatch.setenv("GEMINI_API_KEY", API_KEY)
    config = settings(fake, tmp_path, model="gemini:gemini-2.5-flash-judge", api_key=None)
    answer, stats = ask(config)
    assert answer.value is not None
    assert fake.script.messages[0]["model"] == "gemini-2.5-flash-judge"  # not models/...
    assert set(fake.script.keys) == {API_KEY}
    assert stats.model == "gemini-2.5-flash-judge"
    monkeypatch.setenv("GEMINI_API_KEY", "wrong")
    with pytest.raises(LLMError) as caught:
        ask(config)
    assert str(caught.value) == "The API key was rejected (HTTP 401); check GEMINI_API_KEY."


def test_gemini_defaults_to_its_openai_compatible_endpoint(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "k")

    async def open_only():  # no request: only where it would go
        async with LLMClient(LLMConfig(model="gemini:gemini-2.5-pro")) as client:
            return client.provider.base_url, client.provider.label

    assert asyncio.run(open_only()) == (
        "https://generativelanguage.googleapis.com/v1beta/openai",
        "Gemini",
    )
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(LLMError, match=r"^No Gemini API key: set GEMINI_API_KEY"):
        LLMClient(LLMConfig(model="gemini:gemini-2.5-pro"))


def test_openai_itself_is_sent_max_completion_tokens(monkeypatch):
    from analysis.llm import OpenAIProvider

    provider = OpenAIProvider(LLMConfig(model="openai:gpt-4o", api_key="k"), lambda: None)
    assert provider.tokens_field == "max_completion_tokens"
    assert (provider.label, provider.name) == ("OpenAI", "openai")
    asyncio.run(provider.close())


# --- prices --------------------------------------------------------------------------------


def test_list_prices_of_openai_and_gemini_models():
    assert price_of("openai:gpt-4o") == (2.5, 10.0)
    assert price_of("gpt-4o-2024-08-06") == (2.5, 10.0)
    assert price_of("openai:gpt-4o-mini") == (0.15, 0.6)  # the longer family wins
    assert price_of("gemini:gemini-2.5-pro") == (1.25, 10.0)
    assert price_of("gemini-2.5-flash") == (0.3, 2.5)
    assert price_of("openai:llama3.1:8b") is None
    assert dollars(RunStats(model="llama3.1:8b", input_tokens=10).cost_usd).startswith("unknown")
    # a cached input token of an OpenAI model costs half; no write premium
    stats = RunStats(model="gpt-4o", input_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert stats.cost_usd == pytest.approx(2.5 + 1.25)
    assert RunStats(model="claude-opus-4-1", cache_read_tokens=1_000_000).cost_usd == 1.5


def test_an_estimate_for_an_openai_model_has_a_price(bad_choices):
    turns = [render_turn(bad_choices, t) for t in bad_choices.turns]
    assert estimate_run(turns, 3, "openai:gpt-4o").cost_usd is not None
    assert estimate_run(turns, 3, "openai:some-local-model").cost_usd is None


# --- the judge, on either provider ---------------------------------------------------------


@pytest.fixture(params=["anthropic", "openai"])
def server(request):
    """Either fake server, and how the judge names its model and reaches it."""
    if request.param == "anthropic":
        with FakeAnthropic() as fake:
            yield fake, "claude-judge-4-5", fake.url, fake_anthropic.API_KEY
    else:
        with FakeOpenAI() as fake:
            yield fake, "openai:gpt-4o-judge", fake.url, API_KEY


def judge_config(server, tmp_path, **overrides):
    _, model, url, key = server
    values = {"model": model, "base_url": url, "api_key": key, "max_retries": 3}
    return JudgeConfig(**(values | {"cache_dir": tmp_path / "cache"} | overrides))


def run(turns, config, **kwargs):
    return asyncio.run(judge_rendered(turns, config, **kwargs))


def test_both_providers_tell_the_seeds_story(server, tmp_path, bad_choices):
    scores = {}
    for condition in ("bare", "catalog_no_call", "full"):
        turns = [render_turn(bad_choices, t, condition) for t in bad_choices.turns]
        judgments, _ = run(turns, judge_config(server, tmp_path, cache_dir=tmp_path / condition))
        scores[condition] = [j.score for j in judgments]
    assert scores == {
        "bare": [1.0] * 4,
        "catalog_no_call": [0.0] * 4,
        "full": [1.0, 0.0, 0.0, 0.0],
    }


def test_both_providers_split_votes_retry_and_cache(server, tmp_path, bad_choices):
    fake = server[0]
    fake.script.split_ask = "Show me the contents"
    fake.script.faults = ["rate_limited", "server_error", "no_verdict"]
    turn = [render_turn(bad_choices, bad_choices.turns[0])]
    (judgment,), stats = run(turn, judge_config(server, tmp_path))
    assert [v.verdict for v in judgment.votes].count("correct") == 2
    assert (judgment.n_requested, judgment.n_valid, judgment.n_discarded) == (3, 3, 0)
    assert len(fake.script.messages) == 3 + 3  # two retried, one re-asked
    assert stats.http_requests == 1 + 3 + 3
    asked = len(fake.script.messages)
    (again,), stats = run(turn, judge_config(server, tmp_path))
    assert again.votes == judgment.votes
    assert (stats.cache_hits, len(fake.script.messages)) == (3, asked)  # no request


def test_both_providers_word_model_and_key_errors_alike(server, tmp_path, bad_choices):
    fake, model, _, _ = server
    turn = [render_turn(bad_choices, bad_choices.turns[0])]
    with pytest.raises(LLMError) as caught:
        run(turn, judge_config(server, tmp_path, model=model[:-1]))
    assert str(caught.value).startswith(f"Unknown judge model {model.split(':')[-1][:-1]!r}")
    assert "key" not in str(caught.value).lower()
    with pytest.raises(LLMError, match=r"^The API key was rejected \(HTTP 401\); check "):
        run(turn, judge_config(server, tmp_path, api_key="wrong"))
    assert fake.script.messages == []


def test_batch_mode_is_refused_for_an_openai_compatible_model(fake, tmp_path, bad_choices):
    turn = [render_turn(bad_choices, bad_choices.turns[0])]
    config = JudgeConfig(model="openai:gpt-4o-judge", base_url=fake.url, api_key=API_KEY)
    with pytest.raises(LLMError) as caught:
        run(turn, config, batch=True)
    assert str(caught.value) == (
        "Batch mode is not available for openai: models (OpenAI-compatible endpoints); "
        "run without --batch."
    )
    assert fake.requests_seen == 0


def test_the_adjudicator_runs_on_an_openai_compatible_model(fake, tmp_path):
    from analysis.study import LabelStore, adjudicate_open, load_study

    study = load_study(analysis.sample_data_dir() / "council_vs_human")
    store = LabelStore(tmp_path / "decisions.sqlite")
    config = LLMConfig(model="openai:gpt-4o-judge", base_url=fake.url, api_key=API_KEY)
    done = asyncio.run(adjudicate_open(study, store, config, limit=3))
    assert len(done.decided) == 3
    assert {d.adjudicator for d in done.decided} == {"gpt-4o-judge"}
    assert {m["tool_choice"]["function"]["name"] for m in fake.script.messages} == {
        "record_decision"
    }


@pytest.mark.slow
def test_cli_judge_on_an_openai_model_writes_the_jsonl_contract(fake, tmp_path):
    out = tmp_path / "judgments.jsonl"
    sample = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    no_keys: dict[str, str | None] = dict.fromkeys(KEY_ENVS)
    done = conftest.tsq(
        *("judge", str(sample)),
        *("--model", "openai:gpt-4o-judge", "--base-url", fake.url, "--ablation"),
        *("--out", str(out), "--cache-dir", str(tmp_path / "cache")),
        env=no_keys | {"OPENAI_API_KEY": API_KEY},
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert_seed_ablation_contract(lines)
    assert {line["model"] for line in lines} == {"gpt-4o-judge"}
    assert all(len(line["votes"]) == 3 for line in lines)
    assert "full: 4 steps in 4 turns, mean turn TSQ 0.25" in done.stdout
    assert len(fake.script.messages) == 12 * 3
    assert set(fake.script.keys) == {API_KEY}


@pytest.mark.slow
def test_cli_judge_unknown_provider_and_bad_key_are_one_sentence(fake, tmp_path):
    sample = analysis.sample_data_dir() / "transcripts" / "bad-choices.synthetic.jsonl"
    no_keys: dict[str, str | None] = dict.fromkeys(KEY_ENVS)

    def tsq(model, key):
        return conftest.tsq(
            *("judge", str(sample), "--model", model),
            *("--base-url", fake.url, "--out", str(tmp_path / "j.jsonl")),
            *("--cache-dir", str(tmp_path / "cache")),
            env=no_keys | {"OPENAI_API_KEY": key},
        )

    unknown = tsq("mistral:large", API_KEY)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().startswith("Unknown model provider 'mistral'")
    rejected = tsq("openai:gpt-4o-judge", "wrong")
    assert rejected.returncode == 2
    assert rejected.stderr.strip() == "The API key was rejected (HTTP 401); check OPENAI_API_KEY."
    assert fake.script.messages == []
